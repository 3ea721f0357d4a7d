//! The result's per-thread series (`per_second_max_ns`, noise: `per_second_noise_ns`),
//! bounded for the whole run. Each point covers `step` seconds: the maximum of its seconds
//! (noise: the sum), so the worst case is never lost. The step is chosen before the run from
//! its duration and the number of measured CPUs so that all series together hold at most
//! [`SERIES_BUDGET_POINTS`] points; a run that outlives its points (no `--duration`, or one
//! that overran) folds adjacent points pairwise and doubles the step.
//!
//! The measuring threads only raise a slot of their recorder's short per-second ring (the hot
//! path is unchanged); the main thread, once a second, takes each second
//! [`FOLD_LAG_SECONDS`] after it ended out of the ring into this set.

use crate::shared::Recorder;

pub use results::latency::SERIES_BUDGET_POINTS;

/// A second is folded into the series this long after it ended: a sample recorded late (a
/// thread preempted across the second's end) still lands in its own second.
pub const FOLD_LAG_SECONDS: u64 = 8;

/// Fewest points a series gets however many CPUs are measured.
pub const MIN_POINTS: usize = 16;

/// Steps chosen for a run of known length (the time axis reads well in each).
const NICE_STEPS: [u64; 13] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];

/// Points each series of each thread may hold: the budget shared by `threads` threads of
/// `series` series each (at least [`MIN_POINTS`]).
pub fn points_per_series(threads: usize, series: usize) -> usize {
    (SERIES_BUDGET_POINTS / (threads.max(1) * series.max(1))).max(MIN_POINTS)
}

/// The step (seconds per point) for a run of `seconds` (`None`: until stopped, which starts
/// at 1 and doubles as it goes): the smallest of 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15,
/// 30 min, 1 h (then doubling) that fits the run in [`points_per_series`].
pub fn choose_step(seconds: Option<u64>, threads: usize, series: usize) -> u64 {
    let Some(secs) = seconds else { return 1 };
    let cap = points_per_series(threads, series) as u64;
    let fits = |step: u64| secs.div_ceil(step) <= cap;
    NICE_STEPS.iter().copied().find(|s| fits(*s)).unwrap_or_else(|| {
        let mut s = 3600u64;
        while !fits(s) {
            s = s.saturating_mul(2);
        }
        s
    })
}

/// One thread's series: the maxima and (noise) the sums, one point per step.
pub(crate) type ThreadSeries = (Vec<u64>, Vec<u64>);

/// The series of every thread of one run (main thread only).
#[derive(Debug, Clone)]
pub(crate) struct SeriesSet {
    step: u64,
    cap: usize,
    noise: bool,
    max: Vec<Vec<u64>>,
    sum: Vec<Vec<u64>>,
    /// Seconds taken out of the recorders so far.
    folded: u64,
}

impl SeriesSet {
    /// The set for `threads` threads of a run of `seconds` (`None`: until stopped); `noise`
    /// adds the noise series. Allocates everything it will hold.
    pub(crate) fn new(threads: usize, noise: bool, seconds: Option<u64>) -> Self {
        let n = 1 + usize::from(noise);
        let cap = points_per_series(threads, n);
        let vecs =
            |on: bool| (0..threads).map(|_| Vec::with_capacity(if on { cap } else { 0 })).collect();
        Self {
            step: choose_step(seconds, threads, n),
            cap,
            noise,
            max: vecs(true),
            sum: vecs(noise),
            folded: 0,
        }
    }

    /// Seconds per point.
    #[cfg(test)]
    pub(crate) fn step(&self) -> u64 {
        self.step
    }

