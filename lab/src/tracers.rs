//! The tracer boot: booted with the plan's arguments, lowlat's timerlat and osnoise modes and
//! rtla run interleaved, hwlat runs, and tracefs is checked to be as found after a normal
//! run, after Ctrl-C and, via the next run, after SIGKILL. Claims go into the summary; the
//! ratios into `parity.md` (docs/BENCHMARKS.md keeps the latest).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use results::LatencyResult;
use serde::Serialize;

use crate::lab::{Guest, Lab};
use crate::parity;
use crate::proof::Summary;

const JOB: &str = include_str!("../guest/jobs/tracers.sh");

/// What one tool cost the measured CPUs: interrupts per second on them, by row.
#[derive(Debug, Clone, Serialize)]
pub struct Cost {
    pub run: String,
    pub per_s: BTreeMap<String, f64>,
}

/// The tracer boot's numbers, kept in the summary.
#[derive(Debug, Default, Serialize)]
pub struct TracerReport {
    pub rounds: u32,
    pub seconds: u32,
    pub cpus: String,
    pub figures: Vec<parity::Figure>,
    pub costs: Vec<Cost>,
    pub hwlat_samples: u64,
    pub top_causes: Vec<String>,
}

fn result(g: &Guest, name: &str) -> Result<LatencyResult> {
    serde_json::from_str(&g.read(name)?).with_context(|| format!("{name} is not a result"))
}

fn cost_table(costs: &[Cost]) -> String {
    let mut s = String::from(
        "| run | LOC/s | IWI/s | RES/s | CAL/s | device IRQs/s |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for c in costs {
        let g = |k: &str| c.per_s.get(k).copied().unwrap_or(0.0);
        s.push_str(&format!(
            "| {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} |\n",
            c.run,
            g("LOC"),
            g("IWI"),
            g("RES"),
            g("CAL"),
            g("devices")
        ));
    }
    s
}

