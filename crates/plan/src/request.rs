//! What `lowlat plan` is asked for, as given (an unset option takes its style's default), and
//! the one call that turns it into a plan: take what is unset from a PPC arguments file, check
//! the combination (with PPC's own texts where the ppc style reproduces PPC), read the host it
//! names (live, a snapshot, a must-gather node or pool), resolve the request against that host
//! and compute the plan.

use std::path::PathBuf;

use cpuset::CpuSelector;
use host::Host;

use crate::build::{device_node, make_plan, read_host, PlanRequest};
use crate::cluster::{self, PoolMeta};
use crate::error::PlanError;
use crate::layout::Layout;
use crate::model::{Flavour, HugepageRequest, Plan, PlanOptions, Power, Style, TopologyPolicy};
use crate::partition::{CpuRequest, PartitionRequest};
use crate::ppc::args::ArgsFile;
use crate::ppc::{PpcError, PpcInput};

/// Where the host to plan for comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Source {
    /// The running host.
    #[default]
    Live,
    /// A snapshot: a directory holding `proc/` and `sys/`, or a `.tgz`.
    Root(PathBuf),
    /// An OpenShift must-gather and the node to plan for (without one, the pool's nodes).
    MustGather { dir: PathBuf, node: Option<String> },
}

impl Source {
    /// The source a user's options name: a must-gather (with its node) wins over a snapshot,
    /// as PPC's flag does; neither is the live host.
    pub fn pick(must_gather: Option<PathBuf>, node: Option<String>, root: Option<PathBuf>) -> Self {
        match (must_gather, root) {
            (Some(dir), _) => Source::MustGather { dir, node },
            (None, Some(root)) => Source::Root(root),
            (None, None) => Source::Live,
        }
    }
}

/// A plan request as the user gave it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub source: Source,
    /// The MachineConfigPool whose nodes the plan is for (read from a must-gather).
    pub pool: Option<String>,
    /// PPC's `--node-pool-name`: a hosted control plane's NodePool (on a must-gather that is
    /// not a hosted cluster's, an alias of the pool, as in PPC).
    pub node_pool: Option<String>,
    /// PPC's JSON arguments file: fills what is unset here and implies the ppc style.
    pub ppc_args: Option<PathBuf>,
    /// Plan / profile name (default `lowlat`, or `performance` in the ppc style).
    pub name: Option<String>,
    pub style: Option<Style>,
    /// How many housekeeping CPUs (rounded up to whole cores in the lowlat style).
    pub reserved: Option<i64>,
    /// Explicit housekeeping CPUs.
    pub reserved_cpus: Option<CpuSelector>,
    /// Explicit isolated CPUs (the rest is housekeeping unless housekeeping is given too).
    pub isolated: Option<CpuSelector>,
    /// CPUs to take offline: a count or a list.
    pub offline: Option<CpuRequest>,
    pub no_smt: Option<bool>,
    pub split_reserved_across_numa: Option<bool>,
    /// Do not keep a housekeeping core on every NUMA node that has isolated CPUs.
    pub no_per_node_housekeeping: bool,
    pub power: Option<Power>,
    pub rt_kernel: Option<bool>,
    pub hugepages: Vec<HugepageRequest>,
    pub topology_policy: Option<TopologyPolicy>,
    /// Interface or PCI address whose NUMA node gets the bulk of housekeeping.
    pub near_device: Option<String>,
    pub isolcpus_domain: bool,
    pub per_pod_power_management: Option<bool>,
    pub user_level_networking: Option<bool>,
    /// Socket busy polling in µs (`net.core.busy_read` / `busy_poll`; 0 = off).
    pub busy_poll_us: Option<u64>,
    /// Idle limit in µs: no idle state with a longer exit latency on the isolated CPUs.
    pub idle_limit_us: Option<u64>,
    /// What will configure the node (the boot line `verify` expects); default `nto` for a
    /// plan made from a must-gather (an OpenShift node, which `render openshift` and
    /// `render performance-profile` configure as NTO does), else unset (lowlat's renders).
    pub render_flavour: Option<Flavour>,
}

