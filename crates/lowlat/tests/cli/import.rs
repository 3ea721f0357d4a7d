//! CLI tests of `lowlat import`: inputs cut short import as `partial` (never a whole run),
//! unknown statistics are `null`, fio's text and mixed outputs import (captured fixtures and a
//! real fio run on this host), and the output never replaces the input.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use crate::support::lowlat;
use predicates::prelude::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../results/tests/fixtures").join(name)
}

fn import_json(tool: &str, file: &Path) -> serde_json::Value {
    let out = lowlat().args(["import", tool]).arg(file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The reproduction: 900 bytes of a cyclictest histogram imported as a whole run with
/// every percentile 0.
#[test]
fn a_cut_file_imports_as_partial_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(fixture("cyclictest-2.4-h40.txt")).unwrap();
    let cut = dir.path().join("cut.txt");
    std::fs::write(&cut, &text[..900]).unwrap();
    let out = lowlat().args(["import", "cyclictest"]).arg(&cut).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("imported as partial: CUT SHORT"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["partial"], true);
    assert!(v["notes"][0].as_str().unwrap().starts_with("CUT SHORT"));
    for t in v["threads"].as_array().unwrap() {
        assert!(t["p99_ns"].is_null(), "{t}");
        assert!(t["max_ns"].as_u64().unwrap() > 0);
    }
    let oslat = std::fs::read(fixture("oslat-2.4.txt")).unwrap();
    let half = dir.path().join("half.txt");
    std::fs::write(&half, &oslat[..oslat.len() / 2]).unwrap();
    assert_eq!(import_json("oslat", &half)["partial"], true);
}

#[test]
fn without_a_histogram_percentiles_are_null_and_na_in_the_table() {
    let v = import_json("cyclictest", &fixture("cyclictest-2.4-q.txt"));
    let t = &v["threads"][0];
    assert!(t["p50_ns"].is_null() && t["p99_ns"].is_null() && t["stddev_ns"].is_null(), "{t}");
    assert_eq!(t["max_ns"], 114_000);
    lowlat()
        .args(["import", "cyclictest", "--table"])
        .arg(fixture("cyclictest-2.4-q.txt"))
        .assert()
        .success()
        .stdout(predicate::str::contains("n/a"))
        .stdout(predicate::str::contains(" 0.0 ").not());
}

#[test]
fn contradictory_numbers_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    let text = std::fs::read_to_string(fixture("cyclictest-2.4-h100.json")).unwrap();
    std::fs::write(&bad, text.replace("\"cpu\": 1", "\"cpu\": \"x\"")).unwrap();
    lowlat()
        .args(["import", "cyclictest"])
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a CPU number"));
    let text = std::fs::read_to_string(fixture("oslat-2.4.json")).unwrap();
    std::fs::write(&bad, text.replace("\"freq\": 2445", "\"freq\": 0")).unwrap();
    lowlat().args(["import", "oslat"]).arg(&bad).assert().code(2);
}

#[test]
fn fio_text_json_and_mixed_fixtures_import() {
    for (name, format) in [
        ("fio-3.33-etcd.txt", "text"),
        ("fio-3.33-etcd.json", "json"),
        ("fio-3.33-etcd-normal-json.txt", "normal,json"),
        ("fio-3.33-two-jobs.txt", "text"),
    ] {
        let v = import_json("fio", &fixture(name));
        assert_eq!((v["kind"].as_str(), v["partial"].as_bool()), (Some("fsync"), Some(false)));
        assert_eq!(v["params"]["format"], format, "{name}");
        assert!(v["lat_ns"]["p99"].as_u64().unwrap() > 0, "{name}");
    }
}

/// fio as users run it (seed 002's etcd recipe), in each output format, on this host.
#[test]
fn a_real_fio_run_imports_in_every_output_format() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["normal", "json", "normal,json"] {
        let out = StdCommand::new("fio")
            .args(["--rw=write", "--ioengine=sync", "--fdatasync=1", "--size=64k", "--bs=2300"])
            .args(["--name=etcd", &format!("--output-format={format}")])
            .arg(format!("--directory={}", dir.path().display()))
            .output()
            .expect("fio is installed (the CI image has it)");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let f = dir.path().join("fio.log");
        std::fs::write(&f, &out.stdout).unwrap();
        let v = import_json("fio", &f);
        let want = if format == "normal" { "text" } else { format };
        assert_eq!(v["params"]["format"], want);
        assert!(v["ops"].as_u64().unwrap() > 20, "{format}: 64 KiB in 2300-byte writes");
        assert!(v["lat_ns"]["p99"].as_u64().unwrap() >= v["lat_ns"]["p50"].as_u64().unwrap());
    }
}

#[test]
fn the_output_never_replaces_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ct.txt");
    std::fs::copy(fixture("cyclictest-2.4-q.txt"), &f).unwrap();
    let before = std::fs::read(&f).unwrap();
    lowlat()
        .args(["import", "cyclictest"])
        .arg(&f)
        .arg("-o")
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("replace the input"));
    assert_eq!(std::fs::read(&f).unwrap(), before);
    let out = dir.path().join("ct.json");
    lowlat().args(["import", "cyclictest"]).arg(&f).arg("-o").arg(&out).assert().success();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "no temporary file left");
}