    /// Add second `sec` of thread `i` to its point, widening the step while the point lies
    /// beyond the budget.
    fn add(&mut self, sec: u64, i: usize, max: u64, noise: u64) {
        while (sec / self.step) as usize >= self.cap {
            self.widen();
        }
        let p = (sec / self.step) as usize;
        if let Some(v) = self.max.get_mut(i) {
            if v.len() <= p {
                v.resize(p + 1, 0);
            }
            v[p] = v[p].max(max);
        }
        if let Some(v) = self.sum.get_mut(i).filter(|_| self.noise) {
            if v.len() <= p {
                v.resize(p + 1, 0);
            }
            v[p] = v[p].saturating_add(noise);
        }
    }

    /// Double the step: adjacent points fold pairwise (max of the maxima, sum of the noise).
    fn widen(&mut self) {
        self.step = self.step.saturating_mul(2);
        let fold = |v: &mut Vec<u64>, f: fn(u64, u64) -> u64| {
            let n = v.len().div_ceil(2);
            for j in 0..n {
                let b = v.get(2 * j + 1).copied().unwrap_or(0);
                v[j] = f(v[2 * j], b);
            }
            v.truncate(n);
        };
        for v in &mut self.max {
            fold(v, u64::max);
        }
        for v in &mut self.sum {
            fold(v, u64::saturating_add);
        }
    }

    /// Take every second before `upto` out of the recorders (their ring slots are cleared
    /// for reuse).
    pub(crate) fn fold_until(&mut self, upto: u64, recs: &[Recorder]) {
        while self.folded < upto {
            let sec = self.folded;
            for (i, r) in recs.iter().enumerate() {
                let (m, n) = r.take_second(sec as usize);
                self.add(sec, i, m, n);
            }
            self.folded += 1;
        }
    }

