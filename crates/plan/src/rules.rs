//! Kernel-argument and runtime-knob rules (TuneD `cpu-partitioning`/`realtime` and the Node
//! Tuning Operator's profile, reference notes `tuned-tuna.md` §1, `nto-pao.md` §2.1–2.2):
//! from the partition and options to the plan's `kernel_args[]` and `runtime[]`, each with
//! the reason it is there.

use cpuset::CpuSet;

use crate::model::{
    CpuVendor, HugepageRequest, IntelPstate, KernelArg, PlanOptions, Power, RuntimeItem,
};

/// Host facts the rules need (kept small so a plan file alone can be re-derived).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Exit latency (µs) of the shallowest C-state deeper than poll, when known.
    pub c1_latency_us: Option<u64>,
}

fn arg(key: &str, value: Option<String>, reason: &str) -> KernelArg {
    KernelArg { key: key.into(), value, reason: reason.into() }
}

/// `nosmt`, in PPC's `additionalKernelArgs` form.
pub fn nosmt_arg() -> KernelArg {
    arg("nosmt", None, "SMT off (--no-smt): siblings share a core's execution units and caches with the isolated thread")
}

/// The plan's kernel arguments, as `lowlat plan` derives them from the sets and options (the
/// ppc style without workload hints carries only what PAO-era profiles did: no
/// `nmi_watchdog`). A plan file's own list is replaced by this when it is read.
pub fn derived_kernel_args(
    reserved: &CpuSet,
    isolated: &CpuSet,
    o: &PlanOptions,
) -> Vec<KernelArg> {
    let mut v = kernel_args(reserved, isolated, o);
    if o.style == crate::model::Style::Ppc && !o.workload_hints {
        v.retain(|a| a.key != "nmi_watchdog");
    }
    v
}

