//! A fixed-memory log-linear latency histogram (HDR-style). Values are nanoseconds. Below
//! `2^(sub_bits+1)` units every unit has its own bucket; above, each power of two is split
//! into `2^sub_bits` buckets, so the relative error stays under `2^-sub_bits`. Memory is
//! allocated once in [`Histogram::new`]; [`Histogram::record`] never allocates, locks or
//! calls the kernel, so it is safe in a measurement hot loop.

use serde::{Deserialize, Serialize};

/// Shape of a histogram: resolution at the bottom, precision, range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistogramConfig {
    /// Width of the finest buckets in ns.
    pub unit_ns: u64,
    /// `2^sub_bits` buckets per power of two above the linear range.
    pub sub_bits: u32,
    /// Values at or above `unit_ns * 2^max_bits` count as overflow.
    pub max_bits: u32,
}

impl HistogramConfig {
    /// Timer / noise latencies: 100 ns buckets up to 409.6 µs, then 0.05% relative
    /// (finer than 1 µs up to ~3 ms), range ~1.9 h. 53 248 buckets, 426 KiB.
    pub const LATENCY: Self = Self { unit_ns: 100, sub_bits: 11, max_bits: 36 };
    /// Storage latencies: 1 µs buckets up to 1 ms, then 0.2% relative, range ~19 h.
    pub const STORAGE: Self = Self { unit_ns: 1_000, sub_bits: 9, max_bits: 36 };

    fn half(&self) -> u64 {
        1 << self.sub_bits
    }

    /// Number of buckets.
    pub fn len(&self) -> usize {
        ((self.max_bits - self.sub_bits + 1) as usize) << self.sub_bits
    }

    /// Always false: a configuration has at least one bucket.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bucket index of a value in ns, or `None` on overflow.
    #[inline]
    pub fn index(&self, value_ns: u64) -> Option<usize> {
        let v = value_ns / self.unit_ns;
        if v >> self.max_bits != 0 {
            return None;
        }
        let half = self.half();
        if v < 2 * half {
            return Some(v as usize);
        }
        let msb = 63 - v.leading_zeros() as u64;
        let e = msb - self.sub_bits as u64;
        Some((((e + 1) * half) + ((v >> e) - half)) as usize)
    }

    /// `[lo, hi)` of bucket `idx` in ns.
    pub fn bounds(&self, idx: usize) -> (u64, u64) {
        let half = self.half() as usize;
        let (lo, width) = if idx < 2 * half {
            (idx as u64, 1)
        } else {
            let e = (idx / half - 1) as u32;
            ((((idx % half) + half) as u64) << e, 1u64 << e)
        };
        (lo * self.unit_ns, (lo + width) * self.unit_ns)
    }
}

/// A latency histogram with exact min/max/sum alongside the buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    config: HistogramConfig,
    counts: Box<[u64]>,
    overflow: u64,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
    sum_sq: f64,
}

impl Histogram {
    /// An empty histogram; the only allocation it ever makes.
    pub fn new(config: HistogramConfig) -> Self {
        Self {
            config,
            counts: vec![0; config.len()].into_boxed_slice(),
            overflow: 0,
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0.0,
        }
    }

