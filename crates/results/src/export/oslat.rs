//! oslat-compatible text: the block oslat prints at the end of a run — `Core:`, `Counter Freq:`,
//! one row per 1 µs bucket (`001 (us):` … the last one `(including overflows)`), then
//! `Minimum`, `Average`, `Maximum`, `Max-Min` (µs) and `Duration` (s) — so scripts that parse
//! oslat's output read a lowlat noise result. Bucket rows are upper bounds, as oslat's: row `k`
//! counts the samples in [k−1, k) µs; the last row also holds everything above it.

use std::fmt::Write as _;

use crate::latency::LatencyResult;

/// oslat's default bucket count (`-b 32`).
pub const DEFAULT_BUCKETS: u32 = 32;

/// Render `r` as oslat's summary with `buckets` 1 µs rows.
pub fn to_text(r: &LatencyResult, buckets: u32) -> String {
    let n = buckets.clamp(1, 1024) as usize;
    let threads = &r.threads;
    let mut rows = vec![vec![0u64; threads.len()]; n];
    for (ti, t) in threads.iter().enumerate() {
        for b in &t.histogram.buckets {
            let idx = ((b.lo_ns / 1000) as usize).min(n - 1);
            rows[idx][ti] += b.count;
        }
        rows[n - 1][ti] += t.histogram.overflow;
    }
    let cols = |f: &dyn Fn(usize) -> String| -> String {
        (0..threads.len()).map(|i| format!(" {}", f(i))).collect()
    };
    let mut out = String::new();
    let _ = writeln!(out, "oslat V 2.40 (lowlat export of {})", r.envelope.tool);
    let cores = cols(&|i| threads[i].cpu.map_or("?".into(), |c| c.to_string()));
    let _ = writeln!(out, "        Core:\t{cores}");
    // lowlat's counter is the nanosecond clock (CLOCK_MONOTONIC): 1 count = 1 ns, 1000 MHz.
    let _ = writeln!(out, "Counter Freq:\t{} (Mhz)", cols(&|_| "1000".into()));
    for (k, row) in rows.iter().enumerate() {
        let mut line: String = row.iter().map(|c| format!(" {c}")).collect();
        if k == n - 1 {
            line.push_str(" (including overflows)");
        }
        let _ = writeln!(out, "    {:03} (us):\t{line}", k + 1);
    }
    // Whole µs: the minimum rounded down and the maximum up, so that both stay on the side of
    // the rows that hold them and the average lies between them.
    let up = |ns: u64| ns.div_ceil(1000);
    let down = |ns: u64| ns / 1000;
    let _ = writeln!(
        out,
        "     Minimum:\t{} (us)",
        cols(&|i| down(threads[i].stats.min_ns).to_string())
    );
    let _ = writeln!(
        out,
        "     Average:\t{} (us)",
        cols(&|i| format!("{:.3}", threads[i].stats.avg_ns as f64 / 1000.0))
    );
    let _ =
        writeln!(out, "     Maximum:\t{} (us)", cols(&|i| up(threads[i].stats.max_ns).to_string()));
    let _ = writeln!(
        out,
        "     Max-Min:\t{} (us)",
        cols(&|i| up(threads[i].stats.max_ns)
            .saturating_sub(down(threads[i].stats.min_ns))
            .to_string())
    );
    let secs = r.envelope.duration_ns as f64 / 1e9;
    let _ = writeln!(out, "    Duration:\t{} (sec)", cols(&|_| format!("{secs:.3}")));
    out
}
