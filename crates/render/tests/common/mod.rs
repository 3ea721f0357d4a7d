//! Shared test helpers: the `testdata/` directory, fixture hosts, fixture plans.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use plan::partition::{CpuRequest, PartitionRequest};
use plan::ppc::PpcInput;
use plan::{HugepageRequest, Plan, PlanOptions, PlanRequest, Power, Style, TopologyPolicy};

/// The repository's `testdata/` (public fixtures and CRD schemas; see `testdata/NOTICE.md`).
pub fn testdata_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
}

pub fn must_gather(name: &str) -> PathBuf {
    testdata_dir().join("fixtures/must-gather").join(name)
}

pub fn host(mg: &str, node: &str) -> host::Host {
    let root = host::Root::must_gather(Path::new(&must_gather(mg)), Some(node)).unwrap();
    host::read(&root)
}

/// The fixture plans the golden files are rendered from.
pub fn cases() -> Vec<(&'static str, Plan)> {
    let w1 = host("must-gather.bare-metal", "worker1");
    let sno = host("must-gather.sno", "ocp47sno-master-0.demo.lab");
    let w2 = host("must-gather.bare-metal", "worker2");
    let lowlat = |_name: &str, power: Power, rt: bool| PlanOptions {
        style: Style::Lowlat,
        power,
        rt_kernel: rt,
        ..Default::default()
    };
    let mut v = vec![];
    let mut o = lowlat("rt", Power::LowLatency, true);
    o.hugepages = vec![
        HugepageRequest { size: "1G".into(), count: 16, node: None },
        HugepageRequest { size: "2M".into(), count: 1024, node: Some(1) },
    ];
    o.mcp_name = Some("worker-cnf".into());
    o.topology_policy = Some(TopologyPolicy::SingleNumaNode);
    v.push((
        "worker1-rt",
        plan::make_plan(
            &w1,
            &PlanRequest {
                name: "rt".into(),
                host_name: Some("worker1".into()),
                options: o,
                partition: PartitionRequest {
                    reserved: Some(CpuRequest::Count(4)),
                    offline: Some(CpuRequest::Count(2)),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .unwrap(),
    ));
    let mut o = lowlat("ull", Power::UltraLowLatency, false);
    o.isolcpus_domain = true;
    o.no_smt = true;
    v.push((
        "sno-ultra",
        plan::make_plan(
            &sno,
            &PlanRequest {
                name: "ull".into(),
                host_name: Some("ocp47sno-master-0.demo.lab".into()),
                options: o,
                ..Default::default()
            },
        )
        .unwrap(),
    ));
    v.push((
        "worker2-default",
        plan::make_plan(
            &w2,
            &PlanRequest {
                name: "lowlat".into(),
                host_name: Some("worker2".into()),
                options: lowlat("lowlat", Power::Default, false),
                ..Default::default()
            },
        )
        .unwrap(),
    ));
    let mut o = PlanOptions {
        style: Style::Ppc,
        power: Power::Default,
        rt_kernel: true,
        topology_policy: Some(TopologyPolicy::Restricted),
        ..Default::default()
    };
    o.mcp_name = Some("worker-cnf".into());
    o.node_selector = Some(("node-role.kubernetes.io/worker-cnf".into(), String::new()));
    o.mcp_selector = Some(("machineconfiguration.openshift.io/role".into(), "worker-cnf".into()));
    v.push((
        "worker1-ppc",
        plan::make_plan(
            &w1,
            &PlanRequest {
                name: "performance".into(),
                host_name: Some("worker1".into()),
                options: o,
                ppc: PpcInput { reserved_cpu_count: 4, ..Default::default() },
                ..Default::default()
            },
        )
        .unwrap(),
    ));
    v
}

/// The seed's systemd-boot entry (`loader/entries/boot.conf`).
pub const BOOT_CONF: &str = "title boot\nlinux /vmlinuz\ninitrd /initrd\noptions LABEL=boot isolcpus=2 irqaffinity=0 rcu_nocbs=2 nohz=off nohz_full=2 processor.max_cstate=0            intel_idle.max_cstate=0            clocksource=tsc            tsc=reliable            nmi_watchdog=0            nosoftlockup            intel_pstate=disable            i915.disable_power_well=0            i915.enable_rc6=0            idle=poll            noht 3 snd_hda_intel.power_save=1 snd_hda_intel.power_save_controller=y scsi_mod.scan=async console=ttyS2,115200 rootwait console=ttyS0,115200 console=tty0\n";

/// A typical /etc/default/grub.
pub const DEFAULT_GRUB: &str = "GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\nGRUB_CMDLINE_LINUX=\"console=ttyS0,115200 nohz=off hugepages=8\"\n";

/// Parse every YAML document in `text`.
pub fn yaml_docs(text: &str) -> Vec<serde_norway::Value> {
    use serde::Deserialize as _;
    serde_norway::Deserializer::from_str(text)
        .map(|d| serde_norway::Value::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}
