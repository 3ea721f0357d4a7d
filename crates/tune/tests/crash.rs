//! The journal's promise, proven on a real apply against a directory laid out like `/` (the
//! real writer, the real journal file, `Site::revert` as `lowlat revert --sysroot` runs it):
//! whatever step the apply stops at — a crash before any journal append or host write, a
//! journal line torn at any byte, a failed append, read or write, a rollback write failing at
//! any index — `revert` alone brings back every file byte for byte.
//!
//! Crashes unwind out of the transaction (`tune::fault`, `Stop::Unwind`): no rollback runs, as
//! after a SIGKILL; `crates/lowlat/tests/cli/apply.rs` does the same to the real process, killed
//! with SIGKILL at each step.

use std::collections::BTreeMap;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use cpuset::CpuSet;
use plan::{Plan, PlanOptions, RuntimeItem};
use tune::fault::{Action, Crashed, Faults, Schedule};
use tune::journal::{self, Journal};
use tune::real::RealWriter;
use tune::txn::{self, ApplyError, ApplyReport};
use tune::{plan_changes, Change, Options, Reverted, Site};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
    fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
}

/// A 2-CPU host tree: IRQs, workqueues, sysctls, THP.
fn sandbox(r: &Path) {
    write(r, "proc/cmdline", "root=/dev/vda console=ttyS0\n");
    write(r, "proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");
    write(r, "sys/devices/system/cpu/online", "0-1\n");
    write(r, "sys/devices/system/cpu/possible", "0-1\n");
    for irq in [24, 25, 26] {
        write(r, &format!("proc/irq/{irq}/smp_affinity_list"), "0-1\n");
        write(r, &format!("proc/irq/{irq}/smp_affinity"), "3\n");
    }
    write(r, "proc/irq/default_smp_affinity", "3\n");
    write(r, "sys/devices/virtual/workqueue/cpumask", "3\n");
    write(r, "sys/devices/virtual/workqueue/writeback/cpumask", "3\n");
    write(r, "sys/bus/workqueue/devices/writeback/cpumask", "3\n");
    write(r, "proc/sys/kernel/timer_migration", "1\n");
    write(r, "proc/sys/vm/stat_interval", "1\n");
    write(r, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
}

fn plan() -> Plan {
    let hk = CpuSet::from_cpus([0]);
    // Multi-byte reasons: a torn line can end inside a character.
    let r = |s: &str| format!("{s} — ∩ µs");
    Plan {
        schema_version: plan::SCHEMA_VERSION,
        name: "crash".into(),
        host: None,
        reserved: hk.clone(),
        isolated: CpuSet::from_cpus([1]),
        offlined: CpuSet::new(),
        options: PlanOptions::default(),
        kernel_args: vec![],
        runtime: vec![
            RuntimeItem::IrqAffinity { cpus: hk.clone(), reason: r("irqs") },
            RuntimeItem::WorkqueueMask { cpus: hk, reason: r("workqueues") },
            RuntimeItem::Sysctl {
                name: "kernel.timer_migration".into(),
                value: "0".into(),
                reason: r("timers"),
            },
            RuntimeItem::Sysctl {
                name: "vm.stat_interval".into(),
                value: "10".into(),
                reason: r("vmstat"),
            },
            RuntimeItem::File {
                path: "sys/kernel/mm/transparent_hugepage/enabled".into(),
                value: "never".into(),
                reason: r("thp"),
            },
        ],
        rationale: vec![],
        smt_disabled: CpuSet::new(),
    }
}

/// Every file of a tree, path → bytes (apply's own lock under `run/` aside).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                if p != root.join("run") {
                    stack.push(p);
                }
            } else {
                let rel = p.strip_prefix(root).map(Path::to_path_buf).unwrap_or_default();
                out.insert(rel, fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in snapshot(from) {
        let p = to.join(rel);
        fs::create_dir_all(p.parent().unwrap_or(to)).unwrap_or_else(|e| panic!("{e}"));
        fs::write(&p, bytes).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A scratch directory, in memory (`/dev/shm`) when the machine has one: these tests make
/// thousands of journals, and every append is an fsync.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() };
    dir.or_else(|_| tempfile::tempdir()).unwrap_or_else(|e| panic!("{e}"))
}

/// One apply's world: a fresh sandbox and a journal beside it.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        let dir = scratch();
        sandbox(&dir.path().join("root"));
        World { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    fn journal(&self) -> PathBuf {
        self.dir.path().join("state/journal.jsonl")
    }

    /// A copy of this world (sandbox and journal) to try something on.
    fn fork(&self) -> World {
        let w = World { dir: scratch() };
        copy_tree(&self.root(), &w.root());
        if let Ok(bytes) = fs::read(self.journal()) {
            Journal::open(&w.journal()).unwrap_or_else(|e| panic!("{e}"));
            fs::write(w.journal(), bytes).unwrap_or_else(|e| panic!("{e}"));
        }
        w
    }

    /// The plan's changes on this sandbox.
    fn changes(&self) -> Vec<Change> {
        let root = host::Root::open(&self.root()).unwrap_or_else(|e| panic!("{e}"));
        let host = host::read(&root);
        plan_changes(&plan(), &host, &Options::default()).unwrap_or_else(|e| panic!("{e}")).changes
    }

    /// Apply through the real writer and journal, misbehaving as `schedule` says.
    fn apply(
        &self,
        schedule: Schedule,
    ) -> (Faults, Result<Result<ApplyReport, ApplyError>, Crashed>) {
        let changes = self.changes();
        let faults = Faults::new(schedule.unwinding());
        let mut writer = RealWriter::under(self.root()).unwrap_or_else(|e| panic!("{e}"));
        let mut j = Journal::open(&self.journal()).unwrap_or_else(|e| panic!("{e}"));
        let run = catch_unwind(AssertUnwindSafe(|| {
            txn::apply(&mut faults.writer(&mut writer), &mut faults.log(&mut j), &changes, None)
        }));
        let run = run.map_err(|p| match p.downcast::<Crashed>() {
            Ok(c) => *c,
            Err(p) => std::panic::resume_unwind(p),
        });
        (faults, run)
    }

    /// `lowlat revert --sysroot` on this world: must finish with nothing left.
    fn revert(&self, what: &str) {
        let mut site = Site::sysroot(&self.root()).unwrap_or_else(|e| panic!("{e}"));
        let done = site.revert(&self.journal(), false).unwrap_or_else(|e| panic!("{what}: {e}"));
        done.check().unwrap_or_else(|e| panic!("{what}: {e}\n{done}"));
        assert!(
            matches!(
                done,
                Reverted::Restored { kept_as: Some(_), .. } | Reverted::NoJournal { .. }
            ),
            "{what}: {done}"
        );
    }
}

/// A clean run: its step count, which steps are appends, its read count.
fn clean_run() -> (usize, Vec<usize>, usize) {
    let w = World::new();
    let (faults, run) = w.apply(Schedule::default());
    let report = run.unwrap_or_else(|c| panic!("{c:?}")).unwrap_or_else(|e| panic!("{e}"));
    assert!(report.applied.len() >= 8, "too few changes to be worth it: {report:?}");
    (faults.steps(), faults.append_steps(), faults.reads())
}

#[test]
fn a_crash_before_any_step_reverts_byte_for_byte() {
    let (steps, appends, _) = clean_run();
    let before = snapshot(&World::new().root());
    let mut changed = 0;
    for k in 1..=steps {
        let w = World::new();
        let (_, run) = w.apply(Schedule::at(k, Action::Crash));
        assert_eq!(run.err(), Some(Crashed { step: k }), "step {k}");
        changed += usize::from(snapshot(&w.root()) != before);
        w.revert(&format!("crash before step {k}"));
        assert_eq!(snapshot(&w.root()), before, "crash before step {k}: not restored");
    }
    // A crash after the last step is a finished apply: revert too.
    let w = World::new();
    let (_, run) = w.apply(Schedule::default());
    assert!(run.is_ok_and(|r| r.is_ok()));
    assert_ne!(snapshot(&w.root()), before);
    w.revert("after the last step");
    assert_eq!(snapshot(&w.root()), before);
    eprintln!("crash indices covered: {steps} steps ({} appends) + the end", appends.len());
    assert!(changed + 3 >= steps - appends.len(), "most crashes leave the host changed");
}

/// The state right after append `k` (nothing after it happened), with that last record then
/// cut at every byte: revert alone restores; so does an apply appending after the torn line
/// followed by a revert.
#[test]
fn a_last_record_torn_at_any_byte_reverts_byte_for_byte() {
    let (steps, appends, _) = clean_run();
    let before = snapshot(&World::new().root());
    let mut offsets = 0;
    for &k in &appends {
        let base = World::new();
        let (_, run) = base.apply(Schedule::at(k + 1, Action::Crash));
        if k < steps {
            assert_eq!(run.err(), Some(Crashed { step: k + 1 }));
        }
        let bytes = fs::read(base.journal()).unwrap_or_else(|e| panic!("{e}"));
        let body = &bytes[..bytes.len() - 1];
        let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        for cut in start..bytes.len() {
            let what =
                format!("append {k} torn at byte {} of {}", cut - start, bytes.len() - start);
            let w = base.fork();
            fs::write(w.journal(), &bytes[..cut]).unwrap_or_else(|e| panic!("{e}"));
            w.revert(&what);
            assert_eq!(snapshot(&w.root()), before, "{what}: revert alone did not restore");
            offsets += 1;
        }
        // The torn journal appended to by another apply, then reverted (once per append, at
        // the middle of the line, often inside a multi-byte character).
        let w = base.fork();
        let cut = start + (bytes.len() - start) / 2;
        fs::write(w.journal(), &bytes[..cut]).unwrap_or_else(|e| panic!("{e}"));
        let (_, run) = w.apply(Schedule::default());
        assert!(run.is_ok_and(|r| r.is_ok()), "append {k}: apply after a torn line");
        w.revert(&format!("append {k} torn, then applied again"));
        assert_eq!(snapshot(&w.root()), before, "append {k}: torn, applied, reverted");
    }
    eprintln!("torn offsets covered: {offsets} over {} appends", appends.len());
    assert!(offsets > 1000, "{offsets}");
}

#[test]
fn an_append_failing_at_any_index_rolls_back_and_reverts() {
    let (_, appends, _) = clean_run();
    let before = snapshot(&World::new().root());
    for &k in &appends {
        for action in [Action::Fail, Action::FailFrom] {
            let w = World::new();
            let (_, run) = w.apply(Schedule::at(k, action));
            match run {
                Ok(Err(ApplyError::Journal(_))) if k == 1 => {}
                Ok(Err(ApplyError::RolledBack { .. })) if k > 1 => {}
                other => panic!("append {k} {action:?}: expected a rollback, got {other:?}"),
            }
            assert_eq!(snapshot(&w.root()), before, "append {k} {action:?}: not rolled back");
            w.revert(&format!("append {k} {action:?}"));
            assert_eq!(snapshot(&w.root()), before);
        }
    }
}

#[test]
fn a_read_failing_at_any_index_rolls_back_or_is_retried() {
    let (_, _, reads) = clean_run();
    let before = snapshot(&World::new().root());
    for r in 1..=reads {
        let w = World::new();
        let schedule = Schedule { fail_reads: [r].into(), ..Default::default() };
        let (_, run) = w.apply(schedule);
        assert!(matches!(run, Ok(Err(ApplyError::RolledBack { .. }))), "read {r}: {run:?}");
        assert_eq!(snapshot(&w.root()), before, "read {r}");
        w.revert(&format!("apply read {r}"));
        assert_eq!(snapshot(&w.root()), before);
    }
    // Revert's own reads failing: what it could not read stays for the next revert.
    let applied = World::new();
    let (_, run) = applied.apply(Schedule::default());
    assert!(run.is_ok_and(|r| r.is_ok()));
    let records = journal::read(&applied.journal()).ok().flatten().unwrap_or_default();
    let changes = records.iter().filter(|r| matches!(r, journal::Record::Change { .. })).count();
    for r in 1..=changes {
        let w = applied.fork();
        let faults =
            Faults::new(Schedule { fail_reads: [r].into(), ..Default::default() }.unwinding());
        let mut writer = RealWriter::under(w.root()).unwrap_or_else(|e| panic!("{e}"));
        let rev = txn::revert(&mut faults.writer(&mut writer), &records)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rev.failed.len(), 1, "revert read {r}");
        assert_ne!(snapshot(&w.root()), before);
        w.revert(&format!("after revert read {r} failed"));
        assert_eq!(snapshot(&w.root()), before, "revert read {r}");
    }
}

/// A host write fails at step `t`; then rollback write `j` fails too (or every one does):
/// apply reports what it left, and revert finishes the job.
#[test]
fn a_rollback_write_failing_at_any_index_is_finished_by_revert() {
    let (steps, appends, _) = clean_run();
    let before = snapshot(&World::new().root());
    let writes: Vec<usize> = (1..=steps).filter(|s| !appends.contains(s)).collect();
    let mut cases = 0;
    for (i, &t) in writes.iter().enumerate() {
        // Rollback writes are the next steps after t, one per change applied before it.
        for j in 1..=i {
            for (action, left) in [(Action::Fail, 1), (Action::FailFrom, i)] {
                let w = World::new();
                let (_, run) = w.apply(Schedule::at(t, Action::Fail).and(t + j, action));
                match &run {
                    Ok(Err(ApplyError::Partial { left: l, .. })) => {
                        let want = if action == Action::Fail { left } else { i - j + 1 };
                        assert_eq!(l.len(), want, "write {t}, rollback {j} {action:?}: {l:?}");
                    }
                    other => panic!("write {t}, rollback {j}: expected partial, got {other:?}"),
                }
                assert_ne!(snapshot(&w.root()), before);
                w.revert(&format!("write {t} failed, rollback write {j} {action:?}"));
                assert_eq!(snapshot(&w.root()), before, "write {t}, rollback {j} {action:?}");
                cases += 1;
            }
        }
    }
    eprintln!("rollback failure cases: {cases} over {} writes", writes.len());
    assert!(cases > 40, "{cases}");
}
