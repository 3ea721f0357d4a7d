//! The terminal view of what a kernel tracer measured: for timerlat the IRQ and thread
//! latency per CPU (rtla timerlat top's columns), for osnoise the periods summed per CPU
//! (rtla osnoise top's columns) and what caused the gaps, ranked by total time, for hwlat the
//! samples per CPU.

use std::fmt::Write as _;

use crate::latency::LatencyResult;
use crate::tracer::{NoiseSource, TracerName};

fn us(ns: u64) -> String {
    if ns >= 100_000 {
        format!("{}", ns / 1000)
    } else {
        format!("{:.1}", ns as f64 / 1000.0)
    }
}

/// The tracer section of a result's table; empty when no tracer measured.
pub fn section(r: &LatencyResult) -> String {
    let Some(t) = &r.tracer else { return String::new() };
    let mut out = String::new();
    let threads =
        t.threads_policy.as_deref().map_or(String::new(), |p| format!(", its threads {p}"));
    match t.name {
        Some(TracerName::Timerlat) => {
            let _ = writeln!(
                out,
                "timerlat (kernel timer every {} µs{threads}; `samples` above = thread wake-ups):",
                t.period_us.unwrap_or(0)
            );
            let _ = writeln!(
                out,
                "{:>4} {:>10} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}",
                "CPU", "count", "IRQ min", "avg", "max", "Thr min", "avg", "max (µs)"
            );
            for th in &r.threads {
                let cpu = th.cpu.map_or("-".to_string(), |c| c.to_string());
                let (im, ia, ix) =
                    th.irq.as_ref().map_or(("-".into(), "-".into(), "-".into()), |i| {
                        (us(i.stats.min_ns), us(i.stats.avg_ns), us(i.stats.max_ns))
                    });
                let s = &th.stats;
                let _ = writeln!(
                    out,
                    "{cpu:>4} {:>10} | {im:>9} {ia:>9} {ix:>9} | {:>9} {:>9} {:>9}",
                    s.count,
                    us(s.min_ns),
                    us(s.avg_ns),
                    us(s.max_ns)
                );
            }
        }
        Some(TracerName::Osnoise) => {
            let _ = writeln!(
                out,
                "osnoise (gaps ≥ {} µs; `samples` above = gaps{threads}):",
                t.threshold_ns.unwrap_or(0) / 1000
            );
            let _ = writeln!(
                out,
                "{:>4} {:>7} {:>12} {:>11} {:>9} {:>10} {:>10} {:>7} {:>7} {:>7} {:>7} {:>7}",
                "CPU",
                "periods",
                "runtime µs",
                "noise µs",
                "% avail",
                "max noise",
                "max single",
                "HW",
                "NMI",
                "IRQ",
                "SIRQ",
                "THREAD"
            );
            for th in &r.threads {
                let Some(o) = &th.osnoise else { continue };
                let cpu = th.cpu.map_or("-".to_string(), |c| c.to_string());
                let _ = writeln!(
                    out,
                    "{cpu:>4} {:>7} {:>12} {:>11} {:>9} {:>10} {:>10} {:>7} {:>7} {:>7} {:>7} {:>7}",
                    o.periods,
                    o.runtime_ns / 1000,
                    o.noise_ns / 1000,
                    o.available_pct().map_or("-".into(), |p| format!("{p:.5}")),
                    o.max_period_noise_ns / 1000,
                    o.max_single_ns / 1000,
                    o.counts.hw,
                    o.counts.nmi,
                    o.counts.irq,
                    o.counts.softirq,
                    o.counts.thread
                );
            }
            let mut by_source: Vec<String> = Vec::new();
            for s in NoiseSource::ALL {
                let total: u64 = r
                    .threads
                    .iter()
                    .filter_map(|th| th.osnoise.as_ref())
                    .map(|o| o.time_ns.get(s))
                    .sum();
                if total > 0 {
                    by_source.push(format!("{} {} µs", s.as_str(), us(total)));
                }
            }
            if !by_source.is_empty() {
                let _ = writeln!(out, "time in gaps by source: {}", by_source.join(", "));
            }
            if !t.causes.is_empty() {
                let _ = writeln!(
                    out,
                    "what caused the gaps, by total time (every gap ≥ the threshold):"
                );
                let _ = writeln!(
                    out,
                    "  {:<8} {:<28} {:>12} {:>8} {:>8} {:>10}  CPUs",
                    "source", "name", "total µs", "events", "gaps", "max µs"
                );
                for c in t.causes.iter().take(10) {
                    let _ = writeln!(
                        out,
                        "  {:<8} {:<28} {:>12} {:>8} {:>8} {:>10}  {}",
                        c.source.as_str(),
                        c.name,
                        us(c.total_ns),
                        c.events,
                        c.gaps,
                        us(c.max_ns),
                        c.cpus
                    );
                }
            }
            let mut worst: Vec<(u32, &crate::tracer::Gap)> = r
                .threads
                .iter()
                .flat_map(|th| th.gaps.iter().map(move |g| (th.cpu.unwrap_or(0), g)))
                .collect();
            worst.sort_by_key(|g| std::cmp::Reverse(g.1.duration_ns));
            if !worst.is_empty() {
                let _ = writeln!(out, "longest gaps:");
            }
            for (cpu, g) in worst.iter().take(5) {
                let mut what: Vec<String> = g
                    .causes
                    .iter()
                    .take(4)
                    .map(|c| format!("{} {} {} µs", c.source.as_str(), c.name, us(c.duration_ns)))
                    .collect();
                if g.unexplained_ns > 0 {
                    what.push(format!("hw/unexplained {} µs", us(g.unexplained_ns)));
                }
                let _ = writeln!(
                    out,
                    "  CPU {cpu} at t={:.3} s: {} µs — {}",
                    g.t_ns as f64 / 1e9,
                    us(g.duration_ns),
                    what.join(", ")
                );
            }
        }
        Some(TracerName::Hwlat) => {
            let _ = writeln!(
                out,
                "hwlat (interrupts off {} µs of every {} µs; samples above {} µs):",
                t.runtime_us.unwrap_or(0),
                t.period_us.unwrap_or(0),
                t.threshold_ns.unwrap_or(0) / 1000
            );
            let _ = writeln!(
                out,
                "{:>4} {:>8} {:>12} {:>12} {:>6} {:>10}",
                "CPU", "samples", "max inner", "max outer", "NMIs", "NMI µs"
            );
            for th in &r.threads {
                let Some(h) = &th.hwlat else { continue };
                let cpu = th.cpu.map_or("-".to_string(), |c| c.to_string());
                let _ = writeln!(
                    out,
                    "{cpu:>4} {:>8} {:>12} {:>12} {:>6} {:>10}",
                    h.samples,
                    us(h.max_inner_ns),
                    us(h.max_outer_ns),
                    h.nmi_count,
                    us(h.nmi_total_ns)
                );
            }
        }
        None => {}
    }
    if t.lost_events > 0 {
        let _ = writeln!(out, "!! the trace buffer dropped {} events", t.lost_events);
    }
    out
}
