//! Per-thread statistics written by one measuring thread and read by the main thread while
//! the run goes on: a histogram of relaxed atomic counters (single writer, so an increment
//! is a plain load + store, as cheap as a `u64`), exact min/max/sum, overruns, a ring of
//! per-second maxima and noise totals, and a bounded list of threshold breaches. Everything
//! is allocated in [`Recorder::new`]; [`Recorder::record`] never allocates, locks or calls
//! the kernel.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use results::{Breach, Histogram, HistogramConfig};

/// Most breaches kept per thread (the count beyond is still known).
pub const MAX_BREACHES: usize = 1024;

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
    breaches: Box<[(AtomicU64, AtomicU64)]>,
    breach_count: AtomicU64,
    threshold_ns: u64,
    floor: AtomicU64,
}

impl Recorder {
    /// A recorder for a run of up to `seconds` seconds (longer runs wrap the series ring).
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
            per_second_max: ring(seconds.max(1)),
            per_second_noise: ring(seconds.max(1)),
            total_noise: AtomicU64::new(0),
            breaches: (0..MAX_BREACHES).map(|_| (AtomicU64::new(0), AtomicU64::new(0))).collect(),
            breach_count: AtomicU64::new(0),
            threshold_ns: threshold_ns.unwrap_or(u64::MAX),
            floor: AtomicU64::new(0),
        }
    }

    /// Size the noise series ring (timer runs keep a 1-entry ring).
    pub fn with_noise_series(mut self, seconds: usize) -> Self {
        self.per_second_noise = (0..seconds.max(1)).map(|_| AtomicU64::new(0)).collect();
        self
    }

    /// Bytes this recorder allocated (fixed for its life): the memory test's measure.
    #[cfg(test)]
    fn memory_bytes(&self) -> usize {
        8 * (self.counts.len() + self.per_second_max.len() + self.per_second_noise.len())
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
        bump(&self.count, 1);
        if v < self.min.load(Relaxed) {
            self.min.store(v, Relaxed);
        }
        raise(&self.max, v);
        bump(&self.sum, v);
        let sq = f64::from_bits(self.sum_sq.load(Relaxed)) + (v as f64) * (v as f64);
        self.sum_sq.store(sq.to_bits(), Relaxed);
        self.last.store(v, Relaxed);
        let len = self.per_second_max.len();
        let slot = if sec < len { sec } else { sec % len };
        if let Some(s) = self.per_second_max.get(slot) {
            raise(s, v);
        }
        if v >= self.threshold_ns {
            let n = self.breach_count.load(Relaxed);
            if let Some((bt, bv)) = self.breaches.get(n as usize) {
                bt.store(t(), Relaxed);
                bv.store(v, Relaxed);
            }
            self.breach_count.store(n + 1, Relaxed);
            return true;
        }
        false
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
        if let Some(s) = self.per_second_noise.get(sec % self.per_second_noise.len()) {
            bump(s, ns);
        }
        bump(&self.total_noise, ns);
    }

    /// Add `n` overruns (missed periods).
    #[inline]
    pub fn add_overruns(&self, n: u64) {
        bump(&self.overruns, n);
    }

    /// Samples so far.
    pub fn count(&self) -> u64 {
        self.count.load(Relaxed)
    }

    /// Largest sample so far.
    pub fn max(&self) -> u64 {
        self.max.load(Relaxed)
    }

    /// Overruns so far.
    pub fn overruns(&self) -> u64 {
        self.overruns.load(Relaxed)
    }

    /// Max of second `sec` (ring position).
    pub fn second_max(&self, sec: usize) -> u64 {
        self.per_second_max.get(sec % self.per_second_max.len()).map_or(0, |a| a.load(Relaxed))
    }

    /// Noise of second `sec`.
    pub fn second_noise(&self, sec: usize) -> u64 {
        self.per_second_noise.get(sec % self.per_second_noise.len()).map_or(0, |a| a.load(Relaxed))
    }

    /// Total noise so far.
    pub fn total_noise(&self) -> u64 {
        self.total_noise.load(Relaxed)
    }

    /// A consistent-enough copy as a [`Histogram`] (main thread only: allocates).
    pub fn snapshot(&self) -> Histogram {
        let counts: Vec<u64> = self.counts.iter().map(|c| c.load(Relaxed)).collect();
        Histogram::from_parts(
            self.config,
            &counts,
            self.overflow.load(Relaxed),
            self.count.load(Relaxed),
            self.min.load(Relaxed),
            self.max.load(Relaxed),
            self.sum.load(Relaxed) as u128,
            f64::from_bits(self.sum_sq.load(Relaxed)),
        )
    }

    /// The breaches recorded so far (at most [`MAX_BREACHES`]) and the total count.
    pub fn breaches(&self, cpu: Option<u32>) -> (Vec<Breach>, u64) {
        let n = self.breach_count.load(Relaxed);
        let kept = (n as usize).min(MAX_BREACHES);
        let list = self.breaches[..kept]
            .iter()
            .map(|(t, v)| Breach { cpu, t_ns: t.load(Relaxed), value_ns: v.load(Relaxed) })
            .collect();
        (list, n)
    }

    /// The per-second maxima for the first `secs` seconds (ring order resolved).
    pub fn series(&self, secs: usize) -> (Vec<u64>, Vec<u64>) {
        let n = secs.min(self.per_second_max.len());
        let first = secs - n;
        let max = (first..secs).map(|s| self.second_max(s)).collect();
        let noise = (first..secs).map(|s| self.second_noise(s)).collect();
        (max, noise)
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
        assert_eq!(r.series(3).0, vec![20_000, 60_000, 3_000]);
        let (b, n) = r.breaches(Some(2));
        assert_eq!(n, 1);
        assert_eq!(b[0], Breach { cpu: Some(2), t_ns: 1_400_000_000, value_ns: 60_000 });
    }

    #[test]
    fn sixteen_threads_for_a_day_fit_in_a_few_mib() {
        let r =
            Recorder::new(HistogramConfig::LATENCY, 24 * 3600, None).with_noise_series(24 * 3600);
        let total = 16 * r.memory_bytes();
        assert!(total < 32 << 20, "{total} bytes");
    }

    #[test]
    fn breaches_beyond_the_cap_are_counted() {
        let r = Recorder::new(HistogramConfig::LATENCY, 1, Some(0));
        for i in 0..(MAX_BREACHES as u64 + 5) {
            r.record(i, 0);
        }
        let (b, n) = r.breaches(None);
        assert_eq!((b.len(), n), (MAX_BREACHES, MAX_BREACHES as u64 + 5));
    }
}
