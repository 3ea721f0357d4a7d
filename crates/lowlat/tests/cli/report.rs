//! CLI tests of `lowlat report`: HTML written with the terminal summary, compare mode, and
//! input errors (exit 2 naming the file).

#![allow(clippy::expect_used)]

use crate::support::lowlat;
use predicates::prelude::*;

fn fixture(name: &str) -> String {
    format!("{}/../report/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn report_writes_html_and_prints_the_verdicts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("sub/r.html");
    lowlat()
        .args([
            "report",
            &fixture("timer.json"),
            &fixture("fsync.json"),
            &fixture("verify.json"),
            "-o",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("lowlat report: FAIL"))
        .stdout(predicate::str::contains("Timer latency: worst 63.4 µs on CPU 5"))
        .stdout(predicate::str::contains("wrote "));
    let html = std::fs::read_to_string(&out).expect("html written");
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg"));
}

#[test]
fn strict_turns_a_fail_into_exit_1_and_threshold_is_honoured() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("r.html");
    // The result's own params.threshold_ns (50 µs) wins over --threshold.
    lowlat().args(["report", &fixture("timer.json"), "--strict", "-o"]).arg(&out).assert().code(1);
    lowlat()
        .args(["report", &fixture("ht-on.json"), "--threshold", "100us", "--strict", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("below 100 µs"));
    lowlat()
        .args(["report", &fixture("ht-on.json"), "--threshold", "50us", "--strict", "-o"])
        .arg(&out)
        .assert()
        .code(1);
}

#[test]
fn compare_prints_the_delta() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("c.html");
    lowlat()
        .args([
            "report",
            "--compare",
            &fixture("ht-on.json"),
            "--vs",
            &fixture("ht-off.json"),
            "-o",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("worst case 86.0 µs → 82.0 µs"))
        .stdout(predicate::str::contains("most on CPU 5 (9.00 µs better)"));
    assert!(std::fs::read_to_string(&out).expect("html").contains("before vs after"));
}

#[test]
fn bad_inputs_are_usage_errors_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"kind\": \"timer\", ").expect("write");
    lowlat().arg("report").arg(&bad).assert().code(2).stderr(predicate::str::contains("bad.json"));
    lowlat()
        .args(["report", "/nonexistent/x.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/x.json"));
    lowlat().arg("report").assert().code(2).stderr(predicate::str::contains("no result files"));
    lowlat().args(["report", "--compare", "a.json"]).assert().code(2);
}

#[test]
fn json_writes_the_report_model_for_scripts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = lowlat()
        .args(["report", &fixture("timer.json"), "--json", "-", "-o"])
        .arg(dir.path().join("r.html"))
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_slice(&a.get_output().stdout).expect("JSON on stdout");
    assert_eq!(v["verdict"], "fail");
    assert_eq!(v["sections"][1]["id"], "timer");
    assert!(dir.path().join("r.html").is_file());
}

fn results_fixture(name: &str) -> String {
    format!("{}/../results/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The reproduction: a cyclictest output cut inside its histogram said PASS, worst 0 ns.
#[test]
fn a_cut_import_is_never_a_pass_and_fails_strict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read(results_fixture("cyclictest-2.4-h40.txt")).expect("fixture");
    let cut = dir.path().join("cut.txt");
    std::fs::write(&cut, &text[..900]).expect("write");
    let out = dir.path().join("r.html");
    lowlat()
        .arg("report")
        .arg(&cut)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("lowlat report: WARN"))
        .stdout(predicate::str::contains("is partial"))
        .stdout(predicate::str::contains("worst seen 39.0 µs"))
        .stdout(predicate::str::contains("not a pass: partial"))
        .stdout(predicate::str::contains("PASS").not());
    lowlat().arg("report").arg(&cut).arg("--strict").arg("-o").arg(&out).assert().code(1);
}

