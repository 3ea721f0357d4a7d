//! Measuring with the kernel's own tracers, when tracefs offers them (DESIGN: "Tracer
//! modes"): timer latency through `timerlat` (the IRQ and the thread latency of a per-CPU
//! kernel timer, as rtla reports them), OS noise through `osnoise` (noise per source and, for
//! every gap above the threshold, what ran in it: [`attribution`]), and hardware/firmware
//! latency through `hwlat` ([`hwlat`]).
//!
//! The tracer's kernel threads measure; lowlat only configures tracefs, reads `trace_pipe`
//! on a housekeeping CPU, and files each sample into the same recorders, series and result
//! model as its own threads' samples. A private instance holds the tracer; the osnoise
//! settings it shares with every other instance (`osnoise/*`, `tracing_thresh`) are changed
//! for the run and put back as found — at the end, on an error, on Ctrl-C ([`tracefs`]).

pub mod attribution;
pub mod hwlat;
pub mod parse;
pub mod tracefs;

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use results::tracer::{IrqLatency, TracerName, TracerRun};
use results::{HistogramConfig, LatencyResult};
use util::sched::{self, Policy};

use crate::error::MeasureError;
use crate::runner::{self, pick_main_cpu, Common, Live, Observer};
use crate::select::list;
use crate::series::{SeriesSet, FOLD_LAG_SECONDS};
use crate::shared::Recorder;
use crate::sys::{self, Clock, Monotonic};

/// A latency run on a tracer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `timerlat` with this timer period.
    Timerlat { period: Duration },
    /// `osnoise`: gaps at or above `threshold` are noise (`tracing_thresh`).
    Osnoise { threshold: Duration },
}

impl Mode {
    pub fn tracer(self) -> TracerName {
        match self {
            Mode::Timerlat { .. } => TracerName::Timerlat,
            Mode::Osnoise { .. } => TracerName::Osnoise,
        }
    }
    fn kind(self) -> results::Kind {
        match self {
            Mode::Timerlat { .. } => results::Kind::Timer,
            Mode::Osnoise { .. } => results::Kind::Noise,
        }
    }
}

/// Whether `tracer` can run on the live host: the tracefs directory, or why not.
pub fn available(tracer: TracerName) -> Result<String, tracefs::Unavailable> {
    tracefs::check(&host::Root::live(), tracer.as_str())
}

/// [`available`], after mounting tracefs when the kernel has it and nothing is mounted (it
/// stays mounted while the guard lives and is unmounted when it drops).
pub fn prepare(
    tracer: TracerName,
) -> Result<(String, Option<tracefs::Mounted>), tracefs::Unavailable> {
    let mounted = tracefs::mount_if_needed().ok().flatten();
    available(tracer).map(|d| (d, mounted))
}

/// The policy the tracer's kernel threads (`timerlat/N`, `osnoise/N`) run with, as found.
fn kthread_policy(name: TracerName, cpus: &[u32]) -> Option<(Policy, u32)> {
    let root = host::Root::live();
    for pid in root.list_dir("proc").unwrap_or_default() {
        let Ok(pid_n) = pid.parse::<i32>() else { continue };
        let Ok(comm) = root.read_string(&format!("proc/{pid}/comm")) else { continue };
        let comm = comm.trim();
        let Some(cpu) = comm.strip_prefix(&format!("{name}/")).and_then(|c| c.parse::<u32>().ok())
        else {
            continue;
        };
        if !cpus.contains(&cpu) {
            continue;
        }
        // SAFETY: sched_getscheduler/sched_getparam only read the task's settings into `p`.
        let (pol, prio) = unsafe {
            let pol = libc::sched_getscheduler(pid_n);
            let mut p = libc::sched_param { sched_priority: 0 };
            libc::sched_getparam(pid_n, &mut p);
            (pol, p.sched_priority)
        };
        let policy = match pol {
            libc::SCHED_FIFO => Policy::Fifo,
            libc::SCHED_RR => Policy::Rr,
            _ => Policy::Other,
        };
        return Some((policy, prio.max(0) as u32));
    }
    None
}

