//! Size budget: a report for 16 CPUs × 24 h of timer and noise results (per-second series of
//! 86 400 points, thousands of histogram buckets per CPU) stays under 2 MB.

mod common;

use report::Doc;
use serde_json::{json, Value};

/// A deterministic pseudo-random sequence (no rand dependency).
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

fn day_result(kind: &str) -> Value {
    let mut seed = 42;
    let threads: Vec<Value> = (0..16)
        .map(|cpu| {
            // Log-linear buckets: 100 ns steps to 409.6 µs, then coarser, ~4000 non-empty.
            let mut buckets = Vec::new();
            let mut lo = 1_000u64;
            while lo < 2_000_000 {
                let w = if lo < 409_600 { 100 } else { lo >> 11 << 1 };
                let count = 1 + (86_400_000u64 >> ((lo / 2_000).min(40))) + lcg(&mut seed) % 3;
                buckets.push(json!({"lo_ns": lo, "hi_ns": lo + w, "count": count}));
                lo += w;
            }
            let series: Vec<u64> = (0..86_400).map(|_| 3_000 + lcg(&mut seed) % 40_000).collect();
            json!({"cpu": cpu, "count": 86_400_000u64, "overruns": 0, "min_ns": 1_000, "avg_ns": 2_500,
                   "max_ns": 1_999_000, "stddev_ns": 900, "p50_ns": 2_400, "p90_ns": 3_100, "p99_ns": 9_000,
                   "p999_ns": 30_000, "p9999_ns": 90_000,
                   "histogram": {"buckets": buckets, "overflow": 0}, "max_series_ns": series,
                   "total_noise_ns": 1_000_000, "attribution": {"LOC": 86_400, "TIMER": 100}})
        })
        .collect();
    json!({"schema_version": 1, "kind": kind, "partial": false, "tool": "lowlat test",
           "duration_ns": 86_400_000_000_000u64, "host": {"kernel": "6.1", "online": "0-15", "isolated": "2-15"},
           "params": {}, "threads": threads})
}

#[test]
fn sixteen_cpus_for_a_day_stays_under_two_megabytes() {
    let docs = vec![
        Doc::from_value("timer-24h.json", day_result("timer")),
        Doc::from_value("noise-24h.json", day_result("noise")),
        Doc::load(&common::fixture("fsync.json")).expect("fixture"),
    ];
    let input_bytes: usize = docs.iter().map(|d| d.value.to_string().len()).sum();
    let started = std::time::Instant::now();
    let html = report::html::render(&report::build(&docs, &common::opts()));
    let took = started.elapsed();
    eprintln!("inputs {} KiB -> report {} KiB in {took:?}", input_bytes / 1024, html.len() / 1024);
    assert!(input_bytes > 10 << 20, "the inputs are really a day's worth: {input_bytes}");
    assert!(html.len() < 2 << 20, "report is {} bytes", html.len());
    assert!(html.contains("each point is the maximum of 144 seconds"));
}
