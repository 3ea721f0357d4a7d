//! Seed 001's knobs on fixture roots: cpuidle trees read by `host::read`, the chosen idle
//! limit (`idle-limit`, `cstate-usage` with residency per state over a window), busy polling
//! (`sysctl:net.core.busy_*`) and the writeback workqueue's pool scope (`writeback-scope`).

use std::fs;
use std::path::Path;
use std::time::Duration;

use cpuset::CpuSet;
use plan::{Plan, PlanOptions, RuntimeItem};
use verify::{verify, Input, Status, Window};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
    fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
}

/// One cpuidle state: (name, exit latency µs, disabled, usage, time µs).
type State<'a> = (&'a str, u64, bool, u64, u64);

/// A 2-CPU host tree with cpuidle states per CPU, PM QoS, busy-poll sysctls and the writeback
/// workqueue (`numa` or `affinity_scope`).
fn tree(states: &[&[State<'_>]], busy: &str, scope: (&str, &str)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let r = dir.path();
    write(r, "proc/cmdline", "root=/dev/vda\n");
    write(r, "sys/devices/system/cpu/online", "0-1\n");
    write(r, "sys/devices/system/cpu/cpuidle/current_driver", "intel_idle\n");
    for (cpu, st) in states.iter().enumerate() {
        let base = format!("sys/devices/system/cpu/cpu{cpu}");
        write(r, &format!("{base}/topology/thread_siblings_list"), &format!("{cpu}\n"));
        write(r, &format!("{base}/topology/physical_package_id"), "0\n");
        write(r, &format!("{base}/topology/core_id"), &format!("{cpu}\n"));
        write(r, &format!("{base}/power/pm_qos_resume_latency_us"), "80\n");
        for (i, (name, lat, off, usage, time)) in st.iter().enumerate() {
            let s = format!("{base}/cpuidle/state{i}");
            write(r, &format!("{s}/name"), &format!("{name}\n"));
            write(r, &format!("{s}/latency"), &format!("{lat}\n"));
            write(r, &format!("{s}/residency"), &format!("{}\n", lat * 3));
            write(r, &format!("{s}/disable"), if *off { "1\n" } else { "0\n" });
            write(r, &format!("{s}/usage"), &format!("{usage}\n"));
            write(r, &format!("{s}/time"), &format!("{time}\n"));
        }
    }
    write(r, "proc/sys/net/core/busy_read", &format!("{busy}\n"));
    write(r, "proc/sys/net/core/busy_poll", &format!("{busy}\n"));
    write(r, "sys/devices/virtual/workqueue/cpumask", "1\n");
    write(r, "sys/bus/workqueue/devices/writeback/cpumask", "1\n");
    write(
        r,
        &format!("sys/bus/workqueue/devices/writeback/{}", scope.0),
        &format!("{}\n", scope.1),
    );
    dir
}

fn read(dir: &Path) -> host::Host {
    host::read(&host::Root::open(dir).unwrap_or_else(|e| panic!("{e}")))
}

fn plan() -> Plan {
    let set = |s: &str| CpuSet::parse_list(s).unwrap_or_else(|e| panic!("{e}"));
    let r = String::new;
    Plan {
        schema_version: plan::SCHEMA_VERSION,
        name: "seed001".into(),
        host: None,
        reserved: set("0"),
        isolated: set("1"),
        offlined: CpuSet::new(),
        options: PlanOptions {
            busy_poll_us: Some(50),
            idle_limit_us: Some(80),
            ..Default::default()
        },
        kernel_args: vec![],
        runtime: vec![
            RuntimeItem::WorkqueueMask { cpus: set("0"), reason: r() },
            RuntimeItem::Sysctl {
                name: "net.core.busy_read".into(),
                value: "50".into(),
                reason: r(),
            },
            RuntimeItem::Sysctl {
                name: "net.core.busy_poll".into(),
                value: "50".into(),
                reason: r(),
            },
            RuntimeItem::IdleLimit {
                cpus: set("1"),
                max_latency_us: 80,
                reason: r(),
                disable_states: true,
            },
        ],
        rationale: vec![],
        smt_disabled: CpuSet::new(),
    }
}

fn input<'a>(h: &'a host::Host, p: &'a Plan) -> Input<'a> {
    Input {
        host: h,
        plan: p,
        live: false,
        boot_entries: vec![],
        irqbalance: None,
        window: None,
        allow: vec![],
        rt: host::rt::Containers::default(),
        files: Default::default(),
        sysctl_conf: vec![],
        plan_arg: "--plan p.yaml".into(),
    }
}

fn check<'r>(r: &'r verify::Report, id: &str) -> &'r verify::Check {
    r.get(id).unwrap_or_else(|| panic!("no check {id}: {:#?}", r.checks))
}

/// Skylake-like states: POLL, C1 (2 µs), C1E (10), C6 (133).
fn states(c6_off: bool, usage: [u64; 4], time: [u64; 4]) -> Vec<State<'static>> {
    vec![
        ("POLL", 0, false, usage[0], time[0]),
        ("C1", 2, false, usage[1], time[1]),
        ("C1E", 10, false, usage[2], time[2]),
        ("C6", 133, c6_off, usage[3], time[3]),
    ]
}