/// The kernel arguments for a partition.
pub fn kernel_args(reserved: &CpuSet, isolated: &CpuSet, o: &PlanOptions) -> Vec<KernelArg> {
    let iso = isolated.to_list();
    let res = reserved.to_list();
    let vendor = o.cpu_vendor;
    let low_latency = o.power.is_low_latency();
    let mut v = vec![
        arg("skew_tick", Some("1".into()), "offset each CPU's tick so ticks do not contend on the jiffies/timekeeping locks at the same instant (TuneD network-latency)"),
    ];
    if vendor != Some(CpuVendor::Arm) {
        v.push(arg("tsc", Some("reliable".into()), "skip the clocksource watchdog's periodic TSC checks, a source of latency spikes on isolated CPUs (NTO PR #756)"));
    }
    v.push(arg(
        "rcupdate.rcu_normal_after_boot",
        Some("1".into()),
        "no expedited RCU grace periods after boot: they IPI every CPU, isolated ones included",
    ));
    if !isolated.is_empty() {
        v.push(arg("nohz", Some("on".into()), "dynamic ticks on, required for nohz_full"));
        v.push(arg(
            "nohz_full",
            Some(iso.clone()),
            "stop the scheduler tick on isolated CPUs while they run a single task",
        ));
        v.push(arg(
            "rcu_nocbs",
            Some(iso.clone()),
            "run RCU callbacks of isolated CPUs in rcuo kthreads on housekeeping CPUs",
        ));
        let (flags, why) = if o.isolcpus_domain {
            ("domain,managed_irq,", "remove isolated CPUs from scheduler load balancing (static isolation) and keep managed IRQs off them")
        } else {
            ("managed_irq,", "keep kernel-managed (multi-queue) IRQs off isolated CPUs where the driver allows; scheduler balancing stays for CPU-manager pinning")
        };
        v.push(arg("isolcpus", Some(format!("{flags}{iso}")), why));
        v.push(arg(
            "irqaffinity",
            Some(res.clone()),
            "default affinity of every IRQ at boot: housekeeping only",
        ));
        v.push(arg(
            "kthread_cpus",
            Some(res.clone()),
            "unbound kernel threads start on housekeeping CPUs",
        ));
        let expanded: Vec<String> = reserved.iter().map(|c| c.to_string()).collect();
        v.push(arg("systemd.cpu_affinity", Some(expanded.join(",")), "PID 1 and every service start on housekeeping CPUs (expanded list, as older systemd needs)"));
    }
    // NTO's real-time workload hint (workloadHints.realTime: the low-latency power modes), or
    // an RT kernel
    let rt_hint = low_latency || o.rt_kernel;
    if rt_hint {
        v.push(arg(
            "nosoftlockup",
            None,
            "no soft-lockup detector hrtimer firing on isolated CPUs",
        ));
    }
    if low_latency {
        v.push(arg(
            "nmi_watchdog",
            Some("0".into()),
            "no periodic NMI (perf counter) on every CPU",
        ));
        if matches!(vendor, Some(CpuVendor::Intel | CpuVendor::Amd)) {
            v.push(arg("mce", Some("off".into()), "no machine-check polling timer and MCE handling on any CPU (NTO's real-time hint); the cost: corrected and uncorrected hardware errors go unreported"));
        }
    }
    match vendor {
        Some(CpuVendor::Intel) => {
            v.push(arg("intel_iommu", Some("on".into()), "the IOMMU on, so devices can be handed to pods (SR-IOV VFs, VFIO for DPDK), as NTO sets on Intel"));
            v.push(arg("iommu", Some("pt".into()), "passthrough for the host's own DMA: no IOMMU translation cost on kernel-owned devices"));
        }
        Some(CpuVendor::Amd) => {
            v.push(arg("iommu", Some("pt".into()), "passthrough for the host's own DMA: no IOMMU translation cost on kernel-owned devices (NTO sets it on AMD)"));
        }
        _ => {}
    }
    if rt_hint {
        v.push(arg("rcutree.kthread_prio", Some("11".into()), "RCU kthreads at SCHED_FIFO 11, above ksoftirqd/stalld, so grace periods finish under RT load"));
    }
    match (vendor, o.per_pod_power_management, low_latency) {
        (Some(CpuVendor::Intel), true, _) => v.push(arg(
            "intel_pstate",
            Some("passive".into()),
            "per-pod power management: governors per CPU through cpufreq (CRI-O annotations)",
        )),
        (Some(CpuVendor::Amd), true, _) => v.push(arg(
            "amd_pstate",
            Some("passive".into()),
            "per-pod power management: governors per CPU through cpufreq",
        )),
        (Some(CpuVendor::Intel), false, _) if o.intel_pstate == Some(IntelPstate::Disable) => {
            v.push(arg(
                "intel_pstate",
                Some("disable".into()),
                "a CPU before Ice Lake: intel_pstate off, acpi-cpufreq instead (active mode can add jitter on these generations; TuneD's intel_recommended_pstate, as NTO sets it)",
            ))
        }
        (Some(CpuVendor::Intel), false, _) if o.intel_pstate == Some(IntelPstate::Active) => {
            v.push(arg(
                "intel_pstate",
                Some("active".into()),
                "Ice Lake or later: hardware P-states (HWP) in active mode, as Intel recommends from Ice Lake on (TuneD's intel_recommended_pstate, as NTO sets it)",
            ))
        }
        (Some(CpuVendor::Intel), false, true) => v.push(arg(
            "intel_pstate",
            Some("active".into()),
            "hardware P-states with the performance governor hold the highest frequency",
        )),
        (Some(CpuVendor::Amd), false, _) => v.push(arg(
            "amd_pstate",
            Some("guided".into()),
            "firmware-guided P-states with a performance floor (NTO sets it on every AMD node)",
        )),
        _ => {}
    }
    if o.power == Power::UltraLowLatency {
        v.push(arg(
            "processor.max_cstate",
            Some("1".into()),
            "ultra-low-latency: no ACPI C-state deeper than C1 (wake-up exit latency)",
        ));
        if vendor != Some(CpuVendor::Amd) {
            v.push(arg(
                "intel_idle.max_cstate",
                Some("0".into()),
                "ultra-low-latency: disable intel_idle so only C1 remains",
            ));
        }
        v.push(arg("idle", Some("poll".into()), "ultra-low-latency: idle CPUs spin instead of halting, zero wake-up latency at the cost of power"));
    }
    v.extend(hugepage_args(&o.hugepages));
    if o.no_smt {
        v.push(nosmt_arg());
    }
    v
}

