//! The arguments of `lowlat plan`, with their help.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use cpuset::CpuSelector;
use plan::partition::CpuRequest;
use plan::{Flavour, HugepageRequest, Power, Style, TopologyPolicy};

use super::common::{HostArgs, Output};

/// Arguments of `lowlat plan`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat plan --reserved 4 --power low-latency -o plan.yaml\n  \
lowlat plan --must-gather DIR --mcp-name worker-cnf --style ppc --reserved-cpu-count=4 --rt-kernel=true -o plan.yaml\n  \
lowlat plan --ppc-args profile1.json -o plan.yaml\n  \
lowlat plan --info --must-gather DIR [--json]\n\
PPC's flag names are accepted as aliases (--reserved-cpu-count, --offlined-cpu-count, --disable-ht, …)."
)]
pub struct Args {
    #[command(flatten)]
    pub host: HostArgs,
    /// Plan for the nodes of this MachineConfigPool (needs --must-gather); their topologies
    /// must be identical.
    #[arg(long, value_name = "POOL")]
    pub mcp_name: Option<String>,
    /// A hosted control plane's NodePool (PPC's flag; needs --must-gather of the hosted
    /// cluster): `render performance-profile` then writes the profile in a ConfigMap.
    #[arg(long, value_name = "NODEPOOL")]
    pub node_pool_name: Option<String>,
    /// PPC's name for --must-gather.
    #[arg(
        long = "must-gather-dir-path",
        value_name = "DIR",
        hide = true,
        conflicts_with = "must_gather"
    )]
    pub must_gather_dir_path: Option<PathBuf>,
    /// `lowlat` (whole cores, reasons) or `ppc` (the Performance Profile Creator's exact choice).
    #[arg(long, value_name = "STYLE", value_parser = style_parser())]
    pub style: Option<Style>,
    /// Read PPC's arguments from a JSON file (the format of PPC's test fixtures); implies --style ppc.
    #[arg(long, value_name = "FILE.json")]
    pub ppc_args: Option<PathBuf>,
    /// Number of housekeeping CPUs (rounded up to whole cores in lowlat style).
    #[arg(long, value_name = "N", alias = "reserved-cpu-count", conflicts_with = "reserved_cpus")]
    pub reserved: Option<i64>,
    /// Explicit housekeeping CPUs (a list, a 0x mask, or a name such as `reserved`).
    #[arg(long, value_name = "LIST")]
    pub reserved_cpus: Option<CpuSelector>,
    /// Explicit isolated CPUs (the rest is housekeeping unless --reserved* is given too).
    #[arg(long, value_name = "LIST")]
    pub isolated: Option<CpuSelector>,
    /// CPUs to take offline: a count (a bare number) or a list (`8-11`).
    #[arg(long, value_name = "N|LIST", alias = "offlined-cpu-count")]
    pub offline: Option<CpuRequest>,
    /// Turn SMT off (`nosmt`): only each core's first thread gets a role.
    #[arg(long, alias = "disable-ht", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub no_smt: Option<bool>,
    /// Spread housekeeping evenly over the NUMA nodes.
    #[arg(long, alias = "split-reserved-cpus-across-numa", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub split_reserved_across_numa: Option<bool>,
    /// Do not force one housekeeping core onto every NUMA node with isolated CPUs.
    #[arg(long)]
    pub no_per_node_housekeeping: bool,
    /// Power mode: `default`, `low-latency`, `ultra-low-latency`.
    #[arg(long, alias = "power-consumption-mode", value_name = "MODE")]
    pub power: Option<Power>,
    /// The host runs (or will run) a PREEMPT_RT kernel.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub rt_kernel: Option<bool>,
    /// Huge pages `SIZE:COUNT[:NODE]` (repeatable), e.g. `1G:16` or `2M:1024:0`.
    #[arg(long, value_name = "SIZE:COUNT[:NODE]")]
    pub hugepages: Vec<HugepageRequest>,
    /// Kubelet topology manager policy for OpenShift renders.
    #[arg(long, alias = "topology-manager-policy", value_name = "POLICY")]
    pub topology_policy: Option<TopologyPolicy>,
    /// Put the bulk of housekeeping on this device's NUMA node (interface or PCI address).
    #[arg(long, value_name = "IFACE|PCI")]
    pub near_device: Option<String>,
    /// `isolcpus=domain,managed_irq,…`: no scheduler balancing on isolated CPUs.
    #[arg(long)]
    pub isolcpus_domain: bool,
    /// Per-pod power management (PPC's flag).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub per_pod_power_management: Option<bool>,
    /// PerformanceProfile `net.userLevelNetworking` (PPC's flag).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub user_level_networking: Option<bool>,
    /// Socket busy polling: `net.core.busy_read` and `net.core.busy_poll` (e.g. `50us`, as
    /// PAO's Tuned; `0` turns it off). A bare number is microseconds.
    #[arg(long, value_name = "DURATION", value_parser = whole_micros)]
    pub busy_poll: Option<u64>,
    /// Idle limit (e.g. `80us`): the isolated CPUs lose every idle state with a longer exit
    /// latency (disabled per CPU, PM QoS held); replaces the power mode's limit.
    #[arg(long, value_name = "DURATION", value_parser = whole_micros)]
    pub idle_limit: Option<u64>,
    /// What will configure the node: `nto` (`render openshift`, `render performance-profile`;
    /// the default with --must-gather) or `lowlat` (every other render, `--beyond-nto`).
    /// `verify` expects that flavour's boot line.
    #[arg(long, value_name = "FLAVOUR", value_parser = flavour_parser())]
    pub render_flavour: Option<Flavour>,
    /// Plan / profile name.
    #[arg(long, alias = "profile-name", value_name = "NAME")]
    pub name: Option<String>,
    /// Write the plan file here (`-` = stdout), replaced atomically.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<Output>,
    /// Print the plan YAML on stdout instead of the summary.
    #[arg(long)]
    pub yaml: bool,
    /// PPC's `info`: each pool's nodes with their NUMA cells and CPUs, from the must-gather.
    #[arg(long, conflicts_with_all = ["output", "yaml", "ppc_args"])]
    pub info: bool,
    /// With --info: PPC's JSON form, to FILE or stdout (`-`).
    #[arg(long, requires = "info", value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<Output>,
}

