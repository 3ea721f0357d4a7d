//! CLI tests of `lowlat check`: the quick main job on this machine (every step, result files,
//! report, next commands), skipping steps, and running without root.

#![allow(clippy::expect_used)]

use assert_cmd::Command;
use predicates::prelude::*;

fn lowlat() -> Command {
    let mut c = Command::cargo_bin("lowlat").expect("binary");
    c.env("LOWLAT_CPU_LOCK_DIR", lock_dir());
    c
}

/// A lock directory of its own for each run (`LOWLAT_CPU_LOCK_DIR`, under the build's
/// `CARGO_TARGET_TMPDIR`): the tests measure in parallel on one CPU, which lowlat otherwise
/// refuses (issue 21, item 5). Mode 0755, so a run as `nobody` can use it.
fn lock_dir() -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cpu-lock-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).expect("lock dir");
    std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("lock dir");
    d
}

#[test]
fn quick_check_runs_every_step_and_writes_the_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let started = std::time::Instant::now();
    let a = lowlat()
        .args(["check", "--quick", "--out"])
        .arg(&out)
        .timeout(std::time::Duration::from_secs(120))
        .assert();
    let code = a.get_output().status.code();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(matches!(code, Some(0) | Some(1)), "exit {code:?}\n{stdout}");
    for step in [
        "[1/7] inspect",
        "[2/7] plan",
        "[3/7] verify",
        "[4/7] timer",
        "[5/7] noise",
        "[6/7] ticks",
        "[7/7] fsync",
    ] {
        assert!(stdout.contains(step), "{step} missing:\n{stdout}");
    }
    assert!(stdout.contains("next:") && stdout.contains("lowlat apply --plan"), "{stdout}");
    for f in [
        "inspect.json",
        "plan.yaml",
        "verify.json",
        "timer.json",
        "noise.json",
        "ticks.json",
        "fsync.json",
        "lowlat-report.html",
    ] {
        assert!(out.join(f).is_file(), "{f} not written:\n{stdout}");
    }
    let probes: Vec<_> = std::fs::read_dir(&out)
        .expect("out")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("fsync-probe"))
        .collect();
    assert!(probes.is_empty(), "the fsync temp dir is removed: {probes:?}");
    let html = std::fs::read_to_string(out.join("lowlat-report.html")).expect("html");
    for s in ["Timer latency", "OS noise", "fsync latency", "Verify", "Topology"] {
        assert!(html.contains(s), "{s} section missing");
    }
    // Every result file is one the report reads back.
    lowlat()
        .arg("report")
        .args(
            ["timer.json", "noise.json", "ticks.json", "fsync.json", "verify.json", "inspect.json"]
                .map(|f| out.join(f)),
        )
        .arg("-o")
        .arg(dir.path().join("again.html"))
        .assert()
        .success();
    let took = started.elapsed().as_secs();
    assert!(took < 60, "--quick took {took}s");
}

#[test]
fn skipped_steps_are_noted_not_failed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("o");
    lowlat()
        .args(["check", "--skip", "verify,timer,noise,ticks,fsync", "--out"])
        .arg(&out)
        .assert()
        .code(predicate::in_iter([0, 1]))
        .stdout(predicate::str::contains("[4/7] timer   skipped (--skip)"))
        .stdout(predicate::str::contains("timer latency under CPU load"));
    let html = std::fs::read_to_string(out.join("lowlat-report.html")).expect("html");
    assert!(html.contains("skipped (--skip timer)"), "the report says what was skipped");
    lowlat()
        .args(["check", "--skip", "timr"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--skip timr: no such step"));
}

#[test]
#[ignore = "needs root (drops to nobody with setpriv; changes nothing): run with --include-ignored as root (.ci/run does)"]
fn without_root_it_degrades_with_a_note() {
    // Drops to nobody with setpriv (needs root to do so); nothing on the host changes.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("nr");
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .expect("chmod");
    // A copy of the binary where nobody can reach it (the build tree may sit under /root).
    let bin = dir.path().join("lowlat");
    std::fs::copy(assert_cmd::cargo::cargo_bin("lowlat"), &bin).expect("copy binary");
    let a = Command::new("setpriv")
        .env("LOWLAT_CPU_LOCK_DIR", lock_dir())
        .current_dir(dir.path())
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin)
        .args(["check", "--duration", "2s", "--skip", "fsync", "--out"])
        .arg(&out)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .code(predicate::in_iter([0, 1]));
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(stdout.contains("Not root"), "{stdout}");
    assert!(out.join("lowlat-report.html").is_file(), "{stdout}");
}

