//! `lowlat plan`: read the host (live, snapshot, must-gather node or pool), compute the
//! partition (lowlat style or PPC-exact), print the summary, write the plan file.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cpuset::CpuSet;
use plan::cluster;
use plan::layout::Layout;
use plan::partition::{CpuRequest, PartitionRequest};
use plan::ppc::PpcInput;
use plan::{PlanOptions, PlanRequest};

use super::common::HostArgs;
use crate::exit::{usage, ExitCode};

/// Arguments of `lowlat plan`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat plan --reserved 4 --power low-latency -o plan.yaml\n  \
lowlat plan --must-gather DIR --mcp-name worker-cnf --style ppc --reserved-cpu-count=4 --rt-kernel=true -o plan.yaml\n  \
lowlat plan --ppc-args profile1.json -o plan.yaml\n\
PPC's flag names are accepted as aliases (--reserved-cpu-count, --offlined-cpu-count, --disable-ht, …)."
)]
pub struct Args {
    #[command(flatten)]
    pub host: HostArgs,
    /// Plan for the nodes of this MachineConfigPool (needs --must-gather); their topologies
    /// must be identical.
    #[arg(long, value_name = "POOL")]
    pub mcp_name: Option<String>,
    /// PPC's name for --must-gather.
    #[arg(long = "must-gather-dir-path", value_name = "DIR", hide = true)]
    pub must_gather_dir_path: Option<PathBuf>,
    /// `lowlat` (whole cores, reasons) or `ppc` (the Performance Profile Creator's exact choice).
    #[arg(long, value_name = "STYLE", value_parser = ["lowlat", "ppc"])]
    pub style: Option<String>,
    /// Read PPC's arguments from a JSON file (the format of PPC's test fixtures); implies --style ppc.
    #[arg(long, value_name = "FILE.json")]
    pub ppc_args: Option<PathBuf>,
    /// Number of housekeeping CPUs (rounded up to whole cores in lowlat style).
    #[arg(long, value_name = "N", alias = "reserved-cpu-count", conflicts_with = "reserved_cpus")]
    pub reserved: Option<i64>,
    /// Explicit housekeeping CPU list.
    #[arg(long, value_name = "LIST")]
    pub reserved_cpus: Option<String>,
    /// Explicit isolated CPU list (the rest is housekeeping unless --reserved* is given too).
    #[arg(long, value_name = "LIST")]
    pub isolated: Option<String>,
    /// CPUs to take offline: a count (a bare number) or a list (`8-11`).
    #[arg(long, value_name = "N|LIST", alias = "offlined-cpu-count")]
    pub offline: Option<String>,
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
    pub power: Option<String>,
    /// The host runs (or will run) a PREEMPT_RT kernel.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub rt_kernel: Option<bool>,
    /// Huge pages `SIZE:COUNT[:NODE]` (repeatable), e.g. `1G:16` or `2M:1024:0`.
    #[arg(long, value_name = "SIZE:COUNT[:NODE]")]
    pub hugepages: Vec<String>,
    /// Kubelet topology manager policy for OpenShift renders.
    #[arg(long, alias = "topology-manager-policy", value_name = "POLICY")]
    pub topology_policy: Option<String>,
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
    /// Plan / profile name.
    #[arg(long, alias = "profile-name", value_name = "NAME")]
    pub name: Option<String>,
    /// Write the plan file here.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the plan YAML on stdout instead of the summary.
    #[arg(long)]
    pub yaml: bool,
}

/// PPC's JSON argument file.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PpcArgsFile {
    #[serde(rename = "must-gather-dir-path")]
    must_gather_dir_path: Option<String>,
    #[serde(rename = "mcp-name")]
    mcp_name: Option<String>,
    #[serde(rename = "node-pool-name")]
    node_pool_name: Option<String>,
    #[serde(rename = "reserved-cpu-count")]
    reserved_cpu_count: Option<i64>,
    #[serde(rename = "offlined-cpu-count")]
    offlined_cpu_count: Option<i64>,
    #[serde(rename = "rt-kernel")]
    rt_kernel: Option<bool>,
    #[serde(rename = "split-reserved-cpus-across-numa")]
    split_reserved_cpus_across_numa: Option<bool>,
    #[serde(rename = "disable-ht")]
    disable_ht: Option<bool>,
    #[serde(rename = "user-level-networking")]
    user_level_networking: Option<bool>,
    #[serde(rename = "power-consumption-mode")]
    power_consumption_mode: Option<String>,
    #[serde(rename = "topology-manager-policy")]
    topology_manager_policy: Option<String>,
    #[serde(rename = "per-pod-power-management")]
    per_pod_power_management: Option<bool>,
    #[serde(rename = "profile-name")]
    profile_name: Option<String>,
    #[serde(rename = "enable-hardware-tuning")]
    enable_hardware_tuning: Option<bool>,
}

