//! Issue 21, "verdicts that never lie", through the real binary: the hostile corpus under
//! `testdata/verdicts/` (see its README) is judged by `report --strict`, `report --compare`,
//! `import` and `measure etcd`, and nothing in it may say PASS.

#![allow(clippy::expect_used, clippy::unwrap_used, reason = "test helpers")]

use std::io::{Read as _, Write as _};
use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/verdicts").join(name)
}

fn fixture(name: &str) -> String {
    format!("{}/../report/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn lowlat() -> Command {
    let mut c = crate::support::lowlat();
    c.env("COLUMNS", "200");
    c
}

/// Items 1, 3, 4: every file of `report-strict.tsv` gets its exit code and its reason under
/// `report --strict`, and no line says PASS.
#[test]
fn report_strict_judges_the_corpus_and_never_passes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("r.html");
    let table = std::fs::read_to_string(corpus("report-strict.tsv")).expect("tsv");
    let mut n = 0;
    for line in table.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut f = line.split('\t');
        let (file, code, text) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
        let o = lowlat()
            .arg("report")
            .arg(corpus(file))
            .arg("--strict")
            .arg("-o")
            .arg(&out)
            .output()
            .expect("runs");
        let all =
            format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.status.code().map(|c| c.to_string()).as_deref(), Some(code), "{file}: {all}");
        assert!(all.contains(text), "{file}: wants {text:?}: {all}");
        assert!(!all.contains("PASS"), "{file}: {all}");
        n += 1;
    }
    assert!(n >= 11, "the corpus is read ({n} cases)");
}

fn compare(before: &PathBuf, after: &PathBuf, dir: &std::path::Path) -> (Option<i32>, String) {
    let o = lowlat()
        .args(["report", "--strict", "--compare"])
        .arg(before)
        .arg("--vs")
        .arg(after)
        .arg("-o")
        .arg(dir.join("c.html"))
        .output()
        .expect("runs");
    (
        o.status.code(),
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
    )
}

/// Item 2: two failing sides say "both fail" (and whether the number improved), never PASS.
#[test]
fn compare_of_two_failing_runs_is_never_a_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, out) = compare(
        &corpus("compare/timer-before-20us.json"),
        &corpus("compare/timer-after-20us.json"),
        dir.path(),
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("before vs after: FAIL"), "{out}");
    assert!(out.contains("both fail") && out.contains("improved but still fails"), "{out}");
    assert!(!out.contains("PASS"), "{out}");
}

/// Item 2 with item 3: two imports of seed 000's kept evidence compared: the real maxima
/// (184 µs on both sides: fails the 100 µs threshold), not "PASS … 0 ns → 0 ns".
#[test]
fn compare_of_seed_000_evidence_judges_the_maxima() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = corpus("cyclictest-latencies-only.txt");
    let (code, out) = compare(&seed, &seed, dir.path());
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("184 µs → 184 µs") && out.contains("unchanged: still fails"), "{out}");
    assert!(!out.contains("0 ns → 0 ns") && !out.contains("PASS"), "{out}");
    // The single report's table: min/avg/max as the lines said, the count unknown, not 0.
    let o = lowlat()
        .arg("report")
        .arg(&seed)
        .arg("-o")
        .arg(dir.path().join("r.html"))
        .args(["--json", "-"])
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let rows = v["sections"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["blocks"].as_array().into_iter().flatten())
        .filter_map(|b| b["Table"]["rows"].as_array().or(b["rows"].as_array()))
        .flatten()
        .map(|r| r.to_string())
        .find(|r| r.contains("184 µs"))
        .unwrap_or_else(|| panic!("no row with 184 µs: {v}"));
    assert!(rows.contains("\"unknown\"") && rows.contains("5.00 µs"), "{rows}");
}

/// Item 2: an after side that is partial or written by a newer lowlat is never a pass.
#[test]
fn compare_with_a_partial_or_newer_after_side_is_not_a_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("timer-after.json")).unwrap())
            .unwrap();
    let mut partial = after.clone();
    partial["partial"] = serde_json::json!(true);
    after["schema_version"] = serde_json::json!(99);
    for (name, v, why) in
        [("newer.json", after, "schema_version 99"), ("partial.json", partial, "partial")]
    {
        let f = dir.path().join(name);
        std::fs::write(&f, v.to_string()).unwrap();
        let (code, out) = compare(&PathBuf::from(fixture("timer.json")), &f, dir.path());
        assert_ne!(code, Some(0), "{name}: {out}");
        assert!(out.contains("not a pass: the after side cannot be judged"), "{name}: {out}");
        assert!(out.contains(why), "{name}: {out}");
        assert!(!out.contains("PASS"), "{name}: {out}");
    }
}