/// Run a timer (`timerlat`) or noise (`osnoise`) measurement on the tracer. `tracefs_dir`
/// comes from [`available`]; the caller decides what to do when the tracer is missing.
pub fn run(
    mode: Mode,
    c: &Common,
    tracefs_dir: &str,
    save_trace: Option<&Path>,
    observer: &mut dyn Observer,
) -> Result<LatencyResult, MeasureError> {
    if c.cpus.is_empty() {
        return Err(MeasureError::NoCpus);
    }
    // What a killed run left (its settings, its instance) first: its instance would look busy.
    let mut notes = tracefs::recover_stale(Path::new(tracefs::JOURNAL_DIR), Path::new(tracefs_dir));
    let root = host::Root::live();
    if let Some(who) = tracefs::osnoise_user(&root, tracefs_dir, None) {
        return Err(MeasureError::TracerBusy { who });
    }
    let main_cpu = pick_main_cpu(c.main_cpu, &c.cpus, &c.online);
    match main_cpu {
        Some(m) if c.cpus.contains(&m) => notes.push(format!(
            "the trace reader shares measured CPU {m}: it wakes there and adds noise"
        )),
        Some(m) => {
            if let Err(e) = sched::pin_current(m) {
                notes.push(format!("could not pin the trace reader to CPU {m}: {e}"));
            }
        }
        None => notes.push("no housekeeping CPU left for the trace reader".into()),
    }
    let mut held = c.clone();
    let _dma = if c.dma_latency {
        match sys::hold_dma_latency(0) {
            Ok(h) => Some(h),
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
    let dir = Path::new(tracefs_dir);
    let name = mode.tracer();

    // Global settings, put back as found when `settings` drops (also on `?` and Ctrl-C).
    let mut settings = tracefs::Settings::journaled(Path::new(tracefs::JOURNAL_DIR));
    let osn = dir.join("osnoise");
    settings.set(&osn.join("cpus"), &list(&c.cpus))?;
    settings.set(&osn.join("stop_tracing_us"), "0")?;
    settings.set(&osn.join("stop_tracing_total_us"), "0")?;
    settings.set(&osn.join("print_stack"), "0")?;
    let (period_us, runtime_us, threshold_ns) = match mode {
        Mode::Timerlat { period } => {
            let us = period.as_micros().max(1) as u64;
            settings.set(&osn.join("timerlat_period_us"), &us.to_string())?;
            (Some(us), None, None)
        }
        Mode::Osnoise { threshold } => {
            settings.set(&osn.join("period_us"), "1000000")?;
            settings.set(&osn.join("runtime_us"), "1000000")?;
            // tracing_thresh is in µs; 0 would mean the tracer's default (5 µs).
            let us = threshold.as_micros().max(1) as u64;
            settings.set(&dir.join("tracing_thresh"), &us.to_string())?;
            (Some(1_000_000), Some(1_000_000), Some(us * 1000))
        }
    };
    let instance = tracefs::Instance::create(dir)?;
    // Nothing is recorded until the window opens (as rtla does): setting the tracer starts its
    // threads at once, and what they report before `start` below — the priorities, the
    // recorders, under emulation seconds — would count in a window that did not hold it.
    instance.set("tracing_on", "0")?;
    // The instance's ring buffer keeps the kernel's default size (1.4 MB per CPU: tens of
    // seconds of timerlat at 1 kHz): resizing it costs an IPI round on every CPU, the measured
    // ones included, and memory on every possible CPU; lost events would be counted.
    if matches!(mode, Mode::Osnoise { .. }) {
        instance.set("events/osnoise/enable", "1")?;
    }
    instance.set("current_tracer", name.as_str())?;
    let policy = kthread_policy(name, &c.cpus);

    let kind = mode.kind();
    let secs = c.duration.map_or(runner::MAX_SERIES_SECONDS, |d| {
        (d.as_secs() as usize + 2).min(runner::MAX_SERIES_SECONDS)
    });
    let noise_secs = if kind == results::Kind::Noise { secs } else { 1 };
    let new_rec = || {
        Recorder::new(HistogramConfig::LATENCY, secs, c.threshold_ns).with_noise_series(noise_secs)
    };
    let recs: Vec<Recorder> = c.cpus.iter().map(|_| new_rec()).collect();
    let irq_recs: Vec<Recorder> = c.cpus.iter().map(|_| new_rec()).collect();
    let planned = c.duration.map(|d| d.as_secs() + 2);
    let mut series = SeriesSet::new(c.cpus.len(), kind == results::Kind::Noise, planned);
    let stop = AtomicBool::new(false);
    let reader_done = AtomicBool::new(false);
    let lost = AtomicU64::new(0);
    let clock = Monotonic;
    let mut saved = match save_trace {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p).map_err(|e| {
            MeasureError::Tracer {
                path: p.display().to_string(),
                why: format!("creating the trace copy: {e}"),
            }
        })?)),
        None => None,
    };
    // The window: from here to `tracing_on` 0 below is what the result's duration says.
    instance.set("tracing_on", "1")?;
    let start = clock.now();
    let _ = std::fs::write(instance.file("trace_marker"), "lowlat-start\n");
    let pipe = instance.file("trace_pipe");
    let mut elapsed_ns = 0u64;
    let mut measured_ns: Option<u64> = None;
    let mut seconds_seen = 0u64;
    let mut last_checkpoint = 0u64;
    let checkpoint_ns = c.checkpoint_every.map(|e| e.as_nanos() as u64);
    let duration_ns = c.duration.map(|d| d.as_nanos() as u64);

    let (read_result, attributor) = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            util::signal::block_in_this_thread();
            let mut feed = Feed::new(&c.cpus, &recs, &irq_recs, c.stop_on_threshold);
            let r = tracefs::read_pipe(&pipe, &stop, |l| {
                if let Some(w) = saved.as_mut() {
                    let _ = writeln!(w, "{l}");
                }
                if feed.line(l) {
                    stop.store(true, Ordering::SeqCst);
                }
            });
            if let Some(w) = saved.as_mut() {
                let _ = w.flush();
            }
            lost.store(feed.lost, Ordering::Relaxed);
            reader_done.store(true, Ordering::SeqCst);
            (r, feed.attr)
        });
        let mut stopping = false;
        while !reader_done.load(Ordering::SeqCst) {
            let mut wake = start + (seconds_seen + 1) * 1_000_000_000 + 20_000_000;
            if let Some(every) = checkpoint_ns {
                wake = wake.min(start + last_checkpoint + every);
            }
            if stopping {
                wake = clock.now() + 20_000_000;
            }
            clock.sleep_until_or_signal(wake);
            elapsed_ns = clock.now().saturating_sub(start);
            let over = duration_ns.is_some_and(|d| elapsed_ns >= d);
            if !stopping && (util::signal::interrupted() || over || stop.load(Ordering::SeqCst)) {
                // No new samples; the reader drains what the buffer holds, then ends. The run
                // measured until now: the drain is not part of it.
                let _ = instance.set("tracing_on", "0");
                measured_ns = Some(clock.now().saturating_sub(start));
                stop.store(true, Ordering::SeqCst);
                stopping = true;
            }
            while elapsed_ns >= (seconds_seen + 1) * 1_000_000_000 + 20_000_000 {
                seconds_seen += 1;
                series.fold_until(seconds_seen.saturating_sub(FOLD_LAG_SECONDS), &recs);
                let live: Vec<Live> = c
                    .cpus
                    .iter()
                    .zip(&recs)
                    .map(|(&cpu, r)| Live { cpu, count: r.count(), max_ns: r.max(), overruns: 0 })
                    .collect();
                observer.tick(Duration::from_nanos(elapsed_ns), &live);
            }
            if let Some(every) = checkpoint_ns {
                if !stopping && elapsed_ns - last_checkpoint >= every {
                    last_checkpoint = elapsed_ns;
                    let partial = runner::build(
                        kind, c, &recs, &series, elapsed_ns, true, true, &notes, None,
                    );
                    observer.checkpoint(&partial);
                }
            }
        }
        match reader.join() {
            Ok(v) => v,
            Err(_) => (
                Err(MeasureError::Tracer {
                    path: pipe.display().to_string(),
                    why: "the reader thread panicked".into(),
                }),
                attribution::Attributor::new(&[], 0),
            ),
        }
    });
    elapsed_ns = measured_ns.unwrap_or(elapsed_ns);
    drop(instance);
    let failed = settings.restore().to_vec();
    drop(settings);
    read_result?;

    let interrupted = util::signal::interrupted();
    let stopped_on_threshold =
        c.stop_on_threshold && !interrupted && duration_ns.is_none_or(|d| elapsed_ns < d);
    if interrupted {
        notes.push("interrupted: the numbers cover the time measured before Ctrl-C".into());
    }
    if stopped_on_threshold {
        notes.push("stopped on threshold (--stop-on-threshold)".into());
    }
    let lost = lost.load(Ordering::Relaxed);
    if lost > 0 {
        notes.push(format!(
            "the trace buffer dropped {lost} events: the counts miss that many samples (a busier reader CPU, or fewer CPUs per run)"
        ));
    }
    for f in &failed {
        notes.push(format!("tracefs not restored: {f}"));
    }
    let realtime = match mode {
        Mode::Timerlat { .. } => policy.is_some_and(|(p, _)| p.is_realtime()),
        Mode::Osnoise { .. } => {
            c.policy.is_realtime() && policy.is_some_and(|(p, _)| p.is_realtime())
        }
    };
    let mut r = runner::build(
        kind,
        c,
        &recs,
        &series,
        elapsed_ns,
        interrupted || stopped_on_threshold,
        realtime,
        &notes,
        None,
    );
    r.envelope.duration_ns = elapsed_ns;
    let ran = policy.map(|(p, _)| p).unwrap_or(Policy::Other);
    let prio = policy.map(|(_, p)| p).filter(|_| ran.is_realtime());
    r.envelope.scheduling = Some(results::Scheduling {
        requested: c.policy,
        ran,
        priority: prio,
        refused: None,
        rt_cgroup: None,
    });
    let p = r.envelope.params.latency_mut();
    p.policy = Some(ran);
    p.priority = prio;
    p.engine = Some(name);
    for t in &mut r.threads {
        t.priority = Some(prio.unwrap_or(0));
        t.last_ns = None;
        if kind == results::Kind::Noise {
            t.floor_ns = None;
        }
    }
    match mode {
        Mode::Timerlat { .. } => {
            for (t, rec) in r.threads.iter_mut().zip(&irq_recs) {
                let h = rec.snapshot();
                t.irq = Some(IrqLatency { stats: h.summary(), histogram: h.to_data() });
            }
        }
        Mode::Osnoise { .. } => {
            for (cpu, o, gaps) in attributor.per_cpu() {
                if let Some(t) = r.threads.iter_mut().find(|t| t.cpu == Some(cpu)) {
                    t.osnoise = Some(o);
                    t.gaps = gaps;
                }
            }
        }
    }
    r.tracer = Some(TracerRun {
        name: Some(name),
        tracefs: tracefs_dir.to_string(),
        instance: Some(format!("{INSTANCE}{}", std::process::id())),
        period_us,
        runtime_us,
        threshold_ns,
        lost_events: lost,
        threads_policy: policy.map(|(p, n)| {
            if p.is_realtime() {
                format!("{}:{n}", p.as_str())
            } else {
                p.as_str().to_string()
            }
        }),
        causes: attributor.causes(),
    });
    Ok(r)
}

