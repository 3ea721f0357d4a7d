//! The timer / noise / ticks result model (`kind` = `timer`, `noise`, `ticks`): per-thread
//! statistics with the contract's `*_ns` names, the histogram, per-second series, threshold
//! breaches, the load that ran, and the attribution of the worst seconds. Also the
//! statistics helpers for bucket lists that did not come from a [`crate::Histogram`]
//! (imported cyclictest/oslat histograms with 1 µs buckets).

use serde::{Deserialize, Serialize};

use crate::histogram::{Bucket, HistogramData, Summary};
use crate::Envelope;

/// A timer or noise measurement (lowlat's own or imported).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyResult {
    #[serde(flatten)]
    pub envelope: Envelope,
    /// Measured with real-time scheduling (SCHED_FIFO/RR) and locked memory. `false` means
    /// the numbers include ordinary scheduler delays: not a real-time claim.
    pub realtime: bool,
    /// Seconds per point of every thread's `per_second_max_ns` / `per_second_noise_ns`: each
    /// point is the maximum (noise: the sum) over its `series_step_s` seconds, point 0 starting
    /// at second 0. 1 for short runs, imports and files that predate the field; lowlat widens
    /// it so a result holds at most [`SERIES_BUDGET_POINTS`] series points in all.
    #[serde(default = "one_second")]
    pub series_step_s: u64,
    pub threads: Vec<ThreadResult>,
    /// The worst samples at or above `--threshold` over all threads (at most
    /// [`MAX_BREACHES`], ties keep the earlier), in the order they happened. Every breach is
    /// counted in its thread's `breach_count` and `breaches_per_minute`.
    #[serde(default)]
    pub breaches: Vec<Breach>,
    /// The load that ran on the other CPUs, if any.
    #[serde(default)]
    pub load: Option<LoadInfo>,
    /// Things a reader must know (no real-time, VM, tracer unavailable, …).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The kernel tracer that measured (timerlat, osnoise, hwlat); absent when lowlat's own
    /// threads did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracer: Option<crate::tracer::TracerRun>,
}

/// Most series points (both series, all threads) a result written by lowlat holds: about
/// 2 MB of JSON at worst whatever the run's length and CPU count (see `series_step_s`).
pub const SERIES_BUDGET_POINTS: usize = 262_144;

fn one_second() -> u64 {
    1
}

impl LatencyResult {
    /// Seconds per series point (`series_step_s`, never 0).
    pub fn series_step(&self) -> u64 {
        self.series_step_s.max(1)
    }

    /// The scheduling the measuring threads ran with: `envelope.scheduling` when recorded;
    /// for older results, `params.policy` unless `realtime` is false and a note says the
    /// real-time policy was refused (then `other`). `None` when the result does not say.
    pub fn ran_policy(&self) -> Option<util::sched::Policy> {
        if let Some(s) = &self.envelope.scheduling {
            return Some(s.ran);
        }
        let asked = self.envelope.params.latency()?.policy?;
        let refused = !self.realtime
            && self.notes.iter().any(|n| n.starts_with("NOT REAL-TIME: could not set SCHED_"));
        Some(if asked.is_realtime() && refused { util::sched::Policy::Other } else { asked })
    }

    /// [`crate::Scheduling::not_realtime_short`], or `NOT REAL-TIME (ran SCHED_OTHER)` for an
    /// older result whose real-time policy was refused.
    pub fn not_realtime_short(&self) -> Option<String> {
        match &self.envelope.scheduling {
            Some(s) => s.not_realtime_short(),
            None => self.not_realtime().map(|_| "NOT REAL-TIME (ran SCHED_OTHER)".to_string()),
        }
    }

    /// `NOT REAL-TIME: ran SCHED_OTHER — SCHED_FIFO refused: <cause>` when a real-time
    /// policy was asked for and not obtained (older results: the refusal note itself).
    pub fn not_realtime(&self) -> Option<String> {
        if let Some(s) = &self.envelope.scheduling {
            return s.not_realtime();
        }
        let ran = self.ran_policy()?;
        let asked = self.envelope.params.latency().and_then(|p| p.policy);
        (asked != Some(ran))
            .then(|| {
                self.notes.iter().find(|n| n.starts_with("NOT REAL-TIME: could not set")).cloned()
            })
            .flatten()
    }
}

