//! Fault injection for the crash tests: wrap the [`Writer`] and the journal ([`Log`]) of a
//! transaction, count its **steps** — every journal append and every host write, rollback
//! writes included, 1-based, in the order they happen — and at chosen steps crash, tear the
//! journal line being appended, or fail; reads are counted apart and can fail too.
//!
//! A crash either kills the process with SIGKILL (no rollback, no destructor, no core dump:
//! what `kill -9` or a power cut leaves) or, for in-process tests, unwinds with a [`Crashed`]
//! payload through `std::panic::resume_unwind` (no rollback either: the transaction only rolls
//! back on an error it returns; the panic hook is not run).
//!
//! `lowlat apply` honours the schedule in the `LOWLAT_FAULT` environment variable in debug
//! builds only ([`from_env`]); release builds never read it. Syntax: comma-separated
//! `crash@K` (stop before step K), `tear@K:B` (step K is a journal append: write its first B
//! bytes, then stop), `fail@K` (step K fails), `fail+@K` (step K and every later step of the
//! same kind — append or write — fail), `fail-read@K` (read K fails).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::str::FromStr;

use crate::journal::{Journal, JournalError, Log, Record};
use crate::target::Target;
use crate::writer::{ErrorKind, WriteError, Writer};

/// What happens at a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Stop before the step.
    Crash,
    /// A journal append: write this many bytes of its line, then stop (a crash at any other
    /// step).
    Tear(usize),
    /// The step fails (an I/O error for an append, `Failed` for a write).
    Fail,
    /// The step fails, and so does every later step of the same kind (a full disk, a host
    /// that refuses every write).
    FailFrom,
}

/// How a crash stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stop {
    /// SIGKILL to the process itself.
    #[default]
    Kill,
    /// Unwind with a [`Crashed`] payload (in-process tests catch it).
    Unwind,
}

/// The payload of an unwinding crash: the step it stopped before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crashed {
    pub step: usize,
}

/// Which steps and reads misbehave, and how.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schedule {
    pub steps: BTreeMap<usize, Action>,
    pub fail_reads: BTreeSet<usize>,
    pub stop: Stop,
}

impl Schedule {
    /// One action at step `k`.
    pub fn at(k: usize, action: Action) -> Self {
        Schedule { steps: [(k, action)].into(), ..Default::default() }
    }

    /// Crash by unwinding instead of killing the process.
    pub fn unwinding(mut self) -> Self {
        self.stop = Stop::Unwind;
        self
    }

    /// Also do `action` at step `k`.
    pub fn and(mut self, k: usize, action: Action) -> Self {
        self.steps.insert(k, action);
        self
    }
}

impl FromStr for Schedule {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut out = Schedule::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = || {
                format!(
                    "fault {item:?}: expected crash@K, tear@K:B, fail@K, fail+@K or fail-read@K"
                )
            };
            let (what, at) = item.split_once('@').ok_or_else(bad)?;
            let num = |t: &str| t.parse::<usize>().map_err(|_| bad());
            match what {
                "crash" => out.steps.insert(num(at)?, Action::Crash),
                "fail" => out.steps.insert(num(at)?, Action::Fail),
                "fail+" => out.steps.insert(num(at)?, Action::FailFrom),
                "tear" => {
                    let (k, b) = at.split_once(':').ok_or_else(bad)?;
                    out.steps.insert(num(k)?, Action::Tear(num(b)?))
                }
                "fail-read" => {
                    out.fail_reads.insert(num(at)?);
                    None
                }
                _ => return Err(bad()),
            };
        }
        Ok(out)
    }
}

/// The schedule in `LOWLAT_FAULT` (debug builds only; `None` when unset). A schedule that does
/// not parse is reported on stderr and ignored.
#[cfg(debug_assertions)]
pub fn from_env() -> Option<Schedule> {
    let text = std::env::var("LOWLAT_FAULT").ok()?;
    match text.parse() {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("lowlat: LOWLAT_FAULT ignored: {e}");
            None
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Append,
    Write,
}

#[derive(Debug, Default)]
struct State {
    schedule: Schedule,
    steps: usize,
    reads: usize,
    /// The steps that were journal appends.
    appends: Vec<usize>,
    failing: Vec<Kind>,
}

impl State {
    /// Count a step of `kind`; what to do about it.
    fn step(&mut self, kind: Kind) -> Option<Action> {
        self.steps += 1;
        if kind == Kind::Append {
            self.appends.push(self.steps);
        }
        if self.failing.contains(&kind) {
            return Some(Action::Fail);
        }
        let action = self.schedule.steps.get(&self.steps).copied();
        if action == Some(Action::FailFrom) {
            self.failing.push(kind);
        }
        action
    }

    fn crash(&self) -> ! {
        match self.schedule.stop {
            Stop::Kill => {
                // SAFETY: kill(2) on our own pid with a signal number; no memory is passed.
                unsafe { libc::kill(std::process::id() as libc::pid_t, libc::SIGKILL) };
                // SIGKILL cannot be caught: not reached, unless the kernel refused it.
                std::process::abort()
            }
            Stop::Unwind => std::panic::resume_unwind(Box::new(Crashed { step: self.steps })),
        }
    }
}

/// One schedule shared by a wrapped writer and a wrapped journal.
#[derive(Debug, Clone, Default)]
pub struct Faults(Rc<RefCell<State>>);

impl Faults {
    pub fn new(schedule: Schedule) -> Self {
        Faults(Rc::new(RefCell::new(State { schedule, ..Default::default() })))
    }

    /// Steps taken so far (a clean run's count bounds the indices worth testing).
    pub fn steps(&self) -> usize {
        self.0.borrow().steps
    }

    /// The steps so far that were journal appends (the others were host writes).
    pub fn append_steps(&self) -> Vec<usize> {
        self.0.borrow().appends.clone()
    }

    /// Reads so far.
    pub fn reads(&self) -> usize {
        self.0.borrow().reads
    }

    /// `writer`, misbehaving on schedule.
    pub fn writer<'a>(&self, writer: &'a mut dyn Writer) -> FaultyWriter<'a> {
        FaultyWriter { inner: writer, faults: self.clone() }
    }

    /// `journal`, misbehaving on schedule.
    pub fn log<'a>(&self, journal: &'a mut Journal) -> FaultyLog<'a> {
        FaultyLog { inner: journal, faults: self.clone() }
    }

    fn step(&self, kind: Kind) -> Option<Action> {
        self.0.borrow_mut().step(kind)
    }

    fn crash(&self) -> ! {
        let state = self.0.borrow();
        state.crash()
    }
}

