//! From a host model and a request to a complete [`Plan`]: partition (lowlat or PPC style),
//! kernel arguments, runtime knobs, rationale.

use host::Host;

use crate::error::PlanError;
use crate::layout::Layout;
use crate::model::{
    CpuVendor, HugepageRequest, IntelPstate, Plan, PlanOptions, Style, SCHEMA_VERSION,
};
use crate::partition::{self, PartitionRequest};
use crate::ppc::{self, PpcInput};
use crate::rules::{self, Facts};

/// Everything `lowlat plan` asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanRequest {
    /// Plan / profile name.
    pub name: String,
    /// Host or node name recorded in the plan.
    pub host_name: Option<String>,
    /// Options; `style` picks the partitioner.
    pub options: PlanOptions,
    /// lowlat-style partition request.
    pub partition: PartitionRequest,
    /// PPC-style inputs.
    pub ppc: PpcInput,
}

/// CPU vendor from the cpuinfo model name.
pub fn cpu_vendor(host: &Host) -> Option<CpuVendor> {
    let model = host.topology.cpus.iter().find_map(|c| c.model.clone())?;
    let m = model.to_ascii_lowercase();
    if m.contains("intel") {
        Some(CpuVendor::Intel)
    } else if m.contains("amd") {
        Some(CpuVendor::Amd)
    } else if m.contains("arm") || m.contains("neoverse") || m.contains("ampere") {
        Some(CpuVendor::Arm)
    } else {
        None
    }
}

/// Intel family-6 models by the name the kernel's perf driver gives them in
/// `/sys/devices/cpu/caps/pmu_name` (`arch/x86/events/intel/core.c`), for the generations
/// TuneD's `intel_recommended_pstate` tells apart.
const PMU_BY_MODEL: [(u32, &str); 30] = [
    (42, "sandybridge"),
    (45, "sandybridge"),
    (58, "ivybridge"),
    (62, "ivybridge"),
    (60, "haswell"),
    (63, "haswell"),
    (69, "haswell"),
    (70, "haswell"),
    (61, "broadwell"),
    (71, "broadwell"),
    (79, "broadwell"),
    (86, "broadwell"),
    (78, "skylake"),
    (94, "skylake"),
    (85, "skylake"),
    (142, "skylake"),
    (158, "skylake"),
    (165, "skylake"),
    (166, "skylake"),
    (106, "icelake"),
    (108, "icelake"),
    (125, "icelake"),
    (126, "icelake"),
    (143, "sapphire_rapids"),
    (207, "sapphire_rapids"),
    (173, "granite_rapids"),
    (174, "granite_rapids"),
    (151, "alderlake_hybrid"),
    (154, "alderlake_hybrid"),
    (183, "raptorlake_hybrid"),
];

/// The generations before Ice Lake: TuneD's `intel_recommended_pstate` returns `disable` for
/// them (and for a CPU whose generation it cannot read), `active` for the rest.
const PRE_ICELAKE: [&str; 5] = ["sandybridge", "ivybridge", "haswell", "broadwell", "skylake"];

/// The `intel_pstate` mode TuneD (and so NTO) picks for an Intel host, from its family/model;
/// `None` when cpuinfo gave no model number.
pub fn intel_recommended_pstate(host: &Host) -> Option<IntelPstate> {
    let (family, model) = host.topology.cpus.iter().find_map(|c| c.family_model)?;
    let pmu = if family == 6 {
        PMU_BY_MODEL.iter().find(|(m, _)| *m == model).map(|(_, n)| *n)
    } else {
        None
    };
    Some(match pmu {
        Some(name) if !PRE_ICELAKE.contains(&name) => IntelPstate::Active,
        _ => IntelPstate::Disable,
    })
}

/// Read the host model behind `root`, refusing a root that holds no host at all (neither CPU
/// topology nor a kernel command line: the wrong directory, not a snapshot).
pub fn read_host(root: &host::Root) -> Result<Host, PlanError> {
    let h = host::read(root);
    if h.topology.cpus.is_empty() && h.kernel.cmdline.is_none() {
        return Err(PlanError::invalid(
            format!("{root}: found neither sys/devices/system/cpu nor proc/cmdline"),
            "is this a host snapshot? (a directory holding proc/ and sys/, or a .tgz from `lowlat snapshot`)",
        ));
    }
    Ok(h)
}

