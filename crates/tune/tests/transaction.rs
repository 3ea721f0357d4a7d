//! Apply / rollback / revert against the recording fake host: fault injection at every write,
//! rollback failure, refusals, task identity, other-boot refusal, idempotent revert.

use cpuset::CpuSet;
use host::{Host, Irq, Task, Workqueues};
use plan::{Plan, PlanOptions, RuntimeItem};
use tune::fake::FakeWriter;
use tune::fault::{Action, Faults, Schedule};
use tune::journal::{self, Journal, Record};
use tune::txn::{self, ApplyError};
use tune::{plan_changes, Options, Writer};

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn task(pid: u32, comm: &str, aff: &str, kthread: bool, per_cpu: bool, cgroup: &str) -> Task {
    Task {
        pid,
        tid: pid,
        comm: comm.into(),
        kthread,
        per_cpu_kthread: per_cpu,
        allowed_cpus: Some(set(aff)),
        start_time: 1000 + u64::from(pid),
        cgroup: Some(cgroup.into()),
        ..Default::default()
    }
}

/// A 4-CPU host model and the matching fake: 3 IRQs (one managed that refuses), workqueues,
/// kthreads (one per-CPU), user tasks (one in kubepods, one allowlisted).
fn fixture() -> (Host, FakeWriter) {
    let mut host = Host::default();
    host.cpus.online = Some(set("0-3"));
    host.cpus.possible = Some(set("0-3"));
    host.irqs = vec![
        Irq { irq: 24, affinity: Some(set("0-3")), ..Default::default() },
        Irq { irq: 25, affinity: Some(set("2")), ..Default::default() },
        Irq { irq: 26, affinity: Some(set("0-3")), ..Default::default() },
        Irq { irq: 27, affinity: Some(set("0")), ..Default::default() },
    ];
    host.default_smp_affinity = Some(set("0-3"));
    host.workqueues = Workqueues {
        cpumask: Some(set("0-3")),
        writeback: Some(set("0-3")),
        per_workqueue: [("writeback".to_string(), set("0-3"))].into_iter().collect(),
        ..Default::default()
    };
    host.tasks = Some(vec![
        task(1, "systemd", "0-3", false, false, "/init.scope"),
        task(2, "kthreadd", "0-3", true, false, "/"),
        task(3, "ksoftirqd/2", "2", true, true, "/"),
        task(4, "rcuop/2", "0-3", true, false, "/"),
        task(50, "pause", "2-3", false, false, "/kubepods.slice/kubepods-pod1.slice"),
        task(60, "dpdk-app", "2-3", false, false, "/user.slice"),
    ]);
    host.sysctls.values.insert("kernel.timer_migration".into(), "1".into());
    let mut fake = FakeWriter::new()
        .with_file("/proc/irq/24/smp_affinity_list", "0-3")
        .with_file("/proc/irq/25/smp_affinity_list", "2")
        .with_file("/proc/irq/26/smp_affinity_list", "0-3")
        .with_file("/proc/irq/27/smp_affinity_list", "0")
        .with_file("/proc/irq/default_smp_affinity", "f")
        .with_file("/sys/devices/virtual/workqueue/cpumask", "f")
        .with_file("/sys/devices/virtual/workqueue/writeback/cpumask", "f")
        .with_file("/proc/sys/kernel/timer_migration", "1")
        .with_file("/proc/sys/vm/stat_interval", "1")
        .with_file("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
        .with_file("/sys/devices/system/cpu/cpu2/power/pm_qos_resume_latency_us", "0")
        .with_file("/sys/devices/system/cpu/cpu3/power/pm_qos_resume_latency_us", "0");
    for t in host.tasks.iter().flatten() {
        let aff = t.allowed_cpus.as_ref().map(CpuSet::to_list).unwrap_or_default();
        fake = fake.with_task(t.tid, t.start_time, &t.comm, &aff, t.per_cpu_kthread);
    }
    fake.refuse.insert("/proc/irq/26/smp_affinity_list".into());
    (host, fake)
}

fn plan() -> Plan {
    let hk = set("0-1");
    let iso = set("2-3");
    let r = || "test".to_string();
    Plan {
        schema_version: plan::SCHEMA_VERSION,
        name: "test".into(),
        host: None,
        reserved: hk.clone(),
        isolated: iso.clone(),
        offlined: CpuSet::new(),
        options: PlanOptions::default(),
        kernel_args: vec![],
        runtime: vec![
            RuntimeItem::IrqAffinity { cpus: hk.clone(), reason: r() },
            RuntimeItem::WorkqueueMask { cpus: hk.clone(), reason: r() },
            RuntimeItem::KthreadAffinity { cpus: hk.clone(), reason: r() },
            RuntimeItem::Sysctl {
                name: "kernel.timer_migration".into(),
                value: "0".into(),
                reason: r(),
            },
            RuntimeItem::Sysctl {
                name: "vm.stat_interval".into(),
                value: "10".into(),
                reason: r(),
            },
            RuntimeItem::File {
                path: "sys/kernel/mm/transparent_hugepage/enabled".into(),
                value: "never".into(),
                reason: r(),
            },
            RuntimeItem::IdleLimit {
                cpus: iso,
                max_latency_us: 0,
                reason: r(),
                disable_states: false,
            },
        ],
        rationale: vec![],
        smt_disabled: CpuSet::new(),
    }
}

fn opts() -> Options {
    Options { move_tasks: true, allow: vec![tune::Allow::parse("dpdk-app")] }
}

fn journal_in(dir: &tempfile::TempDir) -> (std::path::PathBuf, Journal) {
    let path = dir.path().join("journal.jsonl");
    let j = Journal::open(&path).unwrap_or_else(|e| panic!("{e}"));
    (path, j)
}

#[test]
fn apply_then_revert_restores_everything() {
    let (host, mut fake) = fixture();
    let before = fake.state();
    let changes = plan_changes(&plan(), &host, &opts()).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (path, mut j) = journal_in(&dir);
    let report = txn::apply(&mut fake, &mut j, &changes.changes, Some("p.yaml".into()))
        .unwrap_or_else(|e| panic!("{e}"));
    // IRQ 26 refuses (managed): classified, not a failure. IRQ 27 is already on housekeeping.
    assert_eq!(report.refused.len(), 1, "{:?}", report.refused);
    assert_eq!(fake.files["/proc/irq/24/smp_affinity_list"], "0-1");
    assert_eq!(fake.files["/proc/irq/25/smp_affinity_list"], "0-1");
    assert_eq!(fake.files["/proc/irq/default_smp_affinity"], "3");
    assert_eq!(fake.files["/sys/devices/virtual/workqueue/cpumask"], "3");
    assert_eq!(fake.files["/sys/kernel/mm/transparent_hugepage/enabled"], "always madvise [never]");
    assert_eq!(fake.files["/sys/devices/system/cpu/cpu2/power/pm_qos_resume_latency_us"], "n/a");
    assert_eq!(fake.tasks[&2].affinity, "0-1", "kthreadd moves");
    assert_eq!(fake.tasks[&3].affinity, "2", "per-CPU kthread never touched");
    assert_eq!(fake.tasks[&1].affinity, "0-1", "--move-tasks moves systemd");
    assert_eq!(fake.tasks[&50].affinity, "2-3", "kubepods never touched");
    assert_eq!(fake.tasks[&60].affinity, "2-3", "allowlisted workload stays");
    assert!(changes.notes.iter().any(|n| n.why.contains("kubepods")));
    assert!(changes.notes.iter().any(|n| n.why.contains("PF_NO_SETAFFINITY")));
    assert!(!fake.log.iter().any(|(t, _, _)| t.contains("ksoftirqd")));

    let records = journal::read(&path).unwrap_or_else(|e| panic!("{e}")).unwrap_or_default();
    assert!(matches!(records.first(), Some(Record::Begin { .. })));
    assert!(matches!(records.last(), Some(Record::Commit { .. })));
    let rev = txn::revert(&mut fake, &records).unwrap_or_else(|e| panic!("{e}"));
    assert!(rev.failed.is_empty(), "{:?}", rev.failed);
    assert_eq!(fake.state(), before);
    // Idempotent: a second revert changes nothing.
    let writes = fake.log.len();
    let again = txn::revert(&mut fake, &records).unwrap_or_else(|e| panic!("{e}"));
    assert!(again.restored.is_empty());
    assert_eq!(fake.log.len(), writes);
}

#[test]
fn every_write_failure_rolls_back_to_the_start() {
    let (host, fake0) = fixture();
    let changes = plan_changes(&plan(), &host, &opts()).unwrap_or_else(|e| panic!("{e}"));
    // Count the writes of a clean run.
    let total = {
        let mut f = fake0.clone();
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (_, mut j) = journal_in(&dir);
        txn::apply(&mut f, &mut j, &changes.changes, None).unwrap_or_else(|e| panic!("{e}"));
        f.log.len()
    };
    assert!(total > 10, "fixture too small: {total} writes");
    for k in 1..=total {
        let mut fake = fake0.clone();
        fake.fail_write = Some(k);
        let before = fake.state();
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (path, mut j) = journal_in(&dir);
        match txn::apply(&mut fake, &mut j, &changes.changes, None) {
            Err(ApplyError::RolledBack { .. }) => {}
            other => panic!("write {k}: expected a rollback, got {other:?}"),
        }
        assert_eq!(fake.state(), before, "write {k} failed: host not restored");
        // The journal still reverts cleanly (and finds nothing to do).
        let recs = journal::read(&path).unwrap_or_else(|e| panic!("{e}")).unwrap_or_default();
        assert!(matches!(recs.last(), Some(Record::RolledBack { left, .. }) if left.is_empty()));
        let rev = txn::revert(&mut fake, &recs).unwrap_or_else(|e| panic!("{e}"));
        assert!(rev.restored.is_empty() && rev.failed.is_empty());
        assert_eq!(fake.state(), before);
    }
}

#[test]
fn failed_rollback_is_partial_and_revert_finishes_it() {
    let (host, fake0) = fixture();
    let changes = plan_changes(&plan(), &host, &opts()).unwrap_or_else(|e| panic!("{e}"));
    let mut fake = fake0.clone();
    let before = fake.state();
    fake.fail_write = Some(4);
    fake.fail_after = true;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (path, mut j) = journal_in(&dir);
    match txn::apply(&mut fake, &mut j, &changes.changes, None) {
        // Writes 1-2 applied, 3 refused (IRQ 26), 4 fails, so does every rollback write.
        Err(ApplyError::Partial { left, .. }) => assert_eq!(left.len(), 2, "{left:?}"),
        other => panic!("expected a partial apply, got {other:?}"),
    }
    assert_ne!(fake.state(), before);
    // The host recovers; revert from the journal alone finishes the job.
    fake.fail_write = None;
    let recs = journal::read(&path).unwrap_or_else(|e| panic!("{e}")).unwrap_or_default();
    let rev = txn::revert(&mut fake, &recs).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rev.restored.len(), 2);
    assert_eq!(fake.state(), before);
}

