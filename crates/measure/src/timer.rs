//! `measure timer` (cyclictest semantics): an absolute-deadline `clock_nanosleep` loop on
//! `CLOCK_MONOTONIC` per CPU; latency = wake − deadline. Unlike cyclictest, a wake-up more
//! than one interval late is not silently skipped: every missed period is an **overrun**.
//! The next deadline then advances past `now` exactly as cyclictest's
//! `while (now > next) next += interval`.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use results::LatencyResult;

use crate::error::MeasureError;
use crate::noise::Attributor;
use crate::runner::{self, Common, Observer};
use crate::shared::Recorder;
use crate::sys::{Clock, Monotonic};

/// `measure timer` settings.
#[derive(Debug, Clone)]
pub struct TimerConfig {
    pub common: Common,
    pub interval: Duration,
    /// Stop each thread after this many wake-ups.
    pub loops: Option<u64>,
}

/// Loop bounds for one thread.
#[derive(Debug, Clone, Copy)]
pub struct LoopBounds {
    pub interval_ns: u64,
    /// Absolute end time on the loop's clock.
    pub end_ns: Option<u64>,
    pub loops: Option<u64>,
    pub stop_on_threshold: bool,
}

/// The measuring loop (the hot path): no allocation, no lock; the only syscalls are the
/// sleep and (via the vDSO) the clock read. Returns the number of wake-ups.
#[inline(never)]
pub fn timer_loop<C: Clock>(
    clock: &C,
    rec: &Recorder,
    start: u64,
    b: &LoopBounds,
    stop: &AtomicBool,
) -> u64 {
    let interval = b.interval_ns.max(1);
    let mut next = start + interval;
    let mut cycles = 0u64;
    while !stop.load(Relaxed) {
        clock.sleep_until(next);
        let now = clock.now();
        let latency = now.saturating_sub(next);
        let hit = rec.record(latency, now.saturating_sub(start));
        cycles += 1;
        if hit && b.stop_on_threshold {
            stop.store(true, Relaxed);
            break;
        }
        next += interval;
        if now > next {
            // Woke after the following deadline: these periods were missed.
            let missed = (now - next).div_ceil(interval);
            rec.add_overruns(missed);
            next += missed * interval;
        }
        if b.loops.is_some_and(|l| cycles >= l) || b.end_ns.is_some_and(|e| now >= e) {
            break;
        }
    }
    cycles
}

/// Run `measure timer`.
pub fn run(cfg: &TimerConfig, observer: &mut dyn Observer) -> Result<LatencyResult, MeasureError> {
    if cfg.interval.is_zero() {
        return Err(MeasureError::ZeroInterval);
    }
    let bounds = |start: u64| LoopBounds {
        interval_ns: cfg.interval.as_nanos() as u64,
        end_ns: cfg.common.duration.map(|d| start + d.as_nanos() as u64),
        loops: cfg.loops,
        stop_on_threshold: cfg.common.stop_on_threshold,
    };
    let mut hook = Attributor::new(&cfg.common.cpus, false);
    let mut r = runner::run(
        results::Kind::Timer,
        &cfg.common,
        observer,
        &mut hook,
        Vec::new(),
        None,
        |slot| {
            let b = bounds(slot.start_ns);
            timer_loop(&Monotonic, slot.rec, slot.start_ns, &b, slot.stop);
        },
    )?;
    for t in &mut r.threads {
        t.interval_ns = Some(cfg.interval.as_nanos() as u64);
    }
    r.notes.push(format!(
        "worst seconds: LOC counts include this measurement's own {} timer interrupts per second",
        1_000_000_000 / cfg.interval.as_nanos().max(1) as u64
    ));
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::HistogramConfig;
    use std::cell::Cell;

    /// A clock that wakes each sleeper `delay(i)` ns after its deadline.
    struct Fake {
        now: Cell<u64>,
        i: Cell<usize>,
        delays: Vec<u64>,
    }
    impl Clock for Fake {
        fn now(&self) -> u64 {
            self.now.get()
        }
        fn sleep_until(&self, t: u64) {
            let d = self.delays.get(self.i.get()).copied().unwrap_or(0);
            self.i.set(self.i.get() + 1);
            self.now.set(t.max(self.now.get()) + d);
        }
    }

    #[test]
    fn latency_is_wake_minus_deadline_and_missed_periods_are_overruns() {
        let clock = Fake { now: Cell::new(0), i: Cell::new(0), delays: vec![10, 20, 2_500, 5] };
        let rec = Recorder::new(HistogramConfig::LATENCY, 4, None);
        let b = LoopBounds {
            interval_ns: 1_000,
            end_ns: None,
            loops: Some(4),
            stop_on_threshold: false,
        };
        let n = timer_loop(&clock, &rec, 0, &b, &AtomicBool::new(false));
        assert_eq!(n, 4);
        let s = rec.snapshot().summary();
        assert_eq!((s.min_ns, s.max_ns), (5, 2_500));
        // Third wake-up at 3000+2500 = 5500: deadlines 4000 and 5000 were missed.
        assert_eq!(rec.overruns(), 2);
        // And the fourth deadline is 6000 (woke at 6005).
        assert_eq!(clock.now(), 6_005);
    }

    #[test]
    fn stop_on_threshold_stops_and_records_the_breach() {
        let clock = Fake { now: Cell::new(0), i: Cell::new(0), delays: vec![1, 1, 900, 1, 1] };
        let rec = Recorder::new(HistogramConfig::LATENCY, 4, Some(500));
        let b = LoopBounds {
            interval_ns: 1_000,
            end_ns: None,
            loops: Some(10),
            stop_on_threshold: true,
        };
        let stop = AtomicBool::new(false);
        assert_eq!(timer_loop(&clock, &rec, 0, &b, &stop), 3);
        assert!(stop.load(Relaxed));
        let (br, n) = rec.breaches(Some(1));
        assert_eq!(n, 1);
        assert_eq!((br[0].t_ns, br[0].value_ns), (3_900, 900));
    }

    #[test]
    fn duration_ends_the_loop_after_a_wake_up() {
        let clock = Fake { now: Cell::new(0), i: Cell::new(0), delays: vec![] };
        let rec = Recorder::new(HistogramConfig::LATENCY, 4, None);
        let b = LoopBounds {
            interval_ns: 1_000,
            end_ns: Some(10_000),
            loops: None,
            stop_on_threshold: false,
        };
        assert_eq!(timer_loop(&clock, &rec, 0, &b, &AtomicBool::new(false)), 10);
    }
}