const INSTANCE: &str = tracefs::INSTANCE_PREFIX;

/// What the reader does with each `trace_pipe` line: samples into the per-CPU recorders
/// (timerlat: thread context into `recs`, IRQ context into `irq_recs`; osnoise: each gap into
/// `recs` and its noise second), osnoise events and periods into the attribution, lost events
/// counted. Times are relative to the `lowlat-start` marker (else the first line).
pub(crate) struct Feed<'a> {
    cpus: &'a [u32],
    recs: &'a [Recorder],
    irq_recs: &'a [Recorder],
    stop_on_threshold: bool,
    t0: Option<u64>,
    pub attr: attribution::Attributor,
    pub lost: u64,
}

impl<'a> Feed<'a> {
    pub(crate) fn new(
        cpus: &'a [u32],
        recs: &'a [Recorder],
        irq_recs: &'a [Recorder],
        stop_on_threshold: bool,
    ) -> Self {
        Feed {
            cpus,
            recs,
            irq_recs,
            stop_on_threshold,
            t0: None,
            attr: attribution::Attributor::new(cpus, 0),
            lost: 0,
        }
    }

    fn rel(&mut self, ts: u64) -> u64 {
        let base = match self.t0 {
            Some(b) => b,
            None => {
                self.t0 = Some(ts);
                self.attr.set_start(ts);
                ts
            }
        };
        ts.saturating_sub(base)
    }

