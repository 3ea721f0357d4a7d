//! What the kernel's tracers measured, in the one result model: a timer result measured by
//! `timerlat` (IRQ and thread latency per CPU, rtla semantics), a noise result measured by
//! `osnoise` (noise split by source, and for every gap above the threshold what ran in it,
//! by name) or by `hwlat` (hardware and firmware latency: a loop with interrupts off, the
//! `hwlatdetect` question). Each is a [`crate::LatencyResult`] whose `tracer` says which tracer
//! ran and how; the per-CPU parts sit in its `threads[]`. All fields are optional additions
//! to `schema_version` 1 (docs/CONTRACT.md).

use serde::{Deserialize, Serialize};

use crate::histogram::{HistogramData, Summary};

/// A kernel tracer lowlat measures with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TracerName {
    Timerlat,
    Osnoise,
    Hwlat,
}

impl TracerName {
    pub fn as_str(self) -> &'static str {
        match self {
            TracerName::Timerlat => "timerlat",
            TracerName::Osnoise => "osnoise",
            TracerName::Hwlat => "hwlat",
        }
    }
}

impl std::fmt::Display for TracerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an osnoise interference was (the tracer's own classes).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum NoiseSource {
    Nmi,
    Irq,
    Softirq,
    Thread,
    /// No kernel event explains it: hardware, firmware (SMIs) or a hypervisor.
    Hw,
}

impl NoiseSource {
    pub const ALL: [NoiseSource; 5] = [
        NoiseSource::Hw,
        NoiseSource::Nmi,
        NoiseSource::Irq,
        NoiseSource::Softirq,
        NoiseSource::Thread,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NoiseSource::Nmi => "nmi",
            NoiseSource::Irq => "irq",
            NoiseSource::Softirq => "softirq",
            NoiseSource::Thread => "thread",
            NoiseSource::Hw => "hw",
        }
    }
}

/// How a tracer ran (what ran, not what was asked).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TracerRun {
    pub name: Option<TracerName>,
    /// Where tracefs was (`/sys/kernel/tracing`).
    pub tracefs: String,
    /// The tracefs instance lowlat created and removed (`lowlat-1234`); `None` at top level
    /// (hwlat allows no instance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// timerlat: the timer period; osnoise: the sampling period; hwlat: the window (µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_us: Option<u64>,
    /// osnoise: the busy part of each period; hwlat: the width (µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_us: Option<u64>,
    /// `tracing_thresh`: osnoise reports gaps at or above it, hwlat samples above it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_ns: Option<u64>,
    /// Events the ring buffer dropped (`[LOST N EVENTS]`): the counts miss that many samples.
    pub lost_events: u64,
    /// The scheduling of the tracer's kernel threads (`timerlat/N`, `osnoise/N`) as found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_policy: Option<String>,
    /// osnoise: the sources that ran inside the gaps at or above the threshold, ranked by total
    /// time (at most [`MAX_CAUSES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<Cause>,
}

/// Most causes a result lists.
pub const MAX_CAUSES: usize = 50;

/// Most gaps a CPU lists in detail (the longest).
pub const MAX_GAPS: usize = 20;

/// One source of noise over every gap of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cause {
    pub source: NoiseSource,
    /// IRQ, softirq or thread name without vector or pid (`local_timer`, `kworker/2:1`);
    /// `hw` for time no kernel event explains.
    pub name: String,
    /// Time it took inside gaps.
    pub total_ns: u64,
    /// Times it ran inside a gap.
    pub events: u64,
    /// Gaps it appeared in.
    pub gaps: u64,
    /// Its longest single run inside a gap.
    pub max_ns: u64,
    /// The CPUs where it did (cpu-list).
    pub cpus: String,
}

/// IRQ-context latency of a timerlat CPU (the thread context is the thread's own stats).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IrqLatency {
    #[serde(flatten)]
    pub stats: Summary,
    pub histogram: HistogramData,
}

/// Counts (or times, in ns) per noise source.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct PerSource {
    pub hw: u64,
    pub nmi: u64,
    pub irq: u64,
    pub softirq: u64,
    pub thread: u64,
}

impl PerSource {
    pub fn get(&self, s: NoiseSource) -> u64 {
        match s {
            NoiseSource::Hw => self.hw,
            NoiseSource::Nmi => self.nmi,
            NoiseSource::Irq => self.irq,
            NoiseSource::Softirq => self.softirq,
            NoiseSource::Thread => self.thread,
        }
    }
    pub fn add(&mut self, s: NoiseSource, v: u64) {
        let f = match s {
            NoiseSource::Hw => &mut self.hw,
            NoiseSource::Nmi => &mut self.nmi,
            NoiseSource::Irq => &mut self.irq,
            NoiseSource::Softirq => &mut self.softirq,
            NoiseSource::Thread => &mut self.thread,
        };
        *f = f.saturating_add(v);
    }
}

/// One CPU's osnoise periods summed (what `rtla osnoise top` prints per CPU).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OsnoiseCpu {
    /// Sampling periods completed.
    pub periods: u64,
    /// Time the osnoise thread ran, and the part of it lost to noise.
    pub runtime_ns: u64,
    pub noise_ns: u64,
    /// The worst period's noise, and the longest single noise.
    pub max_period_noise_ns: u64,
    pub max_single_ns: u64,
    /// Interference counts by source, as the tracer counted them.
    pub counts: PerSource,
    /// Time per source, from the interference events (hw: gap time no event explains).
    pub time_ns: PerSource,
}

impl OsnoiseCpu {
    /// Share of the runtime left to the workload, in percent (rtla's `% CPU Aval`).
    pub fn available_pct(&self) -> Option<f64> {
        (self.runtime_ns > 0).then(|| 100.0 - self.noise_ns as f64 * 100.0 / self.runtime_ns as f64)
    }
}

/// One gap at or above the threshold, with what ran inside it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Gap {
    /// Time since the start of the measurement.
    pub t_ns: u64,
    pub duration_ns: u64,
    /// Interference events the tracer counted in it.
    pub interference: u64,
    /// What ran inside it, longest first.
    pub causes: Vec<GapCause>,
    /// The part no event explains (hardware, firmware, hypervisor).
    pub unexplained_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GapCause {
    pub source: NoiseSource,
    pub name: String,
    pub duration_ns: u64,
    pub events: u64,
}

/// One CPU's hwlat samples (the detector visits the CPUs in turn).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HwlatCpu {
    /// Windows that measured on this CPU and reported a sample above the threshold.
    pub samples: u64,
    /// Longest gap inside the loop (inner) and between two loop rounds (outer).
    pub max_inner_ns: u64,
    pub max_outer_ns: u64,
    /// NMIs that fell inside samples and their time (when the kernel reports them).
    pub nmi_count: u64,
    pub nmi_total_ns: u64,
}
