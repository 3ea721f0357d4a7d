//! Per-thread statistics written by one measuring thread and read by the main thread while
//! the run goes on: a histogram of relaxed atomic counters (single writer, so an increment
//! is a plain load + store, as cheap as a `u64`), exact min/max/sum, overruns, a short ring of
//! per-second maxima and noise totals (folded by the main thread into the result's bounded
//! series, [`crate::series`]), the worst threshold breaches (a bounded min-heap) and
//! breach counts per minute. The noise loop's common case, a gap shorter than the fast table
//! ([`Recorder::with_fast_table`]), is one counter increment indexed by the raw tick count:
//! no conversion, no division; the table is folded into the histogram when a snapshot is
//! taken. Everything is allocated before the loop starts; [`Recorder::record`] and
//! [`Recorder::record_fast`] never allocate, lock or call the kernel.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use results::{Breach, Histogram, HistogramConfig};

/// Most breaches kept: each thread keeps its worst this many, and a result keeps the worst
/// this many over all its threads (every breach is still counted, per thread and per minute).
pub const MAX_BREACHES: usize = results::latency::MAX_BREACHES;

/// Seconds of the per-second ring (a power of two): the main thread folds a second into the
/// series [`crate::series::FOLD_LAG_SECONDS`] after it ended, so the ring only bridges that.
pub const RING_SECONDS: usize = 64;

/// Ring length for a run of `seconds`: a power of two, at most [`RING_SECONDS`].
fn ring_len(seconds: usize) -> usize {
    seconds.clamp(1, RING_SECONDS).next_power_of_two()
}

/// Most entries of the noise loop's fast table (gaps of fewer ticks are counted by tick).
pub const FAST_TABLE_MAX: usize = 4096;

#[inline]
fn bump(a: &AtomicU64, by: u64) {
    a.store(a.load(Relaxed).wrapping_add(by), Relaxed);
}

#[inline]
fn raise(a: &AtomicU64, v: u64) {
    if v > a.load(Relaxed) {
        a.store(v, Relaxed);
    }
}

/// Single-writer statistics of one measuring thread.
#[derive(Debug)]
pub struct Recorder {
    config: HistogramConfig,
    counts: Box<[AtomicU64]>,
    overflow: AtomicU64,
    count: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
    sum: AtomicU64,
    sum_sq: AtomicU64,
    pub(crate) overruns: AtomicU64,
    pub(crate) last: AtomicU64,
    per_second_max: Box<[AtomicU64]>,
    per_second_noise: Box<[AtomicU64]>,
    total_noise: AtomicU64,
    /// Min-heap by value of the worst breaches: (t_ns, value_ns).
    breaches: Box<[(AtomicU64, AtomicU64)]>,
    breach_count: AtomicU64,
    /// Breach counts: slot `i` counts minutes `[i * step, (i + 1) * step)` of the run, where
    /// `step` is `minute_step` (a power of two). A run longer than the slots (an open-ended
    /// run past 24 h) folds them pairwise and doubles the step, so no count is ever mixed
    /// with another minute's; only the recording thread writes either.
    per_minute_breaches: Box<[AtomicU64]>,
    minute_step: AtomicU64,
    threshold_ns: u64,
    floor: AtomicU64,
    /// Noise fast path: gaps of `i` ticks counted at `fast[i]` (empty for timer runs).
    fast: Box<[AtomicU64]>,
    /// Ticks → ns multiplier (`ns = ticks * fast_mult >> 32`) for the fast table.
    fast_mult: u64,
    /// cyclictest's "Histogram Overflow at cycle number": the cycle numbers (samples before
    /// it) of the first `outlier_cycles.len()` samples at or above `outlier_floor_ns`, and
    /// how many there were in all (empty and `u64::MAX`: not recorded).
    outlier_cycles: Box<[AtomicU64]>,
    outlier_count: AtomicU64,
    outlier_floor_ns: u64,
}

