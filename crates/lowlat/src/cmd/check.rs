//! `lowlat check`, the main job (the `check` crate): arguments → `check::Config` →
//! `check::run` (each step a child `lowlat` process) → the progress and summary views.

use anyhow::Context as _;
use cli::args::check::Args;

use crate::exit::ExitCode;

/// Run `lowlat check`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let skip = args
        .skip
        .iter()
        .map(|s| s.parse::<check::Name>().with_context(|| format!("--skip {s}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let root = util::privilege::is_root();
    // Refused now rather than after the first steps: the timer step would fail the same way.
    if let Some(t) = &args.rt_cgroup {
        anyhow::ensure!(
            root,
            "--rt-cgroup {t}: moving into a cgroup needs root; run `sudo lowlat check --rt-cgroup {t}`"
        );
        measure::rt_cgroup::check(&host::Root::live(), t).context("--rt-cgroup")?;
    }
    // A plan for another host would pass checks vacuously on CPUs this one lacks: refused now.
    let plan = match &args.plan {
        Some(file) => {
            let p = plan::Plan::load(file)?;
            p.check_host(&host::read(&host::Root::live()))
                .with_context(|| format!("--plan {}", file.display()))?;
            check::PlanSource::Given { plan: Box::new(p), file: file.clone() }
        }
        None => check::PlanSource::Auto,
    };
    let cfg = check::Config {
        exe: std::env::current_exe().context("finding the lowlat binary to run the steps")?,
        out: args.out,
        schedule: check::Schedule::for_run(args.quick, args.duration),
        fsync_dir: args.fsync_dir,
        threshold: args.threshold,
        skip,
        root,
        generator: format!("lowlat {}", super::VERSION),
        rt_cgroup: args.rt_cgroup,
        plan,
        cpus: args.cpus,
    };
    // First Ctrl-C: the running step writes its partial result, the rest is skipped and the
    // report is still written (exit 130); a second Ctrl-C exits at once.
    // Output files are checked before an hour of measuring, not after.
    super::common::documents(&[
        ("--junit", args.junit.as_ref()),
        ("--json", args.json.json.as_ref()),
        ("--prometheus", args.prometheus.as_ref()),
    ])?;
    // With a document on stdout, people's view goes to stderr.
    let to_stderr = util::term::stdout_taken();
    let say = |s: String| util::term::say(to_stderr, &s);
    let started = std::time::SystemTime::now();
    let t0 = std::time::Instant::now();
    // A running step: a live line on a terminal, a line a minute in a log.
    let stream = if to_stderr { util::term::Stream::Stderr } else { util::term::Stream::Stdout };
    let mut progress = check::view::Progress::new(util::term::is_tty(stream));
    let mut on = |e: &check::Event<'_>| say(progress.text(e));
    util::signal::install();
    let done = check::run(&cfg, &mut on)?;
    say(check::view::finished(&done));
    if let Some(path) = &args.junit {
        let suites = report::junit::sections(&done.report, done.hostname.as_deref());
        let meta =
            report::junit::Meta { hostname: None, timestamp: started, time: Some(t0.elapsed()) };
        super::common::write_junit(path, &report::junit::write("lowlat check", &suites, &meta))?;
    }
    if let Some(p) = &args.prometheus {
        super::common::write_prometheus(p, &report::prom::report(&done.report, "check"))?;
    }
    if let Some(out) = &args.json.json {
        out.write_json(&done.document())?;
    }
    Ok(done.exit_code())
}
