//! Cost of one clock read + one histogram record (the work added to every sample). The
//! target (< 100 ns) is for optimised builds: `cargo run --release -p measure --example
//! record_cost` prints it; this test only guards against gross regressions in debug builds.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::time::Instant;

use measure::shared::Recorder;
use measure::sys::{Clock, Monotonic};
use results::HistogramConfig;

#[test]
#[ignore = "timing: a per-sample cost bound (CI's timing lane)"]
fn timing_clock_read_plus_record_is_cheap() {
    let rec = Recorder::new(HistogramConfig::LATENCY, 4, None);
    let n = 200_000u64;
    let t = Instant::now();
    let mut prev = Monotonic.now();
    for _ in 0..n {
        let now = Monotonic.now();
        rec.record(now - prev, 0);
        prev = now;
    }
    let per = t.elapsed().as_nanos() as u64 / n;
    eprintln!("clock read + record: {per} ns (debug build)");
    assert!(per < 2_000, "{per} ns per sample");
    assert_eq!(rec.count(), n);
}