impl Recorder {
    /// A recorder for a run of up to `seconds` seconds (the per-minute breach counts cover
    /// that; the per-second ring holds [`RING_SECONDS`] at most and wraps).
    pub fn new(config: HistogramConfig, seconds: usize, threshold_ns: Option<u64>) -> Self {
        let ring = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect::<Box<[_]>>();
        Self {
            config,
            counts: ring(config.len()),
            overflow: AtomicU64::new(0),
            count: AtomicU64::new(0),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            sum_sq: AtomicU64::new(0f64.to_bits()),
            overruns: AtomicU64::new(0),
            last: AtomicU64::new(0),
            per_second_max: ring(ring_len(seconds)),
            per_second_noise: ring(ring_len(seconds)),
            total_noise: AtomicU64::new(0),
            breaches: (0..MAX_BREACHES).map(|_| (AtomicU64::new(0), AtomicU64::new(0))).collect(),
            breach_count: AtomicU64::new(0),
            per_minute_breaches: ring(seconds.max(1).div_ceil(60)),
            minute_step: AtomicU64::new(1),
            threshold_ns: threshold_ns.unwrap_or(u64::MAX),
            floor: AtomicU64::new(0),
            fast: Box::new([]),
            fast_mult: 0,
            outlier_cycles: Box::new([]),
            outlier_count: AtomicU64::new(0),
            outlier_floor_ns: u64::MAX,
        }
    }

    /// Record the cycle numbers of the first `keep` samples at or above `floor_ns` (and count
    /// them all), as cyclictest does for the samples past its `-h` histogram.
    pub fn with_outliers(mut self, floor_ns: u64, keep: usize) -> Self {
        self.outlier_cycles = (0..keep).map(|_| AtomicU64::new(0)).collect();
        self.outlier_floor_ns = floor_ns;
        self
    }

    /// The recorded cycle numbers, in order, and how many samples reached the floor in all;
    /// `None` when not asked for ([`Self::with_outliers`]).
    pub fn outliers(&self) -> Option<(Vec<u64>, u64)> {
        if self.outlier_floor_ns == u64::MAX {
            return None;
        }
        let n = self.outlier_count.load(Relaxed);
        let kept = (n as usize).min(self.outlier_cycles.len());
        Some((self.outlier_cycles[..kept].iter().map(|c| c.load(Relaxed)).collect(), n))
    }

    #[cold]
    fn outlier(&self) {
        let n = self.outlier_count.load(Relaxed);
        if let Some(slot) = self.outlier_cycles.get(n as usize) {
            slot.store(self.count.load(Relaxed), Relaxed);
        }
        self.outlier_count.store(n + 1, Relaxed);
    }

    /// Give the recorder a fast table for gaps shorter than `ticks` (at most
    /// [`FAST_TABLE_MAX`]) of a counter whose ticks convert to ns as `ticks * mult >> 32`.
    /// Only gaps below the noise threshold should take it: they never breach or add noise.
    pub fn with_fast_table(mut self, ticks: u64, mult: u64) -> Self {
        let n = (ticks as usize).min(FAST_TABLE_MAX);
        self.fast = (0..n).map(|_| AtomicU64::new(0)).collect();
        self.fast_mult = mult;
        self
    }

    #[inline(always)]
    fn fast_ns(&self, ticks: u64) -> u64 {
        ((ticks as u128 * self.fast_mult as u128) >> 32) as u64
    }

    /// The noise loop's common case: count a gap of `ticks` in the fast table. Returns false
    /// (and records nothing) when the gap is too long for the table: take [`Self::record_at`].
    #[inline(always)]
    pub fn record_fast(&self, ticks: u64) -> bool {
        match self.fast.get(ticks as usize) {
            Some(c) => {
                bump(c, 1);
                true
            }
            None => false,
        }
    }

    /// The ns of a fast gap of `ticks` (tests).
    #[cfg(test)]
    pub(crate) fn fast_ns_for_test(&self, ticks: u64) -> u64 {
        self.fast_ns(ticks)
    }

    /// Raise second `sec`'s maximum to the longest fast gap of that second (`ticks`).
    #[inline]
    pub fn raise_second_fast(&self, sec: usize, ticks: u64) {
        if ticks > 0 {
            if let Some(s) = self.per_second_max.get(sec & (self.per_second_max.len() - 1)) {
                raise(s, self.fast_ns(ticks));
            }
        }
    }

    /// Size the noise ring for a run of `seconds` (timer runs keep a 1-entry ring).
    pub fn with_noise_series(mut self, seconds: usize) -> Self {
        self.per_second_noise = (0..ring_len(seconds)).map(|_| AtomicU64::new(0)).collect();
        self
    }

