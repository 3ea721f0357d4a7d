//! `lowlat check`, the main job: inspect this host, compute a default evaluation plan
//! (housekeeping = CPU 0's core plus one core per NUMA node, the rest isolated; nothing is
//! applied), verify the host against it, measure timer latency on the plan's isolated CPUs
//! under CPU load on housekeeping, OS noise, ticks and an fsync probe in a temporary
//! directory, then write every result file and `lowlat-report.html`.
//!
//! Each step runs the same `lowlat` binary's subcommand as a child process ([`step`]), so the
//! result files are exactly those the single commands write; a step that fails, lacks
//! privileges or is not in this build becomes a note in the report (never a crash), a hung
//! step is stopped at its time limit, and an interrupt is passed on so the running step writes
//! its partial result. The plan the plan step wrote is read back with `plan::Plan::load`; its
//! isolated CPUs are where the measurements run. With [`Config::rt_cgroup`] the timer and
//! noise steps run from a cgroup with an RT budget (measure's `--rt-cgroup`); [`realtime`]
//! says so, or names that fix when the timer was refused real-time by its cgroup. [`view`]
//! is the terminal text.

pub mod realtime;
pub mod step;
pub mod view;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use report::model::{Headline, Note};
use report::{Body, Doc, Kind, Verdict};
use serde::Serialize;

pub use step::{Name, Outcome, Step};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `lowlat` binary whose subcommands are the steps.
    pub exe: PathBuf,
    /// Directory for the result files and the report.
    pub out: PathBuf,
    /// How long each measuring step runs ([`Schedule`]).
    pub schedule: Schedule,
    /// Directory the fsync probe writes in; `None`: a temporary directory under `out`,
    /// removed afterwards.
    pub fsync_dir: Option<PathBuf>,
    /// Timer latency each isolated CPU must stay below.
    pub threshold: Duration,
    /// Steps not to run.
    pub skip: Vec<Name>,
    /// Running as root (else the measurements degrade, and the report says so).
    pub root: bool,
    /// Tool and version written into the report.
    pub generator: String,
    /// Run the timer and noise steps from this cgroup for an RT budget (moved there and
    /// back by the measurement, as `lowlat measure --rt-cgroup` does).
    pub rt_cgroup: Option<measure::rt_cgroup::RtCgroup>,
    /// The partition to verify and measure.
    pub plan: PlanSource,
    /// Measure these CPUs instead of the partition's isolated ones.
    pub cpus: Option<cpuset::CpuSet>,
}

/// Where the partition the job judges comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanSource {
    /// A plan file the user gave (`--plan`), already checked against this host.
    Given { plan: Box<plan::Plan>, file: PathBuf },
    /// The host's own isolation when its command line isolates CPUs (`isolcpus`, `nohz_full`),
    /// else a default evaluation plan.
    Auto,
}

/// The partition the job judges, resolved for a host.
#[derive(Debug, Clone, PartialEq)]
pub enum Partition {
    /// The plan the user gave.
    Given { plan: Box<plan::Plan>, file: PathBuf },
    /// The host is already tuned: the plan its command line implies (what `lowlat verify`
    /// without `--plan` judges). Measuring anything else would measure CPUs the user kept
    /// for housekeeping.
    HostOwn(Box<plan::Plan>),
    /// An untuned host: a default evaluation plan (`lowlat plan`), computed by the plan step.
    Default,
}

impl PlanSource {
    /// The partition for `host` (its running command line decides `Auto`).
    pub fn resolve(&self, host: &host::Host) -> Partition {
        self.resolve_with(|| host.clone())
    }

    /// [`Self::resolve`], reading the host only when `Auto` needs it (a given plan needs
    /// none: the caller has already checked it against the host).
    pub fn resolve_with(&self, host: impl FnOnce() -> host::Host) -> Partition {
        match self {
            PlanSource::Given { plan, file } => {
                Partition::Given { plan: plan.clone(), file: file.clone() }
            }
            PlanSource::Auto => {
                let own = verify::implied_plan(&host());
                if own.isolated.is_empty() {
                    Partition::Default
                } else {
                    Partition::HostOwn(Box::new(own))
                }
            }
        }
    }
}

