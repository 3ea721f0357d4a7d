//! Micro-benchmark: one `CLOCK_MONOTONIC` read + one recorder update, and one TSC read + one
//! recorder update, per sample (median of 5 runs of 2M samples). Run with
//! `cargo run --release -p measure --example record_cost`.

use std::time::Instant;

use measure::counter::Counter;
use measure::shared::Recorder;
use measure::sys::{Clock, Monotonic};
use results::HistogramConfig;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    util::stats::quantile_sorted(&v, 0.5).unwrap_or(f64::NAN)
}

fn main() {
    let n = 2_000_000u64;
    let rec = Recorder::new(HistogramConfig::LATENCY, 4, None);
    let runs: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let mut prev = Monotonic.now();
            for _ in 0..n {
                let now = Monotonic.now();
                rec.record(now - prev, 0);
                prev = now;
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    println!("CLOCK_MONOTONIC read + record: {:.1} ns/sample", median(runs));
    let c = Counter::detect(&host::Root::live().read_string("proc/cpuinfo").unwrap_or_default());
    let runs: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let mut prev = c.read();
            for _ in 0..n {
                let now = c.read();
                rec.record_at(c.to_ns(now - prev), 0, || 0);
                prev = now;
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    println!("{:?} read + convert + record: {:.1} ns/sample", c.source, median(runs));
    let runs: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                std::hint::black_box(Monotonic.now());
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    println!("CLOCK_MONOTONIC read alone: {:.1} ns", median(runs));
}