#[test]
fn revert_skips_reused_tids_and_refuses_other_boots() {
    let (host, mut fake) = fixture();
    let changes = plan_changes(&plan(), &host, &opts()).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (path, mut j) = journal_in(&dir);
    txn::apply(&mut fake, &mut j, &changes.changes, None).unwrap_or_else(|e| panic!("{e}"));
    // kthreadd's tid now belongs to a new task with another start time.
    fake.tasks.insert(
        2,
        tune::fake::FakeTask {
            start_time: 9,
            comm: "other".into(),
            affinity: "0-1".into(),
            per_cpu: false,
        },
    );
    let recs = journal::read(&path).unwrap_or_else(|e| panic!("{e}")).unwrap_or_default();
    let rev = txn::revert(&mut fake, &recs).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        rev.skipped.iter().any(|d| d.target.to_string().contains("kthreadd")),
        "{:?}",
        rev.skipped
    );
    assert_eq!(fake.tasks[&2].affinity, "0-1", "the new task is left alone");
    assert_eq!(fake.files["/proc/irq/24/smp_affinity_list"], "0-3");

    fake.boot = "boot-B".into();
    let err = txn::revert(&mut fake, &recs).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("boot-A") && err.contains("boot-B"), "{err}");
}

#[test]
fn dry_run_reads_only() {
    let (host, mut fake) = fixture();
    let changes = plan_changes(&plan(), &host, &opts()).unwrap_or_else(|e| panic!("{e}"));
    let rows = txn::preview(&mut fake, &changes.changes);
    assert!(fake.log.is_empty());
    let irq24 = rows.iter().find(|r| r.target.to_string().ends_with("24/smp_affinity_list"));
    assert_eq!(
        irq24.map(|r| (r.old.clone(), r.new.clone())),
        Some((Ok("0-3".into()), "0-1".into()))
    );
    assert_eq!(
        fake.read(&tune::Target::file("/proc/sys/vm/stat_interval", tune::Format::Text)),
        Ok("1".into())
    );
}

