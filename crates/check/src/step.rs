//! One step of the job: a subcommand of the same `lowlat` binary run as a child process that
//! writes one file, with a time limit, and an interrupt passed on to it so it writes its
//! partial result.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The steps, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Name {
    Inspect,
    Plan,
    Verify,
    Timer,
    Noise,
    Ticks,
    Fsync,
}

impl Name {
    pub const ALL: [Name; 7] = [
        Name::Inspect,
        Name::Plan,
        Name::Verify,
        Name::Timer,
        Name::Noise,
        Name::Ticks,
        Name::Fsync,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Name::Inspect => "inspect",
            Name::Plan => "plan",
            Name::Verify => "verify",
            Name::Timer => "timer",
            Name::Noise => "noise",
            Name::Ticks => "ticks",
            Name::Fsync => "fsync",
        }
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A step name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no such step; the steps are inspect, plan, verify, timer, noise, ticks, fsync")]
pub struct UnknownStep;

impl std::str::FromStr for Name {
    type Err = UnknownStep;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Name::ALL.into_iter().find(|n| n.as_str() == s).ok_or(UnknownStep)
    }
}

impl util::exit::Classify for UnknownStep {
    fn exit_code(&self) -> util::exit::ExitCode {
        util::exit::ExitCode::Usage
    }
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Its result file was written.
    Done,
    /// Not run, with the reason.
    Skipped(String),
    /// Ran but produced no result, with the reason.
    Failed(String),
    Interrupted,
}

/// A step to run: `lowlat ARGS…` writing `file`.
#[derive(Debug, Clone)]
pub struct Step {
    pub name: Name,
    /// What it does, for people (`timer latency under CPU load on housekeeping CPUs 0,4`).
    pub what: String,
    pub args: Vec<String>,
    /// The file the step writes (its stdout is captured into it when `stdout_to_file`).
    pub file: PathBuf,
    pub stdout_to_file: bool,
    /// Expected run time: progress, and the time limit (`expect × 1.5 + 30 s`).
    pub expect: Duration,
}

impl Step {
    /// The longest the step may run before it is stopped.
    pub fn limit(&self) -> Duration {
        self.expect + Duration::from_secs(30) + self.expect / 2
    }
}

/// The last lines of a child's stderr, for a note.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(2);
    lines.get(start..).map(|l| l.join(" / ")).unwrap_or_default()
}

/// Ask our own child to stop as Ctrl-C would (it writes its partial result).
fn interrupt(child: &Child) {
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_child(child),
        rustix::process::Signal::INT,
    );
}

/// Wait for the child: `None` when it was stopped (time limit or interrupt). `tick` is called
/// about once a second with the time so far.
fn wait(
    child: &mut Child,
    limit: Duration,
    tick: &mut dyn FnMut(Duration),
) -> (Option<ExitStatus>, bool) {
    let started = Instant::now();
    let mut ticked = Duration::ZERO;
    let mut signalled_at: Option<Instant> = None;
    let mut forwarded = false;
    loop {
        if signalled_at.is_none() && util::signal::interrupted() {
            signalled_at = Some(Instant::now());
        }
        let since_signal = signalled_at.map(|t| t.elapsed());
        match child.try_wait() {
            Ok(Some(_)) if since_signal.is_some() => return (None, true),
            Ok(Some(st)) => return (Some(st), false),
            // Ctrl-C reaches the child too (same process group). If only we were signalled
            // (SIGTERM to our pid), pass an interrupt on to our child so it writes its partial
            // result, and stop it outright if it has not finished 5 s later.
            Ok(None)
                if !forwarded && since_signal.is_some_and(|d| d > Duration::from_millis(500)) =>
            {
                forwarded = true;
                interrupt(child);
            }
            Ok(None)
                if since_signal.is_some_and(|d| d > Duration::from_secs(5))
                    || started.elapsed() > limit =>
            {
                let _ = child.kill();
                let _ = child.wait();
                return (None, since_signal.is_some());
            }
            Ok(None) => {
                std::thread::sleep(Duration::from_millis(100));
                let t = started.elapsed();
                if t >= ticked + Duration::from_secs(1) {
                    ticked = t;
                    tick(t);
                }
            }
            Err(_) => return (None, since_signal.is_some()),
        }
    }
}