    /// Rebuild from raw parts (e.g. a snapshot of a lock-free recorder). `counts` must have
    /// `config.len()` entries; missing entries count as zero, extra ones as overflow.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        config: HistogramConfig,
        counts: &[u64],
        overflow: u64,
        count: u64,
        min: u64,
        max: u64,
        sum: u128,
        sum_sq: f64,
    ) -> Self {
        let mut h = Self::new(config);
        let mut extra = 0;
        for (i, c) in counts.iter().enumerate() {
            match h.counts.get_mut(i) {
                Some(slot) => *slot = *c,
                None => extra += c,
            }
        }
        h.overflow = overflow + extra;
        h.count = count;
        h.min = if count == 0 { u64::MAX } else { min };
        h.max = max;
        h.sum = sum;
        h.sum_sq = sum_sq;
        h
    }

    /// The configuration.
    pub fn config(&self) -> HistogramConfig {
        self.config
    }

    /// Record one value (ns). No allocation, no syscall.
    #[inline]
    pub fn record(&mut self, value_ns: u64) {
        match self.config.index(value_ns) {
            Some(i) => {
                if let Some(c) = self.counts.get_mut(i) {
                    *c += 1;
                }
            }
            None => self.overflow += 1,
        }
        self.count += 1;
        self.min = self.min.min(value_ns);
        self.max = self.max.max(value_ns);
        self.sum += value_ns as u128;
        let f = value_ns as f64;
        self.sum_sq += f * f;
    }

    /// Add another histogram of the same configuration into this one.
    pub fn merge(&mut self, other: &Histogram) {
        if other.config != self.config {
            for b in other.buckets() {
                for _ in 0..b.count.min(1_000_000) {
                    self.record(b.lo_ns);
                }
            }
            return;
        }
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.overflow += other.overflow;
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Values beyond the histogram's range (still counted in min/max/avg).
    pub fn overflow(&self) -> u64 {
        self.overflow
    }

    /// Exact minimum, `None` when empty.
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// Exact maximum, `None` when empty.
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// Exact mean in ns.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// Population standard deviation in ns.
    pub fn stddev(&self) -> Option<f64> {
        let m = self.mean()?;
        let var = (self.sum_sq / self.count as f64 - m * m).max(0.0);
        Some(var.sqrt())
    }

    /// Number of values at or above `threshold_ns` (bucket resolution).
    pub fn count_at_or_above(&self, threshold_ns: u64) -> u64 {
        let mut n = self.overflow;
        for (i, c) in self.counts.iter().enumerate() {
            if *c > 0 && self.config.bounds(i).0 >= threshold_ns {
                n += c;
            }
        }
        n
    }

    /// The value at quantile `q` (0..=1): the upper bound of the bucket holding the
    /// nearest rank ([`util::stats::rank`]), clamped to the exact min and max. Overflowed
    /// values rank above every bucket.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = util::stats::rank(q, self.count);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let hi = self.config.bounds(i).1.saturating_sub(1);
                return Some(hi.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// The non-empty buckets, ascending.
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        self.counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| {
            let (lo_ns, hi_ns) = self.config.bounds(i);
            Bucket { lo_ns, hi_ns, count: *c }
        })
    }

    /// Summary statistics (count, min/avg/max/stddev, p50…p99.99); the spread and the
    /// percentiles are `None` when nothing was recorded.
    pub fn summary(&self) -> Summary {
        Summary {
            count: self.count,
            min_ns: self.min().unwrap_or(0),
            avg_ns: self.mean().map_or(0, |m| m.round() as u64),
            max_ns: self.max().unwrap_or(0),
            stddev_ns: self.stddev().map(|s| s.round() as u64),
            p50_ns: self.quantile(0.50),
            p90_ns: self.quantile(0.90),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            p9999_ns: self.quantile(0.9999),
        }
    }

    /// The serializable form (`{buckets[] {lo_ns, hi_ns, count}, overflow}`).
    pub fn to_data(&self) -> HistogramData {
        HistogramData {
            config: Some(self.config),
            buckets: self.buckets().collect(),
            overflow: self.overflow,
            count: self.count,
            min_ns: self.min(),
            max_ns: self.max(),
            sum_ns: Some(self.sum as f64),
            sum_sq_ns2: Some(self.sum_sq),
        }
    }

    /// Rebuild from the serialized form (e.g. to merge or re-plot saved results).
    pub fn from_data(d: &HistogramData) -> Self {
        let mut h = Self::new(d.config.unwrap_or(HistogramConfig::LATENCY));
        for b in &d.buckets {
            match h.config.index(b.lo_ns) {
                Some(i) => {
                    if let Some(c) = h.counts.get_mut(i) {
                        *c += b.count;
                    }
                }
                None => h.overflow += b.count,
            }
        }
        h.overflow += d.overflow;
        h.count = d.count.max(d.buckets.iter().map(|b| b.count).sum::<u64>() + d.overflow);
        h.min = d.min_ns.or_else(|| d.buckets.first().map(|b| b.lo_ns)).unwrap_or(u64::MAX);
        h.max = d.max_ns.or_else(|| d.buckets.last().map(|b| b.hi_ns)).unwrap_or(0);
        h.sum = d.sum_ns.map_or_else(
            || d.buckets.iter().map(|b| (b.lo_ns + b.hi_ns) as u128 / 2 * b.count as u128).sum(),
            |s| s as u128,
        );
        h.sum_sq = d.sum_sq_ns2.unwrap_or_else(|| {
            d.buckets
                .iter()
                .map(|b| {
                    let m = (b.lo_ns + b.hi_ns) as f64 / 2.0;
                    m * m * b.count as f64
                })
                .sum()
        });
        h
    }
}

/// One non-empty bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bucket {
    pub lo_ns: u64,
    pub hi_ns: u64,
    pub count: u64,
}