/// One measured CPU (one thread).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadResult {
    /// The CPU the thread was pinned to; `None` when it was not pinned.
    pub cpu: Option<u32>,
    /// `count`, `min_ns` … `p9999_ns`.
    #[serde(flatten)]
    pub stats: Summary,
    /// The input said this thread's min/avg/max but not how many samples it took
    /// (cyclictest's `# Min/Avg/Max Latencies:` lines alone): `count` is then 0, the maximum
    /// is known and the distribution is not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count_unknown: bool,
    /// timer: wake-ups later than one full interval (periods cyclictest skips silently).
    pub overruns: u64,
    pub histogram: HistogramData,
    /// Maximum latency / gap of each `series_step_s` seconds of the run (ns), the first
    /// step first (one point per second when the step is 1).
    #[serde(default)]
    pub per_second_max_ns: Vec<u64>,
    /// noise: total time lost to gaps above the loop floor in each `series_step_s` seconds
    /// (ns).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_second_noise_ns: Vec<u64>,
    /// noise: sum of all gaps above the loop floor (ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_noise_ns: Option<u64>,
    /// noise: the loop's own floor (ns): gaps at or below it are the loop, not noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_ns: Option<u64>,
    /// Last sample (cyclictest's `Act:`), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_ns: Option<u64>,
    /// Thread id (cyclictest's `( pid)` column), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ns: Option<u64>,
    /// Samples at or above `--threshold` on this CPU; `None` when no threshold was set (or
    /// the file predates the count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breach_count: Option<u64>,
    /// Breaches per minute of the run (minute 0 first); empty when there was none. Each entry
    /// covers `breaches_step_min` minutes when that is set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breaches_per_minute: Vec<u64>,
    /// Minutes per entry of `breaches_per_minute`, set only when it is more than 1: a run
    /// longer than a day (1,440 entries) doubles it as often as needed, so the counts stay a
    /// bounded size and every entry counts its own minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaches_step_min: Option<u64>,
    /// The worst seconds with what the CPU was doing then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worst_seconds: Vec<Attribution>,
    /// timerlat: the IRQ-context latency (the thread context is this thread's stats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq: Option<crate::tracer::IrqLatency>,
    /// osnoise: the periods summed and the noise by source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osnoise: Option<crate::tracer::OsnoiseCpu>,
    /// osnoise: the longest gaps with what ran inside them (at most `tracer::MAX_GAPS`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<crate::tracer::Gap>,
    /// hwlat: inner/outer maxima and NMIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hwlat: Option<crate::tracer::HwlatCpu>,
    /// timer with cyclictest's `-h N`: the samples past the N µs histogram, with the cycle
    /// numbers of the first N of them (cyclictest's "Histogram Overflow at cycle number").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outliers: Option<Outliers>,
}

/// The samples at or above a bound, as cyclictest lists its histogram's overflows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outliers {
    /// The bound: the end of the `-h N` histogram (N µs).
    pub at_or_above_ns: u64,
    /// How many samples reached it.
    pub count: u64,
    /// The cycle numbers (samples before it, from 0) of the first of them, in order; `count`
    /// minus their number is what cyclictest prints as `# NNNNN others`.
    pub cycles: Vec<u64>,
}

impl ThreadResult {
    /// A percentile `v` of this thread that lies in its histogram's first bucket (`0 …
    /// unit_ns`): its value is only known to be below the bucket's edge, so this returns the
    /// edge (`100` for lowlat's 100 ns buckets) to be shown as `< 100 ns`, not as the edge
    /// minus one (`avg 37 ns, p50 99 ns` read as if the median were above the mean). `None`
    /// for any other value, or without a histogram configuration.
    pub fn below_first_bucket(&self, v: Option<u64>) -> Option<u64> {
        let unit = self.histogram.config?.unit_ns;
        (v? + 1 == unit).then_some(unit)
    }

    /// Whether the thread's maximum is known: it took samples, or the input gave its
    /// min/avg/max without a count (`count_unknown`).
    pub fn max_known(&self) -> bool {
        self.stats.count > 0 || self.count_unknown
    }
}

/// A sample at or above the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Breach {
    pub cpu: Option<u32>,
    /// Time since the start of the measurement.
    pub t_ns: u64,
    pub value_ns: u64,
}

/// Most breaches a result lists (the worst; all are counted per thread and per minute).
pub const MAX_BREACHES: usize = 1000;

/// The worst `n` breaches (largest value; of equal values the earlier), in time order.
pub fn worst_breaches(mut all: Vec<Breach>, n: usize) -> Vec<Breach> {
    all.sort_by(|a, b| b.value_ns.cmp(&a.value_ns).then(a.t_ns.cmp(&b.t_ns)));
    all.truncate(n);
    all.sort_by_key(|b| (b.t_ns, b.cpu));
    all
}

