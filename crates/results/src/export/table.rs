//! Human-readable terminal tables for timer/noise/ticks results: one row per CPU in µs, the
//! notes (loudly when not real-time or virtualized), breaches and the worst seconds.

use std::fmt::Write as _;

use crate::latency::{LatencyResult, TicksResult};

/// A statistic that may be unknown (`n/a`).
fn opt_us(ns: Option<u64>) -> String {
    ns.map_or_else(|| "n/a".to_string(), us)
}

/// A percentile: `<0.1` when it only says "below the first 100 ns bucket's edge".
fn pct_us(t: &crate::ThreadResult, ns: Option<u64>) -> String {
    match t.below_first_bucket(ns) {
        Some(edge) => format!("<{}", us(edge)),
        None => opt_us(ns),
    }
}

fn us(ns: u64) -> String {
    if ns >= 100_000 {
        format!("{}", ns / 1000)
    } else {
        format!("{:.1}", ns as f64 / 1000.0)
    }
}

/// The per-CPU table of a timer or noise result.
pub fn latency(r: &LatencyResult) -> String {
    let mut out = String::new();
    if let Some(short) = r.not_realtime_short() {
        let _ = writeln!(out, "!! {short}: these are not real-time numbers");
    } else if !r.realtime && r.envelope.kind == crate::Kind::Timer {
        out.push_str("!! NOT REAL-TIME: measured without SCHED_FIFO/mlockall; these are not real-time numbers\n");
    }
    if let Some(v) = &r.envelope.host.virtualization {
        let _ = writeln!(
            out,
            "!! virtualized ({v}): the hypervisor's noise is included and tuning cannot remove it"
        );
    }
    use crate::evidence::{Evidence as _, NoEvidence};
    match r.no_evidence() {
        Some(NoEvidence::Partial(_)) => out.push_str("!! PARTIAL: the run was cut short\n"),
        Some(n) => {
            let _ = writeln!(out, "!! NO VERDICT: {n}");
        }
        None => {}
    }
    let noise = r.envelope.kind == crate::Kind::Noise;
    let step = r.series_step();
    let noise_header = if step > 1 {
        format!("  noise (µs/s avg, max per {step} s)")
    } else {
        "  noise (µs/s avg, max)".to_string()
    };
    let _ = writeln!(
        out,
        "{:>4} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}{}",
        "CPU",
        "samples",
        if noise { "floor" } else { "overruns" },
        "min",
        "avg",
        "p50",
        "p99",
        "p99.9",
        "p99.99",
        "max (µs)",
        if noise { noise_header.as_str() } else { "" }
    );
    for t in &r.threads {
        let s = &t.stats;
        let cpu = t.cpu.map_or("-".to_string(), |c| c.to_string());
        let second = if noise {
            t.floor_ns.map_or("-".into(), |f| format!("{f}ns"))
        } else {
            t.overruns.to_string()
        };
        let _ = write!(
            out,
            "{cpu:>4} {:>12} {second:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}",
            if t.count_unknown { "unknown".to_string() } else { s.count.to_string() },
            us(s.min_ns),
            us(s.avg_ns),
            pct_us(t, s.p50_ns),
            pct_us(t, s.p99_ns),
            pct_us(t, s.p999_ns),
            pct_us(t, s.p9999_ns),
            us(s.max_ns)
        );
        if noise && t.per_second_noise_ns.is_empty() {
            out.push_str("  -");
        } else if noise {
            // Seconds the series covers (each point sums `step` seconds).
            let n = (t.per_second_noise_ns.len() as u64).saturating_mul(step).max(1);
            let total: u64 = t.per_second_noise_ns.iter().sum();
            let worst = t.per_second_noise_ns.iter().max().copied().unwrap_or(0);
            let _ = write!(out, "  {}, {}", us(total / n), us(worst));
        }
        out.push('\n');
    }
    out.push_str(&super::tracer::section(r));
    for t in &r.threads {
        for w in t.worst_seconds.iter().take(3) {
            let _ = writeln!(out, "  {}", w.text);
        }
    }
    if !r.breaches.is_empty() {
        let _ = writeln!(
            out,
            "threshold reached {} time(s); the worst, in time order:",
            r.breach_total()
        );
        for b in &crate::latency::worst_breaches(r.breaches.clone(), 5) {
            let cpu = b.cpu.map_or("-".to_string(), |c| c.to_string());
            let _ = writeln!(
                out,
                "  CPU {cpu}: {} µs at t={:.3} s",
                us(b.value_ns),
                b.t_ns as f64 / 1e9
            );
        }
    }
    if let Some(l) = &r.load {
        let _ = writeln!(
            out,
            "load: {} on CPUs {}{}{}",
            l.kind,
            l.cpus.as_deref().unwrap_or("-"),
            l.command.as_ref().map_or(String::new(), |c| format!(" ({c})")),
            l.exit.as_ref().map_or(String::new(), |e| format!("; {e}"))
        );
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The per-CPU table of a ticks result.
pub fn ticks(r: &TicksResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>4} {:>9} {:>10}  {:<48} verdict",
        "CPU", "nohz_full", "LOC/s", "expected"
    );
    for c in &r.cpus {
        let _ = writeln!(
            out,
            "{:>4} {:>9} {:>10.2}  {:<48} {}",
            c.cpu,
            if c.nohz_full { "yes" } else { "no" },
            c.loc_per_s,
            c.expected,
            c.verdict
        );
        let others: Vec<String> = c
            .rates
            .iter()
            .filter(|(n, _)| n != "LOC")
            .take(8)
            .map(|(n, r)| format!("{n} {r}/s"))
            .collect();
        if !others.is_empty() {
            let _ = writeln!(out, "       other interrupts: {}", others.join(", "));
        }
        let soft: Vec<String> =
            c.softirq_rates.iter().take(8).map(|(n, r)| format!("{n} {r}/s")).collect();
        if !soft.is_empty() {
            let _ = writeln!(out, "       softirqs: {}", soft.join(", "));
        }
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}