/// Fill unset arguments from a `--ppc-args` file; command-line values win.
fn merge_ppc_args(a: &mut Args, file: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| usage(format!("--ppc-args {}: {e}", file.display())))?;
    let p: PpcArgsFile = serde_json::from_str(&text).map_err(|e| {
        usage(format!("--ppc-args {}: {e} (expected PPC's JSON keys such as \"reserved-cpu-count\", \"mcp-name\", \"rt-kernel\")", file.display()))
    })?;
    let _ = p.enable_hardware_tuning;
    if a.host.must_gather.is_none() && a.must_gather_dir_path.is_none() && a.host.root.is_none() {
        if let Some(mg) = &p.must_gather_dir_path {
            a.must_gather_dir_path = Some(resolve_mg(mg, file));
        }
    }
    a.mcp_name = a.mcp_name.take().or(p.mcp_name).or(p.node_pool_name);
    a.reserved = a.reserved.or(p.reserved_cpu_count);
    if a.offline.is_none() {
        a.offline = p.offlined_cpu_count.map(|n| n.to_string());
    }
    a.rt_kernel = a.rt_kernel.or(p.rt_kernel);
    a.split_reserved_across_numa =
        a.split_reserved_across_numa.or(p.split_reserved_cpus_across_numa);
    a.no_smt = a.no_smt.or(p.disable_ht);
    a.user_level_networking = a.user_level_networking.or(p.user_level_networking);
    a.power = a.power.take().or(p.power_consumption_mode);
    a.topology_policy = a.topology_policy.take().or(p.topology_manager_policy);
    a.per_pod_power_management = a.per_pod_power_management.or(p.per_pod_power_management);
    a.name = a.name.take().or(p.profile_name);
    Ok(())
}

/// A must-gather path from a PPC JSON: as given, else next to the JSON, else in a sibling
/// `must-gather/` directory of the JSON's directory (the fixture layout).
fn resolve_mg(mg: &str, json: &Path) -> PathBuf {
    let p = PathBuf::from(mg);
    if p.is_absolute() || p.is_dir() {
        return p;
    }
    let dir = json.parent().unwrap_or(Path::new("."));
    for c in [dir.join(mg), dir.join("../must-gather").join(mg), dir.join("must-gather").join(mg)] {
        if c.is_dir() {
            return c;
        }
    }
    p
}

fn parse_set(flag: &str, s: &str) -> anyhow::Result<CpuSet> {
    CpuSet::parse_any(s).map_err(|e| usage(format!("{flag} {s}: {e}")))
}

fn check_choice(flag: &str, value: &str, valid: &[&str]) -> anyhow::Result<()> {
    if valid.contains(&value) {
        Ok(())
    } else {
        Err(usage(format!(
            "invalid value for {} flag specified: flag {:?}: Value '{value}' is invalid. Valid values come from the set [{}]",
            flag.trim_start_matches('-'),
            flag.trim_start_matches('-'),
            valid.join(" ")
        )))
    }
}