    /// The series of a run that has lasted `secs` seconds: what was folded, plus the seconds
    /// still in the recorders' rings (read, not taken: checkpoints call this mid-run). A
    /// ring slot that no unfolded second maps to yet holds a value was raised after its
    /// second was folded (a sample recorded more than [`FOLD_LAG_SECONDS`] late): it joins
    /// the last folded second of that slot, so the series' maximum is the thread's maximum.
    /// Returns the step and, per thread, (maxima, noise sums).
    pub(crate) fn snapshot(&self, recs: &[Recorder], secs: u64) -> (u64, Vec<ThreadSeries>) {
        let mut s = self.clone();
        for sec in self.folded..secs.max(self.folded) {
            for (i, r) in recs.iter().enumerate() {
                s.add(sec, i, r.second_max(sec as usize), r.second_noise(sec as usize));
            }
        }
        let pending = secs.saturating_sub(self.folded);
        for (i, r) in recs.iter().enumerate() {
            let ring = r.ring_seconds() as u64;
            if self.folded == 0 || pending >= ring {
                continue;
            }
            for slot in 0..ring {
                let covered = (self.folded..secs).any(|sec| sec % ring == slot);
                let late = r.second_max(slot as usize);
                if covered || late == 0 {
                    continue;
                }
                // The latest folded second that used this slot.
                let back = (self.folded - 1 + ring - slot) % ring;
                if let Some(sec) = (self.folded - 1).checked_sub(back) {
                    s.add(sec, i, late, 0);
                }
            }
        }
        let out = s.max.into_iter().zip(s.sum).collect();
        (s.step, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::HistogramConfig;

    #[test]
    fn the_step_keeps_any_run_under_the_budget() {
        // 256 CPUs × 12 h of noise (two series each): 2 min per point.
        let step = choose_step(Some(12 * 3600 + 2), 256, 2);
        assert_eq!(step, 120);
        let points = 256 * 2 * (12 * 3600 + 2u64).div_ceil(step);
        assert!(points <= SERIES_BUDGET_POINTS as u64, "{points}");
        // Timer (one series): 1 min per point.
        assert_eq!(choose_step(Some(12 * 3600 + 2), 256, 1), 60);
        // Short runs and small machines keep one point per second.
        assert_eq!(choose_step(Some(10 + 2), 1, 1), 1);
        assert_eq!(choose_step(Some(24 * 3600 + 2), 1, 2), 1);
        assert_eq!(choose_step(Some(24 * 3600 + 2), 16, 2), 15);
        // Until stopped: start at 1 s, widen as the run goes.
        assert_eq!(choose_step(None, 256, 2), 1);
        // A week on 4096 CPUs still fits (beyond the nice steps the step doubles).
        let week = 7 * 24 * 3600;
        let step = choose_step(Some(week), 4096, 2);
        assert_eq!(step, 8 * 3600);
        assert!(week.div_ceil(step) <= points_per_series(4096, 2) as u64, "{step}");
        for threads in [1usize, 3, 16, 64, 256, 1024] {
            for secs in [1u64, 59, 3_601, 86_402, 604_800] {
                let s = choose_step(Some(secs), threads, 2);
                let total = threads as u64 * 2 * secs.div_ceil(s);
                assert!(total <= SERIES_BUDGET_POINTS as u64, "{threads} × {secs} s: {s}");
            }
        }
    }

    fn recorders(n: usize, secs: usize) -> Vec<Recorder> {
        (0..n)
            .map(|_| Recorder::new(HistogramConfig::LATENCY, secs, None).with_noise_series(secs))
            .collect()
    }

    /// An open-ended run far past its points: the step doubles, every point is the max (and
    /// sum) of its seconds, and nothing is lost.
    #[test]
    fn an_open_ended_run_folds_pairwise_and_keeps_the_worst() {
        let recs = recorders(2, 24 * 3600);
        let mut set = SeriesSet::new(4096, true, None);
        assert_eq!((set.step(), set.cap), (1, 32));
        let secs = 1000u64;
        let value = |i: usize, s: u64| (s * 7_919 + i as u64 * 104_729) % 100_000;
        let mut expect_max = [0u64; 2];
        for s in 0..secs {
            for (i, r) in recs.iter().enumerate() {
                r.record_at(value(i, s), s as usize, || 0);
                r.add_noise(s as usize, 10);
                expect_max[i] = expect_max[i].max(value(i, s));
            }
            // The main thread's schedule: fold what ended FOLD_LAG_SECONDS ago.
            set.fold_until((s + 1).saturating_sub(FOLD_LAG_SECONDS), &recs);
        }
        let (step, series) = set.snapshot(&recs, secs);
        assert_eq!(step, 32, "1000 s in at most 32 points");
        for (i, (max, noise)) in series.iter().take(2).enumerate() {
            assert_eq!(max.len() as u64, secs.div_ceil(step));
            assert_eq!(max.iter().max().copied(), Some(expect_max[i]));
            for (p, m) in max.iter().enumerate() {
                let lo = p as u64 * step;
                let want = (lo..(lo + step).min(secs)).map(|s| value(i, s)).max();
                assert_eq!(Some(*m), want, "point {p}");
            }
            assert_eq!(noise.iter().sum::<u64>(), 10 * secs);
            assert_eq!(noise[0], 10 * step);
        }
        // The snapshot did not take anything: taking the rest gives the same.
        set.fold_until(secs, &recs);
        assert_eq!(set.snapshot(&recs, secs), (step, series));
    }

    /// A sample recorded after its second was folded still counts in the series' maximum.
    #[test]
    fn a_late_sample_is_not_lost() {
        let recs = recorders(1, 100);
        let mut set = SeriesSet::new(1, false, Some(100));
        for s in 0..20 {
            recs[0].record_at(1_000, s, || 0);
        }
        set.fold_until(12, &recs);
        // Second 3, long folded, gets a late 9 ms sample.
        recs[0].record_at(9_000_000, 3, || 0);
        let (step, series) = set.snapshot(&recs, 20);
        assert_eq!(step, 1);
        assert_eq!(series[0].0.iter().max(), Some(&9_000_000));
        assert_eq!(series[0].0.len(), 20);
    }
}
