//! Size budget: a report for 16 CPUs × 24 h of timer and noise results (per-second series of
//! 86 400 points, thousands of histogram buckets per CPU) stays under 2 MB.

#![allow(clippy::expect_used)]

mod common;

use common::lcg;
use report::Doc;
use serde_json::Value;

/// A day of one kind, written with the `results` types as `lowlat measure` writes it.
fn day_result(kind: results::Kind) -> Value {
    let mut seed = 42;
    let threads: Vec<results::ThreadResult> = (0..16)
        .map(|cpu| {
            // Log-linear buckets: 100 ns steps to 409.6 µs, then coarser, ~4000 non-empty.
            let mut buckets = Vec::new();
            let mut lo = 1_000u64;
            while lo < 2_000_000 {
                let w = if lo < 409_600 { 100 } else { lo >> 11 << 1 };
                let count = 1 + (86_400_000u64 >> ((lo / 2_000).min(40))) + lcg(&mut seed) % 3;
                buckets.push(results::Bucket { lo_ns: lo, hi_ns: lo + w, count });
                lo += w;
            }
            let series: Vec<u64> = (0..86_400).map(|_| 3_000 + lcg(&mut seed) % 40_000).collect();
            results::ThreadResult {
                cpu: Some(cpu),
                stats: results::Summary {
                    count: 86_400_000,
                    min_ns: 1_000,
                    avg_ns: 2_500,
                    max_ns: 1_999_000,
                    stddev_ns: Some(900),
                    p50_ns: Some(2_400),
                    p90_ns: Some(3_100),
                    p99_ns: Some(9_000),
                    p999_ns: Some(30_000),
                    p9999_ns: Some(90_000),
                },
                histogram: results::HistogramData { buckets, ..Default::default() },
                per_second_max_ns: series,
                total_noise_ns: Some(1_000_000),
                ..Default::default()
            }
        })
        .collect();
    let mut envelope = results::Envelope::new(kind, "lowlat test");
    envelope.duration_ns = 86_400_000_000_000;
    envelope.host = results::HostContext {
        kernel: Some("6.1".into()),
        online: Some("0-15".into()),
        isolated: Some("2-15".into()),
        ..Default::default()
    };
    let r = results::LatencyResult {
        envelope,
        realtime: true,
        series_step_s: 1,
        threads,
        breaches: Vec::new(),
        load: None,
        notes: Vec::new(),
        tracer: None,
    };
    serde_json::to_value(r).expect("result serializes")
}

#[test]
fn sixteen_cpus_for_a_day_stays_under_two_megabytes() {
    let (timer, noise) = (day_result(results::Kind::Timer), day_result(results::Kind::Noise));
    let fsync = common::value("fsync.json");
    let input_bytes: usize = [&timer, &noise, &fsync].iter().map(|v| v.to_string().len()).sum();
    let docs = vec![
        Doc::from_value("timer-24h.json", timer),
        Doc::from_value("noise-24h.json", noise),
        Doc::from_value("fsync.json", fsync),
    ];
    let started = std::time::Instant::now();
    let html = report::html::render(&report::build(&docs, &common::opts()));
    let took = started.elapsed();
    eprintln!("inputs {} KiB -> report {} KiB in {took:?}", input_bytes / 1024, html.len() / 1024);
    assert!(input_bytes > 10 << 20, "the inputs are really a day's worth: {input_bytes}");
    assert!(html.len() < 2 << 20, "report is {} bytes", html.len());
    assert!(
        html.contains("each column is the maximum of 6 min"),
        "16 CPUs: the per-second heat map"
    );
}
