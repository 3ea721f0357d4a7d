//! `lowlat status` on captured hosts: the lab's PREEMPT_RT snapshots booted with and without the
//! rendered arguments, and a host tree with a boot loader entry and a journal in every state an
//! `apply` can leave (in place, from an earlier boot, killed midway, rolled back, reverted),
//! with a value changed behind lowlat's back.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::path::{Path, PathBuf};

use host::Root;
use tune::journal::{Outcome, Record};
use tune::target::{Format, Target};
use verify::status::{self, Applied, ArgState, PlanFrom, Request};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rtlab").join(name)
}

fn plan() -> (plan::Plan, String) {
    let f = fixture("plan.yaml");
    (plan::Plan::load(&f).unwrap(), f.display().to_string())
}

fn answer(root: &Root, req: &Request) -> status::Status {
    let host = host::read(root);
    let records = status::read_journal(root, &req.journal);
    let entries = verify::gather::boot_entries(root);
    status::status(root, &host, records, &entries, req)
}

fn req(plan: Option<(plan::Plan, String)>) -> Request {
    Request { plan, journal: PathBuf::from(tune::journal::DEFAULT_JOURNAL) }
}

#[test]
fn booted_with_the_rendered_arguments_every_one_runs() {
    let root = Root::open(&fixture("booted.tgz")).unwrap();
    let s = answer(&root, &req(Some(plan())));
    assert!(!s.boot_args.is_empty());
    assert!(s.boot_args.iter().all(|a| a.state == ArgState::Running), "{:#?}", s.boot_args);
    assert!(matches!(s.applied, Applied::Nothing { .. }), "a snapshot holds no journal");
    assert_eq!(s.plan.as_ref().unwrap().from, PlanFrom::Argument);
    assert!(s.attention.is_empty(), "{:?}", s.attention);
}

#[test]
fn booted_bare_every_argument_is_missing_with_the_fix() {
    let root = Root::open(&fixture("bare.tgz")).unwrap();
    let s = answer(&root, &req(Some(plan())));
    assert!(s.boot_args.iter().all(|a| a.state == ArgState::Missing), "{:#?}", s.boot_args);
    assert!(
        s.attention.iter().any(|a| a.contains("grubby") && a.contains("reboot")),
        "{:?}",
        s.attention
    );
}

/// A host tree: booted without the plan's arguments, a BLS entry that has them, one journaled
/// file `apply` wrote, and the journal given.
fn tree(journal: &[Record], now: &str) -> (tempfile::TempDir, Root) {
    let d = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = d.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/vda quiet\n");
    w("proc/sys/kernel/random/boot_id", "this-boot\n");
    w("sys/devices/system/cpu/online", "0-7\n");
    w("proc/irq/default_smp_affinity", &format!("{now}\n"));
    let (p, _) = plan();
    let args: Vec<String> = p.kernel_args.iter().map(plan::KernelArg::token).collect();
    w(
        "boot/loader/entries/rt.conf",
        &format!("title rt\noptions root=/dev/vda {}\n", args.join(" ")),
    );
    let lines: String = journal.iter().map(|r| r.line().unwrap()).collect();
    w("var/lib/lowlat/journal.jsonl", &lines);
    let root = Root::open(d.path()).unwrap();
    (d, root)
}

fn begin(boot: &str, plan: &str) -> Record {
    Record::Begin {
        time: "2026-11-27T10:00:00Z".into(),
        boot_id: boot.into(),
        plan: Some(plan.into()),
        version: "0.1.0".into(),
        pid: 1,
    }
}

fn change(seq: u64, boot: &str) -> Record {
    Record::Change {
        seq,
        target: Target::file("/proc/irq/default_smp_affinity", Format::CpuMask),
        old: "ff".into(),
        new: "33".into(),
        why: "housekeeping".into(),
        time: "2026-11-27T10:00:00Z".into(),
        boot_id: boot.into(),
    }
}

fn applied(seq: u64) -> Record {
    Record::Outcome { seq, outcome: Outcome::Applied, message: None }
}

fn commit() -> Record {
    Record::Commit { time: "2026-11-27T10:00:01Z".into(), applied: 1, refused: 0 }
}