/// Run `lowlat plan`.
pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    if let Some(f) = args.ppc_args.clone() {
        merge_ppc_args(&mut args, &f)?;
        if args.style.as_deref() == Some("lowlat") {
            return Err(usage("--ppc-args reproduces the Performance Profile Creator and needs --style ppc (or no --style)"));
        }
        args.style = Some("ppc".into());
    }
    if let Some(mg) = args.must_gather_dir_path.take() {
        if args.host.must_gather.is_some() {
            return Err(usage(
                "give the must-gather once: --must-gather or --must-gather-dir-path, not both",
            ));
        }
        args.host.must_gather = Some(mg);
    }
    let style = args.style.clone().unwrap_or_else(|| "lowlat".into());
    let ppc = style == "ppc";
    let power_given = args.power.is_some();
    let power = args.power.clone().unwrap_or_else(|| "default".into());
    check_choice(
        if ppc { "--power-consumption-mode" } else { "--power" },
        &power,
        &["default", "low-latency", "ultra-low-latency"],
    )?;
    if let Some(t) = &args.topology_policy {
        let valid: &[&str] = if ppc {
            &["single-numa-node", "best-effort", "restricted"]
        } else {
            &["none", "single-numa-node", "best-effort", "restricted"]
        };
        check_choice(
            if ppc { "--topology-manager-policy" } else { "--topology-policy" },
            t,
            valid,
        )?;
    }
    let split = args.split_reserved_across_numa.unwrap_or(false);
    let rt = args.rt_kernel.unwrap_or(false);
    let per_pod = args.per_pod_power_management.unwrap_or(false);
    let no_smt = args.no_smt.unwrap_or(false);
    if ppc {
        let mut missing = vec![];
        if args.reserved.is_none() {
            missing.push("--reserved-cpu-count");
        }
        if args.rt_kernel.is_none() {
            missing.push("--rt-kernel");
        }
        if !missing.is_empty() {
            return Err(usage(format!("missing required flags: {}", missing.join(", "))));
        }
        if args.reserved_cpus.is_some()
            || args.isolated.is_some()
            || args.near_device.is_some()
            || args.isolcpus_domain
            || args.no_per_node_housekeeping
        {
            return Err(usage("--style ppc computes the sets the way PPC does: --reserved-cpus, --isolated, --near-device, --isolcpus-domain and --no-per-node-housekeeping are lowlat-style options (drop them or use --style lowlat)"));
        }
    }
    if args.topology_policy.as_deref() == Some("single-numa-node") && split {
        return Err(usage("not appropriate to split reserved CPUs in case of topology-manager-policy: single-numa-node"));
    }
    if power_given && power == "default" && rt {
        return Err(usage("default power consumption mode is not available with real-time kernel, please use one of [low-latency ultra-low-latency] modes"));
    }
    if power == "ultra-low-latency" && per_pod {
        return Err(usage("please use one of [default low-latency] power consumption modes together with the perPodPowerManagement"));
    }

    // Host and, for must-gathers, the pool.
    let (host, host_name, pool) = load_host(&args)?;
    let layout = Layout::from_host(&host);

    let mut hugepages = vec![];
    for h in &args.hugepages {
        hugepages.push(plan::build::parse_hugepages(h).map_err(|e| usage(e.to_string()))?);
    }
    let near_node = match &args.near_device {
        Some(d) => Some(plan::build::device_node(&host, d).map_err(|e| usage(e.to_string()))?),
        None => None,
    };
    let offline = match &args.offline {
        None => None,
        Some(s) if s.trim().chars().all(|c| c.is_ascii_digit()) && !s.trim().is_empty() => {
            Some(CpuRequest::Count(
                s.trim().parse().map_err(|_| usage(format!("--offline {s}: not a count")))?,
            ))
        }
        Some(s) => Some(CpuRequest::List(parse_set("--offline", s)?)),
    };
    let reserved = match (&args.reserved, &args.reserved_cpus) {
        (Some(n), _) if !ppc && *n < 0 => {
            return Err(usage(format!("--reserved {n}: a count cannot be negative")))
        }
        (Some(n), _) => Some(CpuRequest::Count(usize::try_from(*n).unwrap_or(0))),
        (None, Some(l)) => Some(CpuRequest::List(parse_set("--reserved-cpus", l)?)),
        (None, None) => None,
    };
    let isolated = args.isolated.as_deref().map(|s| parse_set("--isolated", s)).transpose()?;

    let (node_selector, mcp_selector) = match &pool {
        Some((p, pools)) => (
            cluster::node_selector(p),
            Some(cluster::pool_selector(p, pools).map_err(|e| usage(e.to_string()))?),
        ),
        None => (None, None),
    };
    let options = PlanOptions {
        style: style.clone(),
        power: power.clone(),
        rt_kernel: rt,
        no_smt,
        split_reserved_across_numa: split,
        topology_policy: args
            .topology_policy
            .clone()
            .or_else(|| ppc.then(|| "restricted".to_string())),
        per_pod_power_management: per_pod,
        hugepages,
        near_device: args.near_device.clone(),
        isolcpus_domain: args.isolcpus_domain,
        mcp_name: pool.as_ref().map(|(p, _)| p.name.clone()).or_else(|| args.mcp_name.clone()),
        node_selector,
        mcp_selector,
        user_level_networking: args.user_level_networking,
        workload_hints: !ppc || power_given,
        cpu_vendor: None,
    };
    let offlined_count = match &offline {
        Some(CpuRequest::Count(n)) => *n as i64,
        Some(CpuRequest::List(_)) if ppc => {
            return Err(usage("--style ppc takes --offlined-cpu-count as a number, not a list"))
        }
        _ => 0,
    };
    let req = PlanRequest {
        name: args.name.clone().unwrap_or_else(|| {
            if ppc {
                "performance".into()
            } else {
                "lowlat".into()
            }
        }),
        host_name,
        options,
        partition: PartitionRequest {
            reserved,
            isolated,
            offline,
            no_smt,
            split_reserved_across_numa: split,
            per_node_housekeeping: !args.no_per_node_housekeeping,
            near_node,
            near_device: args.near_device.clone(),
        },
        ppc: PpcInput {
            reserved_cpu_count: args.reserved.unwrap_or(0),
            offlined_cpu_count: offlined_count,
            split_reserved_cpus_across_numa: split,
            disable_ht: no_smt,
            high_power_consumption: power == "ultra-low-latency",
        },
    };
    let plan = plan::make_plan(&host, &req).map_err(|e| usage(e.to_string()))?;
    let yaml = plan.to_yaml()?;
    if let Some(out) = &args.output {
        std::fs::write(out, &yaml)
            .with_context(|| format!("writing the plan to {}", out.display()))?;
    }
    if args.yaml {
        print!("{yaml}");
    } else {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        print!("{}", plan::summary::summary(&plan, &layout, color));
        match &args.output {
            Some(out) => println!(
                "\nplan written to {} (next: lowlat render --plan {} cmdline --explain)",
                out.display(),
                out.display()
            ),
            None => println!("\n(no plan file written: add -o plan.yaml)"),
        }
    }
    Ok(ExitCode::Ok)
}