/// Facts the rules need from the host.
pub fn facts(host: &Host) -> Facts {
    let c1 = host.power.cpus.first().and_then(|p| {
        p.idle_states
            .iter()
            .filter(|s| s.index >= 1)
            .find_map(|s| s.exit_latency_us.filter(|l| *l > 0))
    });
    Facts { c1_latency_us: c1 }
}

/// NUMA node of a network interface or PCI address.
pub fn device_node(host: &Host, device: &str) -> Result<usize, PlanError> {
    let node = host
        .net_interfaces
        .iter()
        .find(|i| i.name == device)
        .and_then(|i| {
            i.numa_node.or_else(|| {
                let pci = i.pci_address.as_deref()?;
                host.pci_devices.iter().find(|p| p.address == pci)?.numa_node
            })
        })
        .or_else(|| {
            host.pci_devices
                .iter()
                .find(|p| p.address == device || p.address.strip_prefix("0000:") == Some(device))
                .and_then(|p| p.numa_node)
        });
    match node {
        Some(n) if n >= 0 => Ok(n as usize),
        Some(_) => Err(PlanError::invalid(
            format!("--near-device {device}: the device reports no NUMA node (numa_node = -1, a single-node machine or firmware without SRAT)"),
            "drop --near-device",
        )),
        None if host.net_interfaces.is_empty() && host.pci_devices.is_empty() => Err(PlanError::invalid(
            format!("--near-device {device}: this host model has no network or PCI device data to find it in"),
            "drop --near-device, or plan on the live host / a snapshot holding sys/bus/pci and sys/class/net",
        )),
        None => {
            let names: Vec<&str> = host.net_interfaces.iter().map(|i| i.name.as_str()).collect();
            Err(PlanError::invalid(
                format!("--near-device {device}: no such network interface or PCI device on this host"),
                if names.is_empty() {
                    "give a PCI address as `lowlat inspect` lists it (e.g. 0000:3b:00.0)".to_string()
                } else {
                    format!("use one of the interfaces {} or a PCI address", names.join(", "))
                },
            ))
        }
    }
}

impl std::str::FromStr for HugepageRequest {
    type Err = PlanError;

    /// Parse `SIZE:COUNT[:NODE]` (`1G:16`, `2M:1024:0`).
    fn from_str(text: &str) -> Result<Self, PlanError> {
        let parts: Vec<&str> = text.split(':').collect();
        let bad = |why: &str| {
            PlanError::invalid(
                format!("huge pages {text}: {why}"),
                "write SIZE:COUNT[:NODE], e.g. 1G:16 or 2M:1024:0",
            )
        };
        if parts.len() < 2 || parts.len() > 3 {
            return Err(bad("expected two or three fields"));
        }
        let size = parts[0].to_string();
        if rules::size_kb(&size).is_none() {
            return Err(bad("size must look like 2M, 1G or 64k"));
        }
        let count = parts[1].parse::<u64>().map_err(|_| bad("count is not a whole number"))?;
        let node = match parts.get(2) {
            Some(n) => Some(n.parse::<usize>().map_err(|_| bad("node is not a NUMA node number"))?),
            None => None,
        };
        Ok(HugepageRequest { size, count, node })
    }
}

/// The plan `lowlat plan` makes with no options (lowlat style, one housekeeping core per
/// NUMA node, default power): what `check` evaluates a host against.
pub fn default_plan(host: &Host) -> Result<Plan, PlanError> {
    make_plan(
        host,
        &PlanRequest {
            name: "lowlat".into(),
            host_name: host.hostname.clone().or_else(|| host.source.node.clone()),
            options: PlanOptions::default(),
            ..Default::default()
        },
    )
}

