//! The fsync / watch result model: what `lowlat measure fsync`, `lowlat measure etcd` and
//! `lowlat watch` write (`kind` = `fsync`, `etcd`, `watch`), the etcd bucket boundaries and
//! thresholds, and the fio-compatible JSON shape (`jobs[0].sync.lat_ns.percentile`).

use serde::{Deserialize, Serialize};

use crate::histogram::HistogramData;
use crate::{Envelope, Histogram};

/// etcd's `ExponentialBuckets(0.001, 2, 14)` upper bounds in ns (1 ms … 8.192 s; +Inf after).
pub const ETCD_BUCKETS_NS: [u64; 14] = [
    1_000_000,
    2_000_000,
    4_000_000,
    8_000_000,
    16_000_000,
    32_000_000,
    64_000_000,
    128_000_000,
    256_000_000,
    512_000_000,
    1_024_000_000,
    2_048_000_000,
    4_096_000_000,
    8_192_000_000,
];

/// etcd FAQ: WAL fdatasync p99 should be below 10 ms.
pub const ETCD_P99_LIMIT_NS: u64 = 10_000_000;
/// OpenShift's etcd-perf container: fio fdatasync p99 below 20 ms.
pub const OPENSHIFT_P99_LIMIT_NS: u64 = 20_000_000;

/// Percentiles of one latency distribution (the contract's `lat_ns {…}` names).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct LatNs {
    pub min: u64,
    pub avg: u64,
    pub max: u64,
    pub stddev: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub p9999: u64,
}

impl LatNs {
    /// From a histogram (percentiles at bucket resolution, min/avg/max exact; all 0 when
    /// nothing was recorded, as fio writes an empty block).
    pub fn from_histogram(h: &Histogram) -> Self {
        let s = h.summary();
        let z = |v: Option<u64>| v.unwrap_or(0);
        Self {
            min: s.min_ns,
            avg: s.avg_ns,
            max: s.max_ns,
            stddev: z(s.stddev_ns),
            p50: z(s.p50_ns),
            p90: z(s.p90_ns),
            p99: z(s.p99_ns),
            p999: z(s.p999_ns),
            p9999: z(s.p9999_ns),
        }
    }
}

/// One time window of the probe (default 1 s): whole-run percentiles hide interference.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Window {
    /// Window start, ns since the probe started.
    pub start_ns: u64,
    pub ops: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// The window had more ops than the per-window sample buffer: p50/p99 cover the first ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// Count of ops in one etcd bucket: `le_ns` = `None` is `+Inf`. Counts are not cumulative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EtcdBucket {
    pub le_ns: Option<u64>,
    pub count: u64,
}

/// Counts of a histogram in etcd's bucket boundaries (non-cumulative, bucket resolution of
/// the fine histogram: a value is placed by its fine bucket's lower bound).
pub fn etcd_buckets(h: &Histogram) -> Vec<EtcdBucket> {
    let mut out: Vec<EtcdBucket> = ETCD_BUCKETS_NS
        .iter()
        .map(|le| EtcdBucket { le_ns: Some(*le), count: 0 })
        .chain(std::iter::once(EtcdBucket { le_ns: None, count: 0 }))
        .collect();
    for b in h.buckets() {
        let i =
            ETCD_BUCKETS_NS.iter().position(|le| b.lo_ns < *le).unwrap_or(ETCD_BUCKETS_NS.len());
        if let Some(slot) = out.get_mut(i) {
            slot.count += b.count;
        }
    }
    if let Some(last) = out.last_mut() {
        last.count += h.overflow();
    }
    out
}

/// A pass/fail against one published threshold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    /// `etcd` (p99 < 10 ms) or `openshift` (p99 < 20 ms).
    pub name: String,
    pub limit_ns: u64,
    pub value_ns: u64,
    pub pass: bool,
}

/// Verdicts of a p99 against etcd's and OpenShift's thresholds.
pub fn verdicts(p99_ns: u64) -> Vec<Verdict> {
    [("etcd", ETCD_P99_LIMIT_NS), ("openshift", OPENSHIFT_P99_LIMIT_NS)]
        .into_iter()
        .map(|(name, limit_ns)| Verdict {
            name: name.to_string(),
            limit_ns,
            value_ns: p99_ns,
            pass: p99_ns < limit_ns,
        })
        .collect()
}

