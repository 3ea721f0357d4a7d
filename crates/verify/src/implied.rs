//! The plan a host's own command line implies: isolated = `isolcpus` ∪ `nohz_full` CPUs,
//! housekeeping = the rest of the online CPUs, the isolation-related arguments as planned
//! kernel arguments and the standard runtime items. Lets `verify` check a node against what
//! it was booted for when no plan file is given.

use cpuset::CpuSet;
use host::Host;
use plan::{KernelArg, Plan, PlanOptions, RuntimeItem};

/// Command-line keys that belong to a low-latency configuration.
const KEYS: &[&str] = &[
    "isolcpus",
    "nohz",
    "nohz_full",
    "rcu_nocbs",
    "rcu_nocb_poll",
    "irqaffinity",
    "kthread_cpus",
    "skew_tick",
    "tsc",
    "nosoftlockup",
    "nowatchdog",
    "nmi_watchdog",
    "intel_pstate",
    "amd_pstate",
    "idle",
    "processor.max_cstate",
    "intel_idle.max_cstate",
    "transparent_hugepage",
    "systemd.cpu_affinity",
    "rcutree.kthread_prio",
    "mce",
    "audit",
    "default_hugepagesz",
    "hugepagesz",
    "hugepages",
];

/// The plan implied by `host`'s command line.
pub fn implied_plan(host: &Host) -> Plan {
    let boot = &host.kernel.boot;
    let mut iso = boot.isolcpus.as_ref().map(|i| i.cpus.clone()).unwrap_or_default();
    if let Some(n) = &boot.nohz_full {
        iso = iso.union(n);
    }
    let online = host.online_cpus();
    let hk = online.difference(&iso);
    let kernel_args = boot
        .tokens
        .iter()
        .filter(|(k, _)| KEYS.contains(&k.as_str()))
        .map(|(k, v)| KernelArg {
            key: k.clone(),
            value: v.clone(),
            reason: "on the running command line".into(),
        })
        .collect();
    let reason = || "implied by the command line's isolation".to_string();
    let runtime = if iso.is_empty() {
        Vec::new()
    } else {
        vec![
            RuntimeItem::IrqAffinity { cpus: hk.clone(), reason: reason() },
            RuntimeItem::WorkqueueMask { cpus: hk.clone(), reason: reason() },
            RuntimeItem::KthreadAffinity { cpus: hk.clone(), reason: reason() },
        ]
    };
    Plan {
        schema_version: plan::SCHEMA_VERSION,
        name: "implied-by-cmdline".into(),
        host: host.source.node.clone(),
        reserved: hk,
        isolated: iso,
        offlined: CpuSet::new(),
        options: PlanOptions { rt_kernel: host.kernel.realtime == Some(true), ..Default::default() },
        kernel_args,
        runtime,
        smt_disabled: CpuSet::new(),
        rationale: vec!["isolated = isolcpus ∪ nohz_full from /proc/cmdline; housekeeping = the other online CPUs".into()],
    }
}
