//! Seed 001's power and network knobs end to end, as a user runs them: `plan --busy-poll
//! --idle-limit` → `render` → `apply` → `verify` → `revert`, on a sandbox tree (`--sysroot`,
//! no root needed) and, marked ignored, on this live host (the files that exist here; revert
//! restores them byte for byte).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::lowlat_std as lowlat;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    if let Some(d) = p.parent() {
        fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
    }
    fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{e}"));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// Every file of a tree, path relative to it → bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.ends_with("run/lowlat-apply.lock") {
                let rel = p.strip_prefix(root).map(Path::to_path_buf).unwrap_or_default();
                out.insert(rel, fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

const CPU: &str = "sys/devices/system/cpu";

/// A 2-CPU host tree with Skylake-like idle states (POLL, C1 2 µs, C1E 10 µs, C6 133 µs), PM
/// QoS, the busy-poll sysctls and a pre-6.6 writeback workqueue (`numa`).
fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let r = dir.path();
    write(r, "proc/cmdline", "root=/dev/vda console=ttyS0\n");
    write(r, "proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");
    write(r, &format!("{CPU}/online"), "0-1\n");
    write(r, &format!("{CPU}/possible"), "0-1\n");
    write(r, &format!("{CPU}/cpuidle/current_driver"), "intel_idle\n");
    for c in 0..2 {
        let base = format!("{CPU}/cpu{c}");
        write(r, &format!("{base}/topology/thread_siblings_list"), &format!("{c}\n"));
        write(r, &format!("{base}/topology/physical_package_id"), "0\n");
        write(r, &format!("{base}/topology/core_id"), &format!("{c}\n"));
        write(r, &format!("{base}/power/pm_qos_resume_latency_us"), "0\n");
        for (i, (name, lat)) in
            [("POLL", 0), ("C1", 2), ("C1E", 10), ("C6", 133)].iter().enumerate()
        {
            let s = format!("{base}/cpuidle/state{i}");
            write(r, &format!("{s}/name"), &format!("{name}\n"));
            write(r, &format!("{s}/latency"), &format!("{lat}\n"));
            write(r, &format!("{s}/disable"), "0\n");
            write(r, &format!("{s}/usage"), "0\n");
            write(r, &format!("{s}/time"), "0\n");
        }
    }
    write(r, "proc/irq/default_smp_affinity", "3\n");
    write(r, "sys/devices/virtual/workqueue/cpumask", "3\n");
    write(r, "sys/bus/workqueue/devices/writeback/cpumask", "3\n");
    write(r, "sys/bus/workqueue/devices/writeback/numa", "1\n");
    for (k, v) in [
        ("net/core/busy_read", "0"),
        ("net/core/busy_poll", "0"),
        ("kernel/watchdog_cpumask", "0-1"),
        ("kernel/timer_migration", "1"),
        ("kernel/numa_balancing", "1"),
        ("kernel/hung_task_timeout_secs", "120"),
        ("kernel/nmi_watchdog", "1"),
        ("vm/stat_interval", "1"),
    ] {
        write(r, &format!("proc/sys/{k}"), &format!("{v}\n"));
    }
    write(r, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    dir
}

fn read(root: &Path, rel: &str) -> String {
    fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn statuses(json: &str) -> BTreeMap<String, String> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("no checks: {json}"))
        .iter()
        .map(|c| {
            (c["id"].as_str().unwrap_or("").to_string(), c["status"].as_str().unwrap_or("").into())
        })
        .collect()
}