/// Why the job could not run at all (a step's failure is a note, not an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot create the output directory {path}: {source}")]
    OutDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the report {path}: {source}")]
    Report {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl util::exit::Classify for Error {
    fn exit_code(&self) -> util::exit::ExitCode {
        util::exit::ExitCode::Runtime
    }
}

/// Progress, as the job goes.
#[derive(Debug)]
pub enum Event<'a> {
    /// The job starts: the expected total time.
    Start { out: &'a Path, total: Duration, root: bool },
    /// Step `index` of `count` starts (or is skipped by request).
    Step {
        index: usize,
        count: usize,
        step: &'a Step,
        elapsed: Duration,
        total: Duration,
        skipped: bool,
    },
    /// A step is running (about once a second): how long so far, and what its checkpoint
    /// says when it has one (a measurement rewrites its result file every 5 s).
    Running { step: &'a Step, elapsed: Duration, live: Option<Live> },
    /// A step ended.
    Ended { step: &'a Step, outcome: &'a Outcome, took: Duration },
}

/// What a running measurement's checkpoint says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live {
    /// Samples so far, every CPU.
    pub samples: u64,
    /// The worst value so far, ns.
    pub worst_ns: u64,
}

impl Live {
    /// Read a timer or noise checkpoint (a partial `LatencyResult`); `None` when there is none
    /// yet or it is another kind.
    pub fn read(path: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(path).ok()?;
        let r: results::LatencyResult = serde_json::from_str(&text).ok()?;
        Some(Self {
            samples: r.threads.iter().map(|t| t.stats.count).sum(),
            worst_ns: r.threads.iter().map(|t| t.stats.max_ns).max().unwrap_or(0),
        })
    }
}

/// What the job produced.
#[derive(Debug)]
pub struct Finished {
    /// The report model (also written as HTML to `html`).
    pub report: report::Report,
    pub html: PathBuf,
    pub html_bytes: usize,
    /// Ctrl-C stopped the job (the report covers what ran).
    pub interrupted: bool,
    /// The plan file, when the plan step wrote one.
    pub plan: Option<PathBuf>,
    /// Which partition was judged.
    pub partition: Partition,
    /// The host's name, as inspect read it.
    pub hostname: Option<String>,
    pub out: PathBuf,
    /// The timer ran NOT REAL-TIME because its cgroup has no RT budget, and the run was not
    /// moved: the cause in a few words (`--rt-cgroup root` fixes it).
    pub rt_cgroup_fix: Option<String>,
}

impl Finished {
    /// Exit status: 130 when interrupted, 1 when the report's verdict is FAIL, else 0.
    pub fn exit_code(&self) -> util::exit::ExitCode {
        use util::exit::ExitCode;
        if self.interrupted {
            ExitCode::Interrupted
        } else if self.report.verdict == Verdict::Fail {
            ExitCode::CheckFailed
        } else {
            ExitCode::Ok
        }
    }
}

fn note(verdict: Verdict, text: impl Into<String>) -> Note {
    Note { verdict, text: text.into() }
}

/// How long each measuring step runs, from the timer length: noise and fsync a third of it,
/// ticks a sixth (whole seconds, at least 2 s each). The one place this is decided: `lowlat
/// check` runs it and `lowlat cluster check` sizes its Jobs' deadlines from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub timer: Duration,
    pub noise: Duration,
    pub ticks: Duration,
    pub fsync: Duration,
}

impl Schedule {
    /// The timer length of `--quick` (about 20 s in all).
    pub const QUICK_TIMER: Duration = Duration::from_secs(9);
    /// The default timer length (about a minute in all).
    pub const DEFAULT_TIMER: Duration = Duration::from_secs(30);
    /// What inspect, plan and verify take before the measurements, about.
    const PREPARE: Duration = Duration::from_secs(3);

    /// The schedule for a timer of `timer` (whole seconds, at least 1).
    pub fn new(timer: Duration) -> Self {
        let timer = Duration::from_secs(timer.as_secs().max(1));
        let part = |div: u64| Duration::from_secs((timer.as_secs() / div).max(2));
        Self { timer, noise: part(3), ticks: part(6), fsync: part(3) }
    }

