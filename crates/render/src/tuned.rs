//! A TuneD profile directory equivalent to the plan: `tuned.conf` on top of
//! `cpu-partitioning` with the plan's kernel arguments as the whole boot line, its sysctls,
//! THP, governor and idle limit, and `variables.conf` with the CPU sets.

use plan::{Plan, RuntimeItem};

use crate::{quote, OutFile};

/// A TuneD profile value: one line, and no `$` (TuneD expands `${…}`, functions included).
pub(crate) fn ini(s: &str) -> String {
    quote::comment(s).replace('$', "_")
}

/// TuneD profile name for a plan.
pub fn profile_name(plan: &Plan) -> String {
    format!("lowlat-{}", quote::path_component(&plan.name))
}

/// Where a `tuned.conf` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// A host profile: the plan's arguments are the whole TuneD boot line.
    Host,
    /// The Tuned CR's profile on OpenShift: the MachineConfig carries the kernel arguments,
    /// so the profile clears every boot line and initrd its parents would add (NTO would turn
    /// them into a second MachineConfig), disables cpu-partitioning's irqbalance bans (CRI-O's
    /// annotations steer IRQs per pod) and keeps `kernel.timer_migration=1`, as NTO does.
    OpenShift,
}

/// The boot-line keys of the profiles a Tuned CR includes (`openshift-node` →
/// `cpu-partitioning` → `network-latency` → `latency-performance`): the OpenShift flavor sets
/// each to empty, which TuneD's merge makes the value (the child's option wins).
pub const PARENT_BOOT_KEYS: [&str; 2] = ["cmdline_cpu_part", "cmdline_network_latency"];

/// The sysctls an RT kernel lacks, which `network-latency` (a parent of `cpu-partitioning`)
/// sets: an RT plan's profile drops them (TuneD's `drop=`), as NTO's
/// `openshift-node-performance-rt` does.
pub const RT_DROPPED_SYSCTLS: [&str; 3] =
    ["kernel.numa_balancing", "net.core.busy_read", "net.core.busy_poll"];

/// NTO's `[cpu] force_latency` on OpenShift (every profile without per-pod power management).
pub const OPENSHIFT_FORCE_LATENCY: &str = "cstate.id:1|3";

/// Whether the plan chose an idle limit (`--idle-limit`) rather than taking the power mode's.
fn chosen_idle_limit(plan: &Plan) -> bool {
    plan.runtime.iter().any(|r| matches!(r, RuntimeItem::IdleLimit { disable_states: true, .. }))
}

/// `kernel.timer_migration` on OpenShift: NTO's value and why.
pub const OPENSHIFT_TIMER_MIGRATION: &str = "1";