/// The storage environment a number was measured in. Every field may be unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StorageEnv {
    /// The directory measured.
    pub dir: String,
    /// Block device name (`vda`, `nvme0n1`), the whole disk when the fs sits on a partition.
    pub device: Option<String>,
    /// `major:minor` of that disk.
    pub devno: Option<String>,
    /// Active I/O scheduler (the bracketed one).
    pub scheduler: Option<String>,
    pub schedulers_available: Vec<String>,
    pub wbt_lat_usec: Option<i64>,
    /// `write back` / `write through`.
    pub write_cache: Option<String>,
    pub rotational: Option<bool>,
    pub fs_type: Option<String>,
    pub mount_point: Option<String>,
    pub mount_source: Option<String>,
    /// Per-mount and super-block options joined.
    pub mount_options: Option<String>,
    /// `vm.dirty_*` sysctls (name without the `vm.` prefix → value).
    pub dirty: std::collections::BTreeMap<String, u64>,
    /// `v1`, `v2` or `hybrid`.
    pub cgroup_version: Option<String>,
    pub free_bytes: Option<u64>,
}

/// The bulk writer's run (the OS-update imitation).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BulkRun {
    /// The bulk writer's mode, or `command` for an update command.
    pub mode: String,
    /// The update command (`sh -c` text) when one was the interferer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its exit status (`None`: killed by a signal, or the built-in writer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub bytes: u64,
    pub files: u64,
    /// Start, ns since the probe started.
    pub start_ns: u64,
    pub duration_ns: u64,
    /// Time of the final `syncfs` (syncfs-at-end, trickle), included in `duration_ns`.
    pub sync_ns: Option<u64>,
    /// It had not finished when the probe stopped.
    pub unfinished: bool,
}

/// One scenario of a run: baseline, or interference × mitigation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Scenario {
    /// `baseline`, or `<interference>` / `<interference> + <mitigation>`.
    pub name: String,
    pub interference: Option<String>,
    pub mitigation: Option<String>,
    pub ops: u64,
    pub iops: f64,
    pub duration_ns: u64,
    pub lat_ns: LatNs,
    pub windows: Vec<Window>,
    /// Worst window by p99 / by max; `null` when unknown (no window: an import of fio's
    /// summary, which has no series), never 0.
    pub worst_window_p99_ns: Option<u64>,
    pub worst_window_max_ns: Option<u64>,
    pub etcd_buckets: Vec<EtcdBucket>,
    pub verdicts: Vec<Verdict>,
    pub bulk: Option<BulkRun>,
    /// What the mitigation actually did (e.g. `scheduler vda mq-deadline -> bfq (restored)`).
    pub notes: Vec<String>,
    pub histogram: HistogramData,
}

impl Scenario {
    /// Whether every verdict passed.
    pub fn pass(&self) -> bool {
        self.verdicts.iter().all(|v| v.pass)
    }
}

/// Worst window p99 and max over a series; `None` without a window (unknown, not 0).
pub fn worst_windows(windows: &[Window]) -> (Option<u64>, Option<u64>) {
    (windows.iter().map(|w| w.p99_ns).max(), windows.iter().map(|w| w.max_ns).max())
}

/// The result file of `lowlat measure fsync` (`kind` = `fsync`). The top-level numbers are
/// those of the first scenario (the only one without `--matrix`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FsyncResult {
    #[serde(flatten)]
    pub envelope: Envelope,
    pub ops: u64,
    pub iops: f64,
    pub lat_ns: LatNs,
    pub windows: Vec<Window>,
    /// As [`Scenario::worst_window_p99_ns`]: `null` when unknown.
    pub worst_window_p99_ns: Option<u64>,
    pub worst_window_max_ns: Option<u64>,
    pub etcd_buckets: Vec<EtcdBucket>,
    pub verdicts: Vec<Verdict>,
    pub environment: StorageEnv,
    pub scenarios: Vec<Scenario>,
}

impl FsyncResult {
    /// A result whose top level mirrors `scenarios[0]`.
    pub fn new(envelope: Envelope, environment: StorageEnv, scenarios: Vec<Scenario>) -> Self {
        let first = scenarios.first().cloned().unwrap_or_default();
        Self {
            envelope,
            ops: first.ops,
            iops: first.iops,
            lat_ns: first.lat_ns,
            windows: first.windows,
            worst_window_p99_ns: first.worst_window_p99_ns,
            worst_window_max_ns: first.worst_window_max_ns,
            etcd_buckets: first.etcd_buckets,
            verdicts: first.verdicts,
            environment,
            scenarios,
        }
    }
}

