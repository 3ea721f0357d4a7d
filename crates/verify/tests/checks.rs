//! Checks on hand-built host models: SMT siblings, cmdline as sets and pending reboot, IRQ
//! effective affinity with managed classification, tasks and residue, workqueues, sysctls,
//! live windows, and the JSON / JUnit / table shapes.

use std::time::Duration;

use cpuset::CpuSet;
use host::{CpuTopo, Host, InterruptRow, InterruptTable, Irq, IsolCpus, Task};
use plan::{KernelArg, Plan, PlanOptions, RuntimeItem};
use verify::{render, verify, BootEntry, Input, Irqbalance, Status, Window};

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn task(pid: u32, comm: &str, aff: &str, kthread: bool, per_cpu: bool) -> Task {
    Task {
        pid,
        tid: pid,
        comm: comm.into(),
        kthread,
        per_cpu_kthread: per_cpu,
        allowed_cpus: Some(set(aff)),
        cgroup: Some("/".into()),
        ..Default::default()
    }
}

/// 4 CPUs as 2 cores x 2 threads: (0,2) and (1,3).
fn host() -> Host {
    let mut h = Host::default();
    h.cpus.online = Some(set("0-3"));
    h.topology.threads_per_core = 2;
    h.topology.cpus = (0..4)
        .map(|c| CpuTopo {
            cpu: c,
            online: true,
            siblings: set(if c % 2 == 0 { "0,2" } else { "1,3" }),
            ..Default::default()
        })
        .collect();
    h.kernel.cmdline = Some(
        "BOOT_IMAGE=/vmlinuz root=/dev/sda nohz_full=1,3 isolcpus=managed_irq,domain,1,3".into(),
    );
    h.cpus.nohz_full = Some(set("1,3"));
    h.cpus.isolated = Some(set("1,3"));
    h.kernel.boot.isolcpus =
        Some(IsolCpus { flags: vec!["managed_irq".into(), "domain".into()], cpus: set("1,3") });
    h.kernel.boot.nohz_full = Some(set("1,3"));
    h.kernel.boot.tokens = vec![
        ("nohz_full".into(), Some("1,3".into())),
        ("isolcpus".into(), Some("managed_irq,domain,1,3".into())),
    ];
    h.irqs = vec![
        Irq {
            irq: 24,
            name: Some("eth0".into()),
            affinity: Some(set("0,2")),
            effective_affinity: Some(set("0")),
            ..Default::default()
        },
        Irq {
            irq: 25,
            name: Some("nvme0q2".into()),
            affinity: Some(set("3")),
            effective_affinity: Some(set("3")),
            managed: Some(true),
            ..Default::default()
        },
    ];
    h.default_smp_affinity = Some(set("0,2"));
    h.tasks = Some(vec![
        task(1, "systemd", "0,2", false, false),
        task(2, "kthreadd", "0,2", true, false),
        task(10, "ksoftirqd/1", "1", true, true),
        task(11, "rcuop/1", "0,2", true, false),
        task(99, "app", "1,3", false, false),
    ]);
    h.workqueues.cpumask = Some(set("0,2"));
    h.sysctls.values.insert("kernel.timer_migration".into(), "0".into());
    h.sysctls.values.insert("kernel.sched_rt_runtime_us".into(), "950000".into());
    h
}

fn plan(iso: &str, hk: &str) -> Plan {
    Plan {
        schema_version: plan::SCHEMA_VERSION,
        name: "t".into(),
        host: None,
        reserved: set(hk),
        isolated: set(iso),
        offlined: CpuSet::new(),
        options: PlanOptions::default(),
        kernel_args: vec![
            KernelArg {
                key: "isolcpus".into(),
                value: Some(format!("domain,managed_irq,{iso}")),
                reason: String::new(),
            },
            KernelArg { key: "nohz_full".into(), value: Some(iso.into()), reason: String::new() },
        ],
        runtime: vec![RuntimeItem::Sysctl {
            name: "kernel.timer_migration".into(),
            value: "0".into(),
            reason: String::new(),
        }],
        rationale: vec![],
        smt_disabled: CpuSet::new(),
    }
}