    /// The schedule a run asks for: `duration`, else the quick or the default timer.
    pub fn for_run(quick: bool, duration: Option<Duration>) -> Self {
        Self::new(duration.unwrap_or(if quick { Self::QUICK_TIMER } else { Self::DEFAULT_TIMER }))
    }

    /// The whole job, about: preparing plus every measuring step.
    pub fn total(&self) -> Duration {
        Self::PREPARE + self.timer + self.noise + self.ticks + self.fsync
    }
}

/// The job in progress: documents read back and notes for the report.
struct Job<'a> {
    cfg: &'a Config,
    docs: Vec<Doc>,
    notes: Vec<Note>,
    interrupted: bool,
    index: usize,
    elapsed: Duration,
    total: Duration,
    plan: Option<plan::Plan>,
}

impl Job<'_> {
    fn run(&mut self, steps: &[Step], on: &mut dyn FnMut(&Event<'_>)) {
        for step in steps {
            self.index += 1;
            if self.interrupted || util::signal::interrupted() {
                self.interrupted = true;
                return;
            }
            let skipped = self.cfg.skip.contains(&step.name);
            let (index, count, elapsed, total) =
                (self.index, Name::ALL.len(), self.elapsed, self.total);
            on(&Event::Step { index, count, step, elapsed, total, skipped });
            if skipped {
                let text = format!("{} skipped (--skip {}).", step.what, step.name);
                self.notes.push(note(Verdict::Skipped, text));
                continue;
            }
            let started = Instant::now();
            // The checkpoint is read only when it changed (every 5 s at most): the measured
            // CPUs never see this loop, which runs where the job runs and sleeps in between.
            let mut seen: Option<(std::time::SystemTime, Option<Live>)> = None;
            let mut tick = |elapsed: Duration| {
                let modified = std::fs::metadata(&step.file).and_then(|m| m.modified()).ok();
                if let Some(m) = modified.filter(|m| seen.is_none_or(|(s, _)| s != *m)) {
                    seen = Some((m, Live::read(&step.file)));
                }
                let live = seen.and_then(|(_, l)| l);
                on(&Event::Running { step, elapsed, live });
            };
            let outcome = if step.args.is_empty() {
                Outcome::Done
            } else {
                step::run(&self.cfg.exe, step, &mut tick)
            };
            self.elapsed += started.elapsed();
            on(&Event::Ended { step, outcome: &outcome, took: started.elapsed() });
            self.record(step, &outcome);
        }
    }

    /// Keep what a step wrote and say in the report what did not happen.
    fn record(&mut self, step: &Step, outcome: &Outcome) {
        match outcome {
            Outcome::Done => self.read(step),
            Outcome::Skipped(why) => {
                self.notes.push(note(Verdict::Skipped, format!("{} skipped: {why}", step.what)))
            }
            Outcome::Failed(why) => self
                .notes
                .push(note(Verdict::Warn, format!("{} did not complete: {why}", step.what))),
            Outcome::Interrupted => {
                // A measurement writes its partial result on Ctrl-C: keep it.
                if let Ok(d) = Doc::load(&step.file) {
                    self.docs.push(d);
                }
                self.notes.push(note(
                    Verdict::Warn,
                    format!("{} interrupted (Ctrl-C): results are partial.", step.what),
                ));
                self.interrupted = true;
            }
        }
    }

    fn read(&mut self, step: &Step) {
        let source = step.file.display().to_string();
        if step.name == Name::Plan {
            match plan::Plan::load(&step.file) {
                Ok(p) => {
                    self.plan = Some(p.clone());
                    self.docs.push(Doc { source, kind: Kind::Plan, body: Body::Plan(Box::new(p)) });
                }
                Err(e) => self.notes.push(note(Verdict::Warn, format!("{}: {e}", step.what))),
            }
            return;
        }
        match Doc::load(&step.file) {
            Ok(d) => self.docs.push(d),
            Err(e) => self.notes.push(note(Verdict::Warn, format!("{}: {e}", step.what))),
        }
    }
}

