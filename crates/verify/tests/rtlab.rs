//! Verify on snapshots of Debian's 6.1 PREEMPT_RT kernel taken in the real-time kernel lab
//! (`docs/LAB.md`; `fixtures/rtlab/README.md`): the same plan against a guest booted without
//! lowlat's arguments (`bare.tgz`) and with exactly `lowlat render cmdline` (`booted.tgz`),
//! both before any apply. What the lab found on the real kernel stays fixed: nohz_full reading
//! `(null)`, RCU offload threads missing, and IRQ threads judged with their IRQs.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::path::{Path, PathBuf};
use std::time::Duration;

use host::Root;
use verify::{Report, Request, Status};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rtlab").join(name)
}

fn run(snapshot: &str, mark_managed: bool) -> Report {
    let root = Root::open(&fixture(snapshot)).unwrap();
    let mut host = host::read(&root);
    if mark_managed {
        // What apply's journal tells a live verify: the kernel refused to move these.
        for i in
            host.irqs.iter_mut().filter(|i| i.name.as_deref().is_some_and(|n| n.contains("-req.")))
        {
            i.managed = Some(true);
        }
    }
    let plan = plan::Plan::load(&fixture("plan.yaml")).unwrap();
    let req = Request {
        plan: Some(plan),
        plan_arg: "--plan plan.yaml".into(),
        allow: Vec::new(),
        journal: PathBuf::from("/nonexistent"),
        window: Duration::ZERO,
    };
    verify::gather::run(&root, host, req).report
}

fn check<'a>(r: &'a Report, id: &str) -> &'a verify::Check {
    r.get(id).unwrap_or_else(|| panic!("no check {id}"))
}

#[test]
fn booted_without_the_arguments_the_boot_checks_fail_with_the_render_fix() {
    let host = host::read(&Root::open(&fixture("bare.tgz")).unwrap());
    assert_eq!(host.kernel.realtime, Some(true));
    // 6.1 prints "(null)" there when booted without nohz_full=: an empty set, not a kernel
    // without CONFIG_NO_HZ_FULL.
    assert_eq!(host.cpus.nohz_full.as_ref().map(|s| s.is_empty()), Some(true));
    let r = run("bare.tgz", false);
    for id in ["cmdline-args", "sysfs-isolated", "sysfs-nohz-full", "rcu-offload-threads"] {
        let c = check(&r, id);
        assert_eq!(c.status, Status::Fail, "{id}: {c:?}");
        assert!(c.fix.as_deref().unwrap_or("").contains("lowlat render"), "{id}: {c:?}");
    }
    let rcu = check(&r, "rcu-offload-threads");
    assert!(rcu.evidence[0].contains("have no RCU offload thread"), "{rcu:?}");
    // IRQ handler threads follow IRQs routed to the isolated CPUs: fixed by moving the IRQs.
    let t = check(&r, "irq-threads");
    assert_eq!(t.status, Status::Fail, "{t:?}");
    assert!(t.fix.as_deref().unwrap_or("").contains("moves the IRQs"), "{t:?}");
    // and they are not counted again as stray tasks
    let tasks = check(&r, "task-affinity");
    assert!(!tasks.evidence.iter().any(|e| e.contains("(irq/")), "{tasks:?}");
}

#[test]
fn booted_with_the_rendered_arguments_the_boot_checks_pass() {
    let r = run("booted.tgz", false);
    for id in [
        "cmdline-args",
        "sysfs-isolated",
        "sysfs-nohz-full",
        "rcu-offload-threads",
        "irq-default-affinity",
        "kthreadd-affinity",
        "pid1-affinity",
        "preempt-rt",
        "smt-siblings",
        "housekeeping-per-numa",
    ] {
        assert_eq!(check(&r, id).status, Status::Pass, "{id}: {:?}", check(&r, id));
    }
    let rcu = check(&r, "rcu-offload-threads");
    // 6.1 makes an offload thread for every CPU once rcu_nocbs= is given (CPUs can be
    // offloaded at run time); the planned ones are among them.
    assert!(rcu.evidence[0].contains("offload threads for CPUs 0-7"), "{rcu:?}");
    // The virtio-blk queues of isolated CPUs keep their managed IRQs there; once verify knows
    // they are managed (apply's journal), their handler threads are residue with them.
    let r = run("booted.tgz", true);
    let t = check(&r, "irq-threads");
    assert_eq!(t.status, Status::ExpectedResidue, "{t:?}");
    assert!(t.evidence.iter().any(|e| e.contains("irq/") && e.contains("managed IRQ")), "{t:?}");
}
