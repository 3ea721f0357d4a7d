//! `measure noise` (oslat semantics): a pinned busy loop per CPU reading the counter; every
//! gap between two reads is a sample (the histogram, like oslat's buckets, holds them all);
//! gaps at or above the noise threshold are interruptions whose time above the loop's own
//! floor adds to the per-second noise total. Attribution: per-second deltas of
//! `/proc/interrupts`, `/proc/softirqs` and the thread's context switches, kept for the
//! worst seconds of each CPU.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use host::Root;
use results::{Attribution, LatencyResult, ThreadResult};

use crate::counter::{Counter, Source};
use crate::error::MeasureError;
use crate::procstat::{self, Counters};
use crate::runner::{self, Common, Observer, SecondHook};
use crate::shared::Recorder;
use crate::sys::{Clock, Monotonic};

/// How many worst seconds per CPU carry attribution.
pub const WORST_SECONDS: usize = 5;

/// `measure noise` settings.
#[derive(Debug, Clone)]
pub struct NoiseConfig {
    pub common: Common,
    /// Gaps at or above this are noise (default 1 µs, oslat's first bucket).
    pub noise_threshold: Duration,
    /// Say in the result what tracefs offers for finer attribution (not when the run fell
    /// back from `--tracer`, whose note says why already).
    pub tracer_note: bool,
}

/// Bounds of one noise loop, in counter ticks.
#[derive(Debug, Clone, Copy)]
pub struct NoiseBounds {
    pub seconds: Option<u64>,
    pub ticks_per_second: u64,
    pub threshold_ticks: u64,
    pub floor_ticks: u64,
    pub stop_on_threshold: bool,
}

/// The loop floor: the smallest gap seen over `n` reads.
pub fn measure_floor(c: &Counter, n: u32) -> u64 {
    let mut prev = c.read();
    let mut floor = u64::MAX;
    for _ in 0..n {
        let now = c.read();
        floor = floor.min(now.wrapping_sub(prev));
        prev = now;
    }
    floor
}

/// The hot loop: read, subtract, count. A gap shorter than the recorder's fast table (the
/// loop's own time, below the noise threshold) is one counter increment indexed by its tick
/// count; a longer one is converted and recorded in full. No allocation, lock or syscall
/// (the TSC is read in user space; the stop flag is checked once per second; see
/// `tests/hot_loop.rs`). Returns the number of samples.
#[inline(never)]
pub fn noise_loop(c: &Counter, rec: &Recorder, b: &NoiseBounds, stop: &AtomicBool) -> u64 {
    let before = rec.count();
    let start = c.read();
    let mut prev = start;
    let mut next_sec = start + b.ticks_per_second;
    let mut sec = 0usize;
    // The longest fast gap of this second (its maximum is written once per second).
    let mut fast_max = 0u64;
    loop {
        let now = c.read();
        let gap = now.wrapping_sub(prev);
        prev = now;
        if now >= next_sec {
            rec.raise_second_fast(sec, fast_max);
            fast_max = 0;
            sec += 1;
            next_sec += b.ticks_per_second;
            if stop.load(Relaxed) || b.seconds.is_some_and(|s| sec as u64 >= s) {
                break;
            }
        }
        if rec.record_fast(gap) {
            fast_max = fast_max.max(gap);
            continue;
        }
        let ns = c.to_ns(gap);
        let hit = rec.record_at(ns, sec, || c.to_ns(now - start));
        if gap >= b.threshold_ticks {
            rec.add_noise(sec, c.to_ns(gap - b.floor_ticks.min(gap)));
            if hit && b.stop_on_threshold {
                stop.store(true, Relaxed);
                break;
            }
        }
    }
    rec.raise_second_fast(sec, fast_max);
    rec.count() - before
}

/// Per-second attribution on the main thread (used by timer and noise).
pub(crate) struct Attributor {
    root: Root,
    cpus: Vec<u32>,
    prev_irq: Counters,
    prev_soft: Counters,
    prev_ctx: Vec<Option<u64>>,
    worst: Vec<Vec<Attribution>>,
    /// Report the measuring thread's context switches (not for timer: it sleeps every period).
    context_switches: bool,
}

impl Attributor {
    /// An attributor for these measured CPUs.
    pub(crate) fn new(cpus: &[u32], context_switches: bool) -> Self {
        Self {
            root: Root::live(),
            context_switches,
            cpus: cpus.to_vec(),
            prev_irq: Counters::default(),
            prev_soft: Counters::default(),
            prev_ctx: Vec::new(),
            worst: vec![Vec::new(); cpus.len()],
        }
    }
}