/// The first three steps: they need nothing but the host. A plan step with no arguments was
/// done in process (the given or the host's own plan written to `plan.yaml`).
fn host_steps(out: &Path, partition: &Partition) -> Vec<Step> {
    let p = |f: &str| out.join(f);
    let s = |x: PathBuf| x.display().to_string();
    let second = Duration::from_secs(1);
    let (plan_what, plan_args) = match partition {
        Partition::Default => (
            "default evaluation plan".to_string(),
            vec!["plan".into(), "-o".into(), s(p("plan.yaml"))],
        ),
        Partition::Given { file, .. } => (format!("the given plan {}", file.display()), Vec::new()),
        Partition::HostOwn(own) => (
            format!(
                "the host's own isolation (CPUs {} isolated on its command line)",
                own.isolated
            ),
            Vec::new(),
        ),
    };
    // The host's own isolation is what verify judges without --plan (its fixes then name no
    // plan file the user never wrote).
    let verify_args = match partition {
        Partition::HostOwn(_) => vec!["verify".into(), "--json".into()],
        _ => vec!["verify".into(), "--plan".into(), s(p("plan.yaml")), "--json".into()],
    };
    vec![
        Step {
            name: Name::Inspect,
            what: "read the host".into(),
            args: vec!["inspect".into(), "--json".into()],
            file: p("inspect.json"),
            stdout_to_file: true,
            expect: second,
        },
        Step {
            name: Name::Plan,
            what: plan_what,
            args: plan_args,
            file: p("plan.yaml"),
            stdout_to_file: false,
            expect: second,
        },
        Step {
            name: Name::Verify,
            what: "check the host against the plan".into(),
            args: verify_args,
            file: p("verify.json"),
            stdout_to_file: true,
            expect: 3 * second,
        },
    ]
}

/// The measurements, on the plan's isolated CPUs (the tools' defaults without a plan).
fn measure_steps(cfg: &Config, plan: Option<&plan::Plan>, fsync_dir: &Path) -> Vec<Step> {
    let p = |f: &str| cfg.out.join(f);
    let json = |f: &str| ["--json".to_string(), p(f).display().to_string()];
    let span = util::duration::format;
    let cpus: Vec<String> =
        match cfg.cpus.as_ref().or(plan.map(|p| &p.isolated)).filter(|s| !s.is_empty()) {
            Some(cpus) => vec!["--cpus".into(), cpus.to_list()],
            None => Vec::new(),
        };
    let measure = |what: &str, d: Duration, extra: &[String], file: &str| {
        let mut args = vec!["measure".to_string(), what.to_string(), "-q".into()];
        args.extend(extra.iter().cloned());
        args.extend(["-D".to_string(), span(d)]);
        args.extend(json(file));
        args.extend(cpus.iter().cloned());
        args
    };
    let housekeeping = match plan.map(|p| &p.reserved).filter(|s| !s.is_empty()) {
        Some(s) if s.len() == 1 => format!("CPU {s}"),
        Some(s) => format!("CPUs {s}"),
        None => "CPUs".into(),
    };
    let Schedule { timer, noise, ticks, fsync } = cfg.schedule;
    let load = ["--load".to_string(), "cpu".into()];
    let threshold = ["--threshold".to_string(), span(cfg.threshold)];
    let rt: Vec<String> = match &cfg.rt_cgroup {
        Some(c) => vec!["--rt-cgroup".into(), c.to_string()],
        None => Vec::new(),
    };
    let mut fsync_args = vec!["measure".to_string(), "fsync".into(), "--dir".into()];
    fsync_args.push(fsync_dir.display().to_string());
    fsync_args.extend(["--duration".to_string(), span(fsync)]);
    fsync_args.extend(json("fsync.json"));
    vec![
        Step {
            name: Name::Timer,
            what: format!("timer latency under CPU load on housekeeping {housekeeping}"),
            args: measure("timer", timer, &[&load[..], &threshold, &rt].concat(), "timer.json"),
            file: p("timer.json"),
            stdout_to_file: false,
            expect: timer,
        },
        Step {
            name: Name::Noise,
            what: "OS noise".into(),
            args: measure("noise", noise, &rt, "noise.json"),
            file: p("noise.json"),
            stdout_to_file: false,
            expect: noise,
        },
        Step {
            name: Name::Ticks,
            what: "timer ticks under a spinner".into(),
            args: measure("ticks", ticks, &[], "ticks.json"),
            file: p("ticks.json"),
            stdout_to_file: false,
            expect: ticks,
        },
        Step {
            name: Name::Fsync,
            what: format!("fsync probe in {}", fsync_dir.display()),
            args: fsync_args,
            file: p("fsync.json"),
            stdout_to_file: false,
            expect: fsync,
        },
    ]
}