fn input<'a>(h: &'a Host, p: &'a Plan) -> Input<'a> {
    Input {
        host: h,
        plan: p,
        live: false,
        boot_entries: vec![],
        irqbalance: None,
        window: None,
        allow: vec![verify::Allow::Comm("app".into())],
        rt: host::rt::Containers::default(),
        files: Default::default(),
        sysctl_conf: vec![],
        plan_arg: "--plan p.yaml".into(),
    }
}

fn status(r: &verify::Report, id: &str) -> Status {
    r.get(id).map(|c| c.status).unwrap_or_else(|| panic!("no check {id}: {:#?}", r.checks))
}

#[test]
fn a_good_host_passes_with_residue_classified() {
    let h = host();
    let p = plan("1,3", "0,2");
    let r = verify(&input(&h, &p));
    assert!(r.passed(), "{}", render::table(&r));
    for id in [
        "cmdline-args",
        "sysfs-isolated",
        "sysfs-nohz-full",
        "smt-siblings",
        "irq-effective-affinity",
        "irq-default-affinity",
        "task-affinity",
        "rcu-offload-threads",
        "kthreadd-affinity",
        "pid1-affinity",
        "workqueue-masks",
        "sysctl:kernel.timer_migration",
    ] {
        assert_eq!(status(&r, id), Status::Pass, "{id}: {:?}", r.get(id));
    }
    assert_eq!(status(&r, "irq-managed"), Status::ExpectedResidue);
    assert_eq!(status(&r, "task-per-cpu-kthreads"), Status::ExpectedResidue);
    assert_eq!(status(&r, "task-workload"), Status::ExpectedResidue);
    assert_eq!(status(&r, "irq-activity"), Status::NotApplicable, "live-only");
}

#[test]
fn smt_siblings_split_across_the_partition_fail() {
    let h = host();
    // Isolate 1 but keep its sibling 3 on housekeeping.
    let p = plan("1", "0,2,3");
    let r = verify(&input(&h, &p));
    let c = r.get("smt-siblings").unwrap_or_else(|| panic!("no smt check"));
    assert_eq!(c.status, Status::Fail);
    assert!(
        c.evidence[0].contains("SMT siblings 3 of isolated CPUs 1 are housekeeping"),
        "{:?}",
        c.evidence
    );
    assert!(c.fix.as_deref().is_some_and(|f| f.contains("lowlat plan")));
}

#[test]
fn cmdline_is_compared_as_sets_and_pending_reboot_is_not_a_failure() {
    let h = host();
    // Same sets, different spelling: pass.
    let p = plan("1,3", "0,2");
    assert_eq!(status(&verify(&input(&h, &p)), "cmdline-args"), Status::Pass);
    // New arguments staged in the boot loader but not running: pending reboot.
    let mut p2 = plan("1,3", "0,2");
    p2.kernel_args.push(KernelArg {
        key: "rcu_nocbs".into(),
        value: Some("1,3".into()),
        reason: String::new(),
    });
    let mut inp = input(&h, &p2);
    inp.boot_entries = vec![BootEntry {
        source: "/boot/loader/entries/a.conf".into(),
        cmdline: "root=x rcu_nocbs=1,3 nohz_full=1,3".into(),
    }];
    let r = verify(&inp);
    assert_eq!(status(&r, "cmdline-args"), Status::PendingReboot, "{:?}", r.get("cmdline-args"));
    assert!(r.passed());
    // Not staged anywhere: fail, with the render step as the fix.
    inp.boot_entries.clear();
    let r = verify(&inp);
    let c = r.get("cmdline-args").unwrap_or_else(|| panic!("missing"));
    assert_eq!(c.status, Status::Fail);
    assert!(c.fix.as_deref().is_some_and(|f| f.contains("lowlat render --plan p.yaml")));
}