/// A result lowlat cannot read, a newer schema, or one without a measurement: a loud warning,
/// and under --strict an input error (exit 2) after the report is written.
#[test]
fn strict_refuses_what_it_cannot_judge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let timer: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("ht-on.json")).expect("fixture"))
            .expect("json");
    let mut neg = timer.clone();
    neg["threads"][0]["max_ns"] = serde_json::json!(-1);
    let mut string = timer.clone();
    string["threads"][0]["max_ns"] = serde_json::json!("lots");
    let mut newer = timer.clone();
    newer["schema_version"] = serde_json::json!(99);
    let mut empty = timer.clone();
    empty["threads"] = serde_json::json!([]);
    let cases = [
        ("only-kind", serde_json::json!({"kind": "timer"}), "unreadable result"),
        ("neg", neg, "unreadable result"),
        ("string", string, "unreadable result"),
        ("newer", newer, "schema_version 99"),
        ("empty", empty, "no CPU was measured"),
    ];
    let out = dir.path().join("r.html");
    for (name, v, why) in cases {
        let f = dir.path().join(format!("{name}.json"));
        std::fs::write(&f, v.to_string()).expect("write");
        lowlat()
            .arg("report")
            .arg(&f)
            .arg("-o")
            .arg(&out)
            .assert()
            .success()
            .stdout(predicate::str::contains(format!("! {}", f.display())))
            .stdout(predicate::str::contains(why))
            .stdout(predicate::str::contains(": PASS").not());
        std::fs::remove_file(&out).expect("report written");
        lowlat()
            .arg("report")
            .arg(&f)
            .arg("--strict")
            .arg("-o")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("cannot be judged"))
            .stderr(predicate::str::contains(why));
        assert!(out.is_file(), "{name}: the report is still written");
    }
}

#[test]
fn the_report_never_replaces_an_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("x.json");
    std::fs::copy(fixture("ht-on.json"), &f).expect("copy");
    let before = std::fs::read(&f).expect("read");
    for args in [vec!["-o"], vec!["-o", "r.html", "--json"]] {
        let mut cmd = lowlat();
        cmd.current_dir(dir.path()).arg("report").arg(&f).args(&args).arg(&f);
        cmd.assert().code(2).stderr(predicate::str::contains("replace the input"));
    }
    lowlat()
        .current_dir(dir.path())
        .args(["report", "--compare"])
        .arg(&f)
        .arg("--vs")
        .arg(fixture("ht-off.json"))
        .arg("-o")
        .arg(&f)
        .assert()
        .code(2);
    assert_eq!(std::fs::read(&f).expect("read"), before);
}

/// Seed 003: cyclictest on core 0 (max 131 µs) and on isolated core 2 (max 67 µs), its text
/// without a CPU number: paired by thread, and the percentiles it does not have are n/a.
#[test]
fn compare_pairs_imported_threads_by_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let core0 = dir.path().join("core0.txt");
    let core2 = dir.path().join("core2.txt");
    std::fs::write(&core0, "# /dev/cpu_dma_latency set to 0us\npolicy: fifo: loadavg: 0.36 1.83 9.59 1/167 7165\n\nT: 0 ( 7163) P:99 I:1000 C:  10000 Min:     14 Act:   57 Avg:   55 Max:     131\n").expect("write");
    std::fs::write(&core2, "# /dev/cpu_dma_latency set to 0us\npolicy: fifo: loadavg: 0.28 1.74 9.43 1/167 7169\n\nT: 0 ( 7167) P:99 I:1000 C:  10000 Min:     14 Act:   44 Avg:   42 Max:      67\n").expect("write");
    let out = dir.path().join("c.html");
    lowlat()
        .args(["report", "--compare"])
        .arg(&core0)
        .arg("--vs")
        .arg(&core2)
        .arg("-o")
        .arg(&out)
        .args(["--json", "-"])
        .assert()
        .success();
    let o = lowlat()
        .args(["report", "--compare"])
        .arg(&core0)
        .arg("--vs")
        .arg(&core2)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("worst case 131 µs → 67.0 µs"), "{stdout}");
    assert!(stdout.contains("most on thread 0 (64.0 µs better)"), "{stdout}");
    assert!(!stdout.contains("nothing to compare"), "{stdout}");
    let html = std::fs::read_to_string(&out).expect("html");
    assert!(html.contains("paired by their order"), "the pairing is said");
    assert!(html.contains(">n/a<"), "p99 without a histogram is n/a");
}
