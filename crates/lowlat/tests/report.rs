//! CLI tests of `lowlat report`: HTML written with the terminal summary, compare mode, and
//! input errors (exit 2 naming the file).

#![allow(clippy::expect_used)]

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture(name: &str) -> String {
    format!("{}/../report/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn lowlat() -> Command {
    Command::cargo_bin("lowlat").expect("binary")
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
