//! `measure ticks` (the seeds' "pig" test): keep each chosen CPU busy with one spinning
//! thread for N seconds and report its local-timer (`LOC`) interrupts per second and the
//! rate of every other interrupt and softirq row, with what to expect: about 1 tick/s on a
//! `nohz_full` CPU running one task, `CONFIG_HZ` per second elsewhere.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use host::Root;
use results::{CpuTicks, Envelope, HostContext, TicksResult};

use crate::error::MeasureError;
use crate::procstat::{self, Counters};
use crate::select::list;

/// `measure ticks` settings.
#[derive(Debug, Clone)]
pub struct TicksConfig {
    pub cpus: Vec<u32>,
    pub duration: Duration,
    pub main_cpu: Option<u32>,
    /// The host's online CPUs (from its model).
    pub online: Vec<u32>,
    pub nohz_full: Vec<u32>,
    pub isolated: Vec<u32>,
    /// `CONFIG_HZ` when known.
    pub hz: Option<u32>,
    pub host: HostContext,
    pub tool: String,
    /// RFC 3339 UTC start time recorded as `started_at`.
    pub started_at: Option<String>,
    pub params: results::TicksParams,
}

/// `CONFIG_HZ=` from a kernel config text.
pub fn config_hz(config: &str) -> Option<u32> {
    config.lines().find_map(|l| l.strip_prefix("CONFIG_HZ=")?.trim().parse().ok())
}

/// Rates of one CPU from two samples `secs` apart.
pub fn rates(
    cpu: u32,
    before: (&Counters, &Counters),
    after: (&Counters, &Counters),
    secs: f64,
    nohz_full: bool,
    isolated: bool,
    hz: Option<u32>,
) -> CpuTicks {
    let per_s = |v: Vec<(String, u64)>| -> Vec<(String, f64)> {
        v.into_iter().map(|(n, c)| (n, (c as f64 / secs * 100.0).round() / 100.0)).collect()
    };
    let irq = per_s(after.0.delta_on(before.0, cpu));
    let soft = per_s(after.1.delta_on(before.1, cpu));
    let loc = irq.iter().find(|(n, _)| n == "LOC").map_or(0.0, |(_, r)| *r);
    let hz_text = hz.map_or("CONFIG_HZ (100-1000)".to_string(), |h| h.to_string());
    let (expected, verdict) = if nohz_full {
        (
            "about 1/s (nohz_full with one runnable task)".to_string(),
            if loc <= 2.0 {
                "ok: the tick is stopped".to_string()
            } else {
                format!("tick NOT stopped: {loc}/s on a nohz_full CPU (another runnable task, timers, or RCU callbacks here)")
            },
        )
    } else {
        (
            format!("about {hz_text}/s (periodic tick: CPU not in nohz_full)"),
            "periodic tick: add the CPU to nohz_full to stop it".to_string(),
        )
    };
    CpuTicks {
        cpu,
        nohz_full,
        isolated,
        loc_per_s: loc,
        expected,
        rates: irq,
        softirq_rates: soft,
        verdict,
    }
}

/// Run `measure ticks`.
pub fn run(cfg: &TicksConfig) -> Result<TicksResult, MeasureError> {
    if cfg.cpus.is_empty() {
        return Err(MeasureError::NoCpus);
    }
    if let Some(&cpu) = cfg.cpus.iter().find(|c| !cfg.online.contains(c)) {
        return Err(MeasureError::CpuOffline { cpu, online: list(&cfg.online) });
    }
    let mut notes = Vec::new();
    if let Some(m) = crate::runner::pick_main_cpu(cfg.main_cpu, &cfg.cpus, &cfg.online) {
        if !cfg.cpus.contains(&m) && util::sched::pin_current(m).is_err() {
            notes.push(format!("could not pin the main thread to CPU {m}"));
        }
    }
    let root = Root::live();
    let stop = AtomicBool::new(false);
    let (i0, s0, i1, s1, secs) = std::thread::scope(|s| {
        for &cpu in &cfg.cpus {
            let stop = &stop;
            let _ = std::thread::Builder::new().name(format!("lowlat-pig-{cpu}")).spawn_scoped(
                s,
                move || {
                    let _ = util::sched::pin_current(cpu);
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                },
            );
        }
        std::thread::sleep(Duration::from_millis(200));
        let (i0, s0) = (procstat::read_interrupts(&root), procstat::read_softirqs(&root));
        let t0 = Instant::now();
        let end = t0 + cfg.duration;
        while Instant::now() < end && !util::signal::interrupted() {
            std::thread::sleep(
                Duration::from_millis(50).min(end.saturating_duration_since(Instant::now())),
            );
        }
        let (i1, s1) = (procstat::read_interrupts(&root), procstat::read_softirqs(&root));
        let secs = t0.elapsed().as_secs_f64().max(0.001);
        stop.store(true, Ordering::SeqCst);
        (i0, s0, i1, s1, secs)
    });
    if i1.rows.is_empty() {
        notes.push("/proc/interrupts is not readable: no rates".into());
    }
    let cpus = cfg
        .cpus
        .iter()
        .map(|&c| {
            rates(
                c,
                (&i0, &s0),
                (&i1, &s1),
                secs,
                cfg.nohz_full.contains(&c),
                cfg.isolated.contains(&c),
                cfg.hz,
            )
        })
        .collect();
    let mut envelope = Envelope::new(results::Kind::Ticks, &cfg.tool);
    envelope.partial = util::signal::interrupted();
    envelope.started_at = cfg.started_at.clone();
    envelope.duration_ns = (secs * 1e9) as u64;
    envelope.host = cfg.host.clone();
    envelope.params = results::Params::Ticks(cfg.params.clone());
    Ok(TicksResult { envelope, cpus, notes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procstat::parse_interrupts;

    #[test]
    fn nohz_full_expectation_and_verdict() {
        let a = parse_interrupts("CPU0 CPU1\nLOC: 100 100 Local\nRES: 0 0 Res\n");
        let b = parse_interrupts("CPU0 CPU1\nLOC: 350 110 Local\nRES: 0 4 Res\n");
        let s = Counters::default();
        let hk = rates(0, (&a, &s), (&b, &s), 10.0, false, false, Some(250));
        assert_eq!(hk.loc_per_s, 25.0);
        assert!(hk.expected.contains("250"));
        let iso = rates(1, (&a, &s), (&b, &s), 10.0, true, true, Some(250));
        assert_eq!(iso.loc_per_s, 1.0);
        assert!(iso.verdict.starts_with("ok"));
        assert_eq!(iso.rates, vec![("LOC".to_string(), 1.0), ("RES".to_string(), 0.4)]);
        let bad = rates(0, (&a, &s), (&b, &s), 10.0, true, true, None);
        assert!(bad.verdict.contains("NOT stopped"));
    }

    #[test]
    fn hz_from_config() {
        assert_eq!(config_hz("# c\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"), Some(250));
        assert_eq!(config_hz(""), None);
    }
}
