//! The plan file: partition, options, derived kernel arguments and runtime knobs, each with
//! its reason. Field names are the public contract (`schema_version`, `reserved`, `isolated`,
//! `offlined`, `kernel_args[]`, `runtime[]`).

use cpuset::CpuSet;
use serde::{Deserialize, Serialize};

/// Version of the plan file's shape. A plan with a higher version is refused.
pub const SCHEMA_VERSION: u32 = 1;

/// The largest plan file read (1 MiB).
pub const MAX_PLAN_BYTES: u64 = 1024 * 1024;

impl Plan {
    /// The plan as YAML (the plan file).
    pub fn to_yaml(&self) -> Result<String, crate::PlanError> {
        serde_norway::to_string(self)
            .map_err(|e| crate::PlanError::File(format!("cannot serialize the plan: {e}")))
    }

    /// Every CPU with a role (reserved ∪ isolated ∪ offlined).
    pub fn all_cpus(&self) -> CpuSet {
        self.reserved.union(&self.isolated).union(&self.offlined)
    }

    /// What configures the node: the plan's [`PlanOptions::render_flavour`], `lowlat` when the
    /// plan does not say (plans from before the field).
    pub fn flavour(&self) -> Flavour {
        self.options.render_flavour.unwrap_or(Flavour::Lowlat)
    }

    /// The boot line `flavour` gives the node: every planned argument for lowlat's renders;
    /// for NTO's, without [`NTO_OMITS`] and with `systemd.cpu_affinity` over every CPU that is
    /// not isolated (housekeeping, offline, SMT-off), as NTO writes it.
    pub fn boot_args_for(&self, flavour: Flavour) -> Vec<KernelArg> {
        let mut args = self.kernel_args.clone();
        if flavour == Flavour::Nto {
            args.retain(|a| !NTO_OMITS.contains(&a.key.as_str()));
            let not_isolated = self
                .reserved
                .union(&self.offlined)
                .union(&self.smt_disabled)
                .difference(&self.isolated);
            for a in &mut args {
                if a.key == "systemd.cpu_affinity" {
                    let cpus: Vec<String> = not_isolated.iter().map(|c| c.to_string()).collect();
                    a.value = Some(cpus.join(","));
                }
            }
        }
        args
    }

    /// The boot line the node is configured with ([`Plan::boot_args_for`] its flavour).
    pub fn boot_args(&self) -> Vec<KernelArg> {
        self.boot_args_for(self.flavour())
    }
}

