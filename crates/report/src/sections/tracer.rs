//! The parts of a timer or noise section that a kernel tracer measured: timerlat's IRQ and
//! thread latency per CPU, osnoise's periods per CPU (rtla osnoise top's columns), what caused
//! the gaps ranked by total time and the longest gaps with what ran in them, and hwlat's
//! samples per CPU.

use results::tracer::{NoiseSource, TracerName};
use results::{LatencyResult, ThreadResult};

use crate::model::{fmt_count, fmt_ns, Block, Cell, Table};

/// What the tracer measured, in one sentence for the section's opening paragraph.
pub fn semantics(r: &LatencyResult) -> Option<String> {
    let t = r.tracer.as_ref()?;
    let threads = t.threads_policy.as_deref().map_or(String::new(), |p| match p.split_once(':') {
        Some((pol, prio)) => format!(" (SCHED_{} {prio})", pol.to_uppercase()),
        None => format!(" (SCHED_{})", p.to_uppercase()),
    });
    let us = |v: Option<u64>| fmt_ns(v.unwrap_or(0).saturating_mul(1000));
    Some(match t.name? {
        TracerName::Timerlat => format!(
            "Measured by the kernel's timerlat tracer: a per-CPU kernel timer every {} wakes a kernel thread{threads}; the IRQ latency is the timer's expiry to its interrupt handler, the thread latency (the statistics below) the expiry to the thread running — rtla timerlat's numbers, read from {}",
            us(t.period_us),
            t.tracefs
        ),
        TracerName::Osnoise => format!(
            "Measured by the kernel's osnoise tracer: a per-CPU kernel thread{threads} runs {} of every {} and records every gap of at least {}; the statistics below are those gaps (not loop samples), and every gap is attributed to the IRQs, softirqs, threads and NMIs the tracer saw inside it; what no event explains is hardware, firmware or the hypervisor",
            us(t.runtime_us),
            us(t.period_us),
            fmt_ns(t.threshold_ns.unwrap_or(0))
        ),
        TracerName::Hwlat => format!(
            "Measured by the kernel's hwlat tracer (hwlatdetect): a kernel thread spins with interrupts off for {} of every {}, visiting the CPUs in turn; each sample is a window whose longest gap exceeded {}. With interrupts off only firmware (SMIs), the hypervisor or the hardware can cause such a gap",
            us(t.runtime_us),
            us(t.period_us),
            fmt_ns(t.threshold_ns.unwrap_or(0))
        ),
    })
}

fn cpu(t: &ThreadResult) -> Cell {
    Cell::text(t.cpu.map_or("?".into(), |c| c.to_string()))
}

