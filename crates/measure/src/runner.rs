//! Orchestration shared by timer and noise: the main thread pinned to a housekeeping CPU,
//! memory locked, the PM QoS hold, one pinned thread per measured CPU started together,
//! per-second progress, periodic checkpoints, stop on Ctrl-C or threshold, and the final
//! [`LatencyResult`]. The per-kind hot loop is a closure; everything here is off the hot path.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

use results::{Envelope, HistogramConfig, HostContext, LatencyResult, LoadInfo, ThreadResult};
use util::sched::{self, Policy};

use crate::error::MeasureError;
use crate::procstat;
use crate::select::list;
use crate::series::{SeriesSet, FOLD_LAG_SECONDS};
use crate::shared::Recorder;
use crate::sys::{self, Clock, Monotonic};

/// What holding PM QoS at 0 does to a noise run, said in its result: the measured CPUs never
/// idle, so the hold acts only on the other CPUs, and through timer migration on the noise.
const PM_QOS_NOISE_NOTE: &str = "PM QoS held at 0 µs for the run (/dev/cpu_dma_latency): idle CPUs poll with their tick running, so housekeeping CPUs expire their own timers instead of handing them to the busy measured CPUs (timer migration); oslat does not hold it; a run without the hold measures the idle states as configured";

/// Settings every timer/noise run shares.
#[derive(Debug, Clone)]
pub struct Common {
    /// CPUs to measure, one thread each.
    pub cpus: Vec<u32>,
    /// Housekeeping CPU for the main thread; `None` picks the first online CPU not measured.
    pub main_cpu: Option<u32>,
    /// The host's online CPUs (from its model).
    pub online: Vec<u32>,
    /// Run length; `None` runs until stopped (or `loops`).
    pub duration: Option<Duration>,
    pub policy: Policy,
    pub priority: u32,
    pub threshold_ns: Option<u64>,
    pub stop_on_threshold: bool,
    /// Hold `/dev/cpu_dma_latency` at 0 while measuring.
    pub dma_latency: bool,
    pub host: HostContext,
    /// lowlat version string recorded as `tool`.
    pub tool: String,
    /// RFC 3339 UTC start time recorded as `started_at`.
    pub started_at: Option<String>,
    /// Parameters recorded in the result.
    pub params: results::LatencyParams,
    pub load: Option<LoadInfo>,
    /// Call [`Observer::checkpoint`] this often (long runs write results as they go).
    pub checkpoint_every: Option<Duration>,
    /// cyclictest's `-h N`: record the cycle numbers of the first N samples at or above N µs
    /// (its "Histogram Overflow at cycle number").
    pub histogram_us: Option<u32>,
}

/// The most cycle numbers kept per thread for `-h N` (cyclictest keeps N).
const MAX_OUTLIERS: usize = 100_000;

/// One CPU's live state, for progress lines.
#[derive(Debug, Clone, Copy)]
pub struct Live {
    pub cpu: u32,
    pub count: u64,
    pub max_ns: u64,
    pub overruns: u64,
}

/// Receives progress while a run goes on (all calls on the main thread).
pub trait Observer {
    /// Once a second.
    fn tick(&mut self, _elapsed: Duration, _live: &[Live]) {}
    /// Every `checkpoint_every`, with a partial result.
    fn checkpoint(&mut self, _partial: &LatencyResult) {}
}

/// Per-second hook for kind-specific bookkeeping (noise attribution), on the main thread.
pub(crate) trait SecondHook {
    fn second(&mut self, sec: u64, recs: &[Recorder], tids: &[u32]);
    fn finish(&mut self, threads: &mut [ThreadResult]);
}

/// What a measuring thread gets.
pub(crate) struct Slot<'a> {
    pub rec: &'a Recorder,
    /// Shared start instant on `CLOCK_MONOTONIC`.
    pub start_ns: u64,
    pub stop: &'a AtomicBool,
}

/// The main thread's CPU: the requested one, else the first online CPU not measured.
pub fn pick_main_cpu(requested: Option<u32>, measured: &[u32], online: &[u32]) -> Option<u32> {
    requested.or_else(|| online.iter().copied().find(|c| !measured.contains(c)))
}