/// The largest busy-poll time and idle limit accepted (1 s): both are µs-range knobs, and a
/// larger value is a unit mistake.
pub const MAX_KNOB_US: u64 = 1_000_000;

/// A plan and the planner's view of the machine it was computed on (the summary draws its
/// grid from it).
#[derive(Debug, Clone)]
pub struct Planned {
    pub plan: Plan,
    pub layout: Layout,
}

/// The host a request resolves against.
struct Target {
    host: Host,
    /// The host or node name recorded in the plan.
    name: Option<String>,
    /// The node's pool and every pool of its cluster.
    pool: Option<(PoolMeta, Vec<PoolMeta>)>,
    /// A hosted control plane's NodePool (then no MachineConfigPool).
    node_pool: Option<String>,
}

impl Request {
    /// Compute the plan.
    pub fn plan(mut self) -> Result<Planned, PlanError> {
        if let Some(file) = self.ppc_args.take() {
            self.fill_from(ArgsFile::load(&file)?)?;
        }
        self.check()?;
        // PPC's power mode defaults to `default`, refused with the RT kernel (after the sets)
        let ppc_default_power_rt =
            self.style == Some(Style::Ppc) && self.power.is_none() && self.rt_kernel == Some(true);
        let target = self.target()?;
        let req = self.resolve(&target)?;
        let plan = make_plan(&target.host, &req)?;
        // PPC's power mode defaults to `default`, which it refuses with the RT kernel once the
        // CPU sets are computed (so a set error comes first, as there)
        if ppc_default_power_rt {
            return Err(PlanError::from(PpcError::Args("default power consumption mode is not available with real-time kernel, please use one of [low-latency ultra-low-latency] modes".to_string())));
        }
        Ok(Planned { plan, layout: Layout::from_host(&target.host) })
    }

    /// Take what is unset from PPC's arguments; what the request says wins.
    fn fill_from(&mut self, p: ArgsFile) -> Result<(), PlanError> {
        if self.style == Some(Style::Lowlat) {
            return Err(PlanError::invalid(
                "a PPC arguments file reproduces the Performance Profile Creator",
                "use the ppc style (or give no style)",
            ));
        }
        self.style = Some(Style::Ppc);
        // what the command line refuses is refused here too, not silently ignored
        if p.enable_hardware_tuning == Some(true) {
            return Err(PlanError::invalid(
                "\"enable-hardware-tuning\": true asks for PPC's hardwareTuning section (per-CPU frequency limits), which lowlat does not render",
                "drop it (or set it false) and set frequencies another way",
            ));
        }
        self.node_pool = self.node_pool.take().or(p.node_pool_name);
        if let (Source::Live, Some(dir)) = (&self.source, p.must_gather_dir_path) {
            self.source = Source::MustGather { dir, node: None };
        }
        self.pool = self.pool.take().or(p.mcp_name);
        self.reserved = self.reserved.or(p.reserved_cpu_count);
        if self.offline.is_none() {
            self.offline = match p.offlined_cpu_count {
                Some(n) => Some(CpuRequest::Count(usize::try_from(n).map_err(|_| {
                    PlanError::invalid(
                        format!("offlined CPU count {n}: a count cannot be negative"),
                        "give 0 or more",
                    )
                })?)),
                None => None,
            };
        }
        self.rt_kernel = self.rt_kernel.or(p.rt_kernel);
        self.split_reserved_across_numa =
            self.split_reserved_across_numa.or(p.split_reserved_cpus_across_numa);
        self.no_smt = self.no_smt.or(p.disable_ht);
        self.user_level_networking = self.user_level_networking.or(p.user_level_networking);
        self.power = self.power.or(p.power_consumption_mode);
        self.topology_policy = self.topology_policy.or(p.topology_manager_policy);
        self.per_pod_power_management =
            self.per_pod_power_management.or(p.per_pod_power_management);
        self.name = self.name.take().or(p.profile_name);
        Ok(())
    }