/// A [`Writer`] that crashes or fails on schedule.
pub struct FaultyWriter<'a> {
    inner: &'a mut dyn Writer,
    faults: Faults,
}

impl Writer for FaultyWriter<'_> {
    fn read(&mut self, target: &Target) -> Result<String, WriteError> {
        let fail = {
            let mut s = self.faults.0.borrow_mut();
            s.reads += 1;
            s.schedule.fail_reads.contains(&s.reads)
        };
        if fail {
            return Err(WriteError::new(ErrorKind::Failed, target, "injected read failure"));
        }
        self.inner.read(target)
    }

    fn write(&mut self, target: &Target, value: &str) -> Result<(), WriteError> {
        match self.faults.step(Kind::Write) {
            Some(Action::Crash | Action::Tear(_)) => self.faults.crash(),
            Some(Action::Fail | Action::FailFrom) => {
                Err(WriteError::new(ErrorKind::Failed, target, "injected write failure"))
            }
            None => self.inner.write(target, value),
        }
    }

    fn boot_id(&mut self) -> String {
        self.inner.boot_id()
    }
}

/// A journal that crashes, tears or fails on schedule.
pub struct FaultyLog<'a> {
    inner: &'a mut Journal,
    faults: Faults,
}

impl Log for FaultyLog<'_> {
    fn append(&mut self, record: &Record) -> Result<(), JournalError> {
        match self.faults.step(Kind::Append) {
            Some(Action::Crash) => self.faults.crash(),
            Some(Action::Tear(n)) => {
                // A failure to tear still stops here: the crash is the point.
                let _ = self.inner.tear(record, n);
                self.faults.crash()
            }
            Some(Action::Fail | Action::FailFrom) => Err(JournalError::Io {
                path: self.inner.path().to_path_buf(),
                source: std::io::Error::other("injected append failure"),
            }),
            None => self.inner.append(record),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse() {
        let s: Schedule =
            "crash@3, tear@4:17,fail@5,fail+@6,fail-read@2".parse().unwrap_or_default();
        assert_eq!(
            s.steps,
            [(3, Action::Crash), (4, Action::Tear(17)), (5, Action::Fail), (6, Action::FailFrom)]
                .into()
        );
        assert_eq!(s.fail_reads, [2].into());
        assert_eq!(s.stop, Stop::Kill);
        for bad in ["crash", "crash@x", "tear@3", "boom@1"] {
            assert!(bad.parse::<Schedule>().is_err(), "{bad}");
        }
    }

    #[test]
    fn steps_count_appends_and_writes_and_fail_from_sticks() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut j = Journal::open(&dir.path().join("j")).unwrap_or_else(|e| panic!("{e}"));
        let mut fake = crate::fake::FakeWriter::new().with_file("/proc/sys/vm/stat_interval", "1");
        let f = Faults::new(Schedule::at(2, Action::FailFrom));
        let t = Target::file("/proc/sys/vm/stat_interval", crate::Format::Text);
        let rec = Record::Commit { time: String::new(), applied: 0, refused: 0 };
        assert!(f.log(&mut j).append(&rec).is_ok(), "step 1");
        assert!(f.writer(&mut fake).write(&t, "2").is_err(), "step 2 fails");
        assert!(f.log(&mut j).append(&rec).is_ok(), "appends still work (step 3)");
        assert!(f.writer(&mut fake).write(&t, "3").is_err(), "writes keep failing (step 4)");
        assert_eq!(f.steps(), 4);
        assert_eq!(f.append_steps(), vec![1, 3]);
        assert_eq!(fake.files["/proc/sys/vm/stat_interval"], "1");
        let crash = Faults::new(Schedule::at(1, Action::Crash).unwinding());
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = crash.writer(&mut fake).write(&t, "4");
        }));
        let payload = caught.err().and_then(|p| p.downcast::<Crashed>().ok());
        assert_eq!(payload.map(|c| *c), Some(Crashed { step: 1 }));
        assert_eq!(fake.files["/proc/sys/vm/stat_interval"], "1", "stopped before the write");
    }
}
