//! `lowlat check`, the main job (the `check` crate): arguments → `check::Config` →
//! `check::run` (each step a child `lowlat` process) → the progress and summary views.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;

use crate::exit::ExitCode;

/// Arguments of `lowlat check`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Which partition is judged: --plan FILE when given; else, on a host \
already booted with isolation (isolcpus/nohz_full), the host's own isolated CPUs (as `lowlat \
verify` without --plan); else a default evaluation plan.\n\
Writes into --out DIR (default ./lowlat-out): inspect.json, plan.yaml, \
verify.json, timer.json, noise.json, ticks.json, fsync.json and lowlat-report.html.\n\
Nothing on the host is changed: the plan is for evaluation only.\n\
Examples:\n  lowlat check --quick\n  sudo lowlat check --plan plan.yaml --duration 12h --out after\n  \
lowlat check --cpus 4-7 --fsync-dir /var/lib/etcd\n\
Exit: 0 when nothing failed, 1 when a check or latency threshold failed.")]
pub struct Args {
    /// About 20 s in all (timer 9 s, noise 3 s, ticks 2 s, fsync 3 s) instead of about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Timer-latency run length (`30s`, `10m`, `12h`); noise and fsync run a third of it,
    /// ticks a sixth. Default 30s (9s with --quick).
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_positive_span)]
    pub duration: Option<Duration>,
    /// Directory for the result files and lowlat-report.html.
    #[arg(long, value_name = "DIR", default_value = "lowlat-out", value_parser = super::common::out_dir)]
    pub out: PathBuf,
    /// Directory the fsync probe writes in (default: a temporary directory under --out, removed
    /// afterwards). Point it at the filesystem you care about (e.g. /var/lib/etcd).
    #[arg(long, value_name = "DIR")]
    pub fsync_dir: Option<PathBuf>,
    /// Timer latency each isolated CPU must stay below.
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_latency, default_value = "100us")]
    pub threshold: Duration,
    /// The plan to verify and measure (default: the host's own isolation when it is booted
    /// with one, else a default evaluation plan).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Measure these CPUs (default: the partition's isolated CPUs).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<cpuset::CpuSet>,
    #[command(flatten)]
    pub json: super::common::JsonArg,
    /// Write JUnit XML here: a suite per report section (hostname, timestamp, time), a test
    /// case per verdict line, for CI (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<super::common::Output>,
    /// Also write Prometheus text for node_exporter's textfile collector: the verdict and each
    /// section's, one-hot (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<super::common::Output>,
    /// Skip steps by name: inspect, plan, verify, timer, noise, ticks, fsync.
    #[arg(long, value_name = "STEP", value_delimiter = ',')]
    pub skip: Vec<String>,
    /// Run the timer and noise steps from a cgroup with an RT budget (`root`, or a cgroup path
    /// such as /rt) and move back afterwards, as `lowlat measure --rt-cgroup` (root only).
    #[arg(long, value_name = "root|PATH", value_parser = |s: &str| s.parse::<measure::rt_cgroup::RtCgroup>())]
    pub rt_cgroup: Option<measure::rt_cgroup::RtCgroup>,
}

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
