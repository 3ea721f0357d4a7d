//! cyclictest-compatible text: the `T: 0 ( pid) P:95 I:1000 C: … Min: … Act: … Avg: … Max: …`
//! lines (the format of rt-tests' `print_stat`), an optional `-h`-style histogram block in the
//! rt-tests ≤2.6 layout (with `# Total:`), and the `# Min Latencies:` / `# Avg Latencies:` /
//! `# Max Latencies:` summary. Values are µs truncated from ns, as cyclictest's `calcdiff`.

use std::fmt::Write as _;

use crate::latency::LatencyResult;

fn us(ns: u64) -> u64 {
    ns / 1000
}

/// Render `r` as cyclictest would print it at the end of a run. With `histogram_us = Some(n)`
/// a histogram of `n` 1 µs buckets (`000000`…) and its overflow lines are added, like `-h n`.
pub fn to_text(r: &LatencyResult, histogram_us: Option<u32>) -> String {
    let mut out = String::new();
    if r.envelope.params.latency().and_then(|p| p.dma_latency) == Some(true) {
        out.push_str("# /dev/cpu_dma_latency set to 0us\n");
    }
    for (i, t) in r.threads.iter().enumerate() {
        let _ = writeln!(
            out,
            "T:{:2} ({:5}) P:{:2} I:{} C:{:7} Min:{:7} Act:{:5} Avg:{:5} Max:{:8}",
            i,
            t.tid.unwrap_or(0),
            t.priority.unwrap_or(0),
            t.interval_ns.map_or(0, us),
            t.stats.count,
            us(t.stats.min_ns),
            t.last_ns.map_or(0, us),
            us(t.stats.avg_ns),
            us(t.stats.max_ns),
        );
    }
    if let Some(n) = histogram_us {
        let n = n.max(1) as usize;
        let mut rows = vec![vec![0u64; r.threads.len()]; n];
        let mut overflow = vec![0u64; r.threads.len()];
        for (ti, t) in r.threads.iter().enumerate() {
            overflow[ti] += t.histogram.overflow;
            for b in &t.histogram.buckets {
                let idx = us(b.lo_ns) as usize;
                match rows.get_mut(idx) {
                    Some(row) => row[ti] += b.count,
                    None => overflow[ti] += b.count,
                }
            }
        }
        out.push_str("# Histogram\n");
        for (idx, row) in rows.iter().enumerate() {
            let cols: Vec<String> = row.iter().map(|c| format!("{c:06}")).collect();
            let _ = writeln!(out, "{idx:06} {}", cols.join("\t"));
        }
        let totals: Vec<String> = (0..r.threads.len())
            .map(|ti| format!("{:09}", rows.iter().map(|row| row[ti]).sum::<u64>()))
            .collect();
        let _ = writeln!(out, "# Total: {}", totals.join(" "));
        summary_lines(&mut out, r);
        let of: Vec<String> = overflow.iter().map(|o| format!("{o:05}")).collect();
        let _ = writeln!(out, "# Histogram Overflows: {}", of.join(" "));
        // The cycle numbers the run kept for this very histogram (`measure timer -h N`), then
        // the rest counted the way cyclictest ends a list it cut (`# 00030 others`).
        out.push_str("# Histogram Overflow at cycle number:\n");
        for (ti, (o, t)) in overflow.iter().zip(&r.threads).enumerate() {
            let _ = write!(out, "# Thread {ti}:");
            let kept = t.outliers.as_ref().filter(|k| k.at_or_above_ns == n as u64 * 1000);
            let cycles = kept.map_or(&[][..], |k| &k.cycles[..]);
            for c in cycles {
                let _ = write!(out, " {c:05}");
            }
            let others = o.saturating_sub(cycles.len() as u64);
            if others > 0 {
                let _ = write!(out, " # {others:05} others");
            }
            out.push('\n');
        }
    } else {
        summary_lines(&mut out, r);
    }
    out
}

fn summary_lines(out: &mut String, r: &LatencyResult) {
    for (label, f) in [
        ("Min", (|t: &crate::latency::ThreadResult| t.stats.min_ns) as fn(&_) -> u64),
        ("Avg", |t| t.stats.avg_ns),
        ("Max", |t| t.stats.max_ns),
    ] {
        let _ = write!(out, "# {label} Latencies:");
        for t in &r.threads {
            let _ = write!(out, " {:05}", us(f(t)));
        }
        out.push('\n');
    }
}