#[test]
fn cpuidle_trees_are_read_from_a_fixture_root() {
    let cpu = states(true, [5, 6, 7, 8], [50, 60, 70, 80]);
    let dir = tree(&[&cpu, &cpu], "50", ("numa", "1"));
    let h = read(dir.path());
    assert_eq!(h.power.cpuidle_driver.as_deref(), Some("intel_idle"));
    let p1 = h.power.cpus.iter().find(|p| p.cpu == 1).unwrap_or_else(|| panic!("cpu1"));
    let names: Vec<_> = p1.idle_states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["POLL", "C1", "C1E", "C6"]);
    let c6 = &p1.idle_states[3];
    assert_eq!(
        (c6.index, c6.exit_latency_us, c6.disabled, c6.usage, c6.time_us),
        (3, Some(133), Some(true), Some(8), Some(80))
    );
    assert_eq!(h.workqueues.writeback_numa.as_deref(), Some("1"));
    assert_eq!(h.sysctls.values.get("net.core.busy_poll").map(String::as_str), Some("50"));
}

#[test]
fn a_chosen_idle_limit_passes_only_with_the_deeper_states_off() {
    let p = plan();
    let on = states(false, [0; 4], [0; 4]);
    let off = states(true, [0; 4], [0; 4]);
    // PM QoS is held at 80 on both, but a chosen limit also wants C6 (133 µs) disabled.
    let dir = tree(&[&on, &on], "50", ("numa", "0"));
    let h = read(dir.path());
    let r = verify(&input(&h, &p));
    let c = check(&r, "idle-limit");
    assert_eq!(c.status, Status::Fail, "{c:?}");
    assert!(c.evidence.iter().any(|e| e.contains("cpu1") && e.ends_with("enabled: C6")), "{c:?}");
    let dir = tree(&[&on, &off], "50", ("numa", "0"));
    let h = read(dir.path());
    let r = verify(&input(&h, &p));
    let c = check(&r, "idle-limit");
    assert_eq!(c.status, Status::Pass, "{c:?}");
    assert!(
        c.evidence[0].contains("1 CPUs limited to exit latency <= 80 µs (deeper states disabled)")
    );
    assert_eq!(check(&r, "sysctl:net.core.busy_read").status, Status::Pass);
    assert_eq!(check(&r, "sysctl:net.core.busy_poll").status, Status::Pass);
    assert_eq!(check(&r, "writeback-scope").status, Status::Pass);
    assert_eq!(check(&r, "cstate-usage").status, Status::NotApplicable, "needs a live window");
}

#[test]
fn cstate_usage_shows_residency_per_state_and_fails_on_a_deeper_entry() {
    let p = plan();
    // 2 s window: cpu1 spends 0.1 s polling, 1.5 s in C1, 0.2 s in C1E; C6 untouched.
    let before = tree(
        &[
            &states(false, [0; 4], [0; 4]),
            &states(true, [10, 100, 20, 3], [1_000, 10_000, 2_000, 500]),
        ],
        "50",
        ("affinity_scope", "system"),
    );
    let after = tree(
        &[
            &states(false, [9; 4], [2_000_000; 4]),
            &states(true, [110, 1_100, 60, 3], [101_000, 1_510_000, 202_000, 500]),
        ],
        "50",
        ("affinity_scope", "system"),
    );
    let (hb, ha) = (read(before.path()), read(after.path()));
    let window = |hb: &host::Host, ha: &host::Host| Window {
        duration: Duration::from_secs(2),
        interrupts_before: Default::default(),
        interrupts_after: Default::default(),
        idle_before: hb.power.cpus.clone(),
        idle_after: ha.power.cpus.clone(),
    };
    let mut inp = input(&ha, &p);
    inp.live = true;
    inp.window = Some(window(&hb, &ha));
    let r = verify(&inp);
    let c = check(&r, "cstate-usage");
    assert_eq!(c.status, Status::Pass, "{c:?}");
    assert_eq!(
        c.evidence,
        [
            "no idle state deeper than 80 µs entered on 1 in 2.0 s; residency per state:",
            "cpu1: POLL 5.0%, C1 75.0%, C1E 10.0%, C6 0.0% (deeper)",
        ],
        "only the limited CPU (cpu0 is housekeeping)"
    );
    assert_eq!(check(&r, "writeback-scope").status, Status::Pass);
    // C6 entered 4 times for 0.4 s: the limit did not hold.
    let leaked = tree(
        &[
            &states(false, [0; 4], [0; 4]),
            &states(false, [110, 1_100, 60, 7], [101_000, 1_510_000, 202_000, 400_500]),
        ],
        "0",
        ("affinity_scope", "default (cache)"),
    );
    let hl = read(leaked.path());
    let mut inp = input(&hl, &p);
    inp.live = true;
    inp.window = Some(window(&hb, &hl));
    let r = verify(&inp);
    let c = check(&r, "cstate-usage");
    assert_eq!(c.status, Status::Fail, "{c:?}");
    assert_eq!(c.evidence[0], "cpu1 entered C6 4 times (20.0% of 2.0 s) despite the 80 µs limit");
    assert!(c
        .evidence
        .iter()
        .any(|e| e == "cpu1: POLL 5.0%, C1 75.0%, C1E 10.0%, C6 20.0% (deeper)"));
    assert_eq!(check(&r, "idle-limit").status, Status::Fail);
    assert_eq!(check(&r, "sysctl:net.core.busy_read").status, Status::Fail);
    let scope = check(&r, "writeback-scope");
    assert_eq!(scope.status, Status::Fail);
    assert!(
        scope.evidence[0].contains("affinity_scope = default (cache), planned system"),
        "{scope:?}"
    );
}