/// `tuned.conf` body (the Tuned CR's profile data in the OpenShift flavor).
pub fn tuned_conf(plan: &Plan, include: &str, flavor: Flavor) -> String {
    let with_bootloader = flavor == Flavor::Host;
    let openshift = flavor == Flavor::OpenShift;
    let mut s = String::new();
    s.push_str(&format!(
        "# lowlat plan `{}`: housekeeping {}, isolated {}; power {}{}\n",
        quote::comment(&plan.name),
        plan.reserved,
        plan.isolated,
        plan.options.power,
        if plan.options.rt_kernel { ", real-time kernel" } else { "" }
    ));
    s.push_str(&format!(
        "[main]\nsummary=lowlat plan {}: isolate {} for latency-critical work\ninclude={include}\n\n",
        ini(&plan.name),
        plan.isolated
    ));
    s.push_str("[variables]\n");
    if with_bootloader {
        s.push_str("include=${i:PROFILE_DIR}/variables.conf\n\n");
    } else {
        s.push_str(&format!("isolated_cores={}\n", plan.isolated));
        if plan.options.isolcpus_domain {
            s.push_str(&format!("no_balance_cores={}\n", plan.isolated));
        }
        s.push('\n');
    }
    let low = plan.options.power.is_low_latency();
    let mut cpu = vec![];
    for item in &plan.runtime {
        match item {
            RuntimeItem::Governor { governor, .. } => {
                cpu.push(format!("governor={}", ini(governor)));
                cpu.push("energy_perf_bias=performance".into());
                cpu.push("min_perf_pct=100".into());
            }
            RuntimeItem::IdleLimit { max_latency_us, disable_states: true, .. } => {
                // A chosen limit: TuneD holds /dev/cpu_dma_latency at it.
                cpu.push(format!("force_latency={max_latency_us}"));
            }
            RuntimeItem::IdleLimit { max_latency_us, .. } => {
                if *max_latency_us == 0 {
                    cpu.push("force_latency=0".into());
                } else {
                    cpu.push("force_latency=cstate.id_no_zero:1|3".into());
                }
            }
            _ => {}
        }
    }
    if openshift && plan.options.per_pod_power_management {
        // Per-pod power management: CRI-O sets each guaranteed pod's C-states and governor from
        // its annotations; a node-wide governor or PM QoS hold would override them (NTO).
        s.push_str("[cpu]\n# per-pod power management: CRI-O's cpu-c-states / cpu-freq-governor annotations\n# set each pod's CPUs; no node-wide governor or force_latency (as NTO does)\nenabled=false\n\n");
        cpu.clear();
    } else if openshift {
        // NTO's [cpu] on every profile without per-pod power management: C1 at most by PM QoS
        // (`cstate.id:1|3`; idle=poll does the rest on ultra-low-latency), the performance
        // governor; a chosen --idle-limit keeps its value
        let chosen = cpu
            .iter()
            .find(|l| l.starts_with("force_latency=") && chosen_idle_limit(plan))
            .cloned();
        cpu = vec![
            chosen.unwrap_or_else(|| format!("force_latency={OPENSHIFT_FORCE_LATENCY}")),
            "governor=performance".into(),
            "energy_perf_bias=performance".into(),
            "min_perf_pct=100".into(),
        ];
    }
    if !cpu.is_empty() {
        s.push_str("[cpu]\n");
        for l in cpu {
            s.push_str(&l);
            s.push('\n');
        }
        s.push('\n');
    }
    let thp = plan.runtime.iter().any(|r| matches!(r, RuntimeItem::File { path, .. } if path.ends_with("transparent_hugepage/enabled")));
    if thp {
        s.push_str("[vm]\ntransparent_hugepages=never\n\n");
    }
    let sysctls: Vec<(&str, &str)> = plan
        .runtime
        .iter()
        .filter_map(|r| match r {
            RuntimeItem::Sysctl { name, value, .. } => Some((name.as_str(), value.as_str())),
            _ => None,
        })
        .collect();
    if !sysctls.is_empty() || plan.options.rt_kernel {
        s.push_str("[sysctl]\n");
        if plan.options.rt_kernel {
            s.push_str("# RT kernels have neither NUMA balancing nor socket busy polling: drop what\n# network-latency sets (TuneD would log an ERROR and NTO mark the profile Degraded),\n# as NTO's openshift-node-performance-rt does\n");
            s.push_str(&format!("drop={}\n", RT_DROPPED_SYSCTLS.join(",")));
        }
        for (k, v) in sysctls {
            // A plan made before lowlat stopped planning them (or edited by hand) may still
            // carry one: TuneD would log the same ERROR, so it is left out here too.
            if plan.options.rt_kernel && RT_DROPPED_SYSCTLS.contains(&k) {
                s.push_str(&format!(
                    "# {}={} (in the plan) left out: RT kernels lack it\n",
                    ini(k),
                    ini(v)
                ));
                continue;
            }
            if openshift && k == "kernel.timer_migration" {
                s.push_str("# OpenShift pins guaranteed pods after boot: timers armed on their CPUs must be\n# able to move away, so NTO keeps 1 (not TuneD's 0) and so does lowlat here\n");
                s.push_str(&format!("{}={OPENSHIFT_TIMER_MIGRATION}\n", ini(k)));
                continue;
            }
            s.push_str(&format!("{}={}\n", ini(k), ini(v)));
        }
        s.push('\n');
    }
    let sysfs: Vec<(&str, &str)> = plan
        .runtime
        .iter()
        .filter_map(|r| match r {
            RuntimeItem::File { path, value, .. } if path.contains("/hugepages-") => {
                Some((path.as_str(), value.as_str()))
            }
            _ => None,
        })
        .collect();
    if !sysfs.is_empty() && !openshift {
        // (on OpenShift the MachineConfig's hugepages-allocation units set them before the
        // kubelet starts, so that it sees them)
        s.push_str("[sysfs]\n");
        for (p, v) in sysfs {
            s.push_str(&format!("/{}={}\n", ini(p), ini(v)));
        }
        s.push('\n');
    }
    if openshift {
        // fwupd's refresh timer triggers SMIs on the isolated CPUs; NTO stops it everywhere.
        s.push_str("[service]\nservice.fwupd-refresh.timer=stop,disable\n");
        // stalld with NTO's real-time hint (the low-latency power modes) or an RT kernel
        s.push_str(if plan.options.rt_kernel || low {
            "service.stalld=start,enable\n\n"
        } else {
            "service.stalld=stop,disable\n\n"
        });
        if plan.options.user_level_networking == Some(true) {
            // user-level networking: as many NIC queues as housekeeping CPUs, so the kernel's
            // queue IRQs land there (NTO's [net] channels)
            s.push_str(&format!(
                "[net]\n# user-level networking: one NIC queue per housekeeping CPU (as NTO)\nchannels=combined {}\n\n",
                plan.reserved.len()
            ));
        }
        // (`irqaffinity=` only with `render openshift --beyond-nto`)
        let boot_mask = if plan.kernel_args.iter().any(|a| a.key == "irqaffinity") {
            " irqaffinity= sets it at boot and"
        } else {
            ""
        };
        s.push_str(&format!("[scheduler]\n# ksoftirqd, rcuc and ktimers at SCHED_FIFO 11 (above stalld's boosts); TuneD moves no\n# IRQs and leaves the default IRQ mask alone:{boot_mask} CRI-O's\n# irq-load-balancing annotation takes IRQs off a pod's CPUs (as NTO does)\nruntime=0\ngroup.ksoftirqd=0:f:11:*:ksoftirqd.*\ngroup.rcuc=0:f:11:*:rcuc.*\ngroup.ktimers=0:f:11:*:ktimers.*\ndefault_irq_smp_affinity=ignore\nirq_process=false\n\n"));
    } else if plan.options.rt_kernel {
        s.push_str("[service]\nservice.stalld=start,enable\n\n");
    }
    if with_bootloader {
        s.push_str("[bootloader]\n# the plan's arguments are the whole TuneD boot line: clear the parents' keys\n");
        s.push_str("cmdline_network_latency=\n");
        s.push_str(&format!(
            "cmdline_cpu_part={} tuned.non_isolcpus=${{not_isolated_cpumask}}\n",
            ini(&crate::cmdline::line(plan))
        ));
    } else {
        if low {
            s.push_str("# kernel arguments come from the MachineConfig's kernelArguments\n");
        }
        s.push_str("[irqbalance]\n# cpu-partitioning bans the isolated CPUs from irqbalance for the whole node; on\n# OpenShift CRI-O's irq-load-balancing annotation does it per pod (as NTO does)\nenabled=false\n\n");
        s.push_str("[bootloader]\n# the MachineConfig carries the whole boot line: clear what the parents would add\n# (cpu-partitioning's includes intel_pstate=disable), and their initrd\n");
        s.push_str("initrd_remove_dir=\ninitrd_dst_img=\ninitrd_add_dir=\n");
        for k in PARENT_BOOT_KEYS {
            s.push_str(&format!("{k}=\n"));
        }
    }
    s
}

/// The profile directory.
pub fn render(plan: &Plan) -> Vec<OutFile> {
    let dir = profile_name(plan);
    let mut vars = format!(
        "# lowlat plan `{}`: CPU sets for {dir}\nisolated_cores={}\n",
        quote::comment(&plan.name),
        plan.isolated
    );
    if plan.options.isolcpus_domain {
        vars.push_str(&format!("no_balance_cores={}\n", plan.isolated));
    }
    let mut readme = String::new();
    readme.push_str(&format!(
        "# install: cp -r {dir} /etc/tuned/ && tuned-adm profile {dir} && reboot (boot arguments)\n"
    ));
    vec![
        OutFile::new(
            format!("{dir}/tuned.conf"),
            tuned_conf(plan, "cpu-partitioning", Flavor::Host),
        ),
        OutFile::new(format!("{dir}/variables.conf"), vars),
        OutFile::new(format!("{dir}/INSTALL"), readme),
    ]
}