impl LatencyResult {
    /// Whether the result holds evidence to judge: samples for lowlat's threads and timerlat;
    /// a completed osnoise period (no gap at or above the threshold is the best osnoise
    /// result, not an empty one); a full hwlat window (no sample is hwlat's best result).
    pub fn measured(&self) -> bool {
        let samples = self.threads.iter().any(ThreadResult::max_known);
        match self.tracer.as_ref().and_then(|t| t.name) {
            Some(crate::tracer::TracerName::Osnoise) => {
                samples
                    || self
                        .threads
                        .iter()
                        .any(|t| t.osnoise.as_ref().is_some_and(|o| o.periods > 0))
            }
            Some(crate::tracer::TracerName::Hwlat) => {
                let window_ns = self.tracer.as_ref().and_then(|t| t.period_us).unwrap_or(1) * 1000;
                samples || self.envelope.duration_ns >= window_ns
            }
            _ => samples,
        }
    }

    /// Every breach of the run: the per-thread counts when known, else the listed ones.
    pub fn breach_total(&self) -> u64 {
        let counted: Option<u64> =
            self.threads.iter().map(|t| t.breach_count).try_fold(0u64, |a, c| Some(a + c?));
        counted.unwrap_or(self.breaches.len() as u64).max(self.breaches.len() as u64)
    }
}

/// What load ran during the measurement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadInfo {
    /// `cpu`, `memory`, `io`, `all`, `external`, …
    pub kind: String,
    /// CPUs the load ran on (canonical cpu-list).
    pub cpus: Option<String>,
    /// The external command, for `--load-cmd` / `--interference-cmd`.
    pub command: Option<String>,
    /// How the external command ended (absent for built-in loads and in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<LoadExit>,
}

/// How an external load command ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadExit {
    /// Who ended it.
    pub ended_by: LoadEnd,
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
}

/// Who ended an external load command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadEnd {
    /// It ended by itself before the measurement did (it was meant to run throughout).
    Itself,
    /// lowlat's SIGTERM to its process group at the end of the measurement.
    Sigterm,
    /// lowlat's SIGKILL, 3 s after a SIGTERM it outlived.
    Sigkill,
}

impl std::fmt::Display for LoadExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match (self.code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("signal {s}"),
            (None, None) => "status unknown".into(),
        };
        match self.ended_by {
            LoadEnd::Itself => write!(f, "ended by itself during the run ({how})"),
            LoadEnd::Sigterm => write!(f, "stopped with SIGTERM at the end ({how})"),
            LoadEnd::Sigkill => write!(f, "killed with SIGKILL at the end ({how})"),
        }
    }
}

/// One second of a run and what happened on the CPU during it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Attribution {
    pub second: u64,
    pub max_ns: u64,
    #[serde(default)]
    pub noise_ns: u64,
    /// `/proc/interrupts` rows that moved on this CPU in that second: (name, count).
    #[serde(default)]
    pub interrupts: Vec<(String, u64)>,
    /// `/proc/softirqs` rows that moved: (name, count).
    #[serde(default)]
    pub softirqs: Vec<(String, u64)>,
    /// Context switches of the measuring thread in that second (voluntary + involuntary).
    #[serde(default)]
    pub context_switches: Option<u64>,
    /// The human sentence ("max 37 µs at t=12 s while CPU 3 took 1 LOC, 2 RES").
    pub text: String,
}

/// Interrupt rates of one CPU while a spinner ran there (`kind` = `ticks`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TicksResult {
    #[serde(flatten)]
    pub envelope: Envelope,
    pub cpus: Vec<CpuTicks>,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One CPU's tick and interrupt rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuTicks {
    pub cpu: u32,
    pub nohz_full: bool,
    pub isolated: bool,
    /// Local timer interrupts per second (the `LOC` row).
    pub loc_per_s: f64,
    /// What to expect on this CPU (`~1/s` on nohz_full with one task; `HZ` otherwise).
    pub expected: String,
    /// Every interrupt row that moved: (name, per second), busiest first.
    pub rates: Vec<(String, f64)>,
    /// Softirq rows that moved: (name, per second).
    #[serde(default)]
    pub softirq_rates: Vec<(String, f64)>,
    pub verdict: String,
}

/// Statistics from a bucket list whose min/max/avg are known from elsewhere (imports).
/// Quantiles are the upper bound (minus 1 ns) of the bucket holding the rank, clamped to
/// the exact min and max. A rank past the buckets falls in the overflow, where the tool
/// kept no value: that quantile is `None` (unknown, beyond the histogram's range), never the
/// maximum dressed up as a percentile. The spread and the quantiles are `None` when there
/// is no sample in the buckets or overflow.
pub fn summary_from_buckets(
    buckets: &[Bucket],
    overflow: u64,
    min_ns: u64,
    avg_ns: u64,
    max_ns: u64,
) -> Summary {
    let in_range = buckets.iter().fold(0u64, |a, b| a.saturating_add(b.count));
    let count = in_range.saturating_add(overflow);
    let q = |p: f64| -> Option<u64> {
        if count == 0 {
            return None;
        }
        let rank = util::stats::rank(p, count);
        let mut seen = 0u64;
        for b in buckets {
            seen = seen.saturating_add(b.count);
            if seen >= rank {
                return Some(b.hi_ns.saturating_sub(1).clamp(min_ns, max_ns.max(min_ns)));
            }
        }
        None
    };
    let stddev_ns = (in_range > 0).then(|| {
        let mean = avg_ns as f64;
        let var: f64 = buckets
            .iter()
            .map(|b| {
                let m = (b.lo_ns as f64 + b.hi_ns as f64) / 2.0 - mean;
                m * m * b.count as f64
            })
            .sum::<f64>()
            / in_range as f64;
        var.sqrt().round() as u64
    });
    Summary {
        count,
        min_ns,
        avg_ns,
        max_ns,
        stddev_ns,
        p50_ns: q(0.50),
        p90_ns: q(0.90),
        p99_ns: q(0.99),
        p999_ns: q(0.999),
        p9999_ns: q(0.9999),
    }
}