    /// Bytes this recorder allocated (fixed for its life): the memory test's measure.
    #[cfg(test)]
    fn memory_bytes(&self) -> usize {
        8 * (self.counts.len()
            + self.per_second_max.len()
            + self.per_second_noise.len()
            + self.per_minute_breaches.len()
            + self.fast.len()
            + self.outlier_cycles.len())
            + 16 * self.breaches.len()
            + std::mem::size_of::<Self>()
    }

    /// Record one sample `v` (ns) taken `t` ns after the start. Returns true when `v` is at or
    /// above the threshold. No allocation, no syscall.
    #[inline]
    pub fn record(&self, v: u64, t: u64) -> bool {
        self.record_at(v, (t / 1_000_000_000) as usize, || t)
    }

    /// Record one sample `v` (ns) in second `sec`; `t` (ns since start) is only evaluated for
    /// a breach. No allocation, no syscall.
    #[inline]
    pub fn record_at(&self, v: u64, sec: usize, t: impl FnOnce() -> u64) -> bool {
        match self.config.index(v) {
            Some(i) => {
                if let Some(c) = self.counts.get(i) {
                    bump(c, 1);
                }
            }
            None => bump(&self.overflow, 1),
        }
        if v >= self.outlier_floor_ns {
            self.outlier();
        }
        bump(&self.count, 1);
        if v < self.min.load(Relaxed) {
            self.min.store(v, Relaxed);
        }
        raise(&self.max, v);
        bump(&self.sum, v);
        let sq = f64::from_bits(self.sum_sq.load(Relaxed)) + (v as f64) * (v as f64);
        self.sum_sq.store(sq.to_bits(), Relaxed);
        self.last.store(v, Relaxed);
        // The ring's length is a power of two: a mask, not a division.
        if let Some(s) = self.per_second_max.get(sec & (self.per_second_max.len() - 1)) {
            raise(s, v);
        }
        if v >= self.threshold_ns {
            self.breach(v, sec, t);
            return true;
        }
        false
    }