/// Boot with `cmdline`, run the tracer job on `cpus`, judge it.
pub fn prove(
    lab: &mut Lab,
    sum: &mut Summary,
    bin: &Path,
    cmdline: &str,
    cpus: &cpuset::CpuSet,
    rounds: u32,
    seconds: u32,
) -> Result<TracerReport> {
    let files = vec![
        ("cpus".to_string(), format!("{}\n", cpus.to_list()).into_bytes()),
        ("duration".to_string(), format!("{seconds}\n").into_bytes()),
        ("rounds".to_string(), format!("{rounds}\n").into_bytes()),
    ];
    // runs of `seconds` (4 per round, a baseline), hwlat 10 s, the hygiene runs, boot and slack
    let limit = Duration::from_secs(u64::from(seconds) * (4 * u64::from(rounds) + 1) * 3 / 2 + 180);
    let load_before = host_load();
    let g = lab.boot("5-tracers", cmdline, false, JOB, &files, limit)?;
    let load_after = host_load();
    sum.boot(&g);
    let cpu_list: Vec<u32> = cpus.iter().map(|c| c as u32).collect();
    let mut rep = TracerReport { rounds, seconds, cpus: cpus.to_list(), ..Default::default() };

    // every lowlat run ran to its end
    let mut bad = Vec::new();
    for s in g.steps.iter().filter(|s| s.name.starts_with("lowlat-") || s.name.starts_with("rtla-"))
    {
        if s.rc != 0 {
            bad.push(format!(
                "{} exit {} ({})",
                s.name,
                s.rc,
                g.read(&format!("{}.err", s.name)).unwrap_or_default().trim()
            ));
        }
    }
    sum.claim(
        "tracers: every lowlat and rtla run exits 0",
        bad.is_empty(),
        if bad.is_empty() { format!("{} runs", g.steps.len()) } else { bad.join("; ") },
    );

    // parity, per round
    let (mut lt, mut rt, mut lo, mut ro) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 1..=rounds {
        let l = result(&g, &format!("lowlat-timerlat-{i}.json"))?;
        lt.push((parity::lowlat_timerlat(&l), l.envelope.duration_ns as f64 / 1e9));
        let text = g.read(&format!("rtla-timerlat-{i}.out"))?;
        // rtla stops on its own timer at -d; the duration it prints is rounded to whole seconds
        rt.push((parity::rtla_timerlat(&text, 1), f64::from(seconds)));
        let l = result(&g, &format!("lowlat-osnoise-{i}.json"))?;
        lo.push((parity::lowlat_osnoise(&l), l.envelope.duration_ns as f64 / 1e9));
        let text = g.read(&format!("rtla-osnoise-{i}.out"))?;
        // the time rtla says it ran (its -d overruns under emulation), else its -d
        let ran = parity::rtla_duration(&text).filter(|s| *s > 0.0).unwrap_or(f64::from(seconds));
        ro.push((parity::rtla_osnoise(&text), ran));
        if i == 1 {
            let causes = l.tracer.as_ref().map(|t| t.causes.clone()).unwrap_or_default();
            rep.top_causes = causes
                .iter()
                .take(8)
                .map(|c| format!("{} {} {} ns", c.source.as_str(), c.name, c.total_ns))
                .collect();
            let named = causes.iter().any(|c| c.source != results::tracer::NoiseSource::Hw);
            sum.claim(
                "osnoise: the gaps are attributed to IRQs and threads by name",
                named
                    && l.threads.iter().all(|t| t.osnoise.as_ref().is_some_and(|o| o.periods > 0)),
                rep.top_causes.join(", "),
            );
            // the HTML report says the same
            let html = lab.dir.join("tracers-report.html");
            let json = g.file(&format!("lowlat-osnoise-{i}.json"));
            crate::proof::lowlat(
                bin,
                &[
                    "report",
                    json.to_str().unwrap_or_default(),
                    "-o",
                    html.to_str().unwrap_or_default(),
                ],
            )?;
            let page = std::fs::read_to_string(&html)?;
            let first = causes
                .iter()
                .find(|c| c.source != results::tracer::NoiseSource::Hw)
                .map(|c| c.name.clone())
                .unwrap_or_default();
            sum.claim(
                "report: the HTML report ranks what caused the worst gaps",
                page.contains("What caused the worst gaps")
                    && !first.is_empty()
                    && page.contains(&first),
                format!("{} names {first:?}", html.display()),
            );
        }
    }
    let secs = f64::from(seconds);
    let mut figs = parity::timerlat_figures(&lt, &rt);
    figs.extend(parity::osnoise_figures(&lo, &ro));
    // Ratios of emulated timing mean something only on a quiet host: with more runnable tasks
    // than CPUs (a build beside the lab), the interleaved runs see different host load and the
    // comparison is not judged — said, never passed.
    let cpus_here = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let busy = [load_before, load_after].into_iter().flatten().fold(0.0_f64, f64::max);
    // a timing claim: judged on a quiet host, reported as not judged on a busy one
    let timing = |sum: &mut Summary, name: String, ok: bool, seen: String| {
        if busy > cpus_here {
            let why = format!("the host was busy (load average {busy:.1} on {cpus_here} CPUs): rerun on a quiet host");
            sum.skip(name, why, seen);
        } else {
            sum.claim(name, ok, seen);
        }
    };
    for f in figs.iter().filter(|f| f.band.is_some()) {
        let seen = format!(
            "lowlat {:.1}, rtla {:.1}, ratio {:.3} (band {:?})",
            f.lowlat,
            f.rtla,
            f.ratio,
            f.band.unwrap_or_default()
        );
        timing(sum, format!("parity with rtla: {} {}", f.tool, f.name), f.ok, seen);
    }
    rep.figures = figs;
    // lowlat's window holds what it counts: one osnoise period per second at most (a count
    // above that took periods from before the window opened or after it closed).
    let own = parity::window_periods_per_s(&lo);
    timing(
        sum,
        "osnoise: lowlat counts the periods its own window holds".into(),
        (0.7..=1.05).contains(&own),
        format!("{own:.2} periods per CPU per second of the result's duration (1 s periods; band 0.7–1.05)"),
    );

    // what each run cost the measured CPUs
    let mut runs = vec!["baseline".to_string()];
    for i in 1..=rounds {
        for r in ["lowlat-timerlat", "rtla-timerlat", "lowlat-osnoise", "rtla-osnoise"] {
            runs.push(format!("{r}-{i}"));
        }
    }
    for r in runs {
        let (a, b) = (g.read(&format!("irq-{r}-a.txt"))?, g.read(&format!("irq-{r}-b.txt"))?);
        let secs = g.steps.iter().find(|s| s.name == r).map_or(secs, |s| (s.secs as f64).max(1.0));
        rep.costs.push(Cost { run: r, per_s: parity::irq_rates(&a, &b, &cpu_list, secs) });
    }

    // hwlat
    let h = result(&g, "hwlat.json")?;
    let st = g.step("hwlat")?;
    rep.hwlat_samples = h.threads.iter().filter_map(|t| t.hwlat.as_ref()).map(|x| x.samples).sum();
    sum.claim(
        "hwlat runs and reports every CPU",
        (st.rc == 0 || st.rc == 1)
            && h.measured()
            && h.threads.len() == lab.machine.topology.cpus() as usize,
        format!(
            "exit {}, {} samples above the threshold on {} CPUs",
            st.rc,
            rep.hwlat_samples,
            h.threads.len()
        ),
    );

    // tracefs hygiene
    let before = g.read("tracefs-before.txt")?;
    let after_int = g.read("tracefs-after-interrupt.txt")?;
    let after_kill = g.read("tracefs-after-kill.txt")?;
    let after = g.read("tracefs-after.txt")?;
    let interrupted = result(&g, "interrupted.json")?;
    let rc = g.read("interrupted.rc")?.trim().to_string();
    sum.claim(
        "tracefs: as found after every run and after Ctrl-C (partial result written)",
        after_int == before && interrupted.envelope.partial,
        format!("interrupted run exit {rc}, partial {}", interrupted.envelope.partial),
    );
    let killed_left = after_kill.contains("lowlat-") && after_kill != before;
    let next = result(&g, "after-kill.json")?;
    let put_back = next.notes.iter().any(|n| n.contains("put back"));
    sum.claim(
        "tracefs: what a SIGKILLed run left is put back by the next run",
        killed_left && put_back && after == before,
        format!(
            "after the kill: instance left {}, settings changed {}; the next run: {:?}",
            after_kill.contains("lowlat-"),
            after_kill != before,
            next.notes.iter().find(|n| n.contains("put back"))
        ),
    );

    let md = format!(
        "Interleaved in one boot ({} rounds of {} s per tool, CPUs {}; kernel {}; {}):\n\n{}\nInterrupts per second on the measured CPUs during each run (what the tool costs them):\n\n{}",
        rounds,
        seconds,
        cpus.to_list(),
        sum.kernel_package,
        sum.accel,
        parity::table(&rep.figures),
        cost_table(&rep.costs)
    );
    std::fs::write(lab.dir.join("parity.md"), &md)?;
    Ok(rep)
}

/// The host's 1-minute load average (`/proc/loadavg`), when readable.
fn host_load() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}