/// Compute the plan.
pub fn make_plan(host: &Host, req: &PlanRequest) -> Result<Plan, PlanError> {
    let layout = Layout::from_host(host);
    if layout.online.is_empty() {
        return Err(PlanError::no_cpus());
    }
    let mut options = req.options.clone();
    if options.cpu_vendor.is_none() {
        options.cpu_vendor = cpu_vendor(host);
    }
    if options.intel_pstate.is_none() && options.cpu_vendor == Some(CpuVendor::Intel) {
        options.intel_pstate = intel_recommended_pstate(host);
    }
    for p in &options.hugepages {
        if let Some(n) = p.node {
            if !layout.nodes.iter().any(|x| x.id == n) {
                let ids: Vec<String> = layout.nodes.iter().map(|x| x.id.to_string()).collect();
                return Err(PlanError::invalid(
                    format!(
                        "huge pages {}:{}:{n}: NUMA node {n} does not exist here",
                        p.size, p.count
                    ),
                    format!("use one of the nodes {}", ids.join(", ")),
                ));
            }
        }
    }
    let (reserved, isolated, offlined, smt_disabled, mut rationale) = if options.style == Style::Ppc
    {
        let p = ppc::calculate(&layout, &req.ppc)?;
        let mut why = vec![format!(
            "style ppc: Performance Profile Creator's algorithm on {}",
            layout.describe()
        )];
        why.extend(p.log);
        (p.reserved, p.isolated, p.offlined, p.smt_disabled, why)
    } else {
        let p = partition::plan(&layout, &req.partition)?;
        (p.reserved, p.isolated, p.offlined, p.smt_disabled, p.rationale)
    };
    let kernel_args = rules::derived_kernel_args(&reserved, &isolated, &options);
    let runtime = rules::runtime_items(&reserved, &isolated, &options, &facts(host));
    if let Some(hv) = &host.virtualization {
        rationale.push(format!(
            "note: this host runs under {hv}; the hypervisor's own scheduling adds latency no guest tuning removes (pin and isolate the vCPUs on the host too)"
        ));
    }
    if let Some(us) = options.busy_poll_us {
        rationale.push(if us == 0 {
            "busy polling off: net.core.busy_read=0, net.core.busy_poll=0".to_string()
        } else {
            format!("busy polling {us} µs: net.core.busy_read={us}, net.core.busy_poll={us} (sockets poll the NIC queue instead of waiting for an interrupt; PAO's Tuned uses 50)")
        });
    }
    if let Some(us) = options.idle_limit_us {
        rationale.push(format!(
            "idle limit {us} µs (chosen, replaces the {} mode's): idle states with a longer exit latency are disabled on the limited CPUs and PM QoS is held there{}",
            options.power,
            if us > 0 { "; shallower states stay, so the cores keep their turbo headroom" } else { "" }
        ));
    }
    rationale.push(format!(
        "power mode {}{}: {} kernel arguments, {} runtime knobs",
        options.power,
        if options.rt_kernel { ", real-time kernel" } else { "" },
        kernel_args.len(),
        runtime.len()
    ));
    let plan = Plan {
        schema_version: SCHEMA_VERSION,
        name: req.name.clone(),
        host: req.host_name.clone(),
        reserved,
        isolated,
        offlined,
        options,
        kernel_args,
        runtime,
        rationale,
        smt_disabled,
    };
    // The same rules a plan file is read with: a name or host that could not be read back
    // (or that would reach a script unsafely) is refused here, where it comes in.
    plan.validate().map_err(|p| {
        PlanError::invalid(
            format!("the plan would be invalid: {}", p.problem),
            format!("{} ({})", p.fix, p.field),
        )
    })?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::testhost;
    use crate::partition::CpuRequest;

    #[test]
    fn plan_round_trips_through_yaml() {
        let host = testhost::worker1();
        let req = PlanRequest {
            name: "performance".into(),
            options: PlanOptions {
                style: Style::Lowlat,
                power: crate::Power::LowLatency,
                rt_kernel: true,
                ..Default::default()
            },
            partition: PartitionRequest {
                reserved: Some(CpuRequest::Count(4)),
                ..Default::default()
            },
            ..Default::default()
        };
        let plan = make_plan(&host, &req).unwrap();
        assert_eq!(plan.options.cpu_vendor, Some(CpuVendor::Intel));
        let y = plan.to_yaml().unwrap();
        let back = Plan::from_yaml(&y, "plan.yaml").unwrap();
        assert_eq!(back, plan);
        assert!(y.contains("schema_version: 1"));
    }

    #[test]
    fn busy_poll_and_idle_limit_reach_the_plan_file_with_reasons() {
        let host = testhost::worker1();
        let req = PlanRequest {
            name: "seed001".into(),
            options: PlanOptions {
                busy_poll_us: Some(50),
                idle_limit_us: Some(80),
                ..Default::default()
            },
            ..Default::default()
        };
        let plan = make_plan(&host, &req).unwrap();
        let y = plan.to_yaml().unwrap();
        assert!(y.contains("  busy_poll_us: 50\n  idle_limit_us: 80\n"), "{y}");
        assert!(y.contains("name: net.core.busy_read\n  value: '50'"), "{y}");
        assert!(y.contains("max_latency_us: 80\n") && y.contains("disable_states: true"), "{y}");
        assert_eq!(Plan::from_yaml(&y, "plan.yaml").unwrap(), plan);
        let why = plan.rationale.join("\n");
        assert!(why.contains("busy polling 50 µs"), "{why}");
        assert!(why.contains("idle limit 80 µs (chosen, replaces the default mode's)"), "{why}");
        // Without them the plan file is as before: no new keys.
        let y = default_plan(&host).unwrap().to_yaml().unwrap();
        assert!(
            !y.contains("busy_poll")
                && !y.contains("busy_read")
                && !y.contains("idle_limit")
                && !y.contains("disable_states")
        );
    }

    #[test]
    fn default_plan_is_one_core_per_node() {
        let p = default_plan(&testhost::worker1()).unwrap();
        assert_eq!(p.reserved.to_list(), "0-1,40-41");
        assert_eq!(p.options.style, Style::Lowlat);
        assert!(default_plan(&Host::default()).is_err());
    }

    #[test]
    fn newer_schema_refused() {
        let e = Plan::from_yaml("schema_version: 99\nname: x\n", "p.yaml").unwrap_err();
        assert!(e.to_string().contains("schema_version 99 is newer"), "{e}");
        let e = Plan::from_yaml("foo: 1\n", "p.yaml").unwrap_err();
        assert!(e.to_string().contains("not a lowlat plan"), "{e}");
        let e = Plan::from_yaml("schema_version: 1\nname: x\n", "p.yaml").unwrap_err();
        assert!(e.to_string().contains("invalid plan"), "{e}");
        assert!(Plan::from_yaml(":::\n- [", "p.yaml").is_err());
    }

    #[test]
    fn hugepage_parsing() {
        let parse = |s: &str| s.parse::<HugepageRequest>();
        assert_eq!(
            parse("1G:4").unwrap(),
            HugepageRequest { size: "1G".into(), count: 4, node: None }
        );
        assert_eq!(parse("2M:128:1").unwrap().node, Some(1));
        for bad in ["1G", "1X:4", "1G:x", "1G:4:y", "1G:1:2:3"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let host = testhost::worker1();
        let req = PlanRequest {
            options: PlanOptions {
                hugepages: vec![parse("1G:4:7").unwrap()],
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(make_plan(&host, &req).unwrap_err().to_string().contains("NUMA node 7"));
    }

    #[test]
    fn near_device_lookup() {
        let mut host = testhost::worker1();
        host.net_interfaces.push(host::NetInterface {
            name: "ens1f0".into(),
            numa_node: Some(1),
            ..Default::default()
        });
        host.pci_devices.push(host::PciDevice {
            address: "0000:3b:00.0".into(),
            numa_node: Some(0),
            ..Default::default()
        });
        assert_eq!(device_node(&host, "ens1f0").unwrap(), 1);
        assert_eq!(device_node(&host, "3b:00.0").unwrap(), 0);
        let e = device_node(&host, "eth9").unwrap_err().to_string();
        assert!(e.contains("ens1f0"), "{e}");
    }

    #[test]
    fn intel_pstate_follows_the_cpu_generation() {
        // TuneD's intel_recommended_pstate: disable before Ice Lake (and when unknown)
        let host_of = |fm: Option<(u32, u32)>| {
            let mut h = Host::default();
            h.topology.cpus.push(host::CpuTopo { cpu: 0, family_model: fm, ..Default::default() });
            h
        };
        assert_eq!(intel_recommended_pstate(&host_of(Some((6, 85)))), Some(IntelPstate::Disable));
        assert_eq!(intel_recommended_pstate(&host_of(Some((6, 106)))), Some(IntelPstate::Active));
        assert_eq!(intel_recommended_pstate(&host_of(Some((6, 143)))), Some(IntelPstate::Active));
        assert_eq!(intel_recommended_pstate(&host_of(Some((6, 134)))), Some(IntelPstate::Disable));
        assert_eq!(intel_recommended_pstate(&host_of(None)), None);
    }
}
