//! `lowlat cluster …` (the `cluster` crate): arguments → a `cluster` config → one library call
//! → a view.

use anyhow::Context as _;
use cli::args::cluster::{ApplyArgs, Args, CheckArgs, CleanArgs, Command, SnapshotArgs};

use crate::exit::ExitCode;

/// Progress and summaries (not with `-q`).
fn say(text: &str) {
    util::term::say(false, text);
}

/// Run `lowlat cluster`. With `LOWLAT_API_STATS=1` in the environment, the number of HTTP
/// requests sent to the API server is printed on stderr at the end (`bench/cluster-scale.sh`).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let r = dispatch(args);
    if std::env::var_os("LOWLAT_API_STATS").is_some_and(|v| v == "1") {
        eprintln!("lowlat: api requests: {}", cluster::conn::api_requests());
    }
    r
}

fn dispatch(args: Args) -> anyhow::Result<ExitCode> {
    let conn = args.conn.conn();
    match args.command {
        Command::Nodes(a) => {
            let rows = cluster::nodes::list(&conn, a.selector.as_deref())?;
            let format = if a.json { Some(cluster::nodes::Format::Json) } else { a.output };
            super::common::print_view(cluster::nodes::view(&rows, format.unwrap_or_default())?)?;
            Ok(ExitCode::Ok)
        }
        Command::Check(a) => check(&conn, a),
        Command::Snapshot(a) => snapshot(&conn, a),
        Command::Apply(a) => apply(&conn, a),
        Command::Clean(a) => {
            let ns = if a.this_namespace {
                args.conn.namespace.as_deref().or(Some("default"))
            } else {
                None
            };
            clean(&conn, ns, a)
        }
        Command::Agent(a) => {
            let cfg = cluster::agent::Config::in_pod(a.rt_budget_us, a.out, a.args, a.recover_only)
                .context("finding the lowlat binary")?;
            Ok(cluster::agent::run(&cfg))
        }
    }
}

fn check(conn: &cluster::Conn, a: CheckArgs) -> anyhow::Result<ExitCode> {
    let cfg = cluster::check::Config {
        selector: a.selector,
        out: a.out.clone(),
        pod: a.pod.pod(),
        schedule: check::Schedule::for_run(a.quick, a.duration),
        threshold: a.threshold,
        rt_budget_us: a.rt_budget_us,
        guaranteed_cpus: a.guaranteed_cpus,
        generator: format!("lowlat {}", super::VERSION),
    };
    super::common::documents(&[("--json", a.json.json.as_ref()), ("--junit", a.junit.as_ref())])?;
    let started = std::time::SystemTime::now();
    let progress = cluster::view::Progress::default();
    let to_stdout = util::term::stdout_taken();
    let show = |t: &str| util::term::say(to_stdout, t);
    let fleet = cluster::check::run(conn, &cfg, &mut |e| show(&progress.line(e)))?;
    show(&cluster::view::fleet_summary(&fleet, &a.out));
    if let Some(out) = &a.json.json {
        out.write_json(&fleet)?;
    }
    if let Some(p) = &a.junit {
        super::common::write_junit(p, &cluster::html::junit(&fleet, started))?;
    }
    Ok(fleet.exit_code())
}

fn snapshot(conn: &cluster::Conn, a: SnapshotArgs) -> anyhow::Result<ExitCode> {
    let cfg =
        cluster::snapshot::Config { selector: a.selector, out: a.output.clone(), pod: a.pod.pod() };
    let progress = cluster::view::Progress::default();
    let done = cluster::snapshot::run(conn, &cfg, &mut |e| say(&progress.line(e)))?;
    super::common::print_view(done.summary(&a.output))?;
    Ok(done.exit_code())
}

fn clean(conn: &cluster::Conn, ns: Option<&str>, a: CleanArgs) -> anyhow::Result<ExitCode> {
    let progress = cluster::view::Progress::default();
    let done = cluster::clean::clean(conn, ns, &mut |e| say(&progress.line(e)))?;
    let left = cluster::clean::leftovers(conn)?;
    say(&cluster::view::cleaned(done.len(), &left));
    if !left.is_empty() {
        return Ok(ExitCode::Runtime);
    }
    if a.objects_only {
        return Ok(ExitCode::Ok);
    }
    // Then give back the RT budget killed runs left granted on the nodes.
    let cfg = cluster::clean::RecoverConfig { selector: a.selector, pod: a.pod.pod() };
    let progress = cluster::view::Progress::default();
    let nodes = cluster::clean::recover_rt(conn, &cfg, &mut |e| say(&progress.line(e)))?;
    say(&cluster::view::recovery(&nodes));
    Ok(if nodes.iter().all(cluster::clean::NodeRecovery::ok) {
        ExitCode::Ok
    } else {
        ExitCode::CheckFailed
    })
}

fn apply(conn: &cluster::Conn, a: ApplyArgs) -> anyhow::Result<ExitCode> {
    let plan = plan::Plan::load(&a.plan)?;
    let mut opts = render::RenderOptions { role: a.role, ..Default::default() };
    opts.image = a.image.unwrap_or_else(render::default_image);
    if let Some(ns) = &conn.namespace {
        opts.namespace = ns.clone();
    }
    let files = render::render(&plan, a.target, &opts)?;
    let manifests = cluster::apply::manifests(&files)?;
    if manifests.is_empty() {
        return Err(crate::exit::usage(format!(
            "the {} target renders no Kubernetes objects",
            a.target
        )));
    }
    if a.dry_run == cluster::apply::DryRun::Client {
        if a.json {
            println!("{}", cluster::apply::client_json(&manifests)?);
        } else {
            print!("{}", cluster::apply::client_yaml(&manifests)?);
        }
        return Ok(ExitCode::Ok);
    }
    let dry = a.dry_run == cluster::apply::DryRun::Server;
    let rows = cluster::apply::apply(conn, &manifests, dry, a.force_conflicts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        say(&cluster::apply::view(&rows, dry));
    }
    let refused = cluster::apply::refused(&rows);
    if refused > 0 {
        eprintln!("{refused} object(s) refused: they exist and lowlat does not manage them (--force-conflicts takes them over)");
        return Ok(ExitCode::CheckFailed);
    }
    Ok(ExitCode::Ok)
}
