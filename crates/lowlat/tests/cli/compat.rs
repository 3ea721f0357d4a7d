//! The habits of the tools lowlat replaces: cyclictest's flags on `measure timer` (the
//! OSADL/Ubuntu invocation as people type it) and its histogram text read the way
//! mklatencyplot-style scripts read it; `lowlat export cyclictest|oslat` round-trips through
//! `lowlat import`.

#![allow(clippy::expect_used, reason = "test helpers")]

use predicates::prelude::*;

use crate::support::lowlat;

/// The last online CPU (CPU 1 on the 2-vCPU dev VM), leaving CPU 0 for the main thread.
fn cpu() -> String {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (n - 1).to_string()
}

/// What mklatencyplot's `grep -v -e "^#" -e "^$" | tr " " "\t"` keeps: `latency count…` rows.
fn histogram_rows(text: &str) -> Vec<(u64, u64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("T:") && !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split_whitespace().map(|x| x.parse::<u64>().expect(l));
            (f.next().expect(l), f.next().expect(l))
        })
        .collect()
}

#[test]
fn the_osadl_cyclictest_invocation_runs_and_prints_a_parsable_histogram() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("timer.json");
    let a = lowlat()
        .args(["measure", "timer", "-m", "-S", "-p95", "-i200", "-h400", "-q", "-D", "3s"])
        .args(["-a", &cpu(), "--json"])
        .arg(&json)
        .assert()
        .code(predicate::in_iter([0, 1]));
    let out = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    let rows = histogram_rows(&out);
    assert_eq!(rows.len(), 400, "400 rows of 1 µs: {out}");
    assert_eq!(rows.first().map(|r| r.0), Some(0));
    assert_eq!(rows.last().map(|r| r.0), Some(399));
    assert!(out.contains("P:95 I:200"), "-p95 -i200 ran as asked: {out}");
    assert!(out.contains("# Max Latencies:"), "{out}");
    let counted: u64 = rows.iter().map(|r| r.1).sum();
    let overflow: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("# Histogram Overflows:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("overflow line");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(counted + overflow, r["threads"][0]["count"].as_u64().unwrap(), "every wake-up");

    // `export cyclictest` writes the same text from the saved result, and it imports back.
    let exported =
        lowlat().args(["export", "cyclictest", "-H", "400"]).arg(&json).assert().success();
    let text = String::from_utf8_lossy(&exported.get_output().stdout).to_string();
    assert_eq!(histogram_rows(&text), rows);
    let txt = dir.path().join("timer.txt");
    std::fs::write(&txt, &text).unwrap();
    let back = lowlat().args(["import", "cyclictest"]).arg(&txt).assert().success();
    let back: serde_json::Value = serde_json::from_slice(&back.get_output().stdout).unwrap();
    assert_eq!(back["threads"][0]["count"], r["threads"][0]["count"]);
}

