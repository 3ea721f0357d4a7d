//! Issue 21 ("verdicts that never lie"), the results side of the corpus under
//! `testdata/verdicts/`: every hostile result holds no evidence (`results::evidence`), failed
//! producers import as failed, and seed 000's `# Min/Avg/Max Latencies` lines import as real
//! per-thread maxima.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test helpers")]

use std::path::PathBuf;

use results::fsync::{EtcdResult, FsyncResult};
use results::import::{import, Imported, Tool};
use results::{Evidence, LatencyResult, NoEvidence};

fn corpus(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/verdicts").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn latency(i: Imported) -> LatencyResult {
    match i {
        Imported::Latency(r) => *r,
        Imported::Fsync(_) => panic!("not a latency result"),
    }
}

/// Item 3: seed 000 keeps only `grep Latencies` lines. They hold each thread's min/avg/max:
/// imported as such (max known, count unknown), judged on the max, never "count 0, max 0".
#[test]
fn seed_000_latency_lines_import_as_per_thread_maxima() {
    let r = latency(import(Tool::Cyclictest, &corpus("cyclictest-latencies-only.txt")).unwrap());
    let max: Vec<u64> = r.threads.iter().map(|t| t.stats.max_ns).collect();
    assert_eq!(max, [21_000, 184_000, 17_000, 19_000]);
    let min: Vec<u64> = r.threads.iter().map(|t| t.stats.min_ns).collect();
    assert_eq!(min, [3_000, 3_000, 4_000, 3_000]);
    assert!(r.threads.iter().all(|t| t.count_unknown && t.max_known()));
    assert!(r.threads.iter().all(|t| t.stats.p99_ns.is_none()), "no distribution");
    assert_eq!(r.no_evidence(), None, "the maxima are evidence");
    assert!(r.notes.iter().any(|n| n.contains("Latencies")), "{:?}", r.notes);
    let table = results::export::table::latency(&r);
    assert!(table.contains("unknown") && table.contains("184"), "{table}");
}

/// Item 4: cyclictest's JSON with `return_code: 1` is a failed run, not a complete one.
#[test]
fn a_cyclictest_json_with_a_non_zero_return_code_is_a_failed_run() {
    let r = latency(import(Tool::Cyclictest, &corpus("cyclictest-return-code-1.json")).unwrap());
    let failed = r.envelope.failed.clone().expect("failed");
    assert!(failed.contains("return_code 1"), "{failed}");
    let n = r.no_evidence().expect("not a pass");
    assert!(n.is_failed_run() && n.to_string().contains("return_code 1"), "{n}");
    let table = results::export::table::latency(&r);
    assert!(table.contains("NO VERDICT") && table.contains("return_code 1"), "{table}");
}

/// Item 4: a fio job with `error: 5` (EIO) is a failed run.
#[test]
fn a_fio_job_with_an_error_is_a_failed_run() {
    let Imported::Fsync(r) = import(Tool::Fio, &corpus("fio-job-error-5.json")).unwrap() else {
        panic!("not fsync")
    };
    let n = r.no_evidence().expect("not a pass");
    assert!(matches!(n, NoEvidence::Failed(_)) && n.to_string().contains("error 5"), "{n}");
}