    /// The combinations refused before any host is read (PPC's texts where PPC refuses).
    fn check(&self) -> Result<(), PlanError> {
        let ppc_refuses = |text: &str| Err(PlanError::from(PpcError::Args(text.to_string())));
        if self.pool.is_some() && self.node_pool.is_some() {
            return ppc_refuses("--mcp-name and --node-pool-name options cannot be used together");
        }
        let ppc = self.style == Some(Style::Ppc);
        if ppc {
            if self.topology_policy == Some(TopologyPolicy::None) {
                return ppc_refuses("invalid value for topology-manager-policy flag specified: flag \"topology-manager-policy\": Value 'none' is invalid. Valid values come from the set [single-numa-node best-effort restricted]");
            }
            let mut missing = vec![];
            if self.reserved.is_none() {
                missing.push("--reserved-cpu-count");
            }
            if self.rt_kernel.is_none() {
                missing.push("--rt-kernel");
            }
            if !missing.is_empty() {
                return ppc_refuses(&format!("missing required flags: {}", missing.join(", ")));
            }
            if self.reserved_cpus.is_some()
                || self.isolated.is_some()
                || self.near_device.is_some()
                || self.isolcpus_domain
                || self.no_per_node_housekeeping
            {
                return Err(PlanError::invalid(
                    "the ppc style computes the sets the way PPC does: explicit housekeeping or isolated CPUs, a device to sit near, isolcpus domains and dropping per-node housekeeping are lowlat-style options",
                    "drop them or use the lowlat style",
                ));
            }
            if matches!(self.offline, Some(CpuRequest::List(_))) {
                return Err(PlanError::invalid(
                    "the ppc style takes the offlined CPU count as a number, not a list",
                    "give a count",
                ));
            }
        }
        if self.topology_policy == Some(TopologyPolicy::SingleNumaNode)
            && self.split_reserved_across_numa == Some(true)
        {
            return ppc_refuses("not appropriate to split reserved CPUs in case of topology-manager-policy: single-numa-node");
        }
        if self.power == Some(Power::Default) && self.rt_kernel == Some(true) {
            return ppc_refuses("default power consumption mode is not available with real-time kernel, please use one of [low-latency ultra-low-latency] modes");
        }
        if self.power == Some(Power::UltraLowLatency) && self.per_pod_power_management == Some(true)
        {
            return ppc_refuses("please use one of [default low-latency] power consumption modes together with the perPodPowerManagement");
        }
        if let (Some(us), Some(Power::UltraLowLatency)) = (self.idle_limit_us, self.power) {
            if us > 0 {
                return Err(PlanError::invalid(
                    format!("an idle limit of {us} µs keeps shallow C-states, but the ultra-low-latency mode polls when idle (idle=poll)"),
                    "use the low-latency or default power mode with an idle limit, or drop the idle limit",
                ));
            }
        }
        if let (Some(_), Some(true)) = (self.busy_poll_us, self.rt_kernel) {
            return Err(PlanError::invalid(
                "busy polling on a real-time kernel: RT kernels have no net.core.busy_read / net.core.busy_poll (CONFIG_NET_RX_BUSY_POLL is off with PREEMPT_RT); TuneD would log an ERROR and NTO mark the node's profile Degraded",
                "drop --busy-poll, or plan for the non-RT kernel",
            ));
        }
        for (what, v) in [("busy-poll time", self.busy_poll_us), ("idle limit", self.idle_limit_us)]
        {
            if let Some(us) = v.filter(|us| *us > MAX_KNOB_US) {
                return Err(PlanError::invalid(
                    format!("{what} {us} µs: longer than {MAX_KNOB_US} µs (1 s)"),
                    "give microseconds, e.g. 50us or 80us",
                ));
            }
        }
        match self.reserved {
            Some(n) if !ppc && n < 0 => Err(PlanError::invalid(
                format!("housekeeping CPU count {n}: a count cannot be negative"),
                "give 0 or more",
            )),
            _ => Ok(()),
        }
    }

