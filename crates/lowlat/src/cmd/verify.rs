//! `lowlat verify`: the `verify` crate gathers the evidence (host model, boot loader entries,
//! irqbalance, cgroup RT budgets, a short live window) and checks it against a plan.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use verify::{render, Allow};

use super::common::{HostArgs, JsonArg};
use crate::exit::ExitCode;

/// Arguments of `lowlat verify`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat verify                             # the host's own isolation\n  \
lowlat verify --plan plan.yaml --json verify.json --junit verify.xml\n  \
lowlat verify --must-gather must-gather/ --node worker1\n  \
lowlat verify --plan plan.yaml --allow myapp --window 5s"
)]
pub struct Args {
    /// The plan to check against; without it, the plan implied by the host's own command
    /// line (isolcpus ∪ nohz_full isolated, the rest housekeeping).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub host: HostArgs,
    // `--json [FILE]`: the checks (`checks[] {id, status, evidence, fix}`, `summary`).
    #[command(flatten)]
    pub json: JsonArg,
    /// Also write the checks as JUnit XML to FILE (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<super::common::Output>,
    /// Also write Prometheus text for node_exporter's textfile collector: each check's status,
    /// the counts, 1 when nothing failed (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<super::common::Output>,
    /// A workload task allowed on the isolated CPUs: a PID or a comm (repeatable).
    #[arg(long, value_name = "COMM|PID")]
    pub allow: Vec<Allow>,
    /// The `lowlat apply` journal: IRQs whose affinity write the kernel refused there are
    /// classified as managed (expected residue).
    #[arg(long, value_name = "PATH", default_value = tune::journal::DEFAULT_JOURNAL)]
    pub journal: PathBuf,
    /// Live only: how long to watch interrupt and idle-state counters (e.g. 2s, 500ms; 0 to skip).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = util::duration::parse_span)]
    pub window: Duration,
}

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

/// Arguments of `lowlat status`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  lowlat status\n  lowlat status --plan plan.yaml --json\n  \
lowlat status --root node.tgz --plan plan.yaml\n\
Exit: 0 (the answer is the output: `attention` lists what needs doing), 2 usage, 3 runtime.")]
pub struct StatusArgs {
    /// Compare the boot arguments with this plan (default: the plan the last apply used).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub json: JsonArg,
    /// The apply journal (on the host read).
    #[arg(long, value_name = "PATH", default_value = tune::journal::DEFAULT_JOURNAL)]
    pub journal: PathBuf,
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
