//! `--rt-cgroup` for real: from a cgroup-v1 cpu cgroup with `cpu.rt_runtime_us` = 0 (seed
//! 001's trap), SCHED_FIFO is refused; after `rt_cgroup::enter(Root)` it is granted, and
//! dropping the guard puts the process back; `enter` into a PATH whose `cpu.rt_runtime_us` is
//! 0 is refused before any move. Its own test binary: it moves the whole process (the tests
//! take turns through `SERIAL`).

#![allow(clippy::expect_used)]

use std::fs;

use measure::rt_cgroup::{enter, RtCgroup};
use util::sched::{self, Policy};

/// Both tests move or inspect the whole process: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cpu_line() -> String {
    let text = fs::read_to_string("/proc/self/cgroup").expect("/proc/self/cgroup");
    text.lines()
        .find(|l| l.split(':').nth(1).is_some_and(|c| c.split(',').any(|x| x == "cpu")))
        .map(|l| l.splitn(3, ':').nth(2).unwrap_or("").to_string())
        .expect("a cgroup-v1 cpu hierarchy (this test needs one; CI's machine has it)")
}

#[test]
#[ignore = "needs root and a cgroup-v1 cpu hierarchy with RT group scheduling: run with --include-ignored as root (.ci/run does)"]
fn rt_cgroup_root_grants_fifo_and_moves_back() {
    let _turn = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    assert!(util::privilege::is_root(), "run as root");
    let mounts = fs::read_to_string("/proc/mounts").expect("/proc/mounts");
    let (v1, _) = host::rt::cgroup_mounts(&mounts);
    let mount = v1.expect("a cgroup-v1 cpu hierarchy");
    let original = cpu_line();
    let test_cg = format!("/lowlat-test-rt-{}", std::process::id());
    let dir = format!("{mount}{test_cg}");
    fs::create_dir(&dir).expect("create the test cgroup");
    assert_eq!(
        fs::read_to_string(format!("{dir}/cpu.rt_runtime_us")).expect("rt_runtime_us").trim(),
        "0"
    );
    fs::write(format!("{dir}/cgroup.procs"), std::process::id().to_string()).expect("move in");
    let refused = sched::set_policy(0, Policy::Fifo, 10).is_err();
    let granted = {
        let moved = enter(&RtCgroup::Root).expect("enter the root cgroup");
        assert_eq!(cpu_line(), "/");
        assert_eq!(moved.from, test_cg);
        let ok = sched::set_policy(0, Policy::Fifo, 10).is_ok();
        let _ = sched::set_policy(0, Policy::Other, 0);
        ok
    };
    let back = cpu_line();
    // Clean up before asserting, so a failure leaves no cgroup behind.
    let restore = format!("{mount}{}/cgroup.procs", original.trim_end_matches('/'));
    fs::write(restore, std::process::id().to_string()).expect("move back to the original");
    fs::remove_dir(&dir).expect("remove the test cgroup");
    assert!(refused, "SCHED_FIFO must be refused in a cgroup with cpu.rt_runtime_us = 0");
    assert!(granted, "SCHED_FIFO must be granted in the root cgroup");
    assert_eq!(back, test_cg, "dropping the guard moves the process back");
}

#[test]
#[ignore = "needs root and a cgroup-v1 cpu hierarchy with RT group scheduling: run with --include-ignored as root (.ci/run does)"]
fn rt_cgroup_path_with_zero_budget_is_refused_before_moving() {
    let _turn = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    assert!(util::privilege::is_root(), "run as root");
    let mounts = fs::read_to_string("/proc/mounts").expect("/proc/mounts");
    let mount = host::rt::cgroup_mounts(&mounts).0.expect("a cgroup-v1 cpu hierarchy");
    let original = cpu_line();
    let test_cg = format!("/lowlat-test-rt0-{}", std::process::id());
    let dir = format!("{mount}{test_cg}");
    fs::create_dir(&dir).expect("create the test cgroup");
    let budget = fs::read_to_string(format!("{dir}/cpu.rt_runtime_us"));
    let result = enter(&RtCgroup::Path(test_cg.clone()));
    let after = cpu_line();
    let procs = fs::read_to_string(format!("{dir}/cgroup.procs")).unwrap_or_default();
    let err = result.err().map(|e| e.to_string());
    // Clean up before asserting (a wrongly moved process is moved back by the guard's drop).
    fs::remove_dir(&dir).expect("remove the test cgroup");
    assert_eq!(budget.expect("rt_runtime_us").trim(), "0", "a new v1 cgroup starts at 0");
    let err = err.expect("a PATH with cpu.rt_runtime_us = 0 must be refused");
    assert!(err.contains(&format!("{dir}/cpu.rt_runtime_us is 0")), "{err}");
    assert!(err.contains("or use `root`"), "{err}");
    assert_eq!(after, original, "the process must still be in its own cgroup");
    assert!(procs.trim().is_empty(), "nothing was moved into {dir}: {procs}");
}