/// Statistics of a tool's summary without a histogram: count, min, avg and max as the tool
/// printed them; the spread and the percentiles are unknown.
pub fn summary_without_histogram(count: u64, min_ns: u64, avg_ns: u64, max_ns: u64) -> Summary {
    Summary { count, min_ns, avg_ns, max_ns, ..Summary::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(lo_us: u64, count: u64) -> Bucket {
        Bucket { lo_ns: lo_us * 1000, hi_ns: (lo_us + 1) * 1000, count }
    }

    #[test]
    fn quantiles_from_buckets_and_overflow() {
        let buckets = [b(10, 50), b(11, 40), b(20, 9)];
        let s = summary_from_buckets(&buckets, 1, 10_000, 11_000, 500_000);
        assert_eq!(s.count, 100);
        assert_eq!(s.p50_ns, Some(10_999));
        assert_eq!(s.p90_ns, Some(11_999));
        assert_eq!(s.p99_ns, Some(20_999));
        // Issue 21, item 8: a rank in the overflow is unknown, not the maximum.
        assert_eq!(s.p999_ns, None, "rank in the overflow: unknown");
        assert_eq!(s.p9999_ns, None);
        assert_eq!(s.max_ns, 500_000);
    }

    #[test]
    fn empty_buckets_give_unknown_percentiles_not_zeros() {
        let s = summary_from_buckets(&[], 0, 0, 0, 0);
        assert_eq!(s, Summary::default());
        assert_eq!((s.p99_ns, s.stddev_ns), (None, None));
        let v = serde_json::to_value(summary_without_histogram(10, 1, 2, 3)).unwrap();
        assert!(v["p99_ns"].is_null() && v["stddev_ns"].is_null(), "{v}");
        assert_eq!(v["max_ns"], 3);
    }

    #[test]
    fn worst_breaches_keep_the_largest_in_time_order() {
        let b = |cpu, t_ns, value_ns| Breach { cpu: Some(cpu), t_ns, value_ns };
        let all = vec![b(1, 5, 10), b(2, 1, 30), b(1, 9, 30), b(2, 3, 20), b(1, 2, 5)];
        assert_eq!(worst_breaches(all, 3), vec![b(2, 1, 30), b(2, 3, 20), b(1, 9, 30)]);
    }

    #[test]
    fn a_result_without_a_series_step_reads_as_one_second_per_point() {
        let r = LatencyResult {
            envelope: Envelope::new(crate::Kind::Timer, "lowlat test"),
            realtime: true,
            series_step_s: 120,
            threads: vec![ThreadResult { per_second_max_ns: vec![1, 2], ..Default::default() }],
            breaches: Vec::new(),
            load: None,
            notes: Vec::new(),
            tracer: None,
        };
        let mut v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["series_step_s"], 120);
        assert_eq!(serde_json::from_value::<LatencyResult>(v.clone()).unwrap(), r);
        v.as_object_mut().unwrap().remove("series_step_s");
        let old: LatencyResult = serde_json::from_value(v).unwrap();
        assert_eq!((old.series_step_s, old.series_step()), (1, 1));
        assert_eq!(LatencyResult { series_step_s: 0, ..old }.series_step(), 1);
    }

    #[test]
    fn thread_json_uses_contract_names() {
        let t = ThreadResult { cpu: Some(1), ..Default::default() };
        let v = serde_json::to_value(&t).unwrap();
        for k in [
            "cpu",
            "count",
            "overruns",
            "min_ns",
            "avg_ns",
            "max_ns",
            "stddev_ns",
            "p50_ns",
            "p90_ns",
            "p99_ns",
            "p999_ns",
            "p9999_ns",
            "histogram",
        ] {
            assert!(v.get(k).is_some(), "missing {k}: {v}");
        }
        assert!(
            v["histogram"].get("buckets").is_some() && v["histogram"].get("overflow").is_some()
        );
    }
}