/// Kernel arguments lowlat plans that NTO's boot line does not carry (`render openshift`
/// leaves them out unless `--beyond-nto`): NTO keeps IRQs off a pod's CPUs per pod (CRI-O,
/// with `isolcpus=managed_irq` for managed IRQs) instead of `irqaffinity=`, and `nohz_full=`
/// keeps unbound kthreads on the housekeeping CPUs instead of `kthread_cpus=`. `verify` checks
/// their effects on an NTO node rather than the arguments.
pub const NTO_OMITS: [&str; 2] = ["irqaffinity", "kthread_cpus"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub schema_version: u32,
    /// Profile / role name (`performance`, `worker-cnf`, …).
    pub name: String,
    /// The host this plan was computed for (hostname / must-gather node), informative.
    pub host: Option<String>,
    /// Housekeeping CPUs.
    pub reserved: CpuSet,
    /// CPUs for the latency-critical workload.
    pub isolated: CpuSet,
    /// CPUs to take offline.
    pub offlined: CpuSet,
    pub options: PlanOptions,
    /// Boot-time kernel arguments, in render order. Derived from the sets and options when a
    /// plan file is read (written for the reader; what a file says here is not used).
    #[serde(default)]
    pub kernel_args: Vec<KernelArg>,
    /// Runtime knobs `apply` sets and `verify` checks.
    pub runtime: Vec<RuntimeItem>,
    /// One line per decision, in the order taken.
    pub rationale: Vec<String>,
    /// SMT siblings switched off by `nosmt` (no role: they are gone after the reboot).
    #[serde(default, skip_serializing_if = "CpuSet::is_empty")]
    pub smt_disabled: CpuSet,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanOptions {
    /// Which partitioner made the sets.
    pub style: Style,
    pub power: Power,
    pub rt_kernel: bool,
    pub no_smt: bool,
    pub split_reserved_across_numa: bool,
    /// Kubelet topology manager policy for the OpenShift renders.
    pub topology_policy: Option<TopologyPolicy>,
    pub per_pod_power_management: bool,
    /// `SIZE:COUNT[:NODE]` requests, e.g. `1G:4:0`.
    pub hugepages: Vec<HugepageRequest>,
    /// Device the housekeeping CPUs sit near (interface or PCI address).
    pub near_device: Option<String>,
    /// `isolcpus=domain,managed_irq,…` (static isolation, no scheduler balancing) instead of
    /// `isolcpus=managed_irq,…`.
    #[serde(default)]
    pub isolcpus_domain: bool,
    /// MachineConfigPool / role the plan targets (OpenShift renders).
    #[serde(default)]
    pub mcp_name: Option<String>,
    /// Node selector label of the target nodes (`node-role.kubernetes.io/<role>`).
    #[serde(default)]
    pub node_selector: Option<(String, String)>,
    /// Label unique to the target MachineConfigPool.
    #[serde(default)]
    pub mcp_selector: Option<(String, String)>,
    /// PerformanceProfile `net.userLevelNetworking`, when given.
    #[serde(default)]
    pub user_level_networking: Option<bool>,
    /// Emit `workloadHints` in a PerformanceProfile (NTO's PPC always does; plans written for
    /// PAO-era PPC, which wrote them only with a power mode, may say false).
    #[serde(default)]
    pub workload_hints: bool,
    /// CPU vendor when known: picks the pstate / C-state arguments.
    #[serde(default)]
    pub cpu_vendor: Option<CpuVendor>,
    /// The `intel_pstate` mode TuneD's `intel_recommended_pstate` picks for this CPU, which NTO
    /// puts on every Intel node's boot line: `disable` before Ice Lake (active mode can add
    /// jitter there), `active` from Ice Lake on. Set from the CPU's family/model at plan time;
    /// absent (plans from before, hosts without the model number): `active` on low-latency
    /// plans, none otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intel_pstate: Option<IntelPstate>,
    /// Socket busy polling in µs (`net.core.busy_read` and `net.core.busy_poll`; PAO's Tuned
    /// sets 50). Absent: left as the host has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_poll_us: Option<u64>,
    /// A chosen idle limit in µs: the isolated CPUs use no idle state whose exit latency is
    /// above it (deeper states disabled, PM QoS held). Replaces the power mode's limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_limit_us: Option<u64>,
    /// The HyperShift NodePool the plan is for (a hosted control plane's nodes, which take no
    /// MachineConfig): `render performance-profile` writes the PerformanceProfile inside a
    /// ConfigMap, as PPC's `--node-pool-name` does, for the NodePool's `spec.tuningConfig`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    /// What configures the node from this plan, which decides the boot line `verify` expects
    /// ([`Plan::boot_args`]). Absent (plans from before the field, or not said): `lowlat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render_flavour: Option<Flavour>,
}

/// A closed set of names in the plan file: an enum serialized as its name, parsed from it
/// with an error that lists the valid names.
macro_rules! closed_set {
    ($(#[$m:meta])* $name:ident: $what:literal { $($(#[$vm:meta])* $v:ident = $s:literal,)+ }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $v,)+
        }

        impl $name {
            /// Every value, in the order help texts list them.
            pub const ALL: &'static [$name] = &[$($name::$v,)+];

            /// The name in the plan file and on the command line.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$v => $s,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = crate::error::UnknownName;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s).ok_or_else(|| {
                    crate::error::UnknownName::new($what, s, Self::ALL.iter().map(|v| v.as_str()))
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let names: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                schemars::json_schema!({ "type": "string", "enum": names })
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

closed_set! {
    /// Which partitioner computes the sets.
    #[derive(Default)]
    Style: "style" {
        /// lowlat's own: whole cores, one housekeeping core per NUMA node, a reason per choice.
        #[default]
        Lowlat = "lowlat",
        /// The Performance Profile Creator's exact algorithm (`CalculateCPUSets`).
        Ppc = "ppc",
    }
}

closed_set! {
    /// Power mode (the PerformanceProfile's workload hints).
    #[derive(Default)]
    Power: "power consumption mode" {
        /// No power trade-off.
        #[default]
        Default = "default",
        /// Shallow C-states, the performance governor, no NMI watchdog.
        LowLatency = "low-latency",
        /// As low-latency, plus `idle=poll`: idle CPUs spin.
        UltraLowLatency = "ultra-low-latency",
    }
}

impl Power {
    /// Low-latency or ultra-low-latency: the modes that trade power for latency.
    pub fn is_low_latency(self) -> bool {
        matches!(self, Power::LowLatency | Power::UltraLowLatency)
    }
}

closed_set! {
    /// Kubelet topology manager policy.
    TopologyPolicy: "topology manager policy" {
        None = "none",
        SingleNumaNode = "single-numa-node",
        BestEffort = "best-effort",
        Restricted = "restricted",
    }
}

closed_set! {
    /// What configures the node from a plan (`plan --render-flavour`).
    Flavour: "render flavour" {
        /// lowlat's renders (`cmdline`, `grubby`, `bls`, `grub`, `rpm-ostree`, `tuned`,
        /// `render openshift --beyond-nto`): every planned kernel argument on the boot line.
        Lowlat = "lowlat",
        /// The Node Tuning Operator's configuration (`render openshift` by default,
        /// `render performance-profile`): NTO's boot line, without [`NTO_OMITS`].
        Nto = "nto",
    }
}

closed_set! {
    /// An `intel_pstate=` driver mode.
    IntelPstate: "intel_pstate mode" {
        Active = "active",
        Disable = "disable",
    }
}

closed_set! {
    /// CPU vendor, from the cpuinfo model name.
    CpuVendor: "CPU vendor" {
        Intel = "intel",
        Amd = "amd",
        Arm = "arm",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HugepageRequest {
    /// `2M`, `1G`.
    pub size: String,
    pub count: u64,
    pub node: Option<usize>,
}

/// One kernel argument with why it is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelArg {
    pub key: String,
    pub value: Option<String>,
    pub reason: String,
}

impl KernelArg {
    /// `key=value` or `key`.
    pub fn token(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={}", self.key, v),
            None => self.key.clone(),
        }
    }
}

/// One runtime knob: what to set, to what, why. `apply` turns these into journaled writes;
/// `verify` checks their effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RuntimeItem {
    /// Move every movable IRQ, and the default IRQ mask, to these CPUs.
    IrqAffinity { cpus: CpuSet, reason: String },
    /// Unbound workqueue masks (global, writeback, per-workqueue).
    WorkqueueMask { cpus: CpuSet, reason: String },
    /// Movable kernel threads' affinity.
    KthreadAffinity { cpus: CpuSet, reason: String },
    /// A sysctl (dotted name) and value.
    Sysctl { name: String, value: String, reason: String },
    /// A sysfs/procfs file (root-relative path) and value, for knobs without a sysctl name.
    File { path: String, value: String, reason: String },
    /// CPU frequency governor on these CPUs.
    Governor { cpus: CpuSet, governor: String, reason: String },
    /// Limit C-states on these CPUs to exit latency <= `max_latency_us` (0 = poll only): the
    /// per-CPU PM QoS request, and with `disable_states` every deeper cpuidle state switched
    /// off too (`cpuidle/stateN/disable`, whatever the governor).
    IdleLimit {
        cpus: CpuSet,
        max_latency_us: u64,
        reason: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        disable_states: bool,
    },
    /// Energy-performance bias (`power/energy_perf_bias`, 0 = performance … 15 = powersave)
    /// on these CPUs.
    EnergyPerfBias { cpus: CpuSet, value: String, reason: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan file as the string-typed options wrote it: the enums read it and write it back
    /// byte for byte.
    const PLAN: &str = "schema_version: 1
name: performance
host: worker1
reserved: 0-1,40-41
isolated: 2-39,42-79
offlined: ''
options:
  style: ppc
  power: ultra-low-latency
  rt_kernel: true
  no_smt: false
  split_reserved_across_numa: false
  topology_policy: single-numa-node
  per_pod_power_management: false
  hugepages:
  - size: 1G
    count: 4
    node: null
  near_device: null
  isolcpus_domain: false
  mcp_name: worker-cnf
  node_selector: null
  mcp_selector: null
  user_level_networking: null
  workload_hints: true
  cpu_vendor: amd
kernel_args: []
runtime: []
rationale: []
";

    #[test]
    fn options_serialize_to_the_same_strings() {
        // kernel_args is derived on reading: compare the rest byte for byte.
        let read = |text: &str| {
            let mut p = Plan::from_yaml(text, "plan.yaml").unwrap();
            assert!(!p.kernel_args.is_empty());
            p.kernel_args.clear();
            p
        };
        let plan = read(PLAN);
        assert_eq!(plan.options.style, Style::Ppc);
        assert_eq!(plan.options.power, Power::UltraLowLatency);
        assert_eq!(plan.options.topology_policy, Some(TopologyPolicy::SingleNumaNode));
        assert_eq!(plan.options.cpu_vendor, Some(CpuVendor::Amd));
        assert_eq!(plan.to_yaml().unwrap(), PLAN);
        let with = |key: &str, value: &str| -> String {
            let prefix = format!("  {key}: ");
            PLAN.lines()
                .map(|l| {
                    if l.starts_with(&prefix) {
                        format!("{prefix}{value}\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect()
        };
        // The names plan files hold (the contract), each in its place in the file.
        let sets: [(&str, &[&str]); 4] = [
            ("style", &["lowlat", "ppc"]),
            ("power", &["default", "low-latency", "ultra-low-latency"]),
            ("topology_policy", &["none", "single-numa-node", "best-effort", "restricted"]),
            ("cpu_vendor", &["intel", "amd", "arm"]),
        ];
        for (key, values) in sets {
            for value in values {
                let text = with(key, value);
                let back = read(&text).to_yaml().unwrap();
                assert_eq!(back, text, "{key}: {value}");
            }
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = PLAN.replace("power: ultra-low-latency", "power: fast");
        let e = Plan::from_yaml(&e, "plan.yaml").unwrap_err().to_string();
        assert!(
            e.contains("power consumption mode 'fast' is invalid. Valid values come from the set [default low-latency ultra-low-latency]"),
            "{e}"
        );
        assert_eq!("none".parse::<TopologyPolicy>().unwrap(), TopologyPolicy::None);
        assert!(Power::LowLatency.is_low_latency() && Power::UltraLowLatency.is_low_latency());
        assert!(!Power::Default.is_low_latency());
    }
}