/// Run the job: every step, then the report (`lowlat-report.html` in `out`). Signal handling
/// is the caller's (`util::signal::install`): the first Ctrl-C stops the running step, which
/// writes its partial result, the rest is skipped and the report is still written.
pub fn run(cfg: &Config, on: &mut dyn FnMut(&Event<'_>)) -> Result<Finished, Error> {
    std::fs::create_dir_all(&cfg.out)
        .and_then(|()| util::fs::check_writable(&cfg.out.join("lowlat-report.html")))
        .map_err(|source| Error::OutDir { path: cfg.out.clone(), source })?;
    let total = cfg.schedule.total();
    on(&Event::Start { out: &cfg.out, total, root: cfg.root });
    let mut job = Job {
        cfg,
        docs: Vec::new(),
        notes: Vec::new(),
        interrupted: false,
        index: 0,
        elapsed: Duration::ZERO,
        total,
        plan: None,
    };
    if !cfg.root {
        job.notes.push(note(
            Verdict::Skipped,
            "Not root: timer and noise run without SCHED_FIFO and memory locking (numbers are \
             pessimistic), /dev/cpu_dma_latency is not held, and some checks cannot read every \
             task. Run `sudo lowlat check` for a full evaluation.",
        ));
    }
    let partition = cfg.plan.resolve_with(|| host::read(&host::Root::live()));
    match &partition {
        Partition::Given { plan, .. } | Partition::HostOwn(plan) => {
            let path = cfg.out.join("plan.yaml");
            let written = plan.to_yaml().map_err(|e| e.to_string()).and_then(|y| {
                util::fs::write_atomic(&path, y.as_bytes(), 0o644).map_err(|e| e.to_string())
            });
            if let Err(e) = written {
                job.notes
                    .push(note(Verdict::Warn, format!("cannot write {}: {e}", path.display())));
            }
        }
        Partition::Default => {}
    }
    if let Partition::HostOwn(own) = &partition {
        job.notes.push(note(
            Verdict::Info,
            format!(
                "This host is already tuned (isolcpus/nohz_full on its command line): verified \
                 and measured as booted, CPUs {} isolated. `lowlat check --plan FILE` judges \
                 another partition.",
                own.isolated
            ),
        ));
    }
    job.run(&host_steps(&cfg.out, &partition), on);
    if cfg.cpus.is_none() && job.plan.as_ref().is_none_or(|p| p.isolated.is_empty()) {
        job.notes.push(note(
            Verdict::Warn,
            "No isolated CPUs in the evaluation plan (single-core host, or no plan): timer, noise \
             and ticks measure the measurement tools' default CPUs.",
        ));
    }
    // The default probe directory is new and private (never one planted in a shared --out).
    let fsync_dir = match &cfg.fsync_dir {
        Some(d) => {
            let _ = std::fs::create_dir_all(d);
            d.clone()
        }
        None => util::fs::create_unique_dir(&cfg.out, "fsync-probe.")
            .unwrap_or_else(|_| cfg.out.join("fsync-probe")),
    };
    let plan = job.plan.take();
    job.run(&measure_steps(cfg, plan.as_ref(), &fsync_dir), on);
    if cfg.fsync_dir.is_none() {
        let _ = std::fs::remove_dir_all(&fsync_dir);
    }

    let rt = realtime::from_docs(&job.docs, cfg.rt_cgroup.as_ref());
    job.notes.extend(rt.notes);

    let hostname = job.docs.iter().find_map(|d| match &d.body {
        Body::Inspect(h) => h.hostname.clone(),
        _ => None,
    });
    let title = hostname
        .as_ref()
        .map_or_else(|| "lowlat check".to_string(), |n| format!("lowlat check: {n}"));
    let plan_file = plan.as_ref().map(|_| cfg.out.join("plan.yaml"));
    let next = next_for(rt.cgroup_fix.as_deref(), plan_file.as_deref(), &partition, &cfg.out)
        .into_iter()
        .map(|(command, why)| report::model::NextStep { command, why })
        .collect();
    let opts = report::Options {
        title,
        generator: cfg.generator.clone(),
        timer_threshold_ns: u64::try_from(cfg.threshold.as_nanos()).unwrap_or(u64::MAX),
        notes: job.notes,
        next,
        ..report::Options::default()
    };
    let model = report::build(&job.docs, &opts);
    let html = cfg.out.join("lowlat-report.html");
    let html_bytes = report::html::write(&model, &html)
        .map_err(|source| Error::Report { path: html.clone(), source })?;
    Ok(Finished {
        report: model,
        html,
        html_bytes,
        interrupted: job.interrupted,
        plan: plan.map(|_| cfg.out.join("plan.yaml")),
        partition,
        hostname,
        out: cfg.out.clone(),
        rt_cgroup_fix: rt.cgroup_fix,
    })
}

/// The findings worth a line in the terminal: one per section first (worst first), so one
/// noisy section does not hide others, then further warnings and failures; at most six.
pub fn top_findings(model: &report::Report) -> Vec<&Headline> {
    let mut firsts: Vec<&Headline> = model
        .sections
        .iter()
        .filter_map(|s| s.headlines.iter().min_by_key(|h| std::cmp::Reverse(h.verdict)))
        .filter(|h| h.verdict >= Verdict::Warn)
        .collect();
    firsts.sort_by_key(|h| std::cmp::Reverse(h.verdict));
    let rest = model.headlines.iter().filter(|h| h.verdict >= Verdict::Warn);
    let mut top: Vec<&Headline> = Vec::new();
    for h in firsts.into_iter().chain(rest) {
        if top.len() < 6 && !top.contains(&h) {
            top.push(h);
        }
    }
    top.sort_by_key(|h| std::cmp::Reverse(h.verdict));
    top
}

/// The exact next commands: (command, why).
pub fn next_commands(f: &Finished) -> Vec<(String, String)> {
    next_for(f.rt_cgroup_fix.as_deref(), f.plan.as_deref(), &f.partition, &f.out)
}

/// The next commands from what the job knows: the RT-cgroup fix, the plan file, the
/// partition judged, the output directory (the terminal and the report's "Next steps").
fn next_for(
    rt_cgroup_fix: Option<&str>,
    plan: Option<&Path>,
    partition: &Partition,
    out: &Path,
) -> Vec<(String, String)> {
    let mut v = Vec::new();
    if let Some(short) = rt_cgroup_fix {
        v.push((
            "sudo lowlat check --rt-cgroup root".to_string(),
            format!("the timer ran NOT REAL-TIME ({short}): measure from the root cgroup"),
        ));
    }
    match (plan, partition) {
        (Some(_), Partition::HostOwn(_)) => v.push((
            "lowlat verify".to_string(),
            "the host's own isolation, check by check, with each fix".into(),
        )),
        (Some(plan), _) => {
            let plan = plan.display();
            if *partition == Partition::Default {
                v.push((
                    "lowlat plan -o plan.yaml".to_string(),
                    format!("adjust the partition ({plan} is the default)"),
                ));
            }
            v.extend([
                (
                    format!("lowlat render --plan {plan} cmdline --explain"),
                    "the kernel arguments and why".into(),
                ),
                (
                    format!("lowlat apply --plan {plan} --dry-run"),
                    "what the runtime tier would change".into(),
                ),
                (
                    format!("sudo lowlat apply --plan {plan}"),
                    "apply it (journaled; `lowlat revert` undoes)".into(),
                ),
                (format!("lowlat verify --plan {plan}"), "check the effects".into()),
            ]);
        }
        (None, _) => v.push(("lowlat plan -o plan.yaml".into(), "compute a partition".into())),
    }
    // The long run judges the same partition: the given plan, or (after a reboot with the
    // rendered arguments) the host's own isolation.
    let after = match (partition, plan) {
        (Partition::Given { .. } | Partition::Default, Some(p)) => {
            format!("lowlat check --plan {} --duration 12h --out after", p.display())
        }
        _ => "lowlat check --duration 12h --out after".into(),
    };
    v.push((after, "a long run after tuning".into()));
    v.push((
        format!(
            "lowlat report --compare {}/*.json --vs after/*.json -o compare.html",
            out.display()
        ),
        "before vs after".into(),
    ));
    v
}

#[cfg(test)]
mod schedule_tests {
    use super::Schedule;
    use std::time::Duration;

    #[test]
    fn steps_are_parts_of_the_timer_in_whole_seconds_at_least_two() {
        let s = |t: u64| Schedule::new(Duration::from_secs(t));
        let q = Schedule::for_run(true, None);
        assert_eq!(q, s(9));
        assert_eq!(
            (q.noise, q.ticks, q.fsync),
            (Duration::from_secs(3), Duration::from_secs(2), Duration::from_secs(3))
        );
        assert_eq!(q.total(), Duration::from_secs(3 + 9 + 3 + 2 + 3), "--quick: about 20 s");
        assert_eq!(
            Schedule::for_run(false, None).total(),
            Duration::from_secs(3 + 30 + 10 + 5 + 10)
        );
        assert_eq!(
            Schedule::for_run(true, Some(Duration::from_secs(60))),
            s(60),
            "--duration wins"
        );
        // Below a second: one second, never zero; the parts never below 2 s.
        let tiny = Schedule::new(Duration::from_millis(300));
        assert_eq!(
            (tiny.timer, tiny.noise, tiny.ticks),
            (Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(2))
        );
    }
}

/// Which partition was judged, in the document's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionKind {
    Given,
    HostOwn,
    Default,
}