type Pool = (cluster::PoolMeta, Vec<cluster::PoolMeta>);

/// Read the host: one node, or every node of `--mcp-name` (identical topology required).
fn load_host(args: &Args) -> anyhow::Result<(host::Host, Option<String>, Option<Pool>)> {
    let Some(mg) = &args.host.must_gather else {
        if args.mcp_name.is_some() {
            return Err(usage("--mcp-name picks nodes from a must-gather: add --must-gather DIR"));
        }
        let h = args.host.load()?;
        let name = h.hostname.clone();
        return Ok((h, name, None));
    };
    let cl = cluster::load(mg).map_err(|e| usage(e.to_string()))?;
    match (&args.mcp_name, &args.host.node) {
        (Some(pool_name), node) => {
            let pool = cl.pool(pool_name).map_err(|e| usage(e.to_string()))?.clone();
            let mut nodes: Vec<String> = cluster::nodes_for_pool(&pool, &cl.pools, &cl.nodes)
                .iter()
                .map(|n| n.name.clone())
                .collect();
            if let Some(n) = node {
                if !nodes.contains(n) {
                    return Err(usage(format!(
                        "node {n} is not in pool {pool_name} (its nodes: {})",
                        nodes.join(", ")
                    )));
                }
                nodes = vec![n.clone()];
            }
            if nodes.is_empty() {
                return Err(usage(format!(
                    "pool {pool_name} has no schedulable nodes in {}; pick another --mcp-name",
                    mg.display()
                )));
            }
            let mut first: Option<(host::Host, Layout, String)> = None;
            for n in &nodes {
                let h =
                    HostArgs { root: None, must_gather: Some(mg.clone()), node: Some(n.clone()) }
                        .load()?;
                let l = Layout::from_host(&h);
                match &first {
                    None => first = Some((h, l, n.clone())),
                    Some((_, l0, n0)) => {
                        let cpus = |l: &Layout| -> Vec<Vec<Vec<usize>>> {
                            l.nodes
                                .iter()
                                .map(|x| x.cores.iter().map(|c| c.cpus.clone()).collect())
                                .collect()
                        };
                        if cpus(l0) != cpus(&l) {
                            return Err(usage(format!(
                                "targeted nodes differ: nodes {n0} and {n} have different topology ({} vs {}); plan them separately with --node",
                                l0.describe(),
                                l.describe()
                            )));
                        }
                    }
                }
            }
            let Some((h, _, n0)) = first else { return Err(usage("no nodes")) };
            Ok((h, Some(n0), Some((pool, cl.pools.clone()))))
        }
        (None, Some(n)) => {
            let h = args.host.load()?;
            let pool = cl
                .nodes
                .iter()
                .find(|x| &x.name == n)
                .and_then(|nm| cluster::primary_pool(nm, &cl.pools).ok().flatten())
                .map(|p| (p.clone(), cl.pools.clone()));
            Ok((h, Some(n.clone()), pool))
        }
        (None, None) => {
            let names: Vec<String> = cl.nodes.iter().map(|n| n.name.clone()).collect();
            Err(usage(format!(
                "{}: say which node to plan for: --node NAME (nodes: {}) or --mcp-name POOL",
                mg.display(),
                names.join(", ")
            )))
        }
    }
}