/// fio's percentile keys as printed in its JSON (`"99.000000"`), with their quantiles.
pub const FIO_PERCENTILES: [(&str, f64); 17] = [
    ("1.000000", 0.01),
    ("5.000000", 0.05),
    ("10.000000", 0.10),
    ("20.000000", 0.20),
    ("30.000000", 0.30),
    ("40.000000", 0.40),
    ("50.000000", 0.50),
    ("60.000000", 0.60),
    ("70.000000", 0.70),
    ("80.000000", 0.80),
    ("90.000000", 0.90),
    ("95.000000", 0.95),
    ("99.000000", 0.99),
    ("99.500000", 0.995),
    ("99.900000", 0.999),
    ("99.950000", 0.9995),
    ("99.990000", 0.9999),
];

/// fio's JSON shape for one sync-latency job, so `jq '.jobs[0].sync.lat_ns.percentile["99.000000"]'`
/// scripts work on lowlat's numbers. `write` carries IOPS and bytes like fio's.
pub fn to_fio_json(job_name: &str, bs: u64, duration_ns: u64, h: &Histogram) -> serde_json::Value {
    let mut pct = serde_json::Map::new();
    for (k, q) in FIO_PERCENTILES {
        pct.insert(k.to_string(), serde_json::json!(h.quantile(q).unwrap_or(0)));
    }
    let n = h.count();
    let secs = duration_ns as f64 / 1e9;
    let iops = if secs > 0.0 { n as f64 / secs } else { 0.0 };
    serde_json::json!({
        "fio version": "lowlat-compatible",
        "jobs": [{
            "jobname": job_name,
            "error": 0,
            "write": {
                "io_bytes": n * bs,
                "bw_bytes": (iops * bs as f64) as u64,
                "iops": iops,
                "runtime": duration_ns / 1_000_000,
                "total_ios": n,
            },
            "sync": {
                "total_ios": n,
                "lat_ns": {
                    "min": h.min().unwrap_or(0),
                    "max": h.max().unwrap_or(0),
                    "mean": h.mean().unwrap_or(0.0),
                    "stddev": h.stddev().unwrap_or(0.0),
                    "N": n,
                    "percentile": pct,
                }
            }
        }]
    })
}

/// One line of a `lowlat watch` JSON-lines series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WatchSample {
    /// RFC 3339 UTC time of the sample.
    pub time: String,
    /// ns since the watch started.
    pub t_ns: u64,
    /// `storage` or `cmd`.
    pub watch: String,
    /// The headline latency the cliff detector watches: the sync write (storage) or the
    /// command's duration (cmd).
    pub value_ns: u64,
    /// storage: fsync burst p50/max.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_p50_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_max_ns: Option<u64>,
    /// storage: threads in D state now, with how long each has been seen there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dstate: Vec<DState>,
    /// storage: PSI io `some`/`full` avg10 (percent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_some_avg10: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_full_avg10: Option<f64>,
    /// cmd: exit status of the command (`None` when killed by a signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// A cliff detected at this sample (reported once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cliff: Option<Cliff>,
    /// The sample could not finish (timeout / error text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A thread seen in uninterruptible sleep.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DState {
    pub pid: u32,
    pub tid: u32,
    pub comm: String,
    pub wchan: Option<String>,
    /// Consecutive samples it has been in D, times the interval: a lower bound on time in D.
    pub seen_ns: u64,
}

/// A detected step change in a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cliff {
    /// Index of the first sample after the change.
    pub index: usize,
    pub t_ns: u64,
    pub time: Option<String>,
    /// Median before / after the change.
    pub before_ns: u64,
    pub after_ns: u64,
    /// `after / before`.
    pub ratio: f64,
}

/// etcd's guidance for backend commit: p99 below 25 ms.
pub const ETCD_COMMIT_P99_LIMIT_NS: u64 = 25_000_000;

/// One etcd histogram over a window (bucket deltas between two scrapes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EtcdHistogram {
    /// Metric name (`etcd_disk_wal_fsync_duration_seconds`, …).
    pub metric: String,
    pub count: u64,
    pub mean_ns: u64,
    /// Prometheus `histogram_quantile` (linear interpolation inside etcd's buckets).
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub buckets: Vec<EtcdBucket>,
}

