//! Hardware and firmware latency through the `hwlat` tracer (what `hwlatdetect` runs): a
//! kernel thread spins with interrupts off for `width` of every `window` on one CPU at a
//! time (round-robin over the CPUs given) and reports each window whose longest gap — inside
//! its loop (inner) or between two rounds (outer) — is above `tracing_thresh`. With interrupts
//! off nothing the kernel schedules can cause such a gap: SMIs, the hypervisor, hardware.
//!
//! hwlat runs at the top level of tracefs (the kernel allows one hwlat user): the run refuses
//! when another tracer is current there, and puts `current_tracer`, `tracing_thresh`,
//! `tracing_cpumask` and the detector's width and window back as found.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use results::tracer::{HwlatCpu, TracerName, TracerRun};
use results::{Envelope, HistogramConfig, HostContext, LatencyResult, ThreadResult};

use super::{parse, tracefs};
use crate::error::MeasureError;
use crate::select::list;
use crate::shared::Recorder;
use crate::sys::{Clock, Monotonic};

/// One hwlat run.
#[derive(Debug, Clone)]
pub struct HwlatConfig {
    /// CPUs the detector visits (`tracing_cpumask`).
    pub cpus: Vec<u32>,
    pub duration: Duration,
    /// Busy time per window (interrupts off).
    pub width: Duration,
    pub window: Duration,
    /// Samples at or above this are reported (`tracing_thresh`).
    pub threshold: Duration,
    pub host: HostContext,
    pub tool: String,
    pub started_at: Option<String>,
    pub params: results::LatencyParams,
}

/// The hex `tracing_cpumask` of `cpus`, in 32-bit words as the kernel prints it.
pub fn cpumask(cpus: &[u32]) -> String {
    let top = cpus.iter().copied().max().unwrap_or(0) as usize;
    let mut words = vec![0u32; top / 32 + 1];
    for &c in cpus {
        words[c as usize / 32] |= 1 << (c % 32);
    }
    words.iter().rev().map(|w| format!("{w:08x}")).collect::<Vec<_>>().join(",")
}