    /// Count a breach and keep it when it is among the worst [`MAX_BREACHES`]: a min-heap by
    /// value (ties keep the earlier), so a full list costs O(log n) per breach, no allocation.
    #[cold]
    fn breach(&self, v: u64, sec: usize, t: impl FnOnce() -> u64) {
        let n = self.breach_count.load(Relaxed);
        self.breach_count.store(n + 1, Relaxed);
        let minute = (sec / 60) as u64;
        let mut step = self.minute_step.load(Relaxed);
        while minute / step >= self.per_minute_breaches.len() as u64 {
            self.fold_minutes();
            step *= 2;
            self.minute_step.store(step, Relaxed);
        }
        if let Some(m) = self.per_minute_breaches.get((minute / step) as usize) {
            bump(m, 1);
        }
        let heap = &self.breaches;
        let val = |i: usize| heap[i].1.load(Relaxed);
        let set = |i: usize, t: u64, v: u64| {
            heap[i].0.store(t, Relaxed);
            heap[i].1.store(v, Relaxed);
        };
        let len = heap.len();
        if (n as usize) < len {
            // Sift up from the end.
            let (t, mut i) = (t(), n as usize);
            while i > 0 {
                let p = (i - 1) / 2;
                if val(p) <= v {
                    break;
                }
                set(i, heap[p].0.load(Relaxed), val(p));
                i = p;
            }
            set(i, t, v);
            return;
        }
        if len == 0 || v <= val(0) {
            return;
        }
        // Replace the root (the smallest kept) and sift down.
        let (t, mut i) = (t(), 0usize);
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut c = i;
            let mut cv = v;
            if l < len && val(l) < cv {
                (c, cv) = (l, val(l));
            }
            if r < len && val(r) < cv {
                c = r;
            }
            if c == i {
                break;
            }
            set(i, heap[c].0.load(Relaxed), val(c));
            i = c;
        }
        set(i, t, v);
    }

    /// Set the loop floor (noise).
    pub fn set_floor(&self, ns: u64) {
        self.floor.store(ns, Relaxed);
    }

    /// The loop floor (noise), 0 when unset.
    pub fn floor(&self) -> u64 {
        self.floor.load(Relaxed)
    }

    /// Add `ns` of noise to second `sec` (noise loops).
    #[inline]
    pub fn add_noise(&self, sec: usize, ns: u64) {
        if let Some(s) = self.per_second_noise.get(sec & (self.per_second_noise.len() - 1)) {
            bump(s, ns);
        }
        bump(&self.total_noise, ns);
    }

    /// Add `n` overruns (missed periods).
    #[inline]
    pub fn add_overruns(&self, n: u64) {
        bump(&self.overruns, n);
    }

    /// Samples so far (the fast table included).
    pub fn count(&self) -> u64 {
        self.fast.iter().fold(self.count.load(Relaxed), |a, c| a.wrapping_add(c.load(Relaxed)))
    }

    /// Largest sample so far (the fast table included).
    pub fn max(&self) -> u64 {
        let fast = self.fast.iter().rposition(|c| c.load(Relaxed) > 0);
        let fast = fast.map_or(0, |i| self.fast_ns(i as u64));
        self.max.load(Relaxed).max(fast)
    }

    /// Overruns so far.
    pub fn overruns(&self) -> u64 {
        self.overruns.load(Relaxed)
    }

    /// Max of second `sec` (ring position).
    pub fn second_max(&self, sec: usize) -> u64 {
        self.per_second_max.get(sec % self.per_second_max.len()).map_or(0, |a| a.load(Relaxed))
    }

    /// Noise of second `sec` (ring position).
    pub fn second_noise(&self, sec: usize) -> u64 {
        self.per_second_noise.get(sec % self.per_second_noise.len()).map_or(0, |a| a.load(Relaxed))
    }

    /// Seconds of the per-second ring.
    pub fn ring_seconds(&self) -> usize {
        self.per_second_max.len()
    }

    /// Take second `sec`'s (max, noise) out of the ring, leaving its slot 0 for second
    /// `sec + ring_seconds()` (main thread). An atomic swap: a sample the measuring thread
    /// raises the slot with meanwhile is either taken here or stays for the next take.
    pub(crate) fn take_second(&self, sec: usize) -> (u64, u64) {
        let max = self.per_second_max.get(sec % self.per_second_max.len());
        let noise = self.per_second_noise.get(sec % self.per_second_noise.len());
        (max.map_or(0, |a| a.swap(0, Relaxed)), noise.map_or(0, |a| a.swap(0, Relaxed)))
    }

    /// Total noise so far.
    pub fn total_noise(&self) -> u64 {
        self.total_noise.load(Relaxed)
    }

    /// A consistent-enough copy as a [`Histogram`], the fast table folded in exactly as
    /// [`Self::record_at`] would have recorded each gap (main thread only: allocates).
    pub fn snapshot(&self) -> Histogram {
        let mut counts: Vec<u64> = self.counts.iter().map(|c| c.load(Relaxed)).collect();
        let mut overflow = self.overflow.load(Relaxed);
        let mut count = self.count.load(Relaxed);
        let (mut min, mut max) = (self.min.load(Relaxed), self.max.load(Relaxed));
        let mut sum = self.sum.load(Relaxed) as u128;
        let mut sum_sq = f64::from_bits(self.sum_sq.load(Relaxed));
        for (ticks, c) in self.fast.iter().enumerate() {
            let n = c.load(Relaxed);
            if n == 0 {
                continue;
            }
            let ns = self.fast_ns(ticks as u64);
            match self.config.index(ns).and_then(|i| counts.get_mut(i)) {
                Some(slot) => *slot += n,
                None => overflow += n,
            }
            count += n;
            min = min.min(ns);
            max = max.max(ns);
            sum += ns as u128 * n as u128;
            sum_sq += (ns as f64) * (ns as f64) * n as f64;
        }
        Histogram::from_parts(self.config, &counts, overflow, count, min, max, sum, sum_sq)
    }

    /// The worst breaches so far (at most [`MAX_BREACHES`], in time order) and the total.
    pub fn breaches(&self, cpu: Option<u32>) -> (Vec<Breach>, u64) {
        let n = self.breach_count.load(Relaxed);
        let kept = (n as usize).min(self.breaches.len());
        let mut list: Vec<Breach> = self.breaches[..kept]
            .iter()
            .map(|(t, v)| Breach { cpu, t_ns: t.load(Relaxed), value_ns: v.load(Relaxed) })
            .collect();
        list.sort_by_key(|b| b.t_ns);
        (list, n)
    }

    /// Halve the breach counts' resolution: slot `i` takes slots `2i` and `2i + 1`, the upper
    /// half empties. At most once per doubling of the run past the slots (~1,440 atomic
    /// operations, on a breach only).
    #[cold]
    fn fold_minutes(&self) {
        let slots = &self.per_minute_breaches;
        let len = slots.len();
        for i in 0..len {
            let pair = |j: usize| slots.get(j).map_or(0, |a| a.load(Relaxed));
            // Slots 2i and 2i + 1 are never below i: each is read before it is overwritten.
            slots[i].store(pair(2 * i) + pair(2 * i + 1), Relaxed);
        }
        for a in &slots[len.div_ceil(2)..] {
            a.store(0, Relaxed);
        }
    }

    /// Minutes per slot of the breach counts so far (a power of two; 1 until the run outgrows
    /// the slots).
    pub fn minute_step(&self) -> u64 {
        self.minute_step.load(Relaxed)
    }

    /// The common minutes-per-entry for recorders of a run of `secs` seconds: the smallest
    /// power of two, at least every recorder's own step, at which the run fits their slots.
    pub fn common_minute_step(recs: &[Recorder], secs: usize) -> u64 {
        let minutes = secs.div_ceil(60).max(1) as u64;
        let len = recs.iter().map(|r| r.per_minute_breaches.len()).min().unwrap_or(1).max(1) as u64;
        let mut step = recs.iter().map(Recorder::minute_step).max().unwrap_or(1).max(1);
        while minutes.div_ceil(step) > len {
            step *= 2;
        }
        step
    }

    /// Breaches per `step` minutes (from [`Recorder::common_minute_step`]) over the `secs`
    /// seconds of the run, entry 0 starting at minute 0; empty when there was none. Read while
    /// the recording thread runs (a checkpoint), a fold in progress can skew one read.
    pub fn breaches_per_minute(&self, secs: usize, step: u64) -> Vec<u64> {
        if self.breach_count.load(Relaxed) == 0 {
            return Vec::new();
        }
        let own = self.minute_step();
        let per_entry = (step / own).max(1) as usize;
        let entries = (secs.div_ceil(60).max(1) as u64).div_ceil(step.max(own)) as usize;
        (0..entries)
            .map(|e| {
                let from = (e * per_entry).min(self.per_minute_breaches.len());
                let to = ((e + 1) * per_entry).min(self.per_minute_breaches.len());
                self.per_minute_breaches[from..to].iter().map(|a| a.load(Relaxed)).sum()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_like_the_histogram() {
        let r = Recorder::new(HistogramConfig::LATENCY, 4, Some(50_000));
        let mut h = Histogram::new(HistogramConfig::LATENCY);
        for (i, v) in [1_000u64, 20_000, 60_000, 3_000].iter().enumerate() {
            r.record(*v, i as u64 * 700_000_000);
            h.record(*v);
        }
        assert_eq!(r.snapshot().summary(), h.summary());
        let series: Vec<u64> = (0..3).map(|s| r.second_max(s)).collect();
        assert_eq!(series, vec![20_000, 60_000, 3_000]);
        let (b, n) = r.breaches(Some(2));
        assert_eq!(n, 1);
        assert_eq!(b[0], Breach { cpu: Some(2), t_ns: 1_400_000_000, value_ns: 60_000 });
    }

    #[test]
    fn outliers_keep_cyclictests_cycle_numbers_and_count_the_rest() {
        let plain = Recorder::new(HistogramConfig::LATENCY, 4, None);
        plain.record(900_000, 0);
        assert_eq!(plain.outliers(), None, "not asked for");
        // -h 400: samples at or above 400 µs; keep the first 2 cycle numbers
        let r = Recorder::new(HistogramConfig::LATENCY, 4, None).with_outliers(400_000, 2);
        for (i, v) in [1_000u64, 400_000, 3_000, 399_999, 500_000, 410_000].iter().enumerate() {
            r.record(*v, i as u64);
        }
        assert_eq!(r.outliers(), Some((vec![1, 4], 3)));
    }

    #[test]
    fn sixteen_threads_for_a_day_fit_in_a_few_mib() {
        let r =
            Recorder::new(HistogramConfig::LATENCY, 24 * 3600, None).with_noise_series(24 * 3600);
        let total = 16 * r.memory_bytes();
        assert!(total < 32 << 20, "{total} bytes");
    }

    #[test]
    fn the_worst_breaches_are_kept_in_time_order_and_all_are_counted() {
        let r = Recorder::new(HistogramConfig::LATENCY, 180, Some(0));
        let total = 20 * MAX_BREACHES as u64;
        // Values in a scrambled order, one per 5 ms (three minutes).
        for i in 0..total {
            r.record((i * 7919) % total, i * 5_000_000);
        }
        let (b, n) = r.breaches(None);
        assert_eq!((b.len(), n), (MAX_BREACHES, total));
        let mut vals: Vec<u64> = b.iter().map(|b| b.value_ns).collect();
        vals.sort_unstable();
        assert_eq!(vals, (total - MAX_BREACHES as u64..total).collect::<Vec<_>>());
        assert!(b.windows(2).all(|w| w[0].t_ns <= w[1].t_ns), "time order");
        let per_minute = r.breaches_per_minute(100, 1);
        assert_eq!(per_minute.len(), 2);
        assert_eq!(per_minute.iter().sum::<u64>(), 12_000 + 8_000);
    }

    /// A run that outgrows the per-minute slots (3 here, 1,440 for a day) folds them and
    /// doubles the minutes per entry: every entry counts only its own minutes, and the counts
    /// still add up to the breach count. (They used to wrap: minute 3 was added to minute 0.)
    #[test]
    fn breach_counts_fold_instead_of_wrapping_when_the_run_outgrows_them() {
        let recs = [
            Recorder::new(HistogramConfig::LATENCY, 180, Some(1_000)),
            Recorder::new(HistogramConfig::LATENCY, 180, Some(1_000)),
        ];
        // Minute m gets m + 1 breaches, for minutes 0..=9 (10 minutes: 55 breaches).
        for m in 0..10u64 {
            for k in 0..=m {
                recs[0].record(5_000, m * 60_000_000_000 + k * 1_000_000);
            }
        }
        // The second breached only in minute 0: it never folded.
        recs[1].record(5_000, 0);
        assert_eq!((recs[0].minute_step(), recs[1].minute_step()), (4, 1));
        let secs = 10 * 60;
        let step = Recorder::common_minute_step(&recs, secs);
        assert_eq!(step, 4, "10 minutes in 3 entries");
        let counts = recs[0].breaches_per_minute(secs, step);
        assert_eq!(counts, vec![1 + 2 + 3 + 4, 5 + 6 + 7 + 8, 9 + 10]);
        assert_eq!(counts.iter().sum::<u64>(), recs[0].breaches(None).1);
        assert_eq!(recs[1].breaches_per_minute(secs, step), vec![1, 0, 0]);
        // A run that fits keeps one entry per minute.
        assert_eq!(Recorder::common_minute_step(&recs[1..], 150), 1);
        assert_eq!(recs[1].breaches_per_minute(150, 1), vec![1, 0, 0]);
    }

    #[test]
    fn the_fast_table_records_like_the_slow_path() {
        // A 3 GHz counter: 3 ticks per ns.
        let mult = ((1_000_000_000u128 << 32) / 3_000_000_000u128) as u64;
        let fast =
            Recorder::new(HistogramConfig::LATENCY, 2, Some(1_000)).with_fast_table(3_000, mult);
        let slow = Recorder::new(HistogramConfig::LATENCY, 2, Some(1_000));
        let ns = |t: u64| ((t as u128 * mult as u128) >> 32) as u64;
        for ticks in [120u64, 121, 150, 2_999, 120, 3_000, 90_000, 130] {
            if !fast.record_fast(ticks) {
                fast.record_at(ns(ticks), 0, || 7);
            } else {
                fast.raise_second_fast(0, ticks);
            }
            slow.record_at(ns(ticks), 0, || 7);
        }
        assert_eq!(fast.snapshot(), slow.snapshot());
        assert_eq!((fast.count(), fast.max()), (slow.count(), slow.max()));
        assert_eq!(fast.second_max(0), slow.second_max(0));
        assert_eq!(fast.breaches(None), slow.breaches(None));
    }
}