/// One interval of `lowlat measure etcd`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct EtcdWindow {
    pub start_ns: u64,
    pub wal_fsync_count: u64,
    pub wal_fsync_p99_ns: u64,
    pub backend_commit_count: u64,
    pub backend_commit_p99_ns: u64,
}

/// Where `measure etcd` read etcd's histograms.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EtcdSource {
    /// etcd's own `/metrics`, scraped live at the start, every interval and at the end.
    #[default]
    Metrics,
    /// A Prometheus that scrapes etcd: `increase()` over the window that ended at the run.
    Prometheus,
}

/// The result file of `lowlat measure etcd` (`kind` = `etcd`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EtcdResult {
    #[serde(flatten)]
    pub envelope: Envelope,
    /// etcd's metrics URL, or the Prometheus base URL.
    pub endpoint: String,
    /// Where the histograms came from (`metrics` in results written before the field).
    #[serde(default)]
    pub source: EtcdSource,
    /// The endpoint was `https://` (the server's certificate verified).
    #[serde(default)]
    pub tls: bool,
    /// The PromQL of the window's WAL fsync buckets (`source: prometheus` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    pub wal_fsync: EtcdHistogram,
    pub backend_commit: Option<EtcdHistogram>,
    pub windows: Vec<EtcdWindow>,
    pub verdicts: Vec<Verdict>,
    /// Says the quantiles are interpolations inside 1 ms … 8.192 s buckets.
    pub caveat: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HistogramConfig;

    fn hist(vals: &[u64]) -> Histogram {
        let mut h = Histogram::new(HistogramConfig::STORAGE);
        for v in vals {
            h.record(*v);
        }
        h
    }

    #[test]
    fn etcd_buckets_are_non_cumulative_with_inf() {
        let h = hist(&[500_000, 999_000, 1_500_000, 9_000_000_000, 70_000_000]);
        let b = etcd_buckets(&h);
        assert_eq!(b.len(), 15);
        assert_eq!(b[0], EtcdBucket { le_ns: Some(1_000_000), count: 2 });
        assert_eq!(b[1].count, 1);
        assert_eq!(b[7], EtcdBucket { le_ns: Some(128_000_000), count: 1 });
        assert_eq!(b[14], EtcdBucket { le_ns: None, count: 1 });
        assert_eq!(b.iter().map(|x| x.count).sum::<u64>(), 5);
    }

    #[test]
    fn verdicts_use_strict_limits() {
        let v = verdicts(10_000_000);
        assert!(!v[0].pass && v[1].pass, "{v:?}");
        assert!(verdicts(9_999_999).iter().all(|v| v.pass));
        assert!(!verdicts(20_000_000).iter().any(|v| v.pass));
    }

    #[test]
    fn fio_shape_has_the_jq_path() {
        let h = hist(&(1..=1000u64).map(|i| i * 1000).collect::<Vec<_>>());
        let j = to_fio_json("etcd", 2300, 1_000_000_000, &h);
        let p99 = j["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"].as_u64().unwrap();
        assert!((989_000..=992_000).contains(&p99), "{p99}");
        assert_eq!(j["jobs"][0]["sync"]["lat_ns"]["N"], 1000);
        assert_eq!(j["jobs"][0]["write"]["iops"], 1000.0);
    }

    #[test]
    fn result_top_level_mirrors_first_scenario_and_flattens_envelope() {
        let h = hist(&[1_000, 2_000]);
        let sc = Scenario {
            name: "baseline".into(),
            ops: 2,
            lat_ns: LatNs::from_histogram(&h),
            verdicts: verdicts(2_000),
            ..Default::default()
        };
        let r = FsyncResult::new(
            Envelope::new(crate::Kind::Fsync, "lowlat"),
            StorageEnv::default(),
            vec![sc],
        );
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["kind"], "fsync");
        assert_eq!(j["ops"], 2);
        assert_eq!(j["lat_ns"]["max"], 2_000);
        assert_eq!(j["scenarios"][0]["name"], "baseline");
        let back: FsyncResult = serde_json::from_value(j).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn worst_windows_take_each_maximum_separately() {
        let w = [
            Window { p99_ns: 5, max_ns: 100, ..Default::default() },
            Window { p99_ns: 50, max_ns: 60, ..Default::default() },
        ];
        assert_eq!(worst_windows(&w), (Some(50), Some(100)));
        assert_eq!(worst_windows(&[]), (None, None), "no window: unknown, not 0");
    }
}