    /// Read the host: one node, or the nodes of a pool (which must share one topology).
    fn target(&self) -> Result<Target, PlanError> {
        let root = match &self.source {
            Source::MustGather { dir, node } => {
                // PPC: either name is the other's alias; the must-gather says which it is
                let pool = self.pool.as_deref().or(self.node_pool.as_deref());
                let t = cluster::target(dir, pool, node.as_deref())?;
                return Ok(Target {
                    host: t.host,
                    name: Some(t.node),
                    pool: t.pool,
                    node_pool: t.node_pool,
                });
            }
            _ if self.pool.is_some() || self.node_pool.is_some() => {
                return Err(PlanError::invalid(
                    "a MachineConfigPool's nodes are found in a must-gather",
                    "plan from the must-gather that holds the pool",
                ))
            }
            Source::Live => host::Root::live(),
            Source::Root(path) => host::Root::open(path)?,
        };
        let host = read_host(&root)?;
        Ok(Target { name: host.hostname.clone(), host, pool: None, node_pool: None })
    }

    /// The planner's request: defaults filled in, CPU names and devices resolved on the host.
    fn resolve(self, t: &Target) -> Result<PlanRequest, PlanError> {
        let style = self.style.unwrap_or_default();
        let ppc = style == Style::Ppc;
        let power = self.power.unwrap_or_default();
        let split = self.split_reserved_across_numa.unwrap_or(false);
        let no_smt = self.no_smt.unwrap_or(false);
        let near_node = self.near_device.as_deref().map(|d| device_node(&t.host, d)).transpose()?;
        let (node_selector, mcp_selector) = match (&t.pool, &t.node_pool) {
            (Some((p, pools)), _) => {
                (cluster::node_selector(p), Some(cluster::pool_selector(p, pools)?))
            }
            // PPC on a hosted cluster: a node selector with no meaning there (every node of
            // the NodePool gets the profile) that HyperShift's validation still wants
            (None, Some(_)) => {
                (Some(("node-role.kubernetes.io/worker".into(), String::new())), None)
            }
            (None, None) => (None, None),
        };
        let reserved = match (self.reserved, &self.reserved_cpus) {
            (Some(n), _) => Some(CpuRequest::Count(usize::try_from(n).unwrap_or(0))),
            (None, Some(sel)) => Some(CpuRequest::List(t.host.resolve(sel))),
            (None, None) => None,
        };
        let isolated = self.isolated.as_ref().map(|s| isolated_request(s, &t.host)).transpose()?;
        let offlined_count = match &self.offline {
            Some(CpuRequest::Count(n)) => i64::try_from(*n).unwrap_or(i64::MAX),
            _ => 0,
        };
        Ok(PlanRequest {
            name: self.name.unwrap_or_else(|| if ppc { "performance" } else { "lowlat" }.into()),
            host_name: t.name.clone(),
            options: PlanOptions {
                style,
                power,
                rt_kernel: self.rt_kernel.unwrap_or(false),
                no_smt,
                split_reserved_across_numa: split,
                topology_policy: self.topology_policy.or(ppc.then_some(TopologyPolicy::Restricted)),
                per_pod_power_management: self.per_pod_power_management.unwrap_or(false),
                hugepages: self.hugepages,
                near_device: self.near_device.clone(),
                isolcpus_domain: self.isolcpus_domain,
                // a NodePool is no MachineConfigPool (`--mcp-name` is its alias on a hosted cluster)
                mcp_name: if t.node_pool.is_some() {
                    None
                } else {
                    t.pool.as_ref().map(|(p, _)| p.name.clone()).or(self.pool)
                },
                node_selector,
                mcp_selector,
                // NTO's PPC always writes `net.userLevelNetworking` (its flag defaults to
                // false) and the three workload hints (`makePerformanceProfileFrom`).
                user_level_networking: self.user_level_networking.or(ppc.then_some(false)),
                workload_hints: true,
                cpu_vendor: None,
                intel_pstate: None,
                busy_poll_us: self.busy_poll_us,
                idle_limit_us: self.idle_limit_us,
                node_pool: t.node_pool.clone(),
                render_flavour: self.render_flavour.or_else(|| {
                    matches!(self.source, Source::MustGather { .. }).then_some(Flavour::Nto)
                }),
            },
            partition: PartitionRequest {
                reserved,
                isolated: isolated.flatten(),
                offline: self.offline,
                no_smt,
                split_reserved_across_numa: split,
                per_node_housekeeping: !self.no_per_node_housekeeping,
                near_node,
                near_device: self.near_device,
            },
            ppc: PpcInput {
                reserved_cpu_count: self.reserved.unwrap_or(0),
                offlined_cpu_count: offlined_count,
                split_reserved_cpus_across_numa: split,
                disable_ht: no_smt,
                high_power_consumption: power == Power::UltraLowLatency,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_limit_and_busy_poll_are_checked() {
        let req = |power, idle, busy| Request {
            power,
            idle_limit_us: idle,
            busy_poll_us: busy,
            ..Default::default()
        };
        let e = req(Some(Power::UltraLowLatency), Some(80), None).check().unwrap_err();
        assert!(e.to_string().contains("polls when idle"), "{e}");
        assert!(req(Some(Power::UltraLowLatency), Some(0), None).check().is_ok());
        assert!(req(Some(Power::LowLatency), Some(80), Some(50)).check().is_ok());
        let e = req(None, None, Some(50_000_000)).check().unwrap_err();
        assert!(e.to_string().contains("busy-poll time 50000000 µs"), "{e}");
        let e = req(None, Some(2_000_000), None).check().unwrap_err();
        assert!(e.to_string().contains("idle limit"), "{e}");
    }

    #[test]
    fn busy_poll_on_an_rt_kernel_is_refused() {
        // RT kernels have no net.core.busy_read/busy_poll (TuneD: ERROR, NTO: Degraded).
        for us in [0, 50] {
            let r = Request { busy_poll_us: Some(us), rt_kernel: Some(true), ..Default::default() };
            let e = r.check().unwrap_err();
            assert!(e.to_string().contains("real-time kernel"), "{e}");
        }
        let r = Request { busy_poll_us: Some(50), rt_kernel: Some(false), ..Default::default() };
        assert!(r.check().is_ok());
    }
}

/// The isolated CPUs asked for by name or list: `all` is every CPU but the housekeeping ones
/// (what the planner isolates by default), `isolated` the CPUs the host isolates now (refused
/// when it isolates none), a list as given.
fn isolated_request(sel: &CpuSelector, host: &Host) -> Result<Option<cpuset::CpuSet>, PlanError> {
    use cpuset::CpuName;
    match sel {
        CpuSelector::Named(CpuName::Online) => Ok(None),
        CpuSelector::Named(CpuName::Isolated) => {
            let now = host.isolated_cpus();
            if now.is_empty() {
                return Err(PlanError::invalid(
                    "isolated CPUs `isolated`: this host isolates no CPUs now (no isolcpus on its command line, /sys/devices/system/cpu/isolated empty)",
                    "list the CPUs to isolate, or give `all` for every CPU but the housekeeping ones",
                ));
            }
            Ok(Some(now))
        }
        other => Ok(Some(host.resolve(other))),
    }
}

#[cfg(test)]
mod isolated_tests {
    use super::*;
    use crate::layout::testhost;

    #[test]
    fn isolated_names_resolve_as_the_readme_says() {
        let mut host = testhost::worker1();
        let sel = |s: &str| s.parse::<CpuSelector>().unwrap();
        assert_eq!(isolated_request(&sel("all"), &host).unwrap(), None);
        let e = isolated_request(&sel("isolated"), &host).unwrap_err().to_string();
        assert!(e.contains("isolates no CPUs now"), "{e}");
        host.cpus.isolated = Some(cpuset::CpuSet::parse_list("2-5").unwrap());
        assert_eq!(
            isolated_request(&sel("isolated"), &host).unwrap().map(|s| s.to_list()),
            Some("2-5".to_string())
        );
        assert_eq!(
            isolated_request(&sel("3,7"), &host).unwrap().map(|s| s.to_list()),
            Some("3,7".to_string())
        );
        assert!("abc".parse::<CpuSelector>().is_err(), "abc is not the mask 0xabc");
    }
}