impl SecondHook for Attributor {
    fn second(&mut self, sec: u64, recs: &[Recorder], tids: &[u32]) {
        let irq = procstat::read_interrupts(&self.root);
        let soft = procstat::read_softirqs(&self.root);
        let ctx: Vec<Option<u64>> =
            tids.iter().map(|t| procstat::context_switches(&self.root, *t)).collect();
        if sec > 0 {
            let s = sec as usize - 1;
            for (i, &cpu) in self.cpus.iter().enumerate() {
                let max_ns = recs[i].second_max(s);
                let worst = &mut self.worst[i];
                if worst.len() >= WORST_SECONDS && worst.iter().all(|w| w.max_ns >= max_ns) {
                    continue;
                }
                let mut a = Attribution {
                    second: s as u64,
                    max_ns,
                    noise_ns: recs[i].second_noise(s),
                    interrupts: irq.delta_on(&self.prev_irq, cpu),
                    softirqs: soft.delta_on(&self.prev_soft, cpu),
                    context_switches: match (ctx[i], self.prev_ctx.get(i).copied().flatten()) {
                        (Some(a), Some(b)) if self.context_switches => Some(a.saturating_sub(b)),
                        _ => None,
                    },
                    text: String::new(),
                };
                a.text = describe(cpu, &a);
                worst.push(a);
                worst.sort_by_key(|w| std::cmp::Reverse(w.max_ns));
                worst.truncate(WORST_SECONDS);
            }
        }
        self.prev_irq = irq;
        self.prev_soft = soft;
        self.prev_ctx = ctx;
    }

    fn finish(&mut self, threads: &mut [ThreadResult]) {
        for (t, w) in threads.iter_mut().zip(&self.worst) {
            t.worst_seconds = w.clone();
        }
    }
}

fn fmt_us(ns: u64) -> String {
    if ns >= 10_000 {
        format!("{} µs", ns / 1000)
    } else {
        format!("{:.1} µs", ns as f64 / 1000.0)
    }
}

/// "max 37 µs at t=12 s while CPU 3 took 1 LOC, 2 RES and 1 TIMER softirq".
pub fn describe(cpu: u32, a: &Attribution) -> String {
    let mut parts: Vec<String> = a.interrupts.iter().map(|(n, c)| format!("{c} {n}")).collect();
    parts.extend(a.softirqs.iter().map(|(n, c)| format!("{c} {n} softirq")));
    if let Some(cs) = a.context_switches.filter(|c| *c > 0) {
        parts.push(format!("{cs} context switch{}", if cs == 1 { "" } else { "es" }));
    }
    let what = match parts.len() {
        0 => "nothing the kernel counts (host/VM or SMI: hardware noise)".to_string(),
        1 => parts[0].clone(),
        n => format!("{} and {}", parts[..n - 1].join(", "), parts[n - 1]),
    };
    let noise = if a.noise_ns > 0 {
        format!(" (noise {} in that second)", fmt_us(a.noise_ns))
    } else {
        String::new()
    };
    format!("max {} at t={} s{noise} while CPU {cpu} took {what}", fmt_us(a.max_ns), a.second)
}

/// Which kernel tracers could attribute noise more precisely.
pub fn tracer_note(root: &Root) -> String {
    for dir in ["sys/kernel/tracing", "sys/kernel/debug/tracing"] {
        if let Ok(t) = root.read_trimmed(&format!("{dir}/available_tracers")) {
            let has: Vec<&str> =
                t.split_whitespace().filter(|x| *x == "osnoise" || *x == "timerlat").collect();
            return if has.is_empty() {
                format!("/{dir} is mounted but offers no osnoise/timerlat tracer (CONFIG_OSNOISE_TRACER off): attribution uses /proc counters only")
            } else {
                format!("/{dir} offers {}: `lowlat measure noise --tracer` attributes every gap to the IRQs, softirqs and threads that ran in it; this run attributes from /proc counters", has.join(" and "))
            };
        }
    }
    "tracefs is not mounted (or the osnoise/timerlat tracers are not built): attribution uses /proc/interrupts, /proc/softirqs and context switches only".into()
}

/// A warning when a FIFO spinner would be stalled by RT throttling.
pub fn rt_throttling_note(
    policy_rt: bool,
    rt_runtime_us: Option<&str>,
    rt_period_us: Option<&str>,
) -> Option<String> {
    if !policy_rt {
        return None;
    }
    let runtime: i64 = rt_runtime_us?.trim().parse().ok()?;
    if runtime < 0 {
        return None;
    }
    let period = rt_period_us.and_then(|p| p.trim().parse::<i64>().ok()).unwrap_or(1_000_000);
    Some(format!(
        "RT throttling is on (sched_rt_runtime_us={runtime} of {period}): a FIFO spinner that never sleeps is stalled for up to {} ms every period, which shows up as noise; set /proc/sys/kernel/sched_rt_runtime_us to -1 for the test or use SCHED_OTHER",
        (period - runtime).max(0) / 1000
    ))
}