impl Args {
    /// The typed request.
    pub fn request(self) -> plan::Request {
        let mg = self.host.must_gather.or(self.must_gather_dir_path);
        plan::Request {
            source: plan::Source::pick(mg, self.host.node, self.host.root),
            pool: self.mcp_name,
            node_pool: self.node_pool_name,
            ppc_args: self.ppc_args,
            name: self.name,
            style: self.style,
            reserved: self.reserved,
            reserved_cpus: self.reserved_cpus,
            isolated: self.isolated,
            offline: self.offline,
            no_smt: self.no_smt,
            split_reserved_across_numa: self.split_reserved_across_numa,
            no_per_node_housekeeping: self.no_per_node_housekeeping,
            power: self.power,
            rt_kernel: self.rt_kernel,
            hugepages: self.hugepages,
            topology_policy: self.topology_policy,
            near_device: self.near_device,
            isolcpus_domain: self.isolcpus_domain,
            per_pod_power_management: self.per_pod_power_management,
            user_level_networking: self.user_level_networking,
            busy_poll_us: self.busy_poll,
            idle_limit_us: self.idle_limit,
            render_flavour: self.render_flavour,
        }
    }
}

/// A latency in whole microseconds (`50us`, `80`, `0.08ms`); the kernel takes no finer unit.
fn whole_micros(s: &str) -> Result<u64, String> {
    let d = util::duration::parse_latency(s).map_err(|e| e.to_string())?;
    if d.subsec_nanos() % 1000 != 0 {
        return Err(format!("{s:?} is not a whole number of microseconds (the kernel counts µs)"));
    }
    u64::try_from(d.as_micros()).map_err(|_| format!("{s:?} is out of range"))
}

/// `--style`: clap lists the names (in help and errors); `Style::from_str` makes the value.
fn style_parser() -> impl TypedValueParser<Value = Style> {
    PossibleValuesParser::new(Style::ALL.iter().map(|s| s.as_str())).try_map(|s| s.parse::<Style>())
}

/// `--render-flavour`, listed as `--style` is.
fn flavour_parser() -> impl TypedValueParser<Value = Flavour> {
    PossibleValuesParser::new(Flavour::ALL.iter().map(|s| s.as_str()))
        .try_map(|s| s.parse::<Flavour>())
}