/// Longest run the per-minute breach counts cover (a ring): runs longer than a day keep their
/// last day, so memory does not grow with run length. The per-second series is bounded
/// separately ([`crate::series`]).
pub const MAX_SERIES_SECONDS: usize = 24 * 3600;

/// Stack of each measuring thread: small, because `mlockall` makes it resident; the first
/// 128 KiB are prefaulted.
pub const THREAD_STACK: usize = 256 * 1024;

fn seconds_for(d: Option<Duration>) -> usize {
    match d {
        Some(d) => (d.as_secs() as usize + 2).min(MAX_SERIES_SECONDS),
        None => MAX_SERIES_SECONDS,
    }
}

/// Run `body` on one thread per CPU and collect the result.
pub(crate) fn run<F>(
    kind: results::Kind,
    c: &Common,
    observer: &mut dyn Observer,
    hook: &mut dyn SecondHook,
    mut notes: Vec<String>,
    fast_table: Option<(u64, u64)>,
    body: F,
) -> Result<LatencyResult, MeasureError>
where
    F: Fn(&Slot<'_>) + Sync,
{
    if c.cpus.is_empty() {
        return Err(MeasureError::NoCpus);
    }
    if let Some(&cpu) = c.cpus.iter().find(|cpu| !c.online.contains(cpu)) {
        return Err(MeasureError::CpuOffline { cpu, online: list(&c.online) });
    }
    let main_cpu = pick_main_cpu(c.main_cpu, &c.cpus, &c.online);
    match main_cpu {
        Some(m) if c.cpus.contains(&m) => notes
            .push(format!("main thread shares measured CPU {m}: it wakes there and adds noise")),
        Some(m) => {
            if let Err(e) = sched::pin_current(m) {
                notes.push(format!("could not pin the main thread to CPU {m}: {e}"));
            }
        }
        None => notes
            .push("no housekeeping CPU left for the main thread (every CPU is measured)".into()),
    }
    let mut realtime = c.policy.is_realtime();
    // Before any measuring thread runs: freeing memory later (checkpoints, snapshots) must not
    // send TLB-flush IPIs into them.
    sys::keep_freed_memory();
    if let Err(e) = sys::lock_memory() {
        realtime = false;
        notes.push(format!(
            "NOT REAL-TIME: mlockall failed ({e}): page faults can show up as latency"
        ));
    }
    let mut held = c.clone();
    let _dma = if c.dma_latency {
        match sys::hold_dma_latency(0) {
            Ok(h) => {
                if kind == results::Kind::Noise {
                    // Measured on a 2-vCPU KVM guest against oslat (docs/benchmarks/measure.md):
                    // the hold is why lowlat counted fewer >= 31 µs gaps than oslat 2.4.
                    notes.push(PM_QOS_NOISE_NOTE.into());
                }
                Some(h)
            }
            Err(e) => {
                notes.push(format!(
                    "/dev/cpu_dma_latency not held ({e}): deep C-state exits are included"
                ));
                held.params.dma_latency = Some(false);
                None
            }
        }
    } else {
        None
    };
    let c = &held;
    let threshold = c.threshold_ns;
    let recs: Vec<Recorder> = c
        .cpus
        .iter()
        .map(|_| {
            let secs = seconds_for(c.duration);
            let noise_secs = if kind == results::Kind::Noise { secs } else { 1 };
            let mut r = Recorder::new(HistogramConfig::LATENCY, secs, threshold)
                .with_noise_series(noise_secs);
            if let Some(n) = c.histogram_us {
                r = r.with_outliers(u64::from(n) * 1000, (n as usize).min(MAX_OUTLIERS));
            }
            match fast_table {
                Some((ticks, mult)) => r.with_fast_table(ticks, mult),
                None => r,
            }
        })
        .collect();
    // The run's seconds with a margin (the last partial second, the start's 50 ms).
    let planned = c.duration.map(|d| d.as_secs() + 2);
    let mut series = SeriesSet::new(c.cpus.len(), kind == results::Kind::Noise, planned);
    let tids: Vec<AtomicU32> = c.cpus.iter().map(|_| AtomicU32::new(0)).collect();
    let stop = AtomicBool::new(false);
    let ready = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let rt_failed = AtomicBool::new(false);
    let pin_failed = AtomicBool::new(false);
    let start_cell = std::sync::atomic::AtomicU64::new(0);
    let clock = Monotonic;
    let mut elapsed_ns = 0;
    let mut seconds_seen = 0u64;
    std::thread::scope(|s| {
        for (i, &cpu) in c.cpus.iter().enumerate() {
            let (rec, tid) = (&recs[i], &tids[i]);
            let (stop, ready, done, start_cell) = (&stop, &ready, &done, &start_cell);
            let (rt_failed, pin_failed, body) = (&rt_failed, &pin_failed, &body);
            let policy = c.policy;
            let prio = c.priority;
            let spawned = std::thread::Builder::new()
                .name(format!("lowlat-{kind}-{cpu}"))
                .stack_size(THREAD_STACK)
                .spawn_scoped(s, move || {
                    tid.store(sched::gettid(), Ordering::SeqCst);
                    // Ctrl-C goes to the main thread, which sleeps until its next sample and
                    // must wake at once; the measuring loop never runs the handler.
                    util::signal::block_in_this_thread();
                    if sched::pin_current(cpu).is_err() {
                        pin_failed.store(true, Ordering::SeqCst);
                    }
                    if policy.is_realtime() && sched::set_policy(0, policy, prio).is_err() {
                        rt_failed.store(true, Ordering::SeqCst);
                    }
                    sys::prefault_stack();
                    ready.fetch_add(1, Ordering::SeqCst);
                    let mut start = start_cell.load(Ordering::SeqCst);
                    while start == 0 && !stop.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(1));
                        start = start_cell.load(Ordering::SeqCst);
                    }
                    if start != 0 {
                        body(&Slot { rec, start_ns: start, stop });
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                });
            if spawned.is_err() {
                stop.store(true, Ordering::SeqCst);
                done.fetch_add(1, Ordering::SeqCst);
                ready.fetch_add(1, Ordering::SeqCst);
            }
        }
        while ready.load(Ordering::SeqCst) < c.cpus.len() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let start = clock.now() + 50_000_000;
        start_cell.store(start, Ordering::SeqCst);
        let tid_vals: Vec<u32> = tids.iter().map(|t| t.load(Ordering::SeqCst)).collect();
        hook.second(0, &recs, &tid_vals);
        let mut last_checkpoint = 0u64;
        let checkpoint_ns = c.checkpoint_every.map(|e| e.as_nanos() as u64);
        while done.load(Ordering::SeqCst) < c.cpus.len() {
            // Wake once per second (20 ms after it ends, to sample its counters), or for a
            // checkpoint, or at once on Ctrl-C: every wake-up of this housekeeping CPU changes
            // where the kernel runs its timers (an idle CPU hands them to a busy measured one),
            // so the run's own noise on the system stays as small as its sampling needs.
            let mut wake = start + (seconds_seen + 1) * 1_000_000_000 + 20_000_000;
            if let Some(every) = checkpoint_ns {
                wake = wake.min(start + last_checkpoint + every);
            }
            clock.sleep_until_or_signal(wake);
            if util::signal::interrupted() {
                stop.store(true, Ordering::SeqCst);
            }
            let now = clock.now();
            elapsed_ns = now.saturating_sub(start);
            // Second `k` is complete 20 ms after its end: sample counters then.
            while elapsed_ns >= (seconds_seen + 1) * 1_000_000_000 + 20_000_000 {
                seconds_seen += 1;
                hook.second(seconds_seen, &recs, &tid_vals);
                series.fold_until(seconds_seen.saturating_sub(FOLD_LAG_SECONDS), &recs);
                let live: Vec<Live> = c
                    .cpus
                    .iter()
                    .zip(&recs)
                    .map(|(&cpu, r)| Live {
                        cpu,
                        count: r.count(),
                        max_ns: r.max(),
                        overruns: r.overruns(),
                    })
                    .collect();
                observer.tick(Duration::from_nanos(elapsed_ns), &live);
            }
            if let Some(every) = checkpoint_ns {
                if elapsed_ns - last_checkpoint >= every {
                    last_checkpoint = elapsed_ns;
                    let partial =
                        build(kind, c, &recs, &series, elapsed_ns, true, realtime, &notes, None);
                    observer.checkpoint(&partial);
                }
            }
        }
        elapsed_ns = clock.now().saturating_sub(start);
        // The last (partial) second, whose counters were not sampled inside the loop.
        hook.second(seconds_seen + 1, &recs, &tid_vals);
    });
    sys::unlock_memory();
    let refused = rt_failed.load(Ordering::SeqCst);
    let cause = refused.then(|| {
        host::rt::diagnose(&host::rt::gather(&host::Root::live(), "self"), c.priority, true)
    });
    let cause = cause.flatten();
    if refused {
        realtime = false;
        let (why, fix) =
            cause.as_ref().map_or(("cause not found".to_string(), String::new()), |c| {
                (c.message.clone(), format!(" Fix: {}", c.fix))
            });
        notes.insert(
            0,
            format!(
                "NOT REAL-TIME: could not set {} priority {}: {why}; measured with SCHED_OTHER.{fix}",
                c.policy.kernel_name(),
                c.priority
            ),
        );
    }
    if pin_failed.load(Ordering::SeqCst) {
        notes.push("some measuring threads could not be pinned to their CPU".into());
    }
    let interrupted = util::signal::interrupted();
    let stopped_on_threshold = c.stop_on_threshold && stop.load(Ordering::SeqCst) && !interrupted;
    if interrupted {
        notes.push("interrupted: the numbers cover the time measured before Ctrl-C".into());
    }
    if stopped_on_threshold {
        notes.push("stopped on threshold (--stop-on-threshold)".into());
    }
    let mut r = build(
        kind,
        c,
        &recs,
        &series,
        elapsed_ns,
        interrupted || stopped_on_threshold,
        realtime,
        &notes,
        Some(hook),
    );
    r.envelope.duration_ns = elapsed_ns;
    // The tool's own footprint (VmHWM), so memory claims can be checked on any run.
    r.envelope.params.latency_mut().tool_peak_rss_bytes =
        procstat::peak_rss_bytes(&host::Root::live());
    let rt_ok = !refused && c.policy.is_realtime();
    r.envelope.scheduling = Some(results::Scheduling {
        requested: c.policy,
        ran: if refused { Policy::Other } else { c.policy },
        priority: rt_ok.then_some(c.priority),
        refused: cause,
        rt_cgroup: None,
    });
    if refused {
        // The parameters say what ran; what was asked for is kept beside it.
        let p = r.envelope.params.latency_mut();
        p.requested_policy = Some(c.policy);
        p.policy = Some(Policy::Other);
        p.priority = None;
    }
    for (t, tid) in r.threads.iter_mut().zip(&tids) {
        t.tid = Some(tid.load(Ordering::SeqCst));
        t.priority = Some(if rt_ok { c.priority } else { 0 });
    }
    Ok(r)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    kind: results::Kind,
    c: &Common,
    recs: &[Recorder],
    series: &SeriesSet,
    elapsed_ns: u64,
    partial: bool,
    realtime: bool,
    notes: &[String],
    hook: Option<&mut dyn SecondHook>,
) -> LatencyResult {
    let mut envelope = Envelope::new(kind, &c.tool);
    envelope.partial = partial;
    envelope.duration_ns = elapsed_ns;
    envelope.host = c.host.clone();
    envelope.params = results::Params::Latency(c.params.clone());
    envelope.started_at = c.started_at.clone();
    let secs = (elapsed_ns / 1_000_000_000) as usize
        + usize::from(!elapsed_ns.is_multiple_of(1_000_000_000));
    let mut breaches = Vec::new();
    let (series_step_s, points) = series.snapshot(recs, secs as u64);
    let minute_step = Recorder::common_minute_step(recs, secs);
    let mut threads: Vec<ThreadResult> = c
        .cpus
        .iter()
        .zip(recs)
        .zip(points)
        .map(|((&cpu, rec), (per_second_max_ns, noise))| {
            let h = rec.snapshot();
            let (worst, breach_count) = rec.breaches(Some(cpu));
            breaches.extend(worst);
            ThreadResult {
                cpu: Some(cpu),
                stats: h.summary(),
                overruns: rec.overruns(),
                histogram: h.to_data(),
                per_second_max_ns,
                per_second_noise_ns: if kind == results::Kind::Noise { noise } else { Vec::new() },
                total_noise_ns: (kind == results::Kind::Noise).then(|| rec.total_noise()),
                floor_ns: (kind == results::Kind::Noise).then(|| rec.floor()),
                last_ns: Some(rec.last.load(Ordering::Relaxed)),
                priority: Some(if c.policy.is_realtime() { c.priority } else { 0 }),
                breach_count: c.threshold_ns.map(|_| breach_count),
                breaches_per_minute: rec.breaches_per_minute(secs, minute_step),
                breaches_step_min: (minute_step > 1).then_some(minute_step),
                outliers: c.histogram_us.zip(rec.outliers()).map(|(n, (cycles, count))| {
                    results::latency::Outliers {
                        at_or_above_ns: u64::from(n) * 1000,
                        count,
                        cycles,
                    }
                }),
                ..ThreadResult::default()
            }
        })
        .collect();
    let breaches = results::latency::worst_breaches(breaches, crate::shared::MAX_BREACHES);
    if let Some(h) = hook {
        h.finish(&mut threads);
    }
    LatencyResult {
        envelope,
        realtime,
        series_step_s,
        threads,
        breaches,
        load: c.load.clone(),
        notes: notes.to_vec(),
        tracer: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common(cpus: &[u32], secs: u64, threshold_ns: Option<u64>) -> Common {
        Common {
            cpus: cpus.to_vec(),
            main_cpu: None,
            online: cpus.to_vec(),
            duration: Some(std::time::Duration::from_secs(secs)),
            policy: Policy::Other,
            priority: 0,
            threshold_ns,
            stop_on_threshold: false,
            dma_latency: false,
            host: HostContext::default(),
            tool: "lowlat test".into(),
            started_at: None,
            params: results::LatencyParams::default(),
            load: None,
            checkpoint_every: None,
            histogram_us: None,
        }
    }

    /// Noise recorders as the noise run makes them: a 3 GHz counter's fast table for gaps
    /// under 1 µs.
    /// The result of a whole run of `secs` seconds (not partial, not real-time: neither
    /// matters to the size and series these tests check).
    fn finished(
        kind: results::Kind,
        c: &Common,
        recs: &[Recorder],
        series: &SeriesSet,
        secs: u64,
    ) -> LatencyResult {
        build(kind, c, recs, series, secs * 1_000_000_000, false, false, &[], None)
    }

    fn noise_recorders(n: usize, secs: u64, threshold_ns: Option<u64>) -> (Vec<Recorder>, u64) {
        let mult = ((1_000_000_000u128 << 32) / 3_000_000_000u128) as u64;
        let recs = (0..n)
            .map(|_| {
                Recorder::new(HistogramConfig::LATENCY, secs as usize + 2, threshold_ns)
                    .with_noise_series(secs as usize + 2)
                    .with_fast_table(3_000, mult)
            })
            .collect();
        (recs, mult)
    }

    /// The main thread's schedule over a whole run: second `s` of every thread is recorded
    /// (by `second`), then what ended [`FOLD_LAG_SECONDS`] ago is folded.
    fn run_seconds(
        recs: &[Recorder],
        secs: u64,
        planned: u64,
        noise: bool,
        second: impl Fn(usize, &Recorder, u64),
    ) -> SeriesSet {
        let mut series = SeriesSet::new(recs.len(), noise, Some(planned));
        for s in 0..secs {
            for (i, r) in recs.iter().enumerate() {
                second(i, r, s);
            }
            series.fold_until((s + 1).saturating_sub(FOLD_LAG_SECONDS), recs);
        }
        series
    }

    /// A run longer than its budget (64 CPUs × 6 h of noise: 2.8 M per-second values for
    /// 262,144 points) gets 15 s points; each is the maximum of its seconds, so the series'
    /// maximum is the thread's maximum (the fast path's gaps included), and the noise
    /// series still adds up to the thread's total noise.
    #[test]
    fn a_run_longer_than_its_budget_keeps_the_worst_in_each_point() {
        let (secs, n) = (6 * 3600u64, 64usize);
        let cpus: Vec<u32> = (0..n as u32).collect();
        let (recs, _) = noise_recorders(n, secs, None);
        let gap = |i: usize, s: u64| 100 + (s * 7_919 + i as u64 * 104_729) % 2_900;
        let series = run_seconds(&recs, secs, secs + 2, true, |i, r, s| {
            let ticks = gap(i, s);
            assert!(r.record_fast(ticks));
            r.raise_second_fast(s as usize, ticks);
            if (s + i as u64).is_multiple_of(997) {
                // A slow-path gap now and then (an interruption of 5-45 µs).
                let ns = 5_000 + (s % 41) * 1_000;
                r.record_at(ns, s as usize, || s * 1_000_000_000);
                r.add_noise(s as usize, ns);
            }
        });
        let c = common(&cpus, secs, None);
        let r = finished(results::Kind::Noise, &c, &recs, &series, secs);
        assert_eq!(r.series_step_s, 15);
        let points: usize =
            r.threads.iter().map(|t| t.per_second_max_ns.len() + t.per_second_noise_ns.len()).sum();
        assert!(points <= crate::series::SERIES_BUDGET_POINTS, "{points}");
        for (i, t) in r.threads.iter().enumerate() {
            assert_eq!(t.per_second_max_ns.len(), (secs / 15) as usize);
            assert_eq!(t.per_second_max_ns.iter().max().copied(), Some(t.stats.max_ns), "CPU {i}");
            assert_eq!(t.per_second_noise_ns.iter().sum::<u64>(), t.total_noise_ns.unwrap_or(0));
            // Point 7 is the max of seconds 105..120, fast gaps and slow ones alike.
            let want = (105..120)
                .map(|s| {
                    let slow = (s + i as u64).is_multiple_of(997).then(|| 5_000 + (s % 41) * 1_000);
                    recs[i].fast_ns_for_test(gap(i, s)).max(slow.unwrap_or(0))
                })
                .max();
            assert_eq!(Some(t.per_second_max_ns[7]), want);
        }
    }

    /// The documented size: a synthetic 256-CPU × 12 h noise result (every CPU with ~250
    /// non-empty histogram buckets, a breach every 100 s) serializes to under 5 MB, of
    /// which the series are under 2.5 MB whatever the values (the histograms, ~45 bytes per
    /// non-empty bucket and CPU, are the rest).
    #[test]
    fn a_256_cpu_12_hour_result_stays_a_few_mb() {
        let (secs, n) = (12 * 3600u64, 256usize);
        let cpus: Vec<u32> = (0..n as u32).collect();
        let (recs, _) = noise_recorders(n, secs, Some(40_000));
        let series = run_seconds(&recs, secs, secs + 2, true, |i, r, s| {
            let x = s * 7_919 + i as u64 * 104_729;
            r.record_fast(300 + x % 2_000);
            r.raise_second_fast(s as usize, 300 + x % 2_000);
            // One interruption a second: 1-20 µs, and 40-90 µs every 100 s.
            let ns =
                if x.is_multiple_of(100) { 40_000 + x % 50 * 1_000 } else { 1_000 + x % 19_000 };
            r.record_at(ns, s as usize, || s * 1_000_000_000 + x % 1_000_000_000);
            r.add_noise(s as usize, ns);
        });
        let c = common(&cpus, secs, Some(40_000));
        let r = finished(results::Kind::Noise, &c, &recs, &series, secs);
        assert_eq!(r.series_step_s, 120);
        let json = serde_json::to_string(&r).unwrap_or_default();
        let series_bytes: usize = r
            .threads
            .iter()
            .map(|t| {
                let a = serde_json::to_string(&t.per_second_max_ns).unwrap_or_default();
                let b = serde_json::to_string(&t.per_second_noise_ns).unwrap_or_default();
                a.len() + b.len()
            })
            .sum();
        let buckets: usize = r.threads.iter().map(|t| t.histogram.buckets.len()).sum();
        eprintln!(
            "256 CPUs × 12 h noise: {} bytes of JSON, series {series_bytes} bytes, {} buckets per CPU",
            json.len(),
            buckets / n
        );
        assert!(series_bytes < 2_500_000, "{series_bytes}");
        assert!(json.len() < 5_000_000, "{}", json.len());
    }

    /// The bound on breaches, end to end: 256 threads that each breached every 20 ms for 20
    /// minutes give a result listing the worst 1000 overall (in time order), every breach
    /// counted per thread and per minute, and a breach part of the JSON that stays small
    /// (it grows by one number per CPU-minute, not per breach).
    #[test]
    fn breaches_stay_bounded_for_many_cpus_and_long_runs() {
        let secs = 20 * 60;
        let cpus: Vec<u32> = (0..256).collect();
        let c = common(&cpus, secs, Some(50_000));
        let recs: Vec<Recorder> = cpus
            .iter()
            .map(|cpu| {
                let r = Recorder::new(HistogramConfig::LATENCY, secs as usize, c.threshold_ns);
                for i in 0..secs * 50 {
                    let v = 50_000 + (i * 7_919 + u64::from(*cpu) * 104_729) % 1_000_000;
                    r.record(v, i * 20_000_000);
                }
                r
            })
            .collect();
        let mut series = SeriesSet::new(cpus.len(), false, Some(secs));
        series.fold_until(secs, &recs);
        let r = finished(results::Kind::Timer, &c, &recs, &series, secs);
        assert_eq!(r.breaches.len(), crate::shared::MAX_BREACHES);
        assert_eq!(r.breach_total(), 256 * secs * 50);
        assert!(r.breaches.windows(2).all(|w| w[0].t_ns <= w[1].t_ns), "time order");
        let all_worst = r.breaches.iter().map(|b| b.value_ns).min().unwrap_or(0);
        assert!(all_worst > 1_000_000, "only the worst are kept: {all_worst}");
        for t in &r.threads {
            assert_eq!(t.breaches_per_minute, vec![3_000; 20]);
            assert_eq!(t.breach_count, Some(secs * 50));
        }
        let bytes = |v: serde_json::Value| v.to_string().len();
        let listed = bytes(serde_json::to_value(&r.breaches).unwrap_or_default());
        let per_minute: usize = r
            .threads
            .iter()
            .map(|t| bytes(serde_json::to_value(&t.breaches_per_minute).unwrap_or_default()))
            .sum();
        // 1000 × ~55 bytes, and ~5 bytes per CPU-minute: 256 CPUs × 12 h would be ~0.9 MB.
        assert!(listed < 64_000, "{listed} bytes");
        assert!(per_minute < 256 * 20 * 6, "{per_minute} bytes");
    }

    /// An open-ended run past a day (recorders sized for [`MAX_SERIES_SECONDS`]): the
    /// per-minute breach counts cover the whole run at 2 minutes per entry, each entry
    /// counting its own minutes, and the result says so (`breaches_step_min`).
    #[test]
    fn breach_counts_of_a_run_past_a_day_cover_it_all() {
        let secs = 30 * 3600u64;
        let cpus = [0u32, 1];
        let c = Common { duration: None, ..common(&cpus, secs, Some(50_000)) };
        let recs: Vec<Recorder> = cpus
            .iter()
            .map(|_| Recorder::new(HistogramConfig::LATENCY, seconds_for(None), c.threshold_ns))
            .collect();
        // CPU 0 breaches once in every 10th minute, CPU 1 once in minute 1,700 only.
        for m in (0..secs / 60).step_by(10) {
            recs[0].record(60_000, m * 60_000_000_000 + 1);
        }
        recs[1].record(70_000, 1_700 * 60_000_000_000);
        let mut series = SeriesSet::new(cpus.len(), false, None);
        series.fold_until(secs, &recs);
        let r = finished(results::Kind::Timer, &c, &recs, &series, secs);
        let (a, b) = (&r.threads[0], &r.threads[1]);
        assert_eq!((a.breaches_step_min, b.breaches_step_min), (Some(2), Some(2)));
        assert_eq!((a.breaches_per_minute.len(), b.breaches_per_minute.len()), (900, 900));
        let want: Vec<u64> = (0..900).map(|e| u64::from(e % 5 == 0)).collect();
        assert_eq!(a.breaches_per_minute, want);
        assert_eq!(a.breaches_per_minute.iter().sum::<u64>(), a.breach_count.unwrap_or(0));
        assert_eq!(b.breaches_per_minute.iter().position(|&n| n > 0), Some(850));
        assert_eq!(b.breaches_per_minute.iter().sum::<u64>(), 1);
    }

    #[test]
    fn main_cpu_is_never_a_measured_one_when_possible() {
        assert_eq!(pick_main_cpu(None, &[1], &[0, 1]), Some(0));
        assert_eq!(pick_main_cpu(None, &[0], &[0, 1]), Some(1));
        assert_eq!(pick_main_cpu(None, &[0, 1], &[0, 1]), None);
        assert_eq!(pick_main_cpu(Some(3), &[1], &[0, 1]), Some(3));
    }
}