#[test]
fn stray_irqs_tasks_and_masks_fail_with_evidence() {
    let mut h = host();
    h.irqs[0].effective_affinity = Some(set("1"));
    h.irqs[0].affinity = Some(set("0-3"));
    h.default_smp_affinity = Some(set("0-3"));
    h.workqueues.cpumask = Some(set("0-3"));
    if let Some(t) = h.tasks.as_mut() {
        t.push(task(300, "sshd", "0-3", false, false));
        t[1].allowed_cpus = Some(set("0-3"));
    }
    h.sysctls.values.insert("kernel.timer_migration".into(), "1".into());
    let p = plan("1,3", "0,2");
    let r = verify(&input(&h, &p));
    assert!(!r.passed());
    for id in [
        "irq-effective-affinity",
        "irq-default-affinity",
        "workqueue-masks",
        "task-affinity",
        "kthreadd-affinity",
        "sysctl:kernel.timer_migration",
    ] {
        let c = r.get(id).unwrap_or_else(|| panic!("{id}"));
        assert_eq!(c.status, Status::Fail, "{id}");
        assert!(
            c.fix.as_deref().is_some_and(|f| f.contains("lowlat")),
            "{id} fix names a lowlat step"
        );
    }
    let ev = r.get("task-affinity").map(|c| c.evidence.join("\n")).unwrap_or_default();
    assert!(
        ev.contains("pid 300 (sshd) allowed 0-3")
            && !ev.contains("ksoftirqd")
            && !ev.contains("app"),
        "{ev}"
    );
    assert!(r
        .get("irq-effective-affinity")
        .is_some_and(|c| c.evidence.iter().any(|e| e.contains("IRQ 24 (eth0): effective 1"))));
}

#[test]
fn live_window_counts_device_irqs_and_ticks_on_isolated_cpus() {
    let h = host();
    let p = plan("1,3", "0,2");
    let table = |eth: u64, loc: u64| InterruptTable {
        cpus: vec![0, 1, 2, 3],
        rows: vec![
            InterruptRow {
                id: "24".into(),
                counts: vec![10, eth, 0, 0],
                chip: None,
                name: Some("eth0".into()),
            },
            InterruptRow {
                id: "LOC".into(),
                counts: vec![1000, loc, 1000, 5],
                chip: None,
                name: None,
            },
        ],
    };
    let mut inp = input(&h, &p);
    inp.live = true;
    inp.window = Some(Window {
        duration: Duration::from_secs(1),
        interrupts_before: table(0, 0),
        interrupts_after: table(3, 250),
        idle_before: vec![],
        idle_after: vec![],
    });
    let r = verify(&inp);
    assert_eq!(status(&r, "irq-activity"), Status::Fail);
    assert!(r
        .get("irq-activity")
        .is_some_and(|c| c.evidence.iter().any(|e| e.contains("+3 on CPU 1"))));
    assert_eq!(status(&r, "tick-rate"), Status::Warn, "nohz_full planned, 250/s on CPU 1");
    inp.window = inp.window.map(|mut w| {
        w.interrupts_after = table(0, 1);
        w
    });
    let r = verify(&inp);
    assert_eq!(status(&r, "irq-activity"), Status::Pass);
    assert_eq!(status(&r, "tick-rate"), Status::Pass);
}

#[test]
fn irqbalance_and_container_rt_budget() {
    let h = host();
    let p = plan("1,3", "0,2");
    let mut inp = input(&h, &p);
    inp.irqbalance = Some(Irqbalance {
        running: true,
        ban: Some((
            "/etc/sysconfig/irqbalance".into(),
            "IRQBALANCE_BANNED_CPULIST".into(),
            "1".into(),
        )),
    });
    let r = verify(&inp);
    assert_eq!(status(&r, "irqbalance"), Status::Fail, "ban misses CPU 3");
    inp.irqbalance = Some(Irqbalance { running: true, ban: None });
    assert_eq!(
        status(&verify(&inp), "irqbalance"),
        Status::Pass,
        "auto-ban covers isolated+nohz_full"
    );
}

#[test]
fn json_and_junit_shapes() {
    let h = host();
    let p = plan("1", "0,2,3");
    let r = verify(&input(&h, &p));
    let v = serde_json::to_value(&r).unwrap_or_else(|e| panic!("{e}"));
    let first = &v["checks"][0];
    for k in ["id", "status", "evidence", "fix"] {
        assert!(first.get(k).is_some(), "checks[] has {k}");
    }
    for k in ["pass", "fail", "warn"] {
        assert!(v["summary"][k].is_u64(), "summary has {k}");
    }
    assert!(v["checks"].as_array().is_some_and(|a| a.iter().any(|c| c["status"] == "n.a.")));
}