/// The tracer's own tables, after the percentile table.
pub fn blocks(r: &LatencyResult, threads: &[&ThreadResult]) -> Vec<Block> {
    let Some(t) = &r.tracer else { return Vec::new() };
    let mut out = Vec::new();
    match t.name {
        Some(TracerName::Timerlat) => {
            let rows = threads
                .iter()
                .map(|th| {
                    let irq = th.irq.as_ref();
                    let s = &th.stats;
                    vec![
                        cpu(th),
                        Cell::num(fmt_count(s.count)),
                        Cell::num(irq.map_or("n/a".into(), |i| fmt_ns(i.stats.min_ns))),
                        Cell::num(irq.map_or("n/a".into(), |i| fmt_ns(i.stats.avg_ns))),
                        Cell::num(irq.map_or("n/a".into(), |i| fmt_ns(i.stats.max_ns))),
                        Cell::num(fmt_ns(s.min_ns)),
                        Cell::num(fmt_ns(s.avg_ns)),
                        Cell::num(fmt_ns(s.max_ns)),
                    ]
                })
                .collect();
            out.push(Block::Table(Table {
                caption: "timerlat per CPU: IRQ and thread latency (as rtla timerlat top prints them); a thread latency well above its IRQ latency is scheduling delay, an IRQ latency already high is the interrupt being held off".into(),
                headers: ["CPU", "samples", "IRQ min", "IRQ avg", "IRQ max", "thread min", "thread avg", "thread max"].map(String::from).to_vec(),
                rows,
            }));
        }
        Some(TracerName::Osnoise) => {
            let rows: Vec<Vec<Cell>> = threads
                .iter()
                .filter_map(|th| th.osnoise.as_ref().map(|o| (th, o)))
                .map(|(th, o)| {
                    let mut row = vec![
                        cpu(th),
                        Cell::num(fmt_count(o.periods)),
                        Cell::num(fmt_ns(o.runtime_ns)),
                        Cell::num(fmt_ns(o.noise_ns)),
                        Cell::num(o.available_pct().map_or("n/a".into(), |p| format!("{p:.5} %"))),
                        Cell::num(fmt_ns(o.max_period_noise_ns)),
                        Cell::num(fmt_ns(o.max_single_ns)),
                    ];
                    for s in NoiseSource::ALL {
                        row.push(Cell::num(format!(
                            "{} / {}",
                            fmt_count(o.counts.get(s)),
                            fmt_ns(o.time_ns.get(s))
                        )));
                    }
                    row
                })
                .collect();
            if !rows.is_empty() {
                let mut headers: Vec<String> = [
                    "CPU",
                    "periods",
                    "runtime",
                    "noise",
                    "CPU available",
                    "max noise (period)",
                    "max single",
                ]
                .map(String::from)
                .to_vec();
                headers.extend(
                    NoiseSource::ALL
                        .iter()
                        .map(|s| format!("{} (count / time in gaps)", s.as_str().to_uppercase())),
                );
                out.push(Block::Table(Table {
                    caption: "osnoise per CPU (rtla osnoise top's columns), with the time each source took inside the gaps".into(),
                    headers,
                    rows,
                }));
            }
            if !t.causes.is_empty() {
                let total: u64 = t.causes.iter().map(|c| c.total_ns).sum();
                let rows = t
                    .causes
                    .iter()
                    .take(20)
                    .map(|c| {
                        vec![
                            Cell::text(c.source.as_str()),
                            Cell::text(c.name.clone()),
                            Cell::num(fmt_ns(c.total_ns)),
                            Cell::num(if total > 0 {
                                format!("{:.1} %", c.total_ns as f64 * 100.0 / total as f64)
                            } else {
                                "-".into()
                            }),
                            Cell::num(fmt_count(c.events)),
                            Cell::num(fmt_count(c.gaps)),
                            Cell::num(fmt_ns(c.max_ns)),
                            Cell::text(c.cpus.clone()),
                        ]
                    })
                    .collect();
                out.push(Block::Table(Table {
                    caption: "What caused the worst gaps: every source that ran inside a gap at or above the threshold, ranked by total time (hw: time no kernel event explains)".into(),
                    headers: ["source", "name", "total time", "share", "events", "gaps", "longest", "CPUs"].map(String::from).to_vec(),
                    rows,
                }));
            }
            let mut gaps: Vec<(&ThreadResult, &results::tracer::Gap)> =
                threads.iter().flat_map(|th| th.gaps.iter().map(move |g| (*th, g))).collect();
            gaps.sort_by_key(|g| std::cmp::Reverse(g.1.duration_ns));
            if !gaps.is_empty() {
                let rows = gaps
                    .iter()
                    .take(15)
                    .map(|(th, g)| {
                        let mut what: Vec<String> = g
                            .causes
                            .iter()
                            .take(5)
                            .map(|c| {
                                format!(
                                    "{} {} {}{}",
                                    c.source.as_str(),
                                    c.name,
                                    fmt_ns(c.duration_ns),
                                    if c.events > 1 {
                                        format!(" ({}×)", c.events)
                                    } else {
                                        String::new()
                                    }
                                )
                            })
                            .collect();
                        if g.unexplained_ns > 0 {
                            what.push(format!(
                                "unexplained (hw/firmware/hypervisor) {}",
                                fmt_ns(g.unexplained_ns)
                            ));
                        }
                        vec![
                            cpu(th),
                            Cell::num(format!("{:.3} s", g.t_ns as f64 / 1e9)),
                            Cell::num(fmt_ns(g.duration_ns)),
                            Cell::text(what.join("; ")),
                        ]
                    })
                    .collect();
                out.push(Block::Table(Table {
                    caption: "The longest gaps and what ran inside each".into(),
                    headers: ["CPU", "at", "gap", "what ran in it"].map(String::from).to_vec(),
                    rows,
                }));
            }
        }
        Some(TracerName::Hwlat) => {
            let rows = threads
                .iter()
                .filter_map(|th| th.hwlat.as_ref().map(|h| (th, h)))
                .map(|(th, h)| {
                    vec![
                        cpu(th),
                        Cell::num(fmt_count(h.samples)),
                        Cell::num(fmt_ns(h.max_inner_ns)),
                        Cell::num(fmt_ns(h.max_outer_ns)),
                        Cell::num(fmt_count(h.nmi_count)),
                        Cell::num(fmt_ns(h.nmi_total_ns)),
                    ]
                })
                .collect();
            out.push(Block::Table(Table {
                caption: "hwlat per CPU: windows with a gap above the threshold, the longest inside the loop (inner) and between rounds (outer), and NMIs in them".into(),
                headers: ["CPU", "samples", "max inner", "max outer", "NMIs", "NMI time"].map(String::from).to_vec(),
                rows,
            }));
        }
        None => {}
    }
    out
}
