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

pub use step::{Name, Outcome, Step};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `lowlat` binary whose subcommands are the steps.
    pub exe: PathBuf,
    /// Directory for the result files and the report.
    pub out: PathBuf,
    /// Timer-latency run length; noise and fsync run a third of it, ticks a sixth (whole
    /// seconds, at least 2 s each).
    pub timer: Duration,
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
    /// A step ended.
    Ended { step: &'a Step, outcome: &'a Outcome, took: Duration },
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

/// Whole seconds, at least `min`.
fn part(d: Duration, div: u64, min: u64) -> Duration {
    Duration::from_secs((d.as_secs() / div).max(min))
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
            let outcome = step::run(&self.cfg.exe, step);
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

/// The first three steps: they need nothing but the host.
fn host_steps(out: &Path) -> Vec<Step> {
    let p = |f: &str| out.join(f);
    let s = |x: PathBuf| x.display().to_string();
    let second = Duration::from_secs(1);
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
            what: "default evaluation plan".into(),
            args: vec!["plan".into(), "-o".into(), s(p("plan.yaml"))],
            file: p("plan.yaml"),
            stdout_to_file: false,
            expect: second,
        },
        Step {
            name: Name::Verify,
            what: "check the host against the plan".into(),
            args: vec!["verify".into(), "--plan".into(), s(p("plan.yaml")), "--json".into()],
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
    let cpus: Vec<String> = match plan.map(|p| &p.isolated).filter(|s| !s.is_empty()) {
        Some(iso) => vec!["--cpus".into(), iso.to_list()],
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
    let (noise, ticks, fsync) =
        (part(cfg.timer, 3, 2), part(cfg.timer, 6, 2), part(cfg.timer, 3, 2));
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
            args: measure("timer", cfg.timer, &[&load[..], &threshold, &rt].concat(), "timer.json"),
            file: p("timer.json"),
            stdout_to_file: false,
            expect: cfg.timer,
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
    let timer = Duration::from_secs(cfg.timer.as_secs().max(1));
    let cfg = &Config { timer, ..cfg.clone() };
    let total =
        Duration::from_secs(3) + timer + part(timer, 3, 2) + part(timer, 6, 2) + part(timer, 3, 2);
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
    job.run(&host_steps(&cfg.out), on);
    if job.plan.as_ref().is_none_or(|p| p.isolated.is_empty()) {
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

    let title = job
        .docs
        .iter()
        .find_map(|d| match &d.body {
            Body::Inspect(h) => h.hostname.as_ref().map(|n| format!("lowlat check: {n}")),
            _ => None,
        })
        .unwrap_or_else(|| "lowlat check".to_string());
    let opts = report::Options {
        title,
        generator: cfg.generator.clone(),
        timer_threshold_ns: u64::try_from(cfg.threshold.as_nanos()).unwrap_or(u64::MAX),
        notes: job.notes,
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
    let mut v = Vec::new();
    if let Some(short) = &f.rt_cgroup_fix {
        v.push((
            "sudo lowlat check --rt-cgroup root".to_string(),
            format!("the timer ran NOT REAL-TIME ({short}): measure from the root cgroup"),
        ));
    }
    match &f.plan {
        Some(plan) => {
            let plan = plan.display();
            v.extend([
                (
                    "lowlat plan -o plan.yaml".to_string(),
                    format!("adjust the partition ({plan} is the default)"),
                ),
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
        None => v.push(("lowlat plan -o plan.yaml".into(), "compute a partition".into())),
    }
    v.push(("lowlat check --duration 12h --out after".into(), "a long run after tuning".into()));
    v.push((
        format!(
            "lowlat report --compare {}/*.json --vs after/*.json -o compare.html",
            f.out.display()
        ),
        "before vs after".into(),
    ));
    v
}