/// `default_hugepagesz` / `hugepagesz` / `hugepages` for pages without a NUMA node.
pub fn hugepage_args(pages: &[HugepageRequest]) -> Vec<KernelArg> {
    let mut v = vec![];
    let global: Vec<&HugepageRequest> = pages.iter().filter(|p| p.node.is_none()).collect();
    if let Some(first) = pages.first() {
        v.push(arg(
            "default_hugepagesz",
            Some(first.size.clone()),
            "default huge page size: the first --hugepages request",
        ));
    }
    for p in global {
        v.push(arg(
            "hugepagesz",
            Some(p.size.clone()),
            "reserve huge pages at boot, before memory fragments",
        ));
        v.push(arg(
            "hugepages",
            Some(p.count.to_string()),
            "page count for the size above (the kernel splits it evenly over NUMA nodes)",
        ));
    }
    // With a non-2M default, the kernel only creates the 2M sysfs directories when 2M is
    // named on the command line; per-node 2M pages need them (NTO, PAO PR #326).
    let default_is_2m = pages.first().is_some_and(|p| size_kb(&p.size) == Some(2048));
    let node_2m = pages.iter().any(|p| p.node.is_some() && size_kb(&p.size) == Some(2048));
    let global_2m = pages.iter().any(|p| p.node.is_none() && size_kb(&p.size) == Some(2048));
    if !default_is_2m && node_2m && !global_2m {
        v.push(arg(
            "hugepagesz",
            Some("2M".into()),
            "name 2M pages so the kernel creates their per-node sysfs files (set at runtime)",
        ));
        v.push(arg(
            "hugepages",
            Some("0".into()),
            "no 2M pages at boot: the per-node counts are set at runtime",
        ));
    }
    v
}

/// Size text (`2M`, `1G`, `64k`) to kB.
pub fn size_kb(size: &str) -> Option<u64> {
    let s = size.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit())?);
    let n: u64 = num.parse().ok()?;
    match unit.to_ascii_uppercase().as_str() {
        "K" | "KB" => Some(n),
        "M" | "MB" => Some(n * 1024),
        "G" | "GB" => Some(n * 1024 * 1024),
        _ => None,
    }
}

/// Socket busy polling: both sysctls at `us` (0 switches it off).
fn busy_poll(us: u64) -> Vec<RuntimeItem> {
    let (read, poll) = if us == 0 {
        (
            "no busy polling on blocking socket reads (interrupt-driven receive)".to_string(),
            "poll()/select()/epoll wait for interrupts instead of polling device queues"
                .to_string(),
        )
    } else {
        (
            format!("blocking socket reads poll the device queue for up to {us} µs before sleeping: no interrupt and wake-up on the receive path (PAO's Tuned sets 50; costs a busy CPU while waiting)"),
            format!("poll()/select()/epoll busy-poll sockets for up to {us} µs (PAO's Tuned sets 50; only sockets on devices with NAPI, costs CPU while waiting)"),
        )
    };
    vec![
        RuntimeItem::Sysctl {
            name: "net.core.busy_read".into(),
            value: us.to_string(),
            reason: read,
        },
        RuntimeItem::Sysctl {
            name: "net.core.busy_poll".into(),
            value: us.to_string(),
            reason: poll,
        },
    ]
}

/// A chosen idle limit: on the isolated CPUs (every CPU when none is isolated), no idle state
/// with an exit latency above `us`, by PM QoS and by disabling the deeper states.
fn idle_limit(reserved: &CpuSet, isolated: &CpuSet, us: u64) -> Option<RuntimeItem> {
    let (cpus, whose) = if isolated.is_empty() {
        (reserved.clone(), "every CPU")
    } else {
        (isolated.clone(), "the isolated CPUs")
    };
    if cpus.is_empty() {
        return None;
    }
    let reason = if us == 0 {
        format!("idle limit 0 µs: {whose} poll when idle (every cpuidle state but POLL off)")
    } else {
        format!("idle limit {us} µs: {whose} keep the idle states that wake within {us} µs and lose the deeper ones (as holding /dev/cpu_dma_latency at {us}; shallow C-states keep turbo headroom)")
    };
    Some(RuntimeItem::IdleLimit { cpus, max_latency_us: us, reason, disable_states: true })
}

