//! `lowlat verify`: the `verify` crate gathers the evidence (host model, boot loader entries,
//! irqbalance, cgroup RT budgets, a short live window) and checks it against a plan.

use anyhow::Context as _;
use cli::args::verify::{Args, StatusArgs};
use verify::render;

use crate::exit::ExitCode;

/// Run `lowlat verify`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (started, t0) = (std::time::SystemTime::now(), std::time::Instant::now());
    super::common::documents(&[
        ("--json", args.json.json.as_ref()),
        ("--junit", args.junit.as_ref()),
        ("--prometheus", args.prometheus.as_ref()),
    ])?;
    let root = args.host.open_root()?;
    let host = args.host.load()?;
    let plan = args.plan.as_deref().map(plan::Plan::load).transpose()?;
    if let (Some(p), Some(file)) = (&plan, &args.plan) {
        // A plan for another host would pass checks vacuously on CPUs this one lacks.
        p.check_host(&host).with_context(|| format!("--plan {}", file.display()))?;
    }
    let plan_arg =
        args.plan.as_ref().map_or("--plan FILE".into(), |p| format!("--plan {}", p.display()));
    let request = verify::Request {
        plan,
        plan_arg,
        allow: args.allow,
        journal: args.journal,
        window: args.window,
    };
    let hostname = host.hostname.clone().or_else(|| host.source.node.clone());
    let verified = verify::run(&root, host, request);
    if let Some(path) = &args.junit {
        let suite = report::junit::verify(&verified.report, hostname.as_deref());
        let meta =
            report::junit::Meta { hostname: None, timestamp: started, time: Some(t0.elapsed()) };
        let xml = report::junit::write("lowlat verify", &[suite], &meta);
        super::common::write_junit(path, &xml)?;
    }
    if let Some(p) = &args.prometheus {
        super::common::write_prometheus(p, &report::prom::verify(&verified.report))?;
    }
    if let Some(out) = &args.json.json {
        out.write_json(&verified.report)?;
    }
    // With a document on stdout the table is left out (`lowlat check` keeps stderr for errors).
    if !util::term::stdout_taken() {
        super::common::print_view(render::terminal(&verified))?;
    }
    Ok(if verified.report.passed() { ExitCode::Ok } else { ExitCode::CheckFailed })
}

/// `lowlat status`: what is applied, which boot arguments run or wait for a reboot, drift.
pub fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let root = args.host.open_root()?;
    let host = args.host.load()?;
    let plan = match &args.plan {
        Some(f) => Some((plan::Plan::load(f)?, f.display().to_string())),
        None => None,
    };
    let records = verify::status::read_journal(&root, &args.journal);
    let entries = verify::gather::boot_entries(&root);
    let req = verify::status::Request { plan, journal: args.journal };
    let s = verify::status::status(&root, &host, records, &entries, &req);
    if let Some(out) = &args.json.json {
        out.write_json(&s)?;
    }
    if !args.json.to_stdout() {
        super::common::print_view(verify::status::terminal(&s))?;
    }
    Ok(ExitCode::Ok)
}