#[test]
fn table_snapshot() {
    let h = host();
    let p = plan("1", "0,2,3");
    insta::assert_snapshot!(render::table(&verify(&input(&h, &p))));
}

#[test]
fn implied_plan_from_cmdline() {
    let h = host();
    let p = verify::implied_plan(&h);
    assert_eq!(p.isolated, set("1,3"));
    assert_eq!(p.reserved, set("0,2"));
    assert_eq!(p.kernel_args.len(), 2);
    assert!(verify(&input(&h, &p)).passed());
}

#[test]
fn configured_on_housekeeping_but_still_routed_to_isolated_is_a_pending_move() {
    let mut h = host();
    // x86 without interrupt remapping moves an IRQ when it next fires.
    h.irqs[0].effective_affinity = Some(set("1"));
    let p = plan("1,3", "0,2");
    let r = verify(&input(&h, &p));
    assert_eq!(status(&r, "irq-effective-affinity"), Status::Pass);
    assert_eq!(status(&r, "irq-move-pending"), Status::Warn);
    assert!(r.passed());
}

#[test]
fn a_sysctl_file_that_would_undo_the_plan_is_a_warning() {
    let h = host();
    let p = plan("1,3", "0,2");
    let mut inp = input(&h, &p);
    inp.sysctl_conf = vec![
        ("/etc/sysctl.d/99-x.conf".into(), "kernel.timer_migration".into(), "1".into()),
        ("/etc/sysctl.d/10-y.conf".into(), "vm.swappiness".into(), "60".into()),
    ];
    let r = verify(&inp);
    let c = r.get("sysctl-config-files").unwrap_or_else(|| panic!("missing"));
    assert_eq!(c.status, Status::Warn);
    assert!(
        c.evidence.iter().any(|e| e.contains("99-x.conf: kernel.timer_migration = 1 (planned 0)")),
        "{:?}",
        c.evidence
    );
    inp.sysctl_conf.truncate(0);
    assert_eq!(status(&verify(&inp), "sysctl-config-files"), Status::Pass);
}

fn rt_fixture(name: &str) -> host::rt::Containers {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/tests/fixtures").join(name);
    host::rt::containers(
        &host::Root::open(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())),
    )
}

fn container_check(r: &verify::Report) -> &verify::Check {
    r.checks.iter().find(|c| c.id == "container-sched-fifo").unwrap_or_else(|| panic!("no check"))
}

/// Seed 001: system.slice has a budget, the Docker scope below it has 0: fail, naming it.
#[test]
fn container_fifo_walks_the_whole_v1_chain() {
    let h = host();
    let p = plan("1,3", "0,2");
    let mut inp = input(&h, &p);
    inp.rt = rt_fixture("rt-v1-docker");
    let r = verify(&inp);
    let c = container_check(&r);
    assert_eq!(c.status, Status::Fail, "{c:?}");
    let ev = c.evidence.join("\n");
    assert!(ev.contains("/system.slice/docker-4f1e2d.scope: /sys/fs/cgroup/cpu,cpuacct/system.slice/docker-4f1e2d.scope/cpu.rt_runtime_us = 0 (parent /sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.rt_runtime_us = 950000)"), "{ev}");
    assert!(
        !ev.contains("kubepods/burstable/pod1234/0a1b2c3d4e5f6a7b:"),
        "the budgeted pod is not blamed: {ev}"
    );
    // RT bandwidth off: the kernel checks no budgets.
    inp.rt.sched_rt_runtime_us = Some(-1);
    assert_eq!(container_check(&verify(&inp)).status, Status::Pass);
}

/// cgroup v2 with RT group scheduling: no container can be real-time.
#[test]
fn container_fifo_fails_on_v2_with_rt_group_sched() {
    let h = host();
    let p = plan("1,3", "0,2");
    let mut inp = input(&h, &p);
    inp.rt = rt_fixture("rt-v2-nonroot");
    let r = verify(&inp);
    let c = container_check(&r);
    assert_eq!(c.status, Status::Fail, "{c:?}");
    assert!(c.evidence.iter().any(|e| e.contains("/system.slice/docker-77aa.scope")), "{c:?}");
    inp.rt.rt_group_sched = Some(false);
    assert_eq!(container_check(&verify(&inp)).status, Status::Pass);
}
