//! CLI tests of `lowlat measure timer|noise|ticks` and `lowlat import cyclictest|oslat`.
//! Short real runs (1 s) on this host: they pass with or without real-time privileges (the
//! result then says `"realtime": false`), and check the JSON contract names, exit codes,
//! Ctrl-C handling and the cyclictest-compatible text.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::path::PathBuf;
use std::process::Command as StdCommand;
use std::time::Duration;

use crate::support::lowlat;
use predicates::prelude::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../results/tests/fixtures").join(name)
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Wait until `ready` holds (polled every 50 ms), at most `limit`: a state to reach, never a
/// fixed sleep, so a loaded machine makes the test slower, not wrong.
fn wait_until(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The result file a running measurement checkpoints (every 5 s), once it is there.
fn checkpoint(path: &std::path::Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// A CPU to measure: the last online one (CPU 1 on the 2-vCPU dev VM).
fn cpu() -> String {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (n - 1).to_string()
}

#[test]
fn import_cyclictest_json_to_result_file() {
    let out = lowlat()
        .args(["import", "cyclictest"])
        .arg(fixture("cyclictest-2.4-h100.json"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "timer");
    assert_eq!(v["threads"][0]["cpu"], 1);
    assert!(v["threads"][0]["histogram"]["overflow"].as_u64().is_some());
    assert_eq!(v["params"]["cmdline"].as_str().map(|s| s.starts_with("cyclictest")), Some(true));
}

#[test]
fn import_oslat_text_as_table() {
    lowlat()
        .args(["import", "oslat", "--table"])
        .arg(fixture("oslat-2.4.txt"))
        .assert()
        .success()
        .stdout(predicate::str::contains("4036"));
}

#[test]
fn import_errors_are_usage_errors() {
    lowlat()
        .args(["import", "cyclictest", "/nonexistent/ct.txt"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/ct.txt"));
    lowlat()
        .args(["import", "oslat"])
        .arg(fixture("cyclictest-2.4-q.txt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("oslat"));
}

#[test]
fn timer_json_has_the_contract_names() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    lowlat()
        .args(["measure", "timer", "-D", "1", "-q", "--cpus", &cpu(), "--json"])
        .arg(&f)
        .assert()
        .success();
    let v = json(&f);
    assert_eq!(v["kind"], "timer");
    assert_eq!(v["partial"], false);
    assert!(v["realtime"].is_boolean());
    let t = &v["threads"][0];
    for k in [
        "cpu",
        "count",
        "overruns",
        "min_ns",
        "avg_ns",
        "max_ns",
        "stddev_ns",
        "p50_ns",
        "p90_ns",
        "p99_ns",
        "p999_ns",
        "p9999_ns",
    ] {
        assert!(t[k].is_u64(), "{k} in {t}");
    }
    assert!(t["histogram"]["buckets"].is_array() && t["histogram"]["overflow"].is_u64());
    let b = &t["histogram"]["buckets"][0];
    assert!(b["lo_ns"].is_u64() && b["hi_ns"].is_u64() && b["count"].is_u64());
    let count = t["count"].as_u64().unwrap() + t["overruns"].as_u64().unwrap();
    // A late last wake-up also counts the periods it skipped just past the 1 s end, so a few
    // more than 1000 is right on a loaded VM; far more or far fewer would be a counting bug.
    assert!((900..=1020).contains(&count), "1 s at 1 ms: {count} wake-ups + overruns");
    assert!(!t["per_second_max_ns"].as_array().unwrap().is_empty());
    assert!(v["host"]["kernel"].is_string());
}

#[test]
fn threshold_fails_and_records_breaches() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    lowlat()
        .args(["measure", "timer", "-D", "1", "--threshold", "1ns", "--cpus", &cpu(), "--json"])
        .arg(&f)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("threshold reached"));
    assert!(!json(&f)["breaches"].as_array().unwrap().is_empty());
}

#[test]
fn stop_on_threshold_stops_early_and_marks_partial() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    lowlat()
        .args(["measure", "timer", "-D", "10", "--threshold", "1ns", "--stop-on-threshold", "-q"])
        .args(["--cpus", &cpu(), "--json"])
        .arg(&f)
        .timeout(Duration::from_secs(5))
        .assert()
        .code(1);
    let v = json(&f);
    assert_eq!(v["partial"], true);
    assert_eq!(v["threads"][0]["count"], 1);
    assert_eq!(v["breaches"][0]["cpu"].as_u64().map(|c| c.to_string()), Some(cpu()));
}

#[test]
fn cyclictest_text_mode_keeps_scripts_working() {
    let t_line = r"(?m)^T: 0 \(\s*\d+\) P:(95| 0) I:1000 C:\s+\d+ Min:\s+\d+ Act:\s+\d+ Avg:\s+\d+ Max:\s+\d+$";
    lowlat()
        .args(["measure", "timer", "-D", "1", "--cyclictest", "--cpus", &cpu()])
        .assert()
        .success()
        .stdout(predicate::str::is_match(t_line).unwrap())
        .stdout(predicate::str::is_match(r"(?m)^# Max Latencies: \d{5}$").unwrap());
}

#[test]
fn the_table_escapes_what_the_load_command_holds() {
    // The table names the load command; text in it must not reach the terminal as escapes.
    let o = lowlat()
        .args(["measure", "timer", "--loops", "50", "--interval", "100us", "--cpus", &cpu()])
        .args(["--load-cmd", "sleep 5 # \x1b]0;owned\x07\x1b[2J"])
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("(sleep 5 # \\u{1b}]0;owned\\u{7}\\u{1b}[2J)"), "{out}");
    assert!(!out.contains(['\x1b', '\x07']) && !err.contains(['\x1b', '\x07']), "{out}{err}");
}

#[test]
fn interference_cmd_runs_for_timer_and_noise_and_its_end_is_recorded() {
    let d = tempfile::tempdir().unwrap();
    let ran = d.path().join("ran");
    // It leaves a trace (so it ran) and would run 30 s: lowlat stops it at the end.
    let cmd = format!("touch {}; exec sleep 30", ran.display());
    let runs: [(&str, &[&str]); 2] =
        [("timer", &["--loops", "50", "--interval", "100us"]), ("noise", &["-D", "1"])];
    for (kind, len) in runs {
        let o = lowlat()
            .args(["measure", kind, "--cpus", &cpu(), "--json", "-"])
            .args(len)
            .args(["--interference-cmd", &cmd])
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{kind}: {}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let load = &v["load"];
        assert_eq!(load["kind"], "external", "{kind}: {load}");
        assert_eq!(load["command"], cmd.as_str());
        assert!(load["cpus"].as_str().is_some_and(|c| !c.is_empty()), "{load}");
        assert_eq!(load["exit"]["ended_by"], "sigterm", "{kind}: {load}");
        assert_eq!(load["exit"]["signal"], 15, "{kind}: {load}");
        assert!(std::fs::remove_file(&ran).is_ok(), "{kind}: the command ran");
    }
    // A command that ends by itself is recorded as such, with its code, and noted.
    let o = lowlat()
        .args(["measure", "timer", "-D", "1", "--cpus", &cpu(), "--json", "-"])
        .args(["--interference-cmd", "exit 7"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["load"]["exit"]["ended_by"], "itself", "{}", v["load"]);
    assert_eq!(v["load"]["exit"]["code"], 7);
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("exited during")));
}

#[test]
fn bad_cpus_and_main_cpu_are_usage_errors() {
    lowlat()
        .args(["measure", "timer", "--cpus", "4095"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not online"));
    lowlat().args(["measure", "timer", "--cpus", "x-y"]).assert().code(2);
    lowlat()
        .args(["measure", "timer", "--cpus", "0", "--main-cpu", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--main-cpu"));
    lowlat().args(["measure", "timer", "--duration", "0s"]).assert().code(2);
}

#[test]
fn noise_and_ticks_write_results() {
    let dir = tempfile::tempdir().unwrap();
    let n = dir.path().join("n.json");
    lowlat()
        .args(["measure", "noise", "-D", "1", "-q", "--cpus", &cpu(), "--json"])
        .arg(&n)
        .assert()
        .success();
    let v = json(&n);
    assert_eq!(v["kind"], "noise");
    assert!(v["threads"][0]["count"].as_u64().unwrap() > 100_000, "a busy loop samples a lot");
    assert!(v["threads"][0]["per_second_noise_ns"].is_array());
    let notes = v["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("osnoise")), "{notes:?}");
    let t = dir.path().join("t.json");
    lowlat()
        .args(["measure", "ticks", "-D", "1", "--cpus", &cpu(), "--json"])
        .arg(&t)
        .assert()
        .success();
    let v = json(&t);
    assert_eq!(v["kind"], "ticks");
    assert!(v["cpus"][0]["loc_per_s"].is_number());
    lowlat()
        .args(["measure", "ticks", "-D", "1", "--cpus", &cpu()])
        .assert()
        .success()
        .stdout(predicate::str::contains("LOC/s"));
}

/// A noise run says whether it held PM QoS, and what the hold does to its numbers: holding
/// /dev/cpu_dma_latency at 0 keeps the housekeeping CPUs' timers off the measured CPUs, which
/// was why lowlat counted fewer >= 31 µs gaps than oslat (docs/benchmarks/measure.md).
#[test]
#[ignore = "needs root: /dev/cpu_dma_latency (CI runs it)"]
fn noise_says_whether_it_held_pm_qos() {
    let dir = tempfile::tempdir().unwrap();
    for (args, held) in [(&[][..], true), (&["--no-dma-latency"][..], false)] {
        let n = dir.path().join("n.json");
        lowlat()
            .args(["measure", "noise", "-D", "1", "-q", "--cpus", &cpu(), "--json"])
            .arg(&n)
            .args(args)
            .assert()
            .success();
        let v = json(&n);
        assert_eq!(v["params"]["dma_latency"], held, "{args:?}");
        let notes = v["notes"].as_array().unwrap();
        let said = notes.iter().any(|n| n.as_str().unwrap().contains("PM QoS held at 0"));
        assert_eq!(said, held, "{args:?}: {notes:?}");
    }
}

#[test]
fn ctrl_c_writes_a_partial_result_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    let bin = assert_cmd::cargo::cargo_bin("lowlat");
    let child = StdCommand::new(bin)
        .env("LOWLAT_CPU_LOCK_DIR", crate::support::lock_dir())
        .args(["measure", "timer", "-D", "30", "-q", "--cpus", &cpu(), "--load", "cpu", "--json"])
        .arg(&f)
        .spawn()
        .unwrap();
    // Measuring: its first checkpoint is written.
    wait_until(Duration::from_secs(60), "the first checkpoint", || checkpoint(&f).is_some());
    let pid = child.id().to_string();
    assert!(StdCommand::new("sh")
        .args(["-c", &format!("kill -INT {pid}")])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v = json(&f);
    assert_eq!(v["partial"], true);
    assert_eq!(v["load"]["kind"], "cpu");
    assert!(v["threads"][0]["count"].as_u64().unwrap() > 500);
}

#[test]
fn import_fio_json_from_a_real_fio_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = StdCommand::new("fio")
        .args(["--rw=write", "--ioengine=sync", "--fdatasync=1", "--size=128k", "--bs=2300"])
        .args(["--name=probe", "--output-format=json"])
        .arg(format!("--directory={}", dir.path().display()))
        .output()
        .expect("fio is installed (rt-tests, fio are in .ci/run need_pkgs)");
    let f = dir.path().join("fio.json");
    std::fs::write(&f, &out.stdout).unwrap();
    let res = lowlat().args(["import", "fio"]).arg(&f).output().unwrap();
    assert!(res.status.success(), "{}", String::from_utf8_lossy(&res.stderr));
    let v: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    assert_eq!(v["kind"], "fsync");
}

#[test]
fn loops_bound_the_run() {
    let out = lowlat()
        .args(["measure", "timer", "-q", "--loops", "200", "--interval", "100us", "--cpus", &cpu()])
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["threads"][0]["count"], 200);
    assert_eq!(v["params"]["duration_ns"], serde_json::Value::Null);
}

/// Without real-time privileges the run still happens, loudly marked `"realtime": false`.
/// Needs root to drop to `nobody` (CI runs as root); elsewhere there is nothing to drop.
#[test]
fn without_privileges_it_falls_back_to_sched_other_loudly() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let root =
        status.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    // `nobody` must be able to execute the binary wherever the checkout lives: copy it to a
    // world-readable temporary directory.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("lowlat");
    std::fs::copy(assert_cmd::cargo::cargo_bin("lowlat"), &bin).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = if root {
        let mut c = StdCommand::new("setpriv");
        c.env("LOWLAT_CPU_LOCK_DIR", crate::support::lock_dir());
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(&bin);
        c
    } else {
        let mut c = StdCommand::new(&bin);
        c.env("LOWLAT_CPU_LOCK_DIR", crate::support::lock_dir());
        c
    };
    let out = cmd
        .args(["measure", "timer", "-D", "1", "-q", "--cpus", &cpu(), "--json", "-"])
        .current_dir("/")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["realtime"], false);
    assert!(String::from_utf8_lossy(&out.stderr).contains("NOT REAL-TIME"));
    assert_eq!(v["threads"][0]["priority"], 0);
}

fn processes_with_cmdline(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).replace('\0', " ").starts_with(needle))
        .count()
}

