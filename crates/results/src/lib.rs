//! Versioned result model shared by every measurement: the [`Envelope`] (schema version,
//! kind, partial flag, host context, parameters), the fixed-memory [`Histogram`], summary
//! statistics, and (in their own modules) per-kind results, importers and exporters.

pub mod evidence;
pub mod export;
pub mod fsync;
pub mod histogram;
pub mod import;
pub mod input;
pub mod latency;
pub mod params;
pub mod tracer;

use serde::{Deserialize, Serialize};

pub use evidence::{Evidence, NoEvidence};
pub use histogram::{Bucket, Histogram, HistogramConfig, HistogramData, Summary};
pub use latency::{
    worst_breaches, Attribution, Breach, CpuTicks, LatencyResult, LoadEnd, LoadExit, LoadInfo,
    ThreadResult, TicksResult,
};
pub use params::{CounterParams, EtcdParams, FsyncParams, LatencyParams, Params, TicksParams};

/// Version of the result files' JSON shape.
pub const SCHEMA_VERSION: u32 = 1;

/// The host facts every result carries, so a number is never read without its context.
/// Every field is optional, so files from older versions or importers read as "unknown".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct HostContext {
    pub hostname: Option<String>,
    /// `uname -r`.
    pub kernel: Option<String>,
    pub realtime: Option<bool>,
    /// `None` on bare metal, else the hypervisor (results include host noise).
    pub virtualization: Option<String>,
    pub cmdline: Option<String>,
    pub clocksource: Option<String>,
    /// Canonical cpu-lists.
    pub isolated: Option<String>,
    pub nohz_full: Option<String>,
    pub online: Option<String>,
    /// Governors in use on the measured CPUs (deduplicated).
    pub governors: Vec<String>,
    pub smt_active: Option<bool>,
    pub cpu_model: Option<String>,
}

impl HostContext {
    /// The summary of a host model that a result carries.
    pub fn from_host(h: &host::Host) -> Self {
        let iso = h.isolated_cpus();
        let mut governors: Vec<String> =
            h.power.cpus.iter().filter_map(|p| p.governor.clone()).collect();
        governors.sort();
        governors.dedup();
        let nohz = h.nohz_full_cpus();
        Self {
            hostname: h.hostname.clone(),
            kernel: h.kernel.release.clone(),
            realtime: h.kernel.realtime,
            virtualization: h.virtualization.clone(),
            cmdline: h.kernel.cmdline.clone(),
            clocksource: h.kernel.clocksource.clone(),
            isolated: (!iso.is_empty()).then(|| iso.to_list()),
            nohz_full: (h.cpus.nohz_full.is_some() || h.kernel.boot.nohz_full.is_some())
                .then(|| nohz.to_list()),
            online: Some(h.online_cpus().to_list()),
            governors,
            smt_active: h.topology.smt_active.or(Some(h.topology.threads_per_core > 1)),
            cpu_model: h.topology.cpus.iter().find_map(|c| c.model.clone()),
        }
    }
}

/// What a result file measured. Serialized as the lower-case names of the JSON contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Timer wake-up latency (cyclictest semantics).
    Timer,
    /// OS noise (oslat semantics).
    Noise,
    /// Timer ticks and interrupt rates on busy CPUs.
    Ticks,
    /// write + fdatasync latency (fio / etcd WAL pattern).
    Fsync,
    /// etcd's own WAL fsync histogram, read from its metrics.
    Etcd,
    /// A long-running watcher's samples.
    Watch,
}

impl Kind {
    /// The contract name (`timer`, `noise`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Timer => "timer",
            Kind::Noise => "noise",
            Kind::Ticks => "ticks",
            Kind::Fsync => "fsync",
            Kind::Etcd => "etcd",
            Kind::Watch => "watch",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Common header of every result file. Per-kind payloads flatten into the same object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "RawEnvelope")]
