//! `params`: what a measurement ran with, typed per result kind. A writer fills the struct
//! of its kind; a reader (the report, the exporters) reads its fields, never a string key.
//! Keys this version does not know (a newer lowlat, an older one's) are kept as read in
//! `other`, so a file round-trips. Every field is optional: imports know less than lowlat's
//! own runs, and an absent field means "not recorded".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tracer::TracerName;
use crate::Kind;
use util::sched::Policy;

/// The parameters of one result, by its kind.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Params {
    /// `timer` and `noise` (lowlat's threads, the kernel tracers, hwlat, imports of
    /// cyclictest and oslat).
    Latency(LatencyParams),
    Ticks(TicksParams),
    /// `fsync` (lowlat's probe, fio imports).
    Fsync(FsyncParams),
    Etcd(EtcdParams),
    /// A kind with no parameters of its own (`watch`): kept as read.
    Other(Value),
}

impl Default for Params {
    fn default() -> Self {
        Params::Other(Value::Null)
    }
}

/// Keys a reader does not know, kept as read.
pub type Unknown = BTreeMap<String, Value>;

impl Params {
    /// The empty parameters of `kind`.
    pub fn empty(kind: Kind) -> Self {
        match kind {
            Kind::Timer | Kind::Noise => Params::Latency(LatencyParams::default()),
            Kind::Ticks => Params::Ticks(TicksParams::default()),
            Kind::Fsync => Params::Fsync(FsyncParams::default()),
            Kind::Etcd => Params::Etcd(EtcdParams::default()),
            Kind::Watch => Params::Other(Value::Null),
        }
    }

    /// `v` (a result file's `params`) read as the parameters of `kind`; `null` or absent is
    /// the empty set.
    pub fn read(kind: Kind, v: Value) -> Result<Self, serde_json::Error> {
        if v.is_null() {
            return Ok(Self::empty(kind));
        }
        Ok(match kind {
            Kind::Timer | Kind::Noise => Params::Latency(serde_json::from_value(v)?),
            Kind::Ticks => Params::Ticks(serde_json::from_value(v)?),
            Kind::Fsync => Params::Fsync(serde_json::from_value(v)?),
            Kind::Etcd => Params::Etcd(serde_json::from_value(v)?),
            Kind::Watch => Params::Other(v),
        })
    }

    /// The timer/noise parameters, when these are.
    pub fn latency(&self) -> Option<&LatencyParams> {
        match self {
            Params::Latency(p) => Some(p),
            _ => None,
        }
    }

    /// The timer/noise parameters to fill in (made so when these were not).
    pub fn latency_mut(&mut self) -> &mut LatencyParams {
        if !matches!(self, Params::Latency(_)) {
            *self = Params::Latency(LatencyParams::default());
        }
        match self {
            Params::Latency(p) => p,
            _ => unreachable!("set just above"),
        }
    }

    /// Every parameter as `(key, JSON value)`, in key order, for views that list them all.
    pub fn entries(&self) -> Vec<(String, Value)> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m.into_iter().collect(),
            _ => Vec::new(),
        }
    }
}

/// Timer and noise runs and their imports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyParams {
    /// timer: the wake-up period (ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ns: Option<u64>,
    /// timer: wake-ups per thread (`-l`), when bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    /// noise: gaps at or above count as noise (ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_threshold_ns: Option<u64>,
    /// The CPUs measured (a cpu-list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// The housekeeping CPU of the main thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_cpu: Option<u32>,
    /// The policy the run recorded: asked for, or (a run that fell back) the one it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    /// The policy asked for, when it was refused (`policy` is then what ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_policy: Option<Policy>,
    /// The real-time priority; absent under `other`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// The run length asked for (ns); absent when a loop count bounds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<u64>,
    /// The latency threshold (ns), when one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_on_threshold: Option<bool>,
    /// `/dev/cpu_dma_latency` held at 0 (false: asked and not obtained, or not asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dma_latency: Option<bool>,
    /// The kernel tracer that measured, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<TracerName>,
    /// hwlat: the sampling width and window (ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<u64>,
    /// lowlat's own peak memory during the run (VmHWM, bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_peak_rss_bytes: Option<u64>,
    /// noise: the counter the loop read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<CounterParams>,
    /// Imports: the tool (`cyclictest`, `oslat`) and the form read (`text`, `json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Imports of cyclictest's text: which histogram layout it printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram_layout: Option<String>,
    /// Imports of rt-tests' JSON: the command line and return code it recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_code: Option<i64>,
    #[serde(flatten)]
    pub other: Unknown,
}

/// The counter a noise loop read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CounterParams {
    /// `tsc` or `CLOCK_MONOTONIC_RAW`.
    pub source: String,
    pub hz: u64,
}

/// `measure ticks`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TicksParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_cpu: Option<u32>,
    #[serde(flatten)]
    pub other: Unknown,
}

/// `measure fsync` (the request as given, durations in ns) and fio imports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FsyncParams {
    /// The directory probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// Write size (bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs: Option<u64>,
    /// How each write was made durable (`fdatasync`, `fsync`, `odsync`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<String>,
    /// Bytes written per scenario, when bounded by size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<u64>,
    /// Writes per second, when paced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_size: Option<u64>,
    /// The interferers and mitigations run (`no-sync`, `rate=5`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mitigation: Option<Vec<String>>,
    /// Every interferer × mitigation (rather than one scenario).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulk_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulk_delay_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outstanding: Option<u64>,
    /// The update command, when one was the interferer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference_cmd: Option<String>,
    /// fio imports: `fio`, the form read, the first job's options as fio printed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_options: Option<Value>,
    #[serde(flatten)]
    pub other: Unknown,
}

/// `measure etcd`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EtcdParams {
    /// etcd's metrics URL, or the Prometheus base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Read through Prometheus (`increase()` over the window) rather than etcd itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<bool>,
    /// With Prometheus: the label matchers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ns: Option<u64>,
    /// TLS files given (paths) and whether a bearer token was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cacert: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<bool>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_its_own_and_keeps_what_it_does_not_know() {
        let v = serde_json::json!({"interval_ns": 1000, "policy": "fifo", "priority": null,
            "kind": "timer", "future_knob": [1, 2]});
        let p = Params::read(Kind::Timer, v).unwrap();
        let l = p.latency().unwrap();
        assert_eq!((l.interval_ns, l.policy, l.priority), (Some(1000), Some(Policy::Fifo), None));
        assert_eq!(l.other.get("future_knob"), Some(&serde_json::json!([1, 2])));
        // written back: the known fields, then what was kept; no nulls for what is unknown
        let back = serde_json::to_value(&p).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"interval_ns": 1000, "policy": "fifo", "kind": "timer",
                "future_knob": [1, 2]})
        );
        assert_eq!(Params::read(Kind::Fsync, Value::Null).unwrap(), Params::empty(Kind::Fsync));
        assert!(Params::read(Kind::Timer, serde_json::json!({"priority": "high"})).is_err());
        let w = serde_json::json!({"anything": 1});
        assert_eq!(Params::read(Kind::Watch, w.clone()).unwrap(), Params::Other(w));
    }
}