#[test]
fn an_interrupt_still_writes_the_report_with_the_partial_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("int");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lowlat"))
        .args(["check", "--duration", "30s", "--skip", "verify,noise,ticks,fsync", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Let the timer step start and checkpoint, then interrupt lowlat check alone (our child).
    std::thread::sleep(std::time::Duration::from_secs(7));
    let _ = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let output = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("interrupted"), "{stdout}");
    let html = std::fs::read_to_string(out.join("lowlat-report.html")).expect("report written");
    assert!(
        html.contains("is partial: the run was cut short"),
        "the partial timer result is in the report"
    );
}

/// The cgroup-v1 cpu hierarchy's mount (this test needs one with RT group scheduling).
fn v1_cpu_mount() -> String {
    let mounts = std::fs::read_to_string("/proc/mounts").expect("/proc/mounts");
    host::rt::cgroup_mounts(&mounts).0.expect("a cgroup-v1 cpu hierarchy (CI's machine has it)")
}

#[test]
#[ignore = "needs root and a cgroup-v1 cpu hierarchy with RT group scheduling: run with --include-ignored as root (.ci/run does)"]
fn rt_cgroup_fixes_a_timer_refused_real_time_by_its_cgroup() {
    assert!(util::privilege::is_root(), "run as root");
    let dir = tempfile::tempdir().expect("tempdir");
    let cg = format!("/lowlat-test-check-rt0-{}", std::process::id());
    let cg_dir = format!("{}{cg}", v1_cpu_mount());
    std::fs::create_dir(&cg_dir).expect("create a cgroup (cpu.rt_runtime_us = 0)");
    // `lowlat check` started inside the zero-budget cgroup (seed 001's Docker trap).
    let run = |out: &str, extra: &[&str]| {
        let bin = assert_cmd::cargo::cargo_bin("lowlat");
        let mut args = vec!["check", "--duration", "2s", "--skip", "verify,ticks,fsync"];
        args.extend_from_slice(extra);
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&cg_dir)
            .arg(&bin)
            .args(&args)
            .arg("--out")
            .arg(dir.path().join(out))
            .output()
            .expect("run lowlat check");
        (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let (code_refused, refused) = run("refused", &[]);
    let (code_moved, moved) = run("moved", &["--rt-cgroup", "root"]);
    let (code_zero, zero) = run("zero", &["--rt-cgroup", cg.as_str()]);
    std::fs::remove_dir(&cg_dir).expect("remove the test cgroup");
    assert!(matches!(code_refused, Some(0 | 1)), "{refused}");
    assert!(refused.contains("NOT REAL-TIME"), "{refused}");
    assert!(refused.contains("rerun as `sudo lowlat check --rt-cgroup root`"), "{refused}");
    assert!(refused.contains("  sudo lowlat check --rt-cgroup root"), "in next: {refused}");
    assert!(matches!(code_moved, Some(0 | 1)), "{moved}");
    assert!(
        moved.contains("Timer latency and OS noise ran from cgroup / (--rt-cgroup root)"),
        "{moved}"
    );
    assert!(!moved.contains("NOT REAL-TIME"), "{moved}");
    // A PATH with no budget is refused before any step runs.
    assert_eq!(code_zero, Some(3), "{zero}");
}

#[test]
fn rt_cgroup_path_that_does_not_exist_is_refused_before_the_steps() {
    let dir = tempfile::tempdir().expect("tempdir");
    lowlat()
        .args(["check", "--rt-cgroup", "/lowlat-no-such-cgroup", "--out"])
        .arg(dir.path().join("o"))
        .assert()
        .failure()
        .stdout(predicate::str::contains("[1/7]").not())
        .stderr(predicate::str::contains("--rt-cgroup"));
}
