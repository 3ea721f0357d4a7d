//! Micro-benchmark of the noise loop's cost per iteration (ns), on the CPU it runs on:
//! the fast path (a gap below the threshold is one increment indexed by its tick count)
//! against the full record of every gap (the loop before the fast path), interleaved, 5
//! rounds of 1 s each. Pin it for a stable number:
//! `taskset -c 1 cargo run --release -p measure --example noise_cost`.

use std::sync::atomic::AtomicBool;

use measure::counter::Counter;
use measure::noise::{noise_loop, NoiseBounds};
use measure::shared::Recorder;
use results::HistogramConfig;

fn per_iteration(c: &Counter, fast: bool) -> f64 {
    let threshold = c.ticks(1_000).max(1);
    let rec = Recorder::new(HistogramConfig::LATENCY, 4, None).with_noise_series(4);
    let rec = if fast { rec.with_fast_table(threshold, c.mult()) } else { rec };
    let b = NoiseBounds {
        seconds: Some(1),
        ticks_per_second: c.hz,
        threshold_ticks: threshold,
        floor_ticks: 0,
        stop_on_threshold: false,
    };
    let n = noise_loop(c, &rec, &b, &AtomicBool::new(false));
    1e9 / n.max(1) as f64
}

fn main() {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let c = Counter::detect(&cpuinfo);
    println!("counter {:?} at {} Hz", c.source, c.hz);
    let (mut fast, mut full) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        fast.push(per_iteration(&c, true));
        full.push(per_iteration(&c, false));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("fast path   : {:.1} ns/iteration (median of 5 s; rounds {fast:.1?})", med(&mut fast));
    println!("full record : {:.1} ns/iteration (median of 5 s; rounds {full:.1?})", med(&mut full));
}