#[test]
fn second_ctrl_c_exits_at_once_and_takes_the_external_load_down() {
    let marker = "sleep 301.25";
    let bin = assert_cmd::cargo::cargo_bin("lowlat");
    let mut child = StdCommand::new(bin)
        .env("LOWLAT_CPU_LOCK_DIR", crate::support::lock_dir())
        .args(["measure", "timer", "-D", "30", "-q", "--cpus", &cpu()])
        .args(["--load-cmd", &format!("exec {marker}")])
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(30), "the load runs", || processes_with_cmdline(marker) == 1);
    let pid = child.id().to_string();
    // Both signals land before the run can finish its orderly stop.
    assert!(StdCommand::new("sh")
        .args(["-c", &format!("kill -INT {pid}")])
        .status()
        .unwrap()
        .success());
    assert!(StdCommand::new("sh")
        .args(["-c", &format!("kill -INT {pid}")])
        .status()
        .unwrap()
        .success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    wait_until(Duration::from_secs(10), "the load is gone", || processes_with_cmdline(marker) == 0);
}

#[test]
fn json_alone_goes_to_stdout_and_the_table_to_stderr() {
    let out = lowlat()
        .args(["measure", "ticks", "-D", "1", "--cpus", &cpu(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "ticks");
    assert!(v["started_at"].as_str().is_some_and(|s| s.ends_with('Z')));
    assert!(String::from_utf8_lossy(&out.stderr).contains("LOC/s"));
}

#[test]
fn a_json_file_holds_the_partial_result_while_running() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    let bin = assert_cmd::cargo::cargo_bin("lowlat");
    let child = StdCommand::new(bin)
        .env("LOWLAT_CPU_LOCK_DIR", crate::support::lock_dir())
        .args(["measure", "timer", "-D", "9", "-q", "--cpus", &cpu(), "--json"])
        .arg(&f)
        .spawn()
        .unwrap();
    // Rewritten every 5 s while running: the first checkpoint is there before the 9 s end.
    wait_until(Duration::from_secs(60), "a checkpoint", || checkpoint(&f).is_some());
    let partial = json(&f);
    assert_eq!(partial["partial"], true, "rewritten every 5 s while running");
    assert!(partial["threads"][0]["count"].as_u64().unwrap() > 1000);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(json(&f)["partial"], false);
}

/// `--rt-cgroup` takes `root` or an absolute cgroup path; anything else is a usage error
/// naming the option, before anything runs.
#[test]
fn rt_cgroup_refuses_a_relative_or_escaping_path() {
    for bad in ["rt", "/a/../b"] {
        lowlat()
            .args(["measure", "timer", "-D", "1", "--rt-cgroup", bad])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--rt-cgroup"));
    }
}

/// `--tracer` and `measure hwlat` on whatever kernel runs the tests: with the tracer the
/// result says which one measured and carries its parts; without it (this VM's kernel has
/// none) the run measures with lowlat's own threads and names the missing tracer, and hwlat,
/// which has nothing to fall back to, exits 3 naming it. Either way the command works.
#[test]
fn tracer_modes_measure_or_name_the_missing_tracer() {
    let dir = tempfile::tempdir().unwrap();
    for (what, tracer) in [("timer", "timerlat"), ("noise", "osnoise")] {
        let f = dir.path().join(format!("{what}.json"));
        lowlat()
            .args(["measure", what, "--tracer", "-D", "1", "-q", "--cpus", &cpu(), "--json"])
            .arg(&f)
            .assert()
            .success();
        let v = json(&f);
        let notes: Vec<String> = v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
        if v["tracer"].is_null() {
            let no = notes.iter().find(|n| n.starts_with("NO TRACER")).expect("a NO TRACER note");
            assert!(no.contains(tracer) || no.contains("tracefs"), "{no}");
            assert!(no.contains("lowlat's own threads"), "{no}");
            assert!(v["threads"][0]["count"].as_u64().unwrap() > 0, "the fallback measured");
        } else {
            assert_eq!(v["tracer"]["name"], tracer);
            assert_eq!(v["params"]["engine"], tracer);
            if what == "timer" {
                assert!(v["threads"][0]["irq"]["count"].as_u64().unwrap() > 0);
            } else {
                assert!(v["threads"][0]["osnoise"]["periods"].as_u64().is_some());
            }
        }
    }
    let out = lowlat().args(["measure", "hwlat", "-D", "2", "--json", "-"]).output().unwrap();
    match out.status.code() {
        Some(3) => {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("hwlat"), "{err}");
        }
        Some(0 | 1) => {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["tracer"]["name"], "hwlat");
        }
        other => panic!("measure hwlat exited {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
    }
    // --save-trace needs --tracer
    lowlat().args(["measure", "noise", "--save-trace", "x.txt"]).assert().code(2);
}