/// Item 2: oslat's 1 µs buckets against lowlat's 100 ns ones: said, not silently compared.
#[test]
fn compare_says_when_the_resolutions_differ() {
    let dir = tempfile::tempdir().expect("tempdir");
    let oslat = dir.path().join("oslat.json");
    lowlat()
        .args(["import", "oslat"])
        .arg(format!("{}/../results/tests/fixtures/oslat-2.4.json", env!("CARGO_MANIFEST_DIR")))
        .arg("-o")
        .arg(&oslat)
        .assert()
        .success();
    let (_, out) = compare(&oslat, &PathBuf::from(fixture("noise.json")), dir.path());
    assert!(
        out.contains("resolution differs (1.00 µs vs 100 ns): bands below 1.00 µs not comparable"),
        "{out}"
    );
    let html = std::fs::read_to_string(dir.path().join("c.html")).unwrap();
    assert!(html.contains("different resolutions"), "the note is in the report");
}

/// Item 4: importing a failed run says so, and the result carries `failed`.
#[test]
fn import_of_a_failed_run_warns_and_records_it() {
    let o = lowlat()
        .args(["import", "cyclictest"])
        .arg(corpus("cyclictest-return-code-1.json"))
        .assert()
        .success()
        .stderr(predicate::str::contains("no report will pass it"))
        .stderr(predicate::str::contains("return_code 1"));
    let v: serde_json::Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
    assert_eq!(v["failed"], "cyclictest exited with return_code 1");
    lowlat()
        .args(["import", "fio"])
        .arg(corpus("fio-job-error-5.json"))
        .assert()
        .success()
        .stderr(predicate::str::contains("fio reported error 5"));
}

/// Item 1: `measure etcd` on an idle endpoint (a static file behind a plain HTTP server): exit
/// 1, "no fsyncs observed", no PASS; a NaN bucket: exit 2 naming the metric.
#[test]
fn measure_etcd_on_an_idle_or_garbage_endpoint_is_not_a_pass() {
    for (file, code, text) in [
        ("idle.prom", 1, "no fsyncs observed"),
        ("nan-bucket.prom", 2, "not a finite non-negative number"),
    ] {
        let body = std::fs::read_to_string(corpus(&format!("etcd-metrics/{file}"))).unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}/metrics", l.local_addr().unwrap().port());
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { return };
                let _ = s.read(&mut [0u8; 4096]);
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        let o = lowlat()
            .args([
                "measure",
                "etcd",
                "--endpoint",
                &url,
                "--duration",
                "1s",
                "--interval",
                "500ms",
            ])
            .output()
            .expect("runs");
        let all =
            format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.status.code(), Some(code), "{file}: {all}");
        assert!(all.contains(text), "{file}: {all}");
        assert!(!all.contains("PASS"), "{file}: {all}");
    }
}

/// Item 7: a result file that could not be written at the end is refused before measuring
/// (exit 2, the option and the path named, at once), not after a run of hours.
#[test]
fn every_output_path_is_checked_before_measuring() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &["measure", "timer", "--cpus", "1", "-D", "1h", "--json", "/missing/dir/t.json"],
            "--json /missing/dir/t.json: its directory does not exist",
        ),
        (&["measure", "noise", "--cpus", "1", "-D", "1h", "--json", d], "it is a directory"),
        (&["measure", "ticks", "-D", "1h", "--json", "/missing/t.json"], "--json /missing/t.json"),
        (&["measure", "hwlat", "-D", "1h", "--json", "/missing/h.json"], "--json /missing/h.json"),
        (
            &["measure", "timer", "--tracer", "--save-trace", "/missing/x.txt", "-D", "1h"],
            "--save-trace /missing/x.txt",
        ),
        (
            &["measure", "fsync", "--dir", d, "--duration", "1h", "--fio-json", "/missing/f.json"],
            "--fio-json /missing/f.json",
        ),
        (
            &[
                "measure",
                "etcd",
                "--endpoint",
                "http://127.0.0.1:1",
                "--duration",
                "1h",
                "--json",
                "/missing/e.json",
            ],
            "--json /missing/e.json",
        ),
        (
            &[
                "watch",
                "storage",
                "--dir",
                d,
                "--duration",
                "1h",
                "--prometheus",
                "/missing/p.prom",
            ],
            "--prometheus /missing/p.prom",
        ),
    ];
    for (args, text) in cases {
        let t0 = std::time::Instant::now();
        lowlat()
            .args(args)
            .timeout(std::time::Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(text));
        assert!(t0.elapsed().as_secs() < 10, "{args:?}: refused only after {:?}", t0.elapsed());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left behind");
}