/// cyclictest's "Histogram Overflow at cycle number": with `-h N` the run keeps the cycle
/// numbers of the first N wake-ups past the histogram and counts the rest (`# NNNNN others`),
/// and they survive `export` → `import`. With `-h 2` on this VM nearly every wake-up is late
/// enough to overflow.
#[test]
fn overflow_cycle_numbers_are_listed_like_cyclictests() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("timer.json");
    let a = lowlat()
        .args(["measure", "timer", "-h", "2", "-q", "-l", "500", "-i", "1000", "-a", &cpu()])
        .arg("--json")
        .arg(&json)
        .assert()
        .code(predicate::in_iter([0, 1]));
    let out = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    let overflow: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("# Histogram Overflows:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("overflow line");
    assert!(overflow > 0, "wake-ups of 2 µs or more on a VM: {out}");
    let list = out.lines().find_map(|l| l.strip_prefix("# Thread 0:")).expect(&out);
    let (listed, others) = list.split_once('#').unwrap_or((list, ""));
    let cycles: Vec<u64> = listed.split_whitespace().map(|c| c.parse().expect(list)).collect();
    assert_eq!(cycles.len() as u64, overflow.min(2), "the first N are listed: {list}");
    assert!(cycles.windows(2).all(|w| w[0] < w[1]) && cycles.iter().all(|c| *c < 500), "{list}");
    let others: u64 =
        others.trim().strip_suffix("others").map_or(0, |o| o.trim().parse().expect(list));
    assert_eq!(cycles.len() as u64 + others, overflow, "listed + others = overflows: {list}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["threads"][0]["outliers"]["at_or_above_ns"], 2000);
    assert_eq!(r["threads"][0]["outliers"]["cycles"], serde_json::json!(cycles));
    // export writes the same list; import reads it back
    let exported = lowlat().args(["export", "cyclictest", "-H", "2"]).arg(&json).assert().success();
    let text = String::from_utf8_lossy(&exported.get_output().stdout).to_string();
    assert!(text.contains(&format!("# Thread 0:{list}")), "{text}");
    let txt = dir.path().join("timer.txt");
    std::fs::write(&txt, &text).unwrap();
    let back = lowlat().args(["import", "cyclictest"]).arg(&txt).assert().success();
    let back: serde_json::Value = serde_json::from_slice(&back.get_output().stdout).unwrap();
    assert_eq!(back["threads"][0]["outliers"]["cycles"], serde_json::json!(cycles));
}

#[test]
fn cyclictest_flags_without_an_equivalent_name_it() {
    lowlat()
        .args(["measure", "timer", "-t", "4", "-D", "1s"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("-t 4").and(predicate::str::contains("-a/--cpus")));
    // -b US is cyclictest's break trace: a threshold that stops the run.
    let a = lowlat()
        .args(["measure", "timer", "-n", "-t", "-b", "1", "-D", "5s", "-a", &cpu(), "--json", "-"])
        .assert()
        .code(1);
    let r: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert!(
        r["duration_ns"].as_u64().unwrap() < 4_000_000_000,
        "stopped at the first wake-up ≥ 1 µs: {r}"
    );
    lowlat()
        .args(["measure", "timer", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("-m (memory is always locked)"));
}

#[test]
fn noise_exports_as_oslat_text_that_imports_back() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("noise.json");
    lowlat()
        .args(["measure", "noise", "-q", "-D", "2s", "-a", &cpu(), "--json"])
        .arg(&json)
        .assert()
        .code(predicate::in_iter([0, 1]));
    let a = lowlat().args(["export", "oslat"]).arg(&json).assert().success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(text.contains(&format!("Core:\t {}\n", cpu())), "{text}");
    let txt = dir.path().join("noise.txt");
    std::fs::write(&txt, &text).unwrap();
    let back = lowlat().args(["import", "oslat"]).arg(&txt).assert().success();
    let back: serde_json::Value = serde_json::from_slice(&back.get_output().stdout).unwrap();
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(back["threads"][0]["count"], r["threads"][0]["count"]);
    // Not a latency result: said, with what it is.
    let plan = dir.path().join("p.yaml");
    lowlat().args(["plan", "-o"]).arg(&plan).assert().success();
    lowlat()
        .args(["export", "oslat"])
        .arg(&plan)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("export takes a timer or noise result"));
}

/// `--prometheus FILE` on measure, verify and check writes what node_exporter's textfile
/// collector reads: Prometheus' own `promtool check metrics` accepts each file.
#[test]
fn prometheus_textfiles_pass_promtool() {
    let dir = tempfile::tempdir().unwrap();
    let (t, v, c) =
        (dir.path().join("t.prom"), dir.path().join("v.prom"), dir.path().join("c.prom"));
    lowlat()
        .args(["measure", "timer", "-q", "-D", "2s", "-a", &cpu(), "--prometheus"])
        .arg(&t)
        .assert()
        .code(predicate::in_iter([0, 1]));
    lowlat().args(["verify", "--prometheus"]).arg(&v).assert().code(predicate::in_iter([0, 1]));
    lowlat()
        .args(["check", "--skip", "timer,noise,fsync", "--duration", "2s", "--prometheus"])
        .arg(&c)
        .arg("--out")
        .arg(dir.path().join("o"))
        .assert()
        .code(predicate::in_iter([0, 1]));
    let (k, f) = (dir.path().join("k.prom"), dir.path().join("f.prom"));
    lowlat()
        .args(["measure", "ticks", "-q", "-D", "1s", "-a", &cpu(), "--prometheus"])
        .arg(&k)
        .assert()
        .code(predicate::in_iter([0, 1]));
    lowlat()
        .args(["measure", "fsync", "-q", "--duration", "1s", "--dir"])
        .arg(dir.path())
        .arg("--prometheus")
        .arg(&f)
        .assert()
        .code(predicate::in_iter([0, 1]));
    for (f, want) in [
        (&t, format!("lowlat_latency_max_seconds{{kind=\"timer\",cpu=\"{}\"}}", cpu())),
        (&k, format!("lowlat_ticks_local_timer_per_second{{cpu=\"{}\"", cpu())),
        (&f, "lowlat_fsync_latency_seconds{percentile=\"p99\"}".to_string()),
        (&v, "lowlat_verify_passed ".to_string()),
        (&c, "lowlat_section_verdict{of=\"check\",section=\"verify\"".to_string()),
    ] {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.contains(&want), "{want}: {text}");
        let out = std::process::Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(f).unwrap())
            .output()
            .expect("promtool (Debian package prometheus)");
        assert!(
            out.status.success(),
            "{}: {}{}",
            f.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// One CLI surface: `-q` anywhere on any command silences the human view; `--json` on the
/// commands that produce a document (apply, revert, render, import among them).
#[test]
fn q_and_json_mean_the_same_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["-q", "verify"][..], &["verify", "-q"], &["inspect", "-q"], &["status", "-q"]] {
        let a = lowlat().args(args).assert().code(predicate::in_iter([0, 1]));
        assert!(a.get_output().stdout.is_empty(), "{args:?}: {:?}", a.get_output());
    }
    let plan = lowlat().args(["plan", "-o", "-"]).assert().success().get_output().stdout.clone();
    let a = lowlat()
        .args(["apply", "--plan", "-", "--dry-run", "--json"])
        .write_stdin(plan.clone())
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(
        (doc["schema_version"].as_u64(), doc["kind"].as_str()),
        (Some(1), Some("apply-dry-run"))
    );
    assert!(doc["rows"].as_array().is_some_and(|r| !r.is_empty()), "{doc}");
    let a = lowlat()
        .args(["revert", "--json", "--journal"])
        .arg(dir.path().join("none.jsonl"))
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!((doc["kind"].as_str(), doc["state"].as_str()), (Some("revert"), Some("no-journal")));
    let a = lowlat()
        .args(["render", "--plan", "-", "cmdline", "--json"])
        .write_stdin(plan)
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(doc["files"][0]["name"], "cmdline");
    assert!(
        doc["files"][0]["contents"].as_str().is_some_and(|c| c.contains("nohz_full=")),
        "{doc}"
    );
    let ct =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../results/tests/fixtures/cyclictest-2.4-h40.txt");
    let out = dir.path().join("ct.json");
    lowlat().args(["import", "cyclictest", ct, "--json"]).arg(&out).assert().success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["kind"], "timer");
}