#[test]
fn cancelling_at_any_step_rolls_back_to_the_start() {
    let (host, fake0) = fixture();
    let changes = plan_changes(&plan(), &host, &opts()).unwrap_or_else(|e| panic!("{e}"));
    for k in 1..=changes.changes.len() {
        let mut fake = fake0.clone();
        let before = fake.state();
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (_, mut j) = journal_in(&dir);
        let r = txn::apply_with(&mut fake, &mut j, &changes.changes, None, &mut |n| n < k);
        match r {
            Err(ApplyError::RolledBack { cause, .. }) => {
                assert!(cause.contains("interrupted"), "{cause}")
            }
            other => panic!("step {k}: expected a rollback, got {other:?}"),
        }
        assert_eq!(fake.state(), before, "cancelled at step {k}: host not restored");
    }
}

#[test]
fn an_unwritable_journal_changes_nothing() {
    let (host, mut fake) = fixture();
    let before = fake.state();
    let changes = plan_changes(&plan(), &host, &opts()).unwrap_or_else(|e| panic!("{e}"));
    // Every append fails (a full disk), from the first.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (_, mut j) = journal_in(&dir);
    let faults = Faults::new(Schedule::at(1, Action::FailFrom));
    match txn::apply(&mut fake, &mut faults.log(&mut j), &changes.changes, None) {
        Err(ApplyError::Journal(_)) => {}
        other => panic!("expected a journal error, got {other:?}"),
    }
    assert!(fake.log.is_empty(), "no write may happen without its journal entry");
    assert_eq!(fake.state(), before);
}

#[test]
fn revert_reports_what_it_could_not_restore() {
    let (host, mut fake) = fixture();
    let changes = plan_changes(&plan(), &host, &opts()).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (path, mut j) = journal_in(&dir);
    txn::apply(&mut fake, &mut j, &changes.changes, None).unwrap_or_else(|e| panic!("{e}"));
    let recs = journal::read(&path).unwrap_or_else(|e| panic!("{e}")).unwrap_or_default();
    // The first restore write fails; the others still happen.
    fake.fail_write = Some(fake.log.len() + 1);
    let rev = txn::revert(&mut fake, &recs).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rev.failed.len(), 1, "{:?}", rev.failed);
    assert!(rev.restored.len() > 5);
    // Running revert again (the cause fixed) finishes the job.
    fake.fail_write = None;
    let again = txn::revert(&mut fake, &recs).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.restored.len(), 1);
    assert_eq!(fake.state(), fixture().1.state());
}