/// The runtime knobs for a partition.
pub fn runtime_items(
    reserved: &CpuSet,
    isolated: &CpuSet,
    o: &PlanOptions,
    f: &Facts,
) -> Vec<RuntimeItem> {
    let r = |s: &str| s.to_string();
    let mut v = vec![];
    if !isolated.is_empty() {
        v.push(RuntimeItem::IrqAffinity { cpus: reserved.clone(), reason: r("move every movable IRQ and the default IRQ mask to housekeeping CPUs (managed IRQs stay; isolcpus=managed_irq handles them at boot)") });
        v.push(RuntimeItem::WorkqueueMask {
            cpus: reserved.clone(),
            reason: r("unbound and writeback workqueues run only on housekeeping CPUs"),
        });
        v.push(RuntimeItem::KthreadAffinity { cpus: reserved.clone(), reason: r("movable kernel threads leave the isolated CPUs (per-CPU kthreads cannot move and are expected)") });
        v.push(RuntimeItem::Sysctl {
            name: r("kernel.watchdog_cpumask"),
            value: reserved.to_list(),
            reason: r("lockup detectors only on housekeeping CPUs"),
        });
    }
    v.push(RuntimeItem::Sysctl { name: r("kernel.timer_migration"), value: r("0"), reason: r("timers stay on the CPU that armed them instead of being pulled across CPUs (TuneD; OpenShift sets 1 for dynamic pod pinning)") });
    v.push(RuntimeItem::Sysctl {
        name: r("vm.stat_interval"),
        value: r("10"),
        reason: r("vmstat per-CPU counter folding every 10 s instead of every second"),
    });
    // RT kernels are built without NUMA balancing: the sysctl does not exist there, and TuneD
    // setting it logs an ERROR that NTO turns into a Degraded profile (NTO drops it on RT,
    // `openshift-node-performance-rt`).
    if !o.rt_kernel {
        v.push(RuntimeItem::Sysctl {
            name: r("kernel.numa_balancing"),
            value: r("0"),
            reason: r("no NUMA-balancing page faults and task migrations"),
        });
    }
    v.push(RuntimeItem::Sysctl {
        name: r("kernel.hung_task_timeout_secs"),
        value: r("600"),
        reason: r("a busy-polling RT task starving a kworker must not trip the hung-task detector"),
    });
    if o.power.is_low_latency() {
        v.push(RuntimeItem::Sysctl {
            name: r("kernel.nmi_watchdog"),
            value: r("0"),
            reason: r("no periodic NMI on every CPU (same as nmi_watchdog=0, without a reboot)"),
        });
    }
    if o.rt_kernel || o.power.is_low_latency() {
        v.push(RuntimeItem::Sysctl {
            name: r("kernel.sched_rt_runtime_us"),
            value: r("-1"),
            reason: r("no RT throttling: an isolated FIFO task may use 100% of its CPU"),
        });
    }
    v.push(RuntimeItem::File {
        path: r("sys/kernel/mm/transparent_hugepage/enabled"),
        value: r("never"),
        reason: r("no THP compaction stalls or khugepaged scans"),
    });
    for p in &o.hugepages {
        if let (Some(node), Some(kb)) = (p.node, size_kb(&p.size)) {
            v.push(RuntimeItem::File {
                path: format!("sys/devices/system/node/node{node}/hugepages/hugepages-{kb}kB/nr_hugepages"),
                value: p.count.to_string(),
                reason: format!("{} {} huge pages on NUMA node {node} (per-node pages cannot be set on the command line)", p.count, p.size),
            });
        }
    }
    let all = reserved.union(isolated);
    if o.power.is_low_latency() && !o.per_pod_power_management {
        v.push(RuntimeItem::Governor {
            cpus: all.clone(),
            governor: r("performance"),
            reason: r("highest frequency, no ramp-up delay after idle"),
        });
    }
    if let Some(us) = o.busy_poll_us {
        v.extend(busy_poll(us));
    }
    match (o.idle_limit_us, o.power) {
        (Some(us), _) => v.extend(idle_limit(reserved, isolated, us)),
        (None, Power::LowLatency) if !isolated.is_empty() => v.push(RuntimeItem::IdleLimit {
            cpus: isolated.clone(),
            max_latency_us: f.c1_latency_us.unwrap_or(3),
            reason: r(
                "isolated CPUs sleep no deeper than C1 (TuneD force_latency=cstate.id_no_zero:1|3)",
            ),
            disable_states: false,
        }),
        (None, Power::UltraLowLatency) if !isolated.is_empty() => v.push(RuntimeItem::IdleLimit {
            cpus: isolated.clone(),
            max_latency_us: 0,
            reason: r("isolated CPUs poll when idle (matches idle=poll, without a reboot)"),
            disable_states: false,
        }),
        _ => {}
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(power: &str) -> PlanOptions {
        PlanOptions {
            power: power.parse().unwrap(),
            cpu_vendor: Some(CpuVendor::Intel),
            ..Default::default()
        }
    }

    fn tokens(a: &[KernelArg]) -> String {
        a.iter().map(KernelArg::token).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn pstate_by_vendor_and_generation_as_nto() {
        // issue 20 item 3: TuneD's intel_recommended_pstate on every Intel plan, amd_pstate
        // guided on every AMD plan, passive with per-pod power management
        let r = CpuSet::parse_list("0").unwrap();
        let i = CpuSet::parse_list("1-3").unwrap();
        let with = |vendor, pstate, power: &str, ppm| {
            let mut o = opts(power);
            o.cpu_vendor = Some(vendor);
            o.intel_pstate = pstate;
            o.per_pod_power_management = ppm;
            tokens(&kernel_args(&r, &i, &o))
        };
        use crate::model::IntelPstate::{Active, Disable};
        assert!(with(CpuVendor::Intel, Some(Disable), "default", false)
            .ends_with(" intel_pstate=disable"));
        assert!(with(CpuVendor::Intel, Some(Disable), "low-latency", false)
            .contains(" intel_pstate=disable"));
        assert!(with(CpuVendor::Intel, Some(Active), "default", false)
            .ends_with(" intel_pstate=active"));
        assert!(with(CpuVendor::Intel, Some(Disable), "low-latency", true)
            .contains(" intel_pstate=passive"));
        // plans without the recorded generation keep the old rule
        assert!(!with(CpuVendor::Intel, None, "default", false).contains("intel_pstate"));
        assert!(with(CpuVendor::Intel, None, "low-latency", false).contains("intel_pstate=active"));
        let amd = with(CpuVendor::Amd, None, "default", false);
        assert!(amd.contains(" iommu=pt") && !amd.contains("intel_iommu"), "{amd}");
        assert!(amd.ends_with(" amd_pstate=guided"), "{amd}");
    }

    #[test]
    fn default_mode_args() {
        let r = CpuSet::parse_list("0,40").unwrap();
        let i = CpuSet::parse_list("1-39,41-79").unwrap();
        let t = tokens(&kernel_args(&r, &i, &opts("default")));
        assert_eq!(t, "skew_tick=1 tsc=reliable rcupdate.rcu_normal_after_boot=1 nohz=on nohz_full=1-39,41-79 rcu_nocbs=1-39,41-79 isolcpus=managed_irq,1-39,41-79 irqaffinity=0,40 kthread_cpus=0,40 systemd.cpu_affinity=0,40 intel_iommu=on iommu=pt");
    }

    #[test]
    fn ultra_low_latency_rt_args() {
        let r = CpuSet::parse_list("0").unwrap();
        let i = CpuSet::parse_list("1-3").unwrap();
        let mut o = opts("ultra-low-latency");
        o.rt_kernel = true;
        o.no_smt = true;
        o.isolcpus_domain = true;
        o.hugepages = vec![
            HugepageRequest { size: "1G".into(), count: 4, node: None },
            HugepageRequest { size: "2M".into(), count: 128, node: Some(0) },
        ];
        let t = tokens(&kernel_args(&r, &i, &o));
        assert!(t.contains("isolcpus=domain,managed_irq,1-3"), "{t}");
        assert!(t.contains("nosoftlockup nmi_watchdog=0 mce=off intel_iommu=on iommu=pt rcutree.kthread_prio=11 intel_pstate=active processor.max_cstate=1 intel_idle.max_cstate=0 idle=poll default_hugepagesz=1G hugepagesz=1G hugepages=4 hugepagesz=2M hugepages=0 nosmt"), "{t}");
        assert!(!kernel_args(&r, &i, &opts("low-latency")).iter().any(|a| a.key == "idle"));
        let rt = runtime_items(&r, &i, &o, &Facts::default());
        assert!(rt.contains(&RuntimeItem::File { path: "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages".into(), value: "128".into(), reason: "128 2M huge pages on NUMA node 0 (per-node pages cannot be set on the command line)".into() }));
        assert!(rt.iter().any(|x| matches!(x, RuntimeItem::IdleLimit { max_latency_us: 0, .. })));
        assert!(rt.iter().any(|x| matches!(x, RuntimeItem::Sysctl { name, .. } if name == "kernel.sched_rt_runtime_us")));
    }

    #[test]
    fn busy_poll_and_a_chosen_idle_limit() {
        let r = CpuSet::parse_list("0").unwrap();
        let i = CpuSet::parse_list("1-3").unwrap();
        let mut o = opts("low-latency");
        o.busy_poll_us = Some(50);
        o.idle_limit_us = Some(80);
        let rt = runtime_items(&r, &i, &o, &Facts { c1_latency_us: Some(2) });
        let sysctl = |n: &str| {
            rt.iter().find_map(|x| match x {
                RuntimeItem::Sysctl { name, value, reason } if name == n => {
                    Some((value.clone(), reason.clone()))
                }
                _ => None,
            })
        };
        let (v, why) = sysctl("net.core.busy_read").unwrap();
        assert_eq!(v, "50");
        assert!(why.contains("50 µs") && why.contains("PAO"), "{why}");
        assert_eq!(sysctl("net.core.busy_poll").unwrap().0, "50");
        // The chosen limit replaces the mode's C1 limit: one idle item, on the isolated CPUs.
        let idle: Vec<_> =
            rt.iter().filter(|x| matches!(x, RuntimeItem::IdleLimit { .. })).collect();
        assert_eq!(
            idle,
            [&RuntimeItem::IdleLimit {
                cpus: i.clone(),
                max_latency_us: 80,
                reason: "idle limit 80 µs: the isolated CPUs keep the idle states that wake within 80 µs and lose the deeper ones (as holding /dev/cpu_dma_latency at 80; shallow C-states keep turbo headroom)".into(),
                disable_states: true,
            }]
        );
        // Default power, nothing isolated: every CPU gets the limit.
        let mut o = opts("default");
        o.idle_limit_us = Some(0);
        let rt = runtime_items(&r.union(&i), &CpuSet::new(), &o, &Facts::default());
        assert!(rt.iter().any(|x| matches!(x, RuntimeItem::IdleLimit { cpus, max_latency_us: 0, disable_states: true, .. } if cpus.to_list() == "0-3")));
        // Unset: neither sysctl is planned, and the mode's limit disables no state.
        let rt = runtime_items(&r, &i, &opts("low-latency"), &Facts::default());
        assert!(!rt.iter().any(
            |x| matches!(x, RuntimeItem::Sysctl { name, .. } if name.starts_with("net.core.busy"))
        ));
        assert!(rt
            .iter()
            .any(|x| matches!(x, RuntimeItem::IdleLimit { disable_states: false, .. })));
    }

    #[test]
    fn sizes() {
        assert_eq!(size_kb("2M"), Some(2048));
        assert_eq!(size_kb("1G"), Some(1_048_576));
        assert_eq!(size_kb("64k"), Some(64));
        assert_eq!(size_kb("1T"), None);
        assert_eq!(size_kb("G"), None);
    }
}
