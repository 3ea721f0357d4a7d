//! The host model: plain serializable data, no I/O. Field names here are the public JSON
//! contract of `lowlat inspect --json` (see DESIGN.md, "Machine-readable contract"); add
//! fields freely, rename only with a `SCHEMA_VERSION` bump.

use std::collections::BTreeMap;

use cpuset::CpuSet;
use serde::{Deserialize, Serialize};

/// Version of the host model's JSON shape.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything lowlat knows about one host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Host {
    pub schema_version: u32,
    /// Where the data came from: `live`, a directory, a tarball, a must-gather node.
    pub source: Source,
    /// `/proc/sys/kernel/hostname`, when known.
    #[serde(default)]
    pub hostname: Option<String>,
    pub cpus: Cpus,
    pub topology: Topology,
    pub numa_nodes: Vec<NumaNode>,
    pub caches: Vec<Cache>,
    pub kernel: Kernel,
    /// `None` on bare metal; otherwise the hypervisor's name (`kvm`, `vmware`, `xen`, …).
    pub virtualization: Option<String>,
    /// The evidence behind `virtualization`.
    pub virtualization_evidence: Vec<String>,
    /// Why bare metal cannot be told from a VM when `virtualization` is `None`: the source
    /// did not hold what would show a hypervisor (`/proc/cpuinfo` unreadable, so no
    /// `hypervisor` flag to look for, and no DMI or `/sys/hypervisor` answer). `None`: the
    /// reads were there and `virtualization` can be trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtualization_unknown: Option<String>,
    pub power: Power,
    pub irqs: Vec<Irq>,
    pub interrupts: Option<InterruptTable>,
    pub softirqs: Option<SoftirqTable>,
    /// `/proc/irq/default_smp_affinity`.
    pub default_smp_affinity: Option<CpuSet>,
    /// `None` when `/proc/<pid>/task` could not be read (e.g. a must-gather).
    pub tasks: Option<Vec<Task>>,
    pub workqueues: Workqueues,
    pub sysctls: Sysctls,
    pub memory: Memory,
    pub block_devices: Vec<BlockDevice>,
    pub cgroup: Cgroup,
    pub pci_devices: Vec<PciDevice>,
    pub net_interfaces: Vec<NetInterface>,
    /// Findings about the host alone (no plan): see `findings`.
    pub findings: Vec<Finding>,
    /// Fields that could not be read, with the reason.
    pub unknown: Vec<Unknown>,
    /// Files that were read but held something unexpected.
    pub warnings: Vec<Warning>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Source {
    /// `live`, `dir`, `tgz`, `must-gather`.
    pub kind: String,
    /// Path of the directory / tarball, or `/`.
    pub path: String,
    /// The must-gather node name, if any.
    pub node: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cpus {
    pub possible: Option<CpuSet>,
    pub present: Option<CpuSet>,
    pub online: Option<CpuSet>,
    pub offline: Option<CpuSet>,
    /// `/sys/devices/system/cpu/isolated` (what the kernel isolated via `isolcpus`).
    pub isolated: Option<CpuSet>,
    /// `/sys/devices/system/cpu/nohz_full`.
    pub nohz_full: Option<CpuSet>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Topology {
    pub cpus: Vec<CpuTopo>,
    /// `/sys/devices/system/cpu/smt/control` (`on`, `off`, `forceoff`, `notsupported`, …).
    pub smt_control: Option<String>,
    /// `/sys/devices/system/cpu/smt/active`.
    pub smt_active: Option<bool>,
    /// Hardware threads per core (max over cores).
    pub threads_per_core: usize,
}

/// One logical CPU's place in the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuTopo {
    pub cpu: usize,
    pub online: bool,
    /// `physical_package_id`.
    pub package: Option<i64>,
    pub die: Option<i64>,
    pub cluster: Option<i64>,
    /// `core_id` (unique within a package only).
    pub core: Option<i64>,
    pub numa_node: Option<usize>,
    /// `thread_siblings_list`, including this CPU.
    pub siblings: CpuSet,
    /// `cpuinfo` model name, if known.
    pub model: Option<String>,
    /// `cpuinfo` `cpu family` and `model` numbers (x86), if known: the CPU generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family_model: Option<(u32, u32)>,
    /// cpuinfo flags of interest (`hypervisor`, `constant_tsc`, `nonstop_tsc`, …).
    pub flags: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NumaNode {
    pub id: usize,
    pub cpus: CpuSet,
    /// `distance` row, indexed by node id.
    pub distances: Vec<u32>,
    pub mem_total_kb: Option<u64>,
    pub mem_free_kb: Option<u64>,
    /// Hugepages by page size in kB: count, free.
    pub hugepages: BTreeMap<u64, HugePages>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HugePages {
    pub total: u64,
    pub free: u64,
}

/// One distinct cache (deduplicated across the CPUs sharing it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cache {
    pub level: u32,
    /// `Data`, `Instruction`, `Unified`.
    pub kind: String,
    pub size_kb: Option<u64>,
    pub shared_cpus: CpuSet,
    pub id: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Kernel {
    /// `uname -r` (`/proc/sys/kernel/osrelease`).
    pub release: Option<String>,
    /// `uname -v` (`/proc/sys/kernel/version`).
    pub version: Option<String>,
    /// PREEMPT_RT: from `/sys/kernel/realtime`, the version string or the release name.
    pub realtime: Option<bool>,
    /// Where `realtime` came from (`/sys/kernel/realtime`, the version string, the release name).
    #[serde(default)]
    pub realtime_evidence: Option<String>,
    /// Where `release` came from when `osrelease` was absent (`BOOT_IMAGE` in the cmdline).
    #[serde(default)]
    pub release_source: Option<String>,
    /// The preemption model named in the version string (`PREEMPT_RT`, `PREEMPT_DYNAMIC`, …).
    pub preempt: Option<String>,
    /// `/proc/cmdline`, raw.
    pub cmdline: Option<String>,
    /// The command line parsed.
    pub boot: BootArgs,
    /// `current_clocksource`.
    pub clocksource: Option<String>,
    pub available_clocksources: Vec<String>,
    /// `/proc/sys/kernel/random/boot_id` (live only).
    pub boot_id: Option<String>,
}

/// The kernel command line as tokens plus the isolation-related parameters interpreted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BootArgs {
    /// Every token, in order: (`key`, `value` or `None` for a bare flag).
    pub tokens: Vec<(String, Option<String>)>,
    pub isolcpus: Option<IsolCpus>,
    pub nohz: Option<String>,
    pub nohz_full: Option<CpuSet>,
    pub rcu_nocbs: Option<CpuSet>,
    pub irqaffinity: Option<CpuSet>,
    pub kthread_cpus: Option<CpuSet>,
    pub systemd_cpu_affinity: Option<CpuSet>,
    /// `hugepagesz=`/`hugepages=`/`default_hugepagesz=` in order.
    pub hugepages: Vec<(String, String)>,
    /// Values that failed to parse: (`key`, message).
    pub errors: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IsolCpus {
    /// `domain`, `managed_irq`, `nohz`; empty means the default (`domain`).
    pub flags: Vec<String>,
    pub cpus: CpuSet,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Power {
    pub cpus: Vec<CpuPower>,
    /// `/sys/devices/system/cpu/intel_pstate/status`.
    pub intel_pstate_status: Option<String>,
    /// `/sys/devices/system/cpu/cpuidle/current_driver`.
    pub cpuidle_driver: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuPower {
    pub cpu: usize,
    pub scaling_driver: Option<String>,
    pub governor: Option<String>,
    pub energy_perf_preference: Option<String>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub cur_khz: Option<u64>,
    /// `/sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us` (`0` = no constraint,
    /// `n/a` is stored as `None` with the raw text kept).
    pub pm_qos_resume_latency_us: Option<String>,
    pub idle_states: Vec<IdleState>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IdleState {
    pub index: usize,
    pub name: String,
    pub desc: Option<String>,
    pub exit_latency_us: Option<u64>,
    pub target_residency_us: Option<u64>,
    pub disabled: Option<bool>,
    pub usage: Option<u64>,
    pub time_us: Option<u64>,
}

/// One IRQ from `/proc/irq/N/` joined with its `/proc/interrupts` row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Irq {
    pub irq: u32,
    /// Action names from `/proc/interrupts` (e.g. `virtio0-input.0`).
    pub name: Option<String>,
    /// Interrupt chip and hw irq / trigger text from `/proc/interrupts`.
    pub chip: Option<String>,
    /// `smp_affinity_list`.
    pub affinity: Option<CpuSet>,
    /// `effective_affinity_list`.
    pub effective_affinity: Option<CpuSet>,
    pub node: Option<i64>,
    /// Per-CPU counts from `/proc/interrupts`, indexed by column (CPU number order).
    pub counts: Vec<u64>,
    /// Managed IRQ (kernel decides affinity; writes are refused), when known.
    pub managed: Option<bool>,
}

/// `/proc/interrupts` as a table: the CPU header and every row (numbered and named).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InterruptTable {
    /// CPU numbers of the columns (`CPU0 CPU1 …` header; offline CPUs are absent).
    pub cpus: Vec<usize>,
    pub rows: Vec<InterruptRow>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InterruptRow {
    /// `0`, `24`, `LOC`, `RES`, `CAL`, `TLB`, `NMI`, …
    pub id: String,
    pub counts: Vec<u64>,
    /// Chip / description text after the counts.
    pub chip: Option<String>,
    /// Device / action names (numbered rows) or the description (named rows).
    pub name: Option<String>,
}

/// `/proc/softirqs`: per-kind per-CPU counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SoftirqTable {
    pub cpus: Vec<usize>,
    /// (`TIMER`, counts) …
    pub rows: Vec<(String, Vec<u64>)>,
}

/// One thread (`/proc/PID/task/TID`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Task {
    pub pid: u32,
    pub tid: u32,
    pub comm: String,
    /// Process command line (user tasks), joined with spaces.
    pub cmdline: Option<String>,
    /// Single-letter state from `stat`.
    pub state: String,
    /// Last CPU the thread ran on (stat field 39).
    pub cpu: Option<usize>,
    /// `SCHED_OTHER`→`TS`, `FIFO`→`FF`, `RR`→`RR`, `BATCH`→`B`, `IDLE`→`IDL`, `DEADLINE`→`DLN`
    /// (ps's abbreviations).
    pub policy: String,
    pub rt_priority: u32,
    pub nice: i32,
    /// Kernel thread (PF_KTHREAD).
    pub kthread: bool,
    /// Bound to its CPU (PF_NO_SETAFFINITY): cannot be moved.
    pub per_cpu_kthread: bool,
    pub allowed_cpus: Option<CpuSet>,
    /// cgroup path (v2 unified line, or the cpuset controller's for v1).
    pub cgroup: Option<String>,
    /// Process start time in clock ticks since boot (stat field 22), for identity checks.
    pub start_time: u64,
    pub voluntary_ctxt_switches: Option<u64>,
    pub nonvoluntary_ctxt_switches: Option<u64>,
}

impl Task {
    /// The IRQ this thread handles, when it is a threaded IRQ handler (`irq/24-virtio0`, or
    /// `irq/24-s-virtio0` for a secondary handler): such a thread follows its IRQ's effective
    /// affinity (the kernel moves it after the IRQ's next interrupt), so it is judged and
    /// moved with its IRQ, never on its own. Every IRQ handler is a thread on PREEMPT_RT.
    pub fn irq_thread(&self) -> Option<u32> {
        if !self.kthread {
            return None;
        }
        let rest = self.comm.strip_prefix("irq/")?;
        let digits: &str = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())];
        if digits.is_empty() || !rest[digits.len()..].starts_with('-') {
            return None;
        }
        digits.parse().ok()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Workqueues {
    /// `/sys/devices/virtual/workqueue/cpumask` (unbound workqueues' global mask).
    pub cpumask: Option<CpuSet>,
    /// `/sys/bus/workqueue/devices/writeback/cpumask`.
    pub writeback: Option<CpuSet>,
    /// Per-workqueue `cpumask` under `/sys/devices/virtual/workqueue/*/`.
    pub per_workqueue: BTreeMap<String, CpuSet>,
    /// `/sys/bus/workqueue/devices/writeback/numa` (`1`: a worker pool per NUMA node; kernels
    /// before 6.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writeback_numa: Option<String>,
    /// `/sys/bus/workqueue/devices/writeback/affinity_scope` as read (`default (cache)`,
    /// `system`; kernels 6.6 and later, where it replaces `numa`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writeback_affinity_scope: Option<String>,
}

/// The sysctls that matter for latency, raw text trimmed; `None` = could not be read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sysctls {
    /// Keyed by dotted name (`kernel.sched_rt_runtime_us`, `vm.stat_interval`, …).
    pub values: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Memory {
    pub mem_total_kb: Option<u64>,
    pub mem_available_kb: Option<u64>,
    /// `/sys/kernel/mm/transparent_hugepage/enabled` selected value (`always`, `madvise`, `never`).
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    /// `/sys/kernel/mm/ksm/run` (`0`, `1`, `2`).
    pub ksm_run: Option<String>,
    /// System-wide hugepages by size in kB.
    pub hugepages: BTreeMap<u64, HugePages>,
    pub default_hugepage_kb: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BlockDevice {
    pub name: String,
    pub rotational: Option<bool>,
    /// Selected scheduler (`[mq-deadline]`'s inner name).
    pub scheduler: Option<String>,
    pub schedulers_available: Vec<String>,
    pub wbt_lat_usec: Option<String>,
    /// `queue/write_cache` (`write back` / `write through`).
    pub write_cache: Option<String>,
    pub nr_requests: Option<u64>,
    pub size_sectors: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cgroup {
    /// `v1`, `v2`, `hybrid`, or `None` when unknown.
    pub version: Option<String>,
    /// cgroup v2 cpuset partitions: (path, `cpuset.cpus.partition` value, effective cpus).
    pub partitions: Vec<CpusetPartition>,
    /// Container cgroups and whether they can run SCHED_FIFO (RT budget chains, v2 with RT
    /// group scheduling): see `rt`.
    #[serde(default)]
    pub rt: crate::cgroup::Containers,
    /// The container/pod cgroups with their counters (`lowlat inspect --containers`).
    #[serde(default)]
    pub containers: Vec<crate::cgroup::Container>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpusetPartition {
    pub path: String,
    pub partition: String,
    pub cpus_effective: Option<CpuSet>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PciDevice {
    /// `0000:3b:00.0`.
    pub address: String,
    /// Class code (`0x020000`) when known.
    pub class: Option<String>,
    pub vendor: Option<String>,
    pub device: Option<String>,
    pub modalias: Option<String>,
    pub numa_node: Option<i64>,
    pub local_cpus: Option<CpuSet>,
    pub irq: Option<u32>,
    pub driver: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NetInterface {
    pub name: String,
    /// PCI address of the backing device, when it is one.
    pub pci_address: Option<String>,
    pub rx_queues: Option<usize>,
    pub tx_queues: Option<usize>,
    pub numa_node: Option<i64>,
    pub operstate: Option<String>,
}

/// A statement about the host with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    /// Stable id, kebab-case (`smt-sibling-not-isolated`, `hypervisor`, …).
    pub id: String,
    pub severity: Severity,
    pub message: String,
    /// Files and values that show it.
    pub evidence: Vec<String>,
    /// What to do about it (a lowlat command where there is one).
    pub fix: Option<String>,
}

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
pub enum Severity {
    Info,
    Warn,
    Error,
}

/// A field left unknown, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unknown {
    /// Model field (`cpus.isolated`, `tasks`, …).
    pub field: String,
    /// The file that was tried (root-relative, e.g. `sys/devices/system/cpu/isolated`).
    pub path: String,
    pub reason: String,
}

/// A file that was read but not fully understood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warning {
    pub path: String,
    /// 1-based line, when the problem is on one.
    pub line: Option<usize>,
    pub message: String,
}

impl Host {
    /// The same model with every string (values and map keys) made safe for a terminal
    /// (`util::term::sanitize`): what the text views draw, so a CPU model holding `ESC[31m`
    /// or a process name holding an OSC sequence prints as visible escapes. The JSON output
    /// keeps the raw values (JSON escapes them itself).
    pub fn for_terminal(&self) -> Host {
        fn walk(v: serde_json::Value) -> serde_json::Value {
            use serde_json::Value;
            match v {
                Value::String(s) => Value::String(util::term::sanitize(&s, false).into_owned()),
                Value::Array(a) => Value::Array(a.into_iter().map(walk).collect()),
                Value::Object(m) => Value::Object(
                    m.into_iter()
                        .map(|(k, v)| (util::term::sanitize(&k, false).into_owned(), walk(v)))
                        .collect(),
                ),
                other => other,
            }
        }
        // Every field round-trips through serde (the snapshot tests prove it); should one
        // ever not, the view falls back to the raw model rather than failing.
        serde_json::to_value(self)
            .ok()
            .map(walk)
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_else(|| self.clone())
    }

    /// Online CPUs, falling back to the CPUs found in the topology.
    pub fn online_cpus(&self) -> CpuSet {
        self.cpus.online.clone().unwrap_or_else(|| {
            self.topology.cpus.iter().filter(|c| c.online).map(|c| c.cpu).collect()
        })
    }

    /// The topology entry of `cpu`.
    pub fn cpu(&self, cpu: usize) -> Option<&CpuTopo> {
        self.topology.cpus.iter().find(|c| c.cpu == cpu)
    }

    /// The CPUs the kernel isolates, from sysfs or else from the command line.
    pub fn isolated_cpus(&self) -> CpuSet {
        self.cpus
            .isolated
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| self.kernel.boot.isolcpus.as_ref().map(|i| i.cpus.clone()))
            .unwrap_or_default()
    }

    /// The `nohz_full` CPUs, from sysfs or else from the command line.
    pub fn nohz_full_cpus(&self) -> CpuSet {
        self.cpus
            .nohz_full
            .clone()
            .or_else(|| self.kernel.boot.nohz_full.clone())
            .unwrap_or_default()
    }

    /// Resolve a CPU-set argument against this host: an explicit set as given, a name to this
    /// host's set (`reserved` = online and not isolated).
    pub fn resolve(&self, sel: &cpuset::CpuSelector) -> CpuSet {
        use cpuset::{CpuName, CpuSelector};
        match sel {
            CpuSelector::Set(s) => s.clone(),
            CpuSelector::Named(CpuName::Online) => self.online_cpus(),
            CpuSelector::Named(CpuName::Isolated) => self.isolated_cpus(),
            CpuSelector::Named(CpuName::NohzFull) => self.nohz_full_cpus(),
            CpuSelector::Named(CpuName::Reserved) => {
                self.online_cpus().difference(&self.isolated_cpus())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irq_threads_are_known_by_their_comm() {
        let t = |comm: &str, kthread| Task { comm: comm.into(), kthread, ..Task::default() };
        assert_eq!(t("irq/27-virtio0-req.2", true).irq_thread(), Some(27));
        assert_eq!(t("irq/9-s-acpi", true).irq_thread(), Some(9));
        assert_eq!(t("irq/9-acpi", false).irq_thread(), None, "a user task named so is not one");
        assert_eq!(t("irq_work/3", true).irq_thread(), None);
        assert_eq!(t("irq/x-foo", true).irq_thread(), None);
        assert_eq!(t("irq/12", true).irq_thread(), None);
    }
}