#[test]
fn an_apply_in_this_boot_is_active_and_its_drift_is_named() {
    let plan_file = fixture("plan.yaml").display().to_string();
    let records = [begin("this-boot", &plan_file), change(1, "this-boot"), applied(1), commit()];
    let (_d, root) = tree(&records, "33");
    let s = answer(&root, &req(None));
    let Applied::Active { run, .. } = &s.applied else { panic!("{:?}", s.applied) };
    assert_eq!((run.changes, run.plan.as_deref()), (1, Some(plan_file.as_str())));
    // The plan comes from the journal, and the boot loader already has its arguments.
    assert_eq!(s.plan.as_ref().unwrap().from, PlanFrom::Journal);
    assert!(s.boot_args.iter().all(|a| a.state == ArgState::PendingReboot), "{:#?}", s.boot_args);
    assert!(s.boot_args[0].next_boot == ["/boot/loader/entries/rt.conf"]);
    let d = s.drift.as_ref().unwrap();
    assert_eq!((d.checked, d.unchanged, d.changed.len()), (1, 1, 0));
    assert!(s.attention.iter().any(|a| a.contains("persistent")), "{:?}", s.attention);
    assert!(s
        .attention
        .iter()
        .any(|a| a == "boot arguments are configured but not running: reboot"));

    // Someone (irqbalance, tuned) rewrote it since.
    let (_d, root) = tree(&records, "ff");
    let s = answer(&root, &req(None));
    let d = s.drift.as_ref().unwrap();
    assert_eq!(d.changed.len(), 1, "{d:?}");
    assert_eq!(
        (d.changed[0].target.as_str(), d.changed[0].applied.as_str(), d.changed[0].now.as_str()),
        ("/proc/irq/default_smp_affinity", "33", "ff")
    );
    assert!(s.attention.iter().any(|a| a.contains("changed since apply")), "{:?}", s.attention);
    let text = status::terminal(&s);
    assert!(text.contains("applied 33, now ff"), "{text}");
}

#[test]
fn every_way_an_apply_ends_is_told_apart() {
    let p = "plan.yaml";
    let earlier = [begin("old-boot", p), change(1, "old-boot"), applied(1), commit()];
    let (_d, root) = tree(&earlier, "33");
    let s = answer(&root, &req(None));
    assert!(matches!(s.applied, Applied::EarlierBoot { .. }), "{:?}", s.applied);
    assert!(s.drift.is_none(), "an earlier boot's values are not compared");
    assert!(s.attention.iter().any(|a| a.contains("ended with its boot")), "{:?}", s.attention);

    let killed = [begin("this-boot", p), change(1, "this-boot")];
    let (_d, root) = tree(&killed, "33");
    let s = answer(&root, &req(None));
    let Applied::Interrupted { run, .. } = &s.applied else { panic!("{:?}", s.applied) };
    assert_eq!(run.changes, 1, "a change without its outcome may have been written");
    assert!(s.attention.iter().any(|a| a.contains("lowlat revert")), "{:?}", s.attention);

    let rolled = [
        begin("this-boot", p),
        change(1, "this-boot"),
        applied(1),
        Record::RolledBack { time: "t".into(), left: vec!["/proc/irq/9/smp_affinity".into()] },
    ];
    let (_d, root) = tree(&rolled, "ff");
    let s = answer(&root, &req(None));
    assert!(
        matches!(&s.applied, Applied::RolledBack { left, .. } if left.len() == 1),
        "{:?}",
        s.applied
    );

    let reverted = [
        begin("this-boot", p),
        change(1, "this-boot"),
        applied(1),
        commit(),
        Record::Reverted { time: "t".into(), restored: 1, skipped: 0 },
    ];
    let (d, root) = tree(&reverted, "ff");
    // `revert` keeps the closed journal as <journal>.reverted: still read.
    let j = d.path().join("var/lib/lowlat/journal.jsonl");
    std::fs::rename(&j, j.with_extension("jsonl.reverted")).unwrap();
    let s = answer(&root, &req(None));
    assert!(matches!(s.applied, Applied::Reverted { restored: 1, .. }), "{:?}", s.applied);
    assert!(s.attention.is_empty(), "{:?}", s.attention);

    // The last apply wins over older ones in the same journal.
    let twice = [
        begin("this-boot", "first.yaml"),
        commit(),
        begin("this-boot", "second.yaml"),
        change(1, "this-boot"),
        applied(1),
        commit(),
    ];
    let (_d, root) = tree(&twice, "33");
    let s = answer(&root, &req(None));
    let Applied::Active { run, .. } = &s.applied else { panic!("{:?}", s.applied) };
    assert_eq!(run.plan.as_deref(), Some("second.yaml"));

    let (d, root) = tree(&[], "33");
    std::fs::write(d.path().join("var/lib/lowlat/journal.jsonl"), "{not json\n{\"type\":1}\n")
        .unwrap();
    let s = answer(&root, &req(None));
    assert!(
        matches!(s.applied, Applied::Unreadable { .. } | Applied::Nothing { .. }),
        "{:?}",
        s.applied
    );
}