pub struct Envelope {
    pub schema_version: u32,
    /// What was measured.
    pub kind: Kind,
    /// The run was cut short (Ctrl-C, error, stop on threshold): numbers cover what ran.
    pub partial: bool,
    /// lowlat version (with git revision) or the importing tool's name and version.
    pub tool: String,
    /// RFC 3339 UTC start time.
    pub started_at: Option<String>,
    pub duration_ns: u64,
    pub host: HostContext,
    /// The exact parameters, as the measurement understood them, typed by `kind`.
    pub params: Params,
    /// The scheduling the measuring threads asked for and the one they ran with (lowlat's
    /// own timer/noise runs; absent in imports and older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<Scheduling>,
    /// The tool that produced the numbers reported a failure (cyclictest's `return_code`, a
    /// fio job's `error`): what it said. Such a result is never a pass ([`evidence`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// [`Envelope`] as read, before `params` is typed by `kind` (its schema is the deserialize
/// side of [`Envelope`]'s; the documents' schemas are the serialize side).
#[derive(Deserialize, schemars::JsonSchema)]
struct RawEnvelope {
    schema_version: u32,
    kind: Kind,
    partial: bool,
    tool: String,
    started_at: Option<String>,
    duration_ns: u64,
    host: HostContext,
    params: serde_json::Value,
    #[serde(default)]
    scheduling: Option<Scheduling>,
    #[serde(default)]
    failed: Option<String>,
}

impl TryFrom<RawEnvelope> for Envelope {
    type Error = String;

    fn try_from(r: RawEnvelope) -> Result<Self, Self::Error> {
        let params = Params::read(r.kind, r.params).map_err(|e| format!("params: {e}"))?;
        Ok(Envelope {
            schema_version: r.schema_version,
            kind: r.kind,
            partial: r.partial,
            tool: r.tool,
            started_at: r.started_at,
            duration_ns: r.duration_ns,
            host: r.host,
            params,
            scheduling: r.scheduling,
            failed: r.failed,
        })
    }
}

/// What scheduling a measurement asked for and what it got: a result says what ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Scheduling {
    /// The policy asked for.
    pub requested: util::sched::Policy,
    /// The policy the measuring threads ran with (`other` when real-time was refused).
    pub ran: util::sched::Policy,
    /// The real-time priority they ran at; `None` under `other`.
    pub priority: Option<u32>,
    /// Why the real-time policy was refused, from evidence, with the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<host::rt::Cause>,
    /// The cgroup the run was moved into for an RT budget (`--rt-cgroup`), when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rt_cgroup: Option<String>,
}

impl Scheduling {
    /// A real-time policy was asked for and not obtained.
    pub fn downgraded(&self) -> bool {
        self.requested.is_realtime() && !self.ran.is_realtime()
    }

    /// `NOT REAL-TIME (<cause in a few words>)` when downgraded, for a verdict line.
    pub fn not_realtime_short(&self) -> Option<String> {
        self.downgraded().then(|| {
            format!(
                "NOT REAL-TIME ({}; ran {})",
                self.refused.as_ref().map_or("cause not found", |c| c.short.as_str()),
                self.ran.kernel_name()
            )
        })
    }

    /// `NOT REAL-TIME: ran SCHED_OTHER — SCHED_FIFO refused: <cause>` when downgraded.
    pub fn not_realtime(&self) -> Option<String> {
        self.downgraded().then(|| {
            format!(
                "NOT REAL-TIME: ran {} — {} refused: {}",
                self.ran.kernel_name(),
                self.requested.kernel_name(),
                self.refused.as_ref().map_or("cause not found", |c| c.message.as_str())
            )
        })
    }
}

impl Envelope {
    /// A fresh envelope of `kind` for this version of lowlat.
    pub fn new(kind: Kind, tool: &str) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            kind,
            partial: false,
            tool: tool.to_string(),
            started_at: None,
            duration_ns: 0,
            host: HostContext::default(),
            params: Params::empty(kind),
            scheduling: None,
            failed: None,
        }
    }
}