/// Run one step as a child process of `exe` with its time limit; `tick` about once a second.
pub fn run(exe: &Path, step: &Step, tick: &mut dyn FnMut(Duration)) -> Outcome {
    let mut cmd = Command::new(exe);
    cmd.args(&step.args).stdin(Stdio::null()).stderr(Stdio::piped());
    let _ = std::fs::remove_file(&step.file);
    if step.stdout_to_file {
        // A new file (O_EXCL, O_NOFOLLOW): nothing planted at its name is written through.
        match util::fs::create_new(&step.file, 0o644) {
            Ok(f) => cmd.stdout(f),
            Err(e) => {
                return Outcome::Failed(format!("cannot create {}: {e}", step.file.display()))
            }
        };
    } else {
        cmd.stdout(Stdio::null());
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(format!("cannot start {}: {e}", exe.display())),
    };
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut e) = stderr {
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
        }
        s
    });
    let (status, interrupted) = wait(&mut child, step.limit(), tick);
    let err = reader.join().unwrap_or_default();
    // Whole: a plan file with content, or a JSON document that parses.
    let produced = std::fs::read_to_string(&step.file).is_ok_and(|t| {
        if step.name == Name::Plan {
            !t.is_empty()
        } else {
            serde_json::from_str::<serde::de::IgnoredAny>(&t).is_ok()
        }
    });
    let code = |st: ExitStatus| st.code().unwrap_or(-1);
    match status {
        None if interrupted => Outcome::Interrupted,
        None => Outcome::Failed(format!(
            "stopped after {} (time limit)",
            util::duration::format(step.limit())
        )),
        Some(st) if st.code() == Some(130) => Outcome::Interrupted,
        Some(_) if produced => Outcome::Done,
        Some(st) if err.contains("not available in this build") => Outcome::Skipped(format!(
            "`lowlat {}` is not in this build yet (exit {})",
            step.args.first().map_or("", |s| s.as_str()),
            code(st)
        )),
        Some(st) => Outcome::Failed(format!("exit {}: {}", code(st), tail(&err))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print() {
        assert_eq!("ticks".parse::<Name>(), Ok(Name::Ticks));
        assert!("timr".parse::<Name>().unwrap_err().to_string().contains("no such step"));
        assert!(Name::ALL.iter().all(|n| n.as_str().parse::<Name>() == Ok(*n)));
        assert_eq!(tail("a\n\nb\nc\n"), "b / c");
    }

    #[test]
    fn a_child_writes_its_file_or_fails_with_its_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let step = |args: &[&str], file: &str| Step {
            name: Name::Inspect,
            what: "x".into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            file: dir.path().join(file),
            stdout_to_file: true,
            expect: Duration::from_secs(1),
        };
        let sh = Path::new("/bin/sh");
        let mut ticks = Vec::new();
        let mut run = |s: &Step| run(sh, s, &mut |t| ticks.push(t));
        assert_eq!(run(&step(&["-c", "echo '{}'"], "a.json")), Outcome::Done);
        assert_eq!(
            run(&step(&["-c", "echo oops >&2; exit 3"], "b.json")),
            Outcome::Failed("exit 3: oops".into())
        );
        assert_eq!(run(&step(&["-c", "exit 130"], "c.json")), Outcome::Interrupted);
        // A step that runs a while is ticked about once a second.
        assert_eq!(run(&step(&["-c", "sleep 2.5; echo '{}'"], "d.json")), Outcome::Done);
        assert!(ticks.len() >= 2, "{ticks:?}");
    }
}