#[test]
fn busy_poll_and_idle_limit_from_plan_to_revert_on_a_sandbox() {
    let sb = sandbox();
    let root = sb.path();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = work.path().join("plan.yaml");
    let journal = work.path().join("j.jsonl");
    let (code, out, err) = run(lowlat()
        .arg("plan")
        .arg("--root")
        .arg(root)
        .args(["--isolated", "1", "--busy-poll", "50us", "--idle-limit", "80us", "-o"])
        .arg(&plan));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("busy polling 50 µs") && out.contains("idle limit 80 µs"), "{out}");
    let text = fs::read_to_string(&plan).unwrap_or_default();
    assert!(text.contains("busy_poll_us: 50") && text.contains("disable_states: true"), "{text}");

    let rendered = work.path().join("tuned");
    let (code, out, err) =
        run(lowlat().arg("render").arg("--plan").arg(&plan).arg("tuned").arg("-o").arg(&rendered));
    assert_eq!(code, 0, "{out}{err}");
    let conf = fs::read_to_string(rendered.join("lowlat-lowlat/tuned.conf")).unwrap_or_default();
    assert!(conf.contains("force_latency=80") && conf.contains("net.core.busy_read=50"), "{conf}");

    let before = snapshot(root);
    let (code, out, err) = run(lowlat()
        .arg("apply")
        .arg("--plan")
        .arg(&plan)
        .arg("--journal")
        .arg(&journal)
        .arg("--sysroot")
        .arg(root));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(read(root, "proc/sys/net/core/busy_read"), "50\n");
    assert_eq!(read(root, "proc/sys/net/core/busy_poll"), "50\n");
    assert_eq!(read(root, "sys/bus/workqueue/devices/writeback/numa"), "0\n");
    assert_eq!(read(root, &format!("{CPU}/cpu1/power/pm_qos_resume_latency_us")), "80\n");
    assert_eq!(read(root, &format!("{CPU}/cpu1/cpuidle/state3/disable")), "1\n", "C6: 133 µs");
    for (cpu, state) in [(1, 2), (0, 3)] {
        let p = format!("{CPU}/cpu{cpu}/cpuidle/state{state}/disable");
        assert_eq!(read(root, &p), "0\n", "{p}: within the limit or not isolated");
    }
    let journaled = fs::read_to_string(&journal).unwrap_or_default();
    assert!(journaled.contains("cpuidle/state3/disable") && journaled.contains("writeback/numa"));

    let (_, json, err) = run(lowlat()
        .arg("verify")
        .arg("--plan")
        .arg(&plan)
        .arg("--root")
        .arg(root)
        .args(["--journal"])
        .arg(&journal)
        .arg("--json"));
    let s = statuses(&format!("{json}{err}"));
    for id in [
        "idle-limit",
        "sysctl:net.core.busy_read",
        "sysctl:net.core.busy_poll",
        "writeback-scope",
        "workqueue-masks",
    ] {
        assert_eq!(s.get(id).map(String::as_str), Some("pass"), "{id}: {json}");
    }
    assert_eq!(s.get("cstate-usage").map(String::as_str), Some("n.a."), "{json}");

    let (code, out, err) =
        run(lowlat().arg("revert").arg("--journal").arg(&journal).arg("--sysroot").arg(root));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(snapshot(root), before, "host tree differs after revert");
    let (_, json, _) = run(lowlat()
        .arg("verify")
        .arg("--plan")
        .arg(&plan)
        .arg("--root")
        .arg(root)
        .arg("--journal")
        .arg(&journal)
        .arg("--json"));
    let s = statuses(&json);
    for id in ["idle-limit", "sysctl:net.core.busy_read", "writeback-scope"] {
        assert_eq!(s.get(id).map(String::as_str), Some("fail"), "{id} after revert: {json}");
    }
}