/// Run `measure noise`.
pub fn run(cfg: &NoiseConfig, observer: &mut dyn Observer) -> Result<LatencyResult, MeasureError> {
    let root = Root::live();
    let cpuinfo = root.read_string("proc/cpuinfo").unwrap_or_default();
    let counter = Counter::detect(&cpuinfo);
    let mut notes = Vec::new();
    if counter.source == Source::MonotonicRaw {
        notes.push("no invariant TSC (constant_tsc + nonstop_tsc): the loop reads CLOCK_MONOTONIC_RAW, whose floor is higher".into());
    }
    if cfg.tracer_note {
        notes.push(tracer_note(&root));
    }
    if let Some(n) = rt_throttling_note(
        cfg.common.policy.is_realtime(),
        root.read_trimmed("proc/sys/kernel/sched_rt_runtime_us").ok().as_deref(),
        root.read_trimmed("proc/sys/kernel/sched_rt_period_us").ok().as_deref(),
    ) {
        notes.push(n);
    }
    let seconds = cfg.common.duration.map(|d| d.as_secs().max(1));
    let threshold_ticks = counter.ticks(cfg.noise_threshold.as_nanos() as u64).max(1);
    let mut hook = Attributor::new(&cfg.common.cpus, true);
    // The fast table takes the gaps that can neither be noise nor breach a threshold.
    let breach_ticks = cfg.common.threshold_ns.map_or(u64::MAX, |t| counter.ticks(t));
    let fast = Some((threshold_ticks.min(breach_ticks), counter.mult()));
    let mut r =
        runner::run(results::Kind::Noise, &cfg.common, observer, &mut hook, notes, fast, |slot| {
            Monotonic.sleep_until(slot.start_ns);
            let floor_ticks = measure_floor(&counter, 100_000);
            let b = NoiseBounds {
                seconds,
                ticks_per_second: counter.hz,
                threshold_ticks,
                floor_ticks,
                stop_on_threshold: cfg.common.stop_on_threshold,
            };
            slot.rec.set_floor(counter.to_ns(floor_ticks));
            noise_loop(&counter, slot.rec, &b, slot.stop);
        })?;
    r.envelope.params.latency_mut().counter = Some(results::CounterParams {
        source: match counter.source {
            Source::Tsc => "tsc",
            Source::MonotonicRaw => "CLOCK_MONOTONIC_RAW",
        }
        .into(),
        hz: counter.hz,
    });
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn description_names_what_moved() {
        let a = Attribution {
            second: 12,
            max_ns: 37_400,
            noise_ns: 40_000,
            interrupts: vec![("LOC".into(), 1), ("RES".into(), 2), ("24:virtio3-rx".into(), 1)],
            softirqs: vec![],
            context_switches: Some(0),
            text: String::new(),
        };
        assert_eq!(
            describe(3, &a),
            "max 37 µs at t=12 s (noise 40 µs in that second) while CPU 3 took 1 LOC, 2 RES and 1 24:virtio3-rx"
        );
        let quiet = Attribution { max_ns: 1_500, ..Attribution::default() };
        assert!(describe(1, &quiet).contains("hardware noise"));
    }

    #[test]
    fn tracer_note_says_what_tracefs_offers() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        assert!(tracer_note(&root).starts_with("tracefs is not mounted"));
        let t = dir.path().join("sys/kernel/tracing");
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("available_tracers"), "nop\n").unwrap();
        assert!(tracer_note(&root).contains("offers no osnoise/timerlat"));
        std::fs::write(t.join("available_tracers"), "timerlat osnoise function nop\n").unwrap();
        let n = tracer_note(&root);
        assert!(n.starts_with("/sys/kernel/tracing offers timerlat and osnoise"), "{n}");
    }

    #[test]
    fn rt_throttling_is_explained_only_when_it_applies() {
        assert!(rt_throttling_note(true, Some("950000"), Some("1000000"))
            .unwrap()
            .contains("50 ms"));
        assert!(rt_throttling_note(true, Some("-1"), None).is_none());
        assert!(rt_throttling_note(false, Some("950000"), None).is_none());
        assert!(rt_throttling_note(true, None, None).is_none());
    }

    #[test]
    fn noise_loop_runs_for_its_seconds_and_counts_gaps() {
        let c = Counter::with_hz(Source::MonotonicRaw, 1_000_000_000);
        let rec = Recorder::new(results::HistogramConfig::LATENCY, 4, None);
        let b = NoiseBounds {
            seconds: Some(1),
            ticks_per_second: 20_000_000,
            threshold_ticks: 1_000,
            floor_ticks: 20,
            stop_on_threshold: false,
        };
        let n = noise_loop(&c, &rec, &b, &AtomicBool::new(false));
        assert!(n > 1000, "{n}");
        assert_eq!(rec.count(), n);
    }
}