/// Serialized histogram: non-empty buckets plus exact moments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistogramData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<HistogramConfig>,
    pub buckets: Vec<Bucket>,
    pub overflow: u64,
    #[serde(default)]
    pub count: u64,
    #[serde(default)]
    pub min_ns: Option<u64>,
    #[serde(default)]
    pub max_ns: Option<u64>,
    #[serde(default)]
    pub sum_ns: Option<f64>,
    #[serde(default)]
    pub sum_sq_ns2: Option<f64>,
}

/// Summary statistics in integer nanoseconds (the JSON contract's `*_ns` names). The spread
/// and the percentiles are `None` (JSON `null`) when they are not known: nothing recorded, or
/// an import of a tool's summary without its histogram. Never a made-up 0.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Summary {
    pub count: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub max_ns: u64,
    pub stddev_ns: Option<u64>,
    pub p50_ns: Option<u64>,
    pub p90_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    pub p9999_ns: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_are_contiguous_and_cover_the_range() {
        for cfg in [HistogramConfig::LATENCY, HistogramConfig::STORAGE] {
            let mut prev_hi = 0;
            for i in 0..cfg.len() {
                let (lo, hi) = cfg.bounds(i);
                assert_eq!(lo, prev_hi, "bucket {i}");
                assert!(hi > lo);
                assert_eq!(cfg.index(lo), Some(i));
                assert_eq!(cfg.index(hi - 1), Some(i));
                prev_hi = hi;
            }
            assert_eq!(cfg.index(prev_hi), None);
        }
    }

    #[test]
    fn latency_config_has_sub_microsecond_resolution_to_3ms() {
        let c = HistogramConfig::LATENCY;
        let i = c.index(3_000_000).unwrap();
        let (lo, hi) = c.bounds(i);
        assert!(hi - lo <= 1_000, "{lo}..{hi}");
        assert!(c.len() * 8 < 512 * 1024);
    }

    #[test]
    fn stats_match_exact_values() {
        let mut h = Histogram::new(HistogramConfig::LATENCY);
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!((s.count, s.min_ns, s.max_ns), (1000, 1000, 1_000_000));
        assert_eq!(s.avg_ns, 500_500);
        let (p50, p99) = (s.p50_ns.unwrap(), s.p99_ns.unwrap());
        assert!((p50 as i64 - 500_000).abs() <= 1000, "{p50}");
        assert!((p99 as i64 - 990_000).abs() <= 1000, "{p99}");
        assert_eq!(h.count_at_or_above(900_000), 101);
        let sd = h.stddev().unwrap();
        assert!((sd - 288_675.0).abs() < 100.0, "{sd}");
    }

    #[test]
    fn overflow_is_counted_and_ranked_last() {
        let mut h = Histogram::new(HistogramConfig::LATENCY);
        h.record(10);
        h.record(u64::MAX / 2);
        assert_eq!(h.overflow(), 1);
        assert_eq!(h.quantile(1.0), Some(u64::MAX / 2));
        assert!(h.quantile(0.5).unwrap() < 100, "within the first 100 ns bucket");
    }

    #[test]
    fn data_roundtrip_preserves_summary() {
        let mut h = Histogram::new(HistogramConfig::LATENCY);
        for v in [1_500u64, 2_000, 2_000, 75_000, 9_000_000] {
            h.record(v);
        }
        let back = Histogram::from_data(&h.to_data());
        assert_eq!(back.summary(), h.summary());
        let json = serde_json::to_string(&h.to_data()).unwrap();
        assert!(json.contains("\"lo_ns\":1500"), "{json}");
    }

    proptest! {
        #[test]
        fn relative_error_is_bounded(v in 0u64..(100u64 << 36)) {
            let c = HistogramConfig::LATENCY;
            if let Some(i) = c.index(v) {
                let (lo, hi) = c.bounds(i);
                prop_assert!(lo <= v && v < hi);
                prop_assert!((hi - lo) <= c.unit_ns.max(lo >> c.sub_bits));
            }
        }

        #[test]
        fn quantiles_are_monotone(vals in prop::collection::vec(0u64..10_000_000, 1..300)) {
            let mut h = Histogram::new(HistogramConfig::LATENCY);
            for v in &vals { h.record(*v); }
            let s = h.summary();
            let p = [s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns, s.p9999_ns].map(Option::unwrap);
            prop_assert!(s.min_ns <= p[0] && p[0] <= p[1] && p[1] <= p[2]);
            prop_assert!(p[2] <= p[3] && p[3] <= p[4] && p[4] <= s.max_ns);
        }
    }
}