/// Run hwlat on the live host. `tracefs_dir` comes from [`super::available`].
pub fn run(cfg: &HwlatConfig, tracefs_dir: &str) -> Result<LatencyResult, MeasureError> {
    if cfg.cpus.is_empty() {
        return Err(MeasureError::NoCpus);
    }
    let dir = Path::new(tracefs_dir);
    let recovered = tracefs::recover_stale(Path::new(tracefs::JOURNAL_DIR), dir);
    let current = std::fs::read_to_string(dir.join("current_tracer")).unwrap_or_default();
    if current.trim() != "nop" {
        return Err(MeasureError::TracerBusy {
            who: format!("{tracefs_dir} (current_tracer {})", current.trim()),
        });
    }
    let mut settings = tracefs::Settings::journaled(Path::new(tracefs::JOURNAL_DIR));
    let det = dir.join("hwlat_detector");
    // The window first: the kernel refuses a width that is not below the current window.
    let window_us = cfg.window.as_micros().max(2) as u64;
    let width_us = (cfg.width.as_micros() as u64).clamp(1, window_us - 1);
    settings.set(&det.join("window"), &window_us.to_string())?;
    settings.set(&det.join("width"), &width_us.to_string())?;
    let thresh_us = cfg.threshold.as_micros().max(1) as u64;
    settings.set(&dir.join("tracing_thresh"), &thresh_us.to_string())?;
    settings.set(&dir.join("tracing_cpumask"), &cpumask(&cfg.cpus))?;
    // On, for the samples to be recorded; switched off at the end (through `settings`, so
    // that the value found is what is put back).
    settings.set(&dir.join("tracing_on"), "1")?;
    settings.set(&dir.join("current_tracer"), "hwlat")?;

    let recs: Vec<Recorder> = cfg
        .cpus
        .iter()
        .map(|_| {
            Recorder::new(
                HistogramConfig::LATENCY,
                (cfg.duration.as_secs() as usize + 2).min(86_400),
                Some(thresh_us * 1000),
            )
        })
        .collect();
    let stop = AtomicBool::new(false);
    let lost = AtomicU64::new(0);
    let clock = Monotonic;
    let start = clock.now();
    let pipe = dir.join("trace_pipe");
    let result = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            util::signal::block_in_this_thread();
            let mut t0 = None;
            let mut per_local = vec![HwlatCpu::default(); cfg.cpus.len()];
            let r = tracefs::read_pipe(&pipe, &stop, |l| match parse::line(l) {
                parse::Line::Hwlat {
                    cpu,
                    ts_ns,
                    inner_us,
                    outer_us,
                    nmi_total_us,
                    nmi_count,
                    ..
                } => {
                    let Some(i) = cfg.cpus.iter().position(|&c| c == cpu) else { return };
                    let base = *t0.get_or_insert(ts_ns);
                    let v = inner_us.max(outer_us).saturating_mul(1000);
                    recs[i].record(v, ts_ns.saturating_sub(base));
                    let h = &mut per_local[i];
                    h.samples += 1;
                    h.max_inner_ns = h.max_inner_ns.max(inner_us * 1000);
                    h.max_outer_ns = h.max_outer_ns.max(outer_us * 1000);
                    h.nmi_count += nmi_count.unwrap_or(0);
                    h.nmi_total_ns += nmi_total_us.unwrap_or(0) * 1000;
                }
                parse::Line::Lost { lost: n, .. } => {
                    lost.fetch_add(n, Ordering::Relaxed);
                }
                _ => {}
            });
            (r, per_local)
        });
        let end = start + cfg.duration.as_nanos() as u64;
        while clock.now() < end && !util::signal::interrupted() {
            clock.sleep_until_or_signal((clock.now() + 200_000_000).min(end));
        }
        let off = settings.set(&dir.join("tracing_on"), "0");
        stop.store(true, Ordering::SeqCst);
        (reader.join(), off)
    });
    let elapsed = clock.now().saturating_sub(start);
    let failed = settings.restore().to_vec();
    drop(settings);
    let (joined, off) = result;
    off?;
    let (read, per_local) = joined.map_err(|_| MeasureError::Tracer {
        path: pipe.display().to_string(),
        why: "the reader thread panicked".into(),
    })?;
    read?;
    let per = per_local;

    let interrupted = util::signal::interrupted();
    let mut notes = vec![format!(
        "hwlat: a kernel thread spun with interrupts off for {width_us} µs of every {window_us} µs, one CPU at a time over {}; a sample is a window whose longest gap was above {thresh_us} µs. Such gaps are not the kernel's: SMIs (firmware), the hypervisor, the hardware",
        list(&cfg.cpus)
    )];
    notes.extend(recovered);
    if interrupted {
        notes.push("interrupted: the numbers cover the time measured before Ctrl-C".into());
    }
    let lost = lost.load(Ordering::Relaxed);
    if lost > 0 {
        notes.push(format!("the trace buffer dropped {lost} events"));
    }
    for f in &failed {
        notes.push(format!("tracefs not restored: {f}"));
    }
    let mut envelope = Envelope::new(results::Kind::Noise, &cfg.tool);
    envelope.partial = interrupted;
    envelope.duration_ns = elapsed;
    envelope.host = cfg.host.clone();
    envelope.params = results::Params::Latency(results::LatencyParams {
        engine: Some(results::tracer::TracerName::Hwlat),
        ..cfg.params.clone()
    });
    envelope.started_at = cfg.started_at.clone();
    let threads = cfg
        .cpus
        .iter()
        .zip(&recs)
        .zip(per)
        .map(|((&cpu, rec), h)| {
            let hist = rec.snapshot();
            let (_, breach_count) = rec.breaches(Some(cpu));
            ThreadResult {
                cpu: Some(cpu),
                stats: hist.summary(),
                histogram: hist.to_data(),
                breach_count: Some(breach_count),
                hwlat: Some(h),
                ..ThreadResult::default()
            }
        })
        .collect();
    Ok(LatencyResult {
        envelope,
        realtime: true,
        series_step_s: 1,
        threads,
        breaches: Vec::new(),
        load: None,
        notes,
        tracer: Some(TracerRun {
            name: Some(TracerName::Hwlat),
            tracefs: tracefs_dir.to_string(),
            instance: None,
            period_us: Some(window_us),
            runtime_us: Some(width_us),
            threshold_ns: Some(thresh_us * 1000),
            lost_events: lost,
            threads_policy: None,
            causes: Vec::new(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumask_is_the_kernels_hex_words() {
        assert_eq!(cpumask(&[2, 3, 6, 7]), "000000cc");
        assert_eq!(cpumask(&[0, 33]), "00000002,00000001");
    }
}
