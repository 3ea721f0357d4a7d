//! The cgroup data of the host model that `rt` and `containers` fill in: the RT budget
//! evidence of container cgroups and the containers view's counters. Plain data (no I/O), so
//! the model can hold it without importing the readers.

use cpuset::CpuSet;
use serde::{Deserialize, Serialize};

/// One level of a v1 chain: the file and its value (`None`: unreadable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainLevel {
    /// Absolute path of the `cpu.rt_runtime_us` file.
    pub file: String,
    pub rt_runtime_us: Option<i64>,
}

/// The RT readiness of a host's container cgroups (for `verify` and `inspect`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Containers {
    pub sched_rt_runtime_us: Option<i64>,
    pub rt_group_sched: Option<bool>,
    pub rt_group_sched_evidence: Option<String>,
    pub tree: Tree,
}

/// Where the cpu controller lives, and the container cgroups found there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "version", rename_all = "lowercase")]
pub enum Tree {
    /// cgroup v1: each container cgroup with the chain from the root down to it.
    V1 { mount: String, containers: Vec<ContainerChain> },
    /// cgroup v2: the container cgroups' paths.
    V2 { mount: String, containers: Vec<String> },
    /// No cpu controller found (`/proc/mounts` unreadable or no cgroup mounted).
    #[default]
    Unknown,
}

/// A container cgroup (v1) and its `cpu.rt_runtime_us` chain, root first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerChain {
    /// The cgroup path (`/system.slice/docker-<id>.scope`).
    pub path: String,
    pub chain: Vec<ChainLevel>,
}

impl ContainerChain {
    /// The topmost level with a budget of 0, if any.
    pub fn first_zero(&self) -> Option<&ChainLevel> {
        self.chain.iter().find(|l| l.rt_runtime_us == Some(0))
    }
}

impl Containers {
    /// Whether the kernel checks group RT budgets at all (RT group scheduling not known to
    /// be off, and `kernel.sched_rt_runtime_us` not -1).
    pub fn budgets_enforced(&self) -> bool {
        self.rt_group_sched != Some(false) && self.sched_rt_runtime_us.is_none_or(|v| v >= 0)
    }
}

/// One container (or pod sandbox) cgroup and its counters; `None`: not readable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Container {
    /// The cgroup path (`/system.slice/docker-<id>.scope`).
    pub path: String,
    /// `docker`, `podman`, `crio`, `containerd`, `kubepods` (cgroupfs driver), `other`.
    pub runtime: Runtime,
    /// Kubernetes QoS class from the path (`guaranteed`, `burstable`, `besteffort`).
    pub qos: Option<String>,
    /// CPU time used (ns): `cpu.stat usage_usec` (v2) or `cpuacct.usage` (v1).
    pub cpu_usage_ns: Option<u64>,
    /// CFS quota per period (µs); `None` with `cfs_period_us` set means no quota (`max`, -1).
    pub cfs_quota_us: Option<u64>,
    pub cfs_period_us: Option<u64>,
    pub nr_periods: Option<u64>,
    pub nr_throttled: Option<u64>,
    pub throttled_ns: Option<u64>,
    /// `cpuset.cpus.effective` (v2) or `cpuset.cpus` (v1).
    pub cpuset: Option<CpuSet>,
    pub memory_bytes: Option<u64>,
    /// `None`: no limit, or unknown.
    pub memory_limit_bytes: Option<u64>,
    /// `some avg10` of `cpu.pressure` / `memory.pressure` (%).
    pub cpu_pressure_avg10: Option<f64>,
    pub memory_pressure_avg10: Option<f64>,
    /// Whether a task in it can get SCHED_FIFO, and the file or reason when not.
    pub rt_ready: Option<bool>,
    pub rt_blocker: Option<String>,
}

/// The closed set of container runtimes recognised from cgroup names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    Docker,
    Podman,
    Crio,
    Containerd,
    Kubepods,
    #[default]
    Other,
}