/// Item 8: what is not known reads "unknown": the length of an import without one (not "Run:
/// 0s"), and the virtualization of a snapshot without /proc/cpuinfo (not bare metal, and the
/// report warns).
#[test]
fn unknown_durations_and_virtualization_read_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = lowlat()
        .arg("report")
        .arg(corpus("cyclictest-latencies-only.txt"))
        .arg("-o")
        .arg(dir.path().join("r.html"))
        .args(["--json", "-"])
        .output()
        .expect("runs");
    let json = String::from_utf8_lossy(&o.stdout);
    assert!(json.contains("length unknown of cyclictest"), "{json}");
    assert!(!json.contains("0s of") && !json.contains("\"0s\""), "{json}");
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("proc")).unwrap();
    std::fs::create_dir_all(root.join("sys/devices/system/cpu")).unwrap();
    std::fs::write(root.join("proc/cmdline"), "BOOT_IMAGE=/vmlinuz ro\n").unwrap();
    std::fs::write(root.join("sys/devices/system/cpu/online"), "0-1\n").unwrap();
    lowlat()
        .arg("inspect")
        .arg("--root")
        .arg(&root)
        .assert()
        .stdout(predicate::str::contains("unknown: /proc/cpuinfo could not be read"))
        .stdout(predicate::str::contains("bare metal").not());
    let inspect = dir.path().join("i.json");
    lowlat()
        .arg("inspect")
        .arg("--root")
        .arg(&root)
        .arg("--json")
        .arg(&inspect)
        .output()
        .expect("runs");
    assert!(inspect.is_file());
    lowlat()
        .arg("report")
        .arg(&inspect)
        .arg("-o")
        .arg(dir.path().join("i.html"))
        .assert()
        .stdout(predicate::str::contains("Virtualization unknown"));
}

/// Item 12: a non-root `revert` on the live host is a usage error (exit 2) saying to run it
/// as root, as `apply` is — not a runtime error (3) about an undocumented lock under /run.
#[test]
fn a_non_root_revert_is_refused_like_apply() {
    use std::os::unix::process::CommandExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = dir.path().join("j.jsonl");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_lowlat"));
    cmd.arg("revert").arg("--journal").arg(&journal);
    // SAFETY: only async-signal-safe setgid/setuid between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::geteuid() == 0 && (libc::setgid(65534) != 0 || libc::setuid(65534) != 0) {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("run it as root") && err.contains("sudo lowlat revert"), "{err}");
}

/// Item 5: measurements own their CPUs. While `measure timer` runs on a CPU, a `measure
/// noise` (or a second timer) on it is refused at once, naming the CPU and the holder; once
/// the first ends, the CPU is free again.
#[test]
fn a_second_measurement_on_a_busy_cpu_is_refused() {
    let locks = tempfile::tempdir().expect("tempdir");
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = (n - 1).to_string();
    let bin = env!("CARGO_BIN_EXE_lowlat");
    let mut first = std::process::Command::new(bin)
        .env("LOWLAT_CPU_LOCK_DIR", locks.path())
        .args(["measure", "timer", "-D", "4", "-q", "--cpus", &cpu])
        .spawn()
        .expect("spawn");
    let lock = locks.path().join(format!("cpu-{cpu}.lock"));
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.contains("measure timer")) {
        assert!(t0.elapsed().as_secs() < 20, "the first run never took its lock");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for kind in ["noise", "timer"] {
        let o = lowlat()
            .env("LOWLAT_CPU_LOCK_DIR", locks.path())
            .args(["measure", kind, "-D", "1", "-q", "--cpus", &cpu])
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{kind}: {err}");
        let holder = format!("pid {} (measure timer)", first.id());
        assert!(err.contains(&format!("CPU {cpu} is being measured by another lowlat")), "{err}");
        assert!(err.contains(&holder) && err.contains("choose other --cpus"), "{err}");
    }
    assert!(first.wait().expect("wait").success());
    lowlat()
        .env("LOWLAT_CPU_LOCK_DIR", locks.path())
        .args(["measure", "noise", "-D", "1", "-q", "--cpus", &cpu])
        .assert()
        .success();
}