#[test]
fn an_idle_limit_the_kernel_has_no_unit_for_is_refused() {
    let (code, _, err) = run(lowlat().args(["plan", "--idle-limit", "80.5us", "--yaml"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a whole number of microseconds"), "{err}");
    let (code, _, err) = run(lowlat().args([
        "plan",
        "--power",
        "ultra-low-latency",
        "--idle-limit",
        "80us",
        "--yaml",
    ]));
    assert_ne!(code, 0);
    assert!(err.contains("polls when idle"), "{err}");
}

// ---------------------------------------------------------------- live host (root) ------

/// A plan with only seed 001's knobs for this 2-CPU VM: busy polling, the workqueue masks
/// (and with them the writeback pool scope) on CPU 0, and CPU 1 limited to 0 µs (POLL only)
/// so that every other state it has is switched off for the test.
const LIVE_PLAN: &str = r#"schema_version: 1
name: seed001-live
host: null
reserved: "0"
isolated: "1"
offlined: ""
options:
  style: lowlat
  power: default
  rt_kernel: false
  no_smt: false
  split_reserved_across_numa: false
  topology_policy: null
  per_pod_power_management: false
  hugepages: []
  near_device: null
  busy_poll_us: 50
  idle_limit_us: 0
kernel_args: []
runtime:
  - kind: workqueue-mask
    cpus: "0"
    reason: unbound work and writeback to housekeeping
  - kind: sysctl
    name: net.core.busy_read
    value: "50"
    reason: busy polling
  - kind: sysctl
    name: net.core.busy_poll
    value: "50"
    reason: busy polling
  - kind: idle-limit
    cpus: "1"
    max_latency_us: 0
    reason: poll only on CPU 1
    disable_states: true
rationale: []
"#;

/// The files the live plan may change, that exist here → their bytes.
fn live_files() -> BTreeMap<String, Vec<u8>> {
    let mut paths = vec![
        "/proc/sys/net/core/busy_read".to_string(),
        "/proc/sys/net/core/busy_poll".into(),
        "/sys/devices/virtual/workqueue/cpumask".into(),
        "/sys/bus/workqueue/devices/writeback/cpumask".into(),
        "/sys/bus/workqueue/devices/writeback/numa".into(),
        "/sys/bus/workqueue/devices/writeback/affinity_scope".into(),
        "/sys/devices/system/cpu/cpu1/power/pm_qos_resume_latency_us".into(),
    ];
    for e in fs::read_dir("/sys/devices/virtual/workqueue").into_iter().flatten().flatten() {
        paths.push(e.path().join("cpumask").display().to_string());
    }
    for e in fs::read_dir("/sys/devices/system/cpu/cpu1/cpuidle").into_iter().flatten().flatten() {
        paths.push(e.path().join("disable").display().to_string());
    }
    paths.into_iter().filter_map(|p| fs::read(&p).ok().map(|b| (p, b))).collect()
}

/// Reverts the live host when dropped (test end or panic).
struct Guard(PathBuf);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = lowlat().arg("revert").arg("--journal").arg(&self.0).status();
    }
}

#[test]
#[ignore = "needs root and changes the host: run with --include-ignored as root (.ci/run does)"]
fn live_busy_poll_idle_limit_and_writeback_scope_round_trip() {
    assert!(
        util::privilege::is_root(),
        "needs root and changes the host: run with --include-ignored as root"
    );
    assert!(
        Path::new("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable").exists(),
        "this test needs CPU 1 with a cpuidle state beyond POLL (this VM has haltpoll)"
    );
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = work.path().join("plan.yaml");
    fs::write(&plan, LIVE_PLAN).unwrap_or_else(|e| panic!("{e}"));
    let journal = work.path().join("journal.jsonl");
    let before = live_files();
    {
        let _guard = Guard(journal.clone());
        let (code, out, err) =
            run(lowlat().arg("apply").arg("--plan").arg(&plan).arg("--journal").arg(&journal));
        assert_eq!(code, 0, "{out}{err}");
        assert_eq!(fs::read_to_string("/proc/sys/net/core/busy_read").unwrap_or_default(), "50\n");
        assert_eq!(
            fs::read_to_string("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable")
                .unwrap_or_default(),
            "1\n"
        );
        let (_, json, err) = run(lowlat()
            .arg("verify")
            .arg("--plan")
            .arg(&plan)
            .arg("--journal")
            .arg(&journal)
            .args(["--json", "--window", "1s"]));
        let v: serde_json::Value =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}{err}"));
        let check = |id: &str| {
            v["checks"]
                .as_array()
                .and_then(|a| a.iter().find(|c| c["id"] == id))
                .cloned()
                .unwrap_or_else(|| panic!("no {id}: {json}"))
        };
        for id in [
            "idle-limit",
            "cstate-usage",
            "sysctl:net.core.busy_read",
            "sysctl:net.core.busy_poll",
            "writeback-scope",
        ] {
            assert_eq!(check(id)["status"], "pass", "{id}: {}", check(id));
        }
        let usage = check("cstate-usage").to_string();
        assert!(usage.contains("cpu1: POLL ") && usage.contains("% (deeper)"), "{usage}");
        let (code, out, err) = run(lowlat().arg("revert").arg("--journal").arg(&journal));
        assert_eq!(code, 0, "{out}{err}");
    }
    let after = live_files();
    let differ: Vec<&String> =
        before.iter().filter(|(k, v)| after.get(*k) != Some(*v)).map(|(k, _)| k).collect();
    assert!(differ.is_empty(), "not restored byte for byte: {differ:?}");
}
