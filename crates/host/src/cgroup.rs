//! The cgroup data of the host model that `rt` and `containers` fill in: the RT budget
//! evidence of container cgroups and the containers view's counters. Plain data (no I/O), so
//! the model can hold it without importing the readers.

use cpuset::CpuSet;
use serde::{Deserialize, Serialize};

/// One level of a v1 chain: the file and its value (`None`: unreadable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChainLevel {
    /// Absolute path of the `cpu.rt_runtime_us` file.
    pub file: String,
    pub rt_runtime_us: Option<i64>,
}

/// The RT readiness of a host's container cgroups (for `verify` and `inspect`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Containers {
    pub sched_rt_runtime_us: Option<i64>,
    pub rt_group_sched: Option<bool>,
    pub rt_group_sched_evidence: Option<String>,
    pub tree: Tree,
    /// The container cgroups of `tree` recognised by their processes' namespaces rather
    /// than by name (live only; the others matched a runtime's name pattern).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaced: Vec<Namespaced>,
    /// The container cgroups of `tree` that hold containers themselves (docker-in-docker,
    /// Docker in an LXC container), with how many; each nested one is counted, not listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nested: Vec<Nested>,
}

/// A container cgroup holding other containers' cgroups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Nested {
    pub path: String,
    /// How many containers it holds (the first level below it: a nested container's own
    /// nested ones are not counted).
    pub containers: usize,
}

/// How a cgroup was recognised as a container's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "by", rename_all = "kebab-case")]
pub enum Recognised {
    /// Its name matches a runtime's pattern (`docker-<id>.scope`, `kubepods…/pod<uid>/<id>`,
    /// …): the only evidence in a snapshot or must-gather, which hold no process information.
    #[default]
    NamePattern,
    /// A process in it runs in another namespace than PID 1 (live): any name.
    Namespaces(NsEvidence),
}

/// The namespace evidence that a cgroup holds a container: a process in another PID
/// namespace than PID 1's, or in another mount namespace with another root directory (a
/// mount namespace alone is not enough: systemd's sandboxed services have one).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NsEvidence {
    /// The process whose namespaces were compared.
    pub pid: u32,
    /// The namespaces it does not share with PID 1.
    pub differ: Vec<Namespace>,
    /// Its root directory (`/proc/<pid>/root`), when only the mount namespace differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

/// The namespaces compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Namespace {
    Pid,
    Mnt,
}

impl Namespace {
    /// The name under `/proc/<pid>/ns/`.
    pub fn as_str(self) -> &'static str {
        match self {
            Namespace::Pid => "pid",
            Namespace::Mnt => "mnt",
        }
    }
}

/// A container cgroup recognised by namespaces, and the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Namespaced {
    pub path: String,
    pub evidence: NsEvidence,
}

impl Containers {
    /// How the container cgroup `path` was recognised.
    pub fn recognised(&self, path: &str) -> Recognised {
        self.namespaced
            .iter()
            .find(|n| n.path == path)
            .map_or(Recognised::NamePattern, |n| Recognised::Namespaces(n.evidence.clone()))
    }

    /// How many containers the container cgroup `path` holds.
    pub fn nested(&self, path: &str) -> usize {
        self.nested.iter().find(|n| n.path == path).map_or(0, |n| n.containers)
    }
}

/// Where the cpu controller lives, and the container cgroups found there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// How it was recognised as a container's (name pattern, or namespaces).
    #[serde(default)]
    pub recognised: Recognised,
    /// How many containers run inside it (docker-in-docker, Docker in an LXC container): they
    /// are not listed apart.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nested_containers: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The closed set of container runtimes recognised from cgroup names.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
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