fn result<T: serde::de::DeserializeOwned>(name: &str) -> T {
    serde_json::from_str(&corpus(&format!("results/{name}")))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Reads a corpus result and asks it for its evidence.
type Check = fn(&str) -> Option<NoEvidence>;

/// Item 1: results that read but hold no evidence, each with the reason it is not a pass.
#[test]
fn hostile_results_hold_no_evidence_and_say_why() {
    let why = |n: Option<NoEvidence>, name: &str| {
        n.unwrap_or_else(|| panic!("{name}: judged")).to_string()
    };
    let cases: [(&str, Check, &str); 11] = [
        ("timer-no-samples.json", |n| result::<LatencyResult>(n).no_evidence(), "no samples"),
        (
            "timer-no-threads.json",
            |n| result::<LatencyResult>(n).no_evidence(),
            "no CPU was measured",
        ),
        (
            "timer-min-above-max.json",
            |n| result::<LatencyResult>(n).no_evidence(),
            "above its maximum",
        ),
        ("timer-partial.json", |n| result::<LatencyResult>(n).no_evidence(), "partial"),
        (
            "timer-buckets-out-of-order.json",
            |n| result::<LatencyResult>(n).no_evidence(),
            "out of order or overlapping",
        ),
        (
            "timer-count-not-histogram.json",
            |n| result::<LatencyResult>(n).no_evidence(),
            "5 samples, but its histogram holds 60000",
        ),
        (
            "timer-percentiles-fall.json",
            |n| result::<LatencyResult>(n).no_evidence(),
            "percentiles that fall",
        ),
        ("etcd-idle.json", |n| result::<EtcdResult>(n).no_evidence(), "no fsyncs observed"),
        (
            "etcd-mislabelled.json",
            |n| result::<EtcdResult>(n).no_evidence(),
            "buckets hold 0 fsyncs but the count is 400",
        ),
        ("etcd-out-of-order.json", |n| result::<EtcdResult>(n).no_evidence(), "not ascending"),
        ("fsync-zero-ops.json", |n| result::<FsyncResult>(n).no_evidence(), "0 ops"),
    ];
    for (name, check, expect) in cases {
        let w = why(check(name), name);
        assert!(w.contains(expect), "{name}: {w}");
    }
}

/// The rule refuses only what is wrong: every whole import of a real tool's output still holds
/// evidence.
#[test]
fn every_whole_import_of_real_output_holds_evidence() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let tool = match name.split('-').next() {
            Some("cyclictest") => Tool::Cyclictest,
            Some("oslat") => Tool::Oslat,
            Some("fio") => Tool::Fio,
            _ => continue,
        };
        let i = import(tool, &std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(i.no_evidence(), None, "{name}");
        n += 1;
    }
    assert!(n >= 12, "{n} fixtures");
}

/// Item 8: a noise run's gaps of ~37 ns all lie in the first 100 ns bucket; its median is
/// only known to be below 100 ns. The table says `<0.1`, not `0.1` above an avg of 0.037.
#[test]
fn percentiles_in_the_first_bucket_read_as_below_its_edge() {
    let mut h = results::Histogram::new(results::HistogramConfig::LATENCY);
    for _ in 0..10_000 {
        h.record(37);
    }
    for _ in 0..10 {
        h.record(5_000);
    }
    let t = results::ThreadResult {
        cpu: Some(1),
        stats: h.summary(),
        histogram: h.to_data(),
        ..Default::default()
    };
    assert_eq!(t.stats.p50_ns, Some(99), "the JSON keeps the bucket's upper bound");
    assert_eq!(t.below_first_bucket(t.stats.p50_ns), Some(100));
    assert_eq!(t.below_first_bucket(t.stats.p9999_ns), None, "{:?}", t.stats);
    let mut r: LatencyResult = result("timer-partial.json");
    r.envelope.partial = false;
    r.envelope.kind = results::Kind::Noise;
    r.threads = vec![t];
    let table = results::export::table::latency(&r);
    let row = table.lines().find(|l| l.trim_start().starts_with("1 ")).expect("CPU 1 row");
    assert!(row.contains("<0.1"), "{table}");
}

/// Item 8: fio keeps no per-window series; the import's worst window is unknown — `null`
/// as the contract says, not 0.
#[test]
fn a_fio_import_has_no_worst_window_rather_than_zero() {
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio-3.33-etcd.json");
    let i = import(Tool::Fio, &std::fs::read_to_string(fixture).unwrap()).unwrap();
    let v = serde_json::to_value(&i).unwrap();
    assert!(v["worst_window_p99_ns"].is_null(), "{}", v["worst_window_p99_ns"]);
    assert!(v["worst_window_max_ns"].is_null());
    assert!(v["scenarios"][0]["worst_window_p99_ns"].is_null());
}

/// Item 8: a p99.9 whose rank falls in cyclictest's overflow is unknown, not the maximum.
#[test]
fn a_percentile_in_cyclictests_overflow_is_unknown_not_the_max() {
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cyclictest-2.4-h40.txt");
    let r = latency(import(Tool::Cyclictest, &std::fs::read_to_string(fixture).unwrap()).unwrap());
    let t = r.threads.iter().find(|t| t.histogram.overflow > 0).expect("a thread with overflow");
    assert_eq!(t.stats.p999_ns, None, "{:?}", t.stats);
    assert!(t.stats.max_ns > 0);
    assert!(
        r.notes.iter().any(|n| n.contains("overflow") && n.contains("unknown")),
        "{:?}",
        r.notes
    );
}