    /// File one line; true when it asks the run to stop (a breach with stop-on-threshold).
    pub(crate) fn line(&mut self, l: &str) -> bool {
        let index = |cpu: u32| self.cpus.iter().position(|&x| x == cpu);
        match parse::line(l) {
            parse::Line::Marker { ts_ns, text } if text == "lowlat-start" && self.t0.is_none() => {
                self.t0 = Some(ts_ns);
                self.attr.set_start(ts_ns);
            }
            parse::Line::Timerlat { cpu, ts_ns, context, latency_ns, .. } => {
                let Some(i) = index(cpu) else { return false };
                let t = self.rel(ts_ns);
                let rec = match context {
                    parse::Context::Thread => &self.recs[i],
                    parse::Context::Irq => &self.irq_recs[i],
                };
                return rec.record(latency_ns, t)
                    && self.stop_on_threshold
                    && context == parse::Context::Thread;
            }
            parse::Line::Threshold { cpu, start_ns, duration_ns, interference } => {
                let Some(i) = index(cpu) else { return false };
                let t = self.rel(start_ns);
                let breach = self.recs[i].record(duration_ns, t);
                self.recs[i].add_noise((t / 1_000_000_000) as usize, duration_ns);
                self.attr.gap(cpu, start_ns, duration_ns, interference);
                return breach && self.stop_on_threshold;
            }
            parse::Line::Noise { cpu, source, name, start_ns, duration_ns } => {
                self.attr.noise(cpu, source, name, start_ns, duration_ns);
            }
            parse::Line::OsnoisePeriod {
                cpu,
                runtime_us,
                noise_us,
                max_single_us,
                hw,
                nmi,
                irq,
                softirq,
                thread,
                ..
            } => {
                self.attr.period(
                    cpu,
                    runtime_us,
                    noise_us,
                    max_single_us,
                    [hw, nmi, irq, softirq, thread],
                );
            }
            parse::Line::Lost { lost, .. } => self.lost += lost,
            _ => {}
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/tracefs")
            .join(name);
        std::fs::read_to_string(p).unwrap()
    }

    fn recs(n: usize) -> Vec<Recorder> {
        (0..n).map(|_| Recorder::new(HistogramConfig::LATENCY, 60, Some(1_000_000))).collect()
    }

    /// Captured timerlat output: each CPU's thread and IRQ samples land in their own recorder,
    /// times count from the first line, breaches of the 1 ms threshold are counted.
    #[test]
    fn timerlat_lines_feed_the_thread_and_irq_recorders() {
        let cpus = [2, 3, 6, 7];
        let (r, i) = (recs(4), recs(4));
        let mut f = Feed::new(&cpus, &r, &i, false);
        let text = fixture("timerlat-tcg-6.1-rt.txt");
        for l in text.lines() {
            assert!(!f.line(l));
        }
        let (thr, irq): (u64, u64) =
            (r.iter().map(Recorder::count).sum(), i.iter().map(Recorder::count).sum());
        assert_eq!(thr + irq, text.lines().count() as u64);
        let want_irq = text.lines().filter(|l| l.contains("context    irq")).count() as u64;
        assert_eq!(irq, want_irq);
        // the first CPU 7 IRQ sample of the capture, 1128809 ns, is CPU 7's IRQ maximum so far
        assert!(i[3].max() >= 1_128_809);
        assert!(r.iter().all(|x| x.count() > 0));
    }

    /// A breach with stop-on-threshold asks to stop (thread context only).
    #[test]
    fn a_thread_breach_stops_when_asked() {
        let cpus = [6];
        let (r, i) = (recs(1), recs(1));
        let mut f = Feed::new(&cpus, &r, &i, true);
        assert!(!f.line("  <idle>-0 [006] d..h1.. 3.0: #1 context irq timer_latency 5000000 ns"));
        assert!(f.line("  <...>-235 [006] ....... 3.1: #1 context thread timer_latency 5000000 ns"));
        assert!(
            !f.line("  <...>-9 [005] ....... 3.2: #1 context thread timer_latency 9000000 ns"),
            "not a measured CPU"
        );
        f.line("CPU:6 [LOST 17 EVENTS]");
        assert_eq!(f.lost, 17);
    }

    /// Captured osnoise output: gaps into the recorders and the attribution, periods summed.
    #[test]
    fn osnoise_lines_feed_gaps_periods_and_causes() {
        let cpus = [2, 3, 6, 7];
        let (r, i) = (recs(4), recs(4));
        let mut f = Feed::new(&cpus, &r, &i, false);
        let text = fixture("osnoise-events-tcg-6.1-rt.txt");
        for l in text.lines() {
            f.line(l);
        }
        let gaps = text.lines().filter(|l| l.contains("sample_threshold:")).count() as u64;
        assert_eq!(r.iter().map(Recorder::count).sum::<u64>(), gaps);
        assert_eq!(i.iter().map(Recorder::count).sum::<u64>(), 0);
        let per = f.attr.per_cpu();
        assert!(per.iter().any(|(_, o, _)| o.periods == 1));
        assert!(per.iter().all(|(_, _, g)| !g.is_empty()));
        assert!(!f.attr.causes().is_empty());
    }
}