/// A next command and why.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Next {
    pub command: String,
    pub why: String,
}

/// `lowlat check --json`: the verdict, what decided it, what to run next and every file
/// written.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Document {
    pub schema_version: u32,
    /// Always `check`.
    #[schemars(extend("const" = "check"))]
    pub kind: &'static str,
    pub verdict: Verdict,
    pub interrupted: bool,
    pub partition: PartitionKind,
    /// The plan judged (`plan.yaml` in the output directory).
    pub plan: Option<PathBuf>,
    /// Every verdict line of the report, worst first.
    pub headlines: Vec<Headline>,
    /// The top findings the terminal shows (one per section first).
    pub findings: Vec<Headline>,
    pub next: Vec<Next>,
    pub report: PathBuf,
    /// The result files written (those that exist).
    pub files: Vec<PathBuf>,
}

impl Finished {
    /// The `--json` document.
    pub fn document(&self) -> Document {
        let files = [
            "inspect.json",
            "plan.yaml",
            "verify.json",
            "timer.json",
            "noise.json",
            "ticks.json",
            "fsync.json",
        ]
        .iter()
        .map(|f| self.out.join(f))
        .filter(|p| p.is_file())
        .collect();
        Document {
            schema_version: 1,
            kind: "check",
            verdict: self.report.verdict,
            interrupted: self.interrupted,
            partition: match self.partition {
                Partition::Given { .. } => PartitionKind::Given,
                Partition::HostOwn(_) => PartitionKind::HostOwn,
                Partition::Default => PartitionKind::Default,
            },
            plan: self.plan.clone(),
            headlines: self.report.headlines.clone(),
            findings: top_findings(&self.report).into_iter().cloned().collect(),
            next: next_commands(self)
                .into_iter()
                .map(|(command, why)| Next { command, why })
                .collect(),
            report: self.html.clone(),
            files,
        }
    }
}
