//! Findings about a host alone (no plan): each a small pure function over the [`Host`]
//! model returning zero or one [`Finding`] with its evidence and the fix. Stable ids are the
//! contract (`smt-sibling-not-isolated`, `isolated-cpu-irq-target`, …).

use cpuset::CpuSet;

use crate::model::{Finding, Host, Severity};

/// Exit latency above which an enabled C-state is called "deep" (µs).
pub const DEEP_CSTATE_US: u64 = 10;

/// Evaluate every host-only finding, most severe first.
pub fn evaluate(host: &Host) -> Vec<Finding> {
    let checks: &[fn(&Host) -> Option<Finding>] = &[
        smt_sibling_not_isolated,
        isolated_irq_target,
        isolated_irq_received,
        movable_tasks_on_isolated,
        workqueue_on_isolated,
        boot_cpu_nohz_full,
        deep_cstates,
        governor_not_performance,
        rt_throttling,
        container_rt_budget,
        thp_always,
        hypervisor,
    ];
    let mut out: Vec<Finding> = checks.iter().filter_map(|c| c(host)).collect();
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}

fn finding(
    id: &str,
    severity: Severity,
    message: String,
    evidence: Vec<String>,
    fix: Option<&str>,
) -> Finding {
    Finding { id: id.into(), severity, message, evidence, fix: fix.map(str::to_string) }
}

/// Hyperthread siblings of isolated CPUs that are not isolated themselves share the core's
/// execution units and caches with the isolated work.
pub fn smt_sibling_not_isolated(h: &Host) -> Option<Finding> {
    let iso = h.isolated_cpus();
    if iso.is_empty() {
        return None;
    }
    let mut bad = CpuSet::new();
    let mut ev = Vec::new();
    for cpu in &iso {
        let Some(t) = h.cpu(cpu) else { continue };
        let others = t.siblings.difference(&iso);
        if !others.is_empty() {
            bad = bad.union(&others);
            if ev.len() < 8 {
                ev.push(format!(
                    "cpu{cpu} thread_siblings_list = {} ({} not isolated)",
                    t.siblings, others
                ));
            }
        }
    }
    if bad.is_empty() {
        return None;
    }
    Some(finding(
        "smt-sibling-not-isolated",
        Severity::Warn,
        format!("SMT siblings {bad} of isolated CPUs {iso} are not isolated: work there shares the isolated cores"),
        ev,
        Some("isolate whole cores (add the siblings to isolcpus/nohz_full, or leave them idle); `lowlat plan` never splits siblings"),
    ))
}

/// Device IRQs whose configured affinity includes isolated CPUs.
pub fn isolated_irq_target(h: &Host) -> Option<Finding> {
    let iso = h.isolated_cpus();
    if iso.is_empty() {
        return None;
    }
    let mut hit = Vec::new();
    let mut cpus = CpuSet::new();
    // IRQs without a /proc/interrupts row have no handler: nothing is delivered.
    for irq in h.irqs.iter().filter(|i| i.name.is_some() || h.interrupts.is_none()) {
        let eff = irq.effective_affinity.as_ref().filter(|e| !e.is_empty());
        let aff = eff.or(irq.affinity.as_ref());
        let Some(a) = aff else { continue };
        let x = a.intersection(&iso);
        if !x.is_empty() {
            cpus = cpus.union(&x);
            hit.push(format!(
                "irq {} ({}) {} = {}",
                irq.irq,
                irq.name.as_deref().unwrap_or("?"),
                if eff.is_some() { "effective_affinity_list" } else { "smp_affinity_list" },
                a
            ));
        }
    }
    if hit.is_empty() {
        return None;
    }
    let n = hit.len();
    hit.truncate(10);
    Some(finding(
        "isolated-cpu-irq-target",
        Severity::Warn,
        format!("{n} device IRQs may be delivered to isolated CPUs {cpus}"),
        hit,
        Some("set irqaffinity= to the housekeeping CPUs and move IRQs with `lowlat apply` (managed IRQs need isolcpus=managed_irq)"),
    ))
}

/// Isolated CPUs that did receive device interrupts (per-CPU counts).
pub fn isolated_irq_received(h: &Host) -> Option<Finding> {
    let iso = h.isolated_cpus();
    let table = h.interrupts.as_ref()?;
    if iso.is_empty() {
        return None;
    }
    let mut ev = Vec::new();
    let mut cpus = CpuSet::new();
    for row in table.rows.iter().filter(|r| r.id.bytes().all(|b| b.is_ascii_digit())) {
        for (col, n) in row.counts.iter().enumerate() {
            let Some(&cpu) = table.cpus.get(col) else { continue };
            if *n > 0 && iso.contains(cpu) {
                cpus.insert(cpu);
                if ev.len() < 10 {
                    ev.push(format!(
                        "irq {} ({}) on cpu{cpu}: {n}",
                        row.id,
                        row.name.as_deref().unwrap_or("?")
                    ));
                }
            }
        }
    }
    if cpus.is_empty() {
        return None;
    }
    Some(finding(
        "isolated-cpu-irq-received",
        Severity::Warn,
        format!("isolated CPUs {cpus} have received device interrupts since boot (/proc/interrupts)"),
        ev,
        Some("move those IRQs to housekeeping CPUs (`lowlat apply`), then watch the counts with `lowlat measure ticks`"),
    ))
}

/// Movable kthreads and user tasks whose allowed CPUs include isolated CPUs.
pub fn movable_tasks_on_isolated(h: &Host) -> Option<Finding> {
    let iso = h.isolated_cpus();
    let tasks = h.tasks.as_ref()?;
    if iso.is_empty() {
        return None;
    }
    let (mut kth, mut user) = (0usize, 0usize);
    let mut ev = Vec::new();
    for t in tasks.iter().filter(|t| !t.per_cpu_kthread) {
        let Some(a) = &t.allowed_cpus else { continue };
        if a.is_disjoint(&iso) {
            continue;
        }
        if t.kthread {
            kth += 1;
        } else {
            user += 1;
        }
        if ev.len() < 10 {
            ev.push(format!("{} pid {} tid {} allowed {a}", t.comm, t.pid, t.tid));
        }
    }
    if kth + user == 0 {
        return None;
    }
    Some(finding(
        "movable-tasks-on-isolated",
        Severity::Warn,
        format!("{kth} movable kthreads and {user} user threads are allowed on isolated CPUs {iso}"),
        ev,
        Some("confine them to housekeeping CPUs (systemd CPUAffinity, kthread_cpus=, or `lowlat apply`); isolcpus=domain alone does not move them"),
    ))
}

/// The unbound-workqueue cpumask (global or writeback) includes isolated CPUs.
pub fn workqueue_on_isolated(h: &Host) -> Option<Finding> {
    let iso = h.isolated_cpus();
    if iso.is_empty() {
        return None;
    }
    let mut ev = Vec::new();
    for (name, m) in [
        ("/sys/devices/virtual/workqueue/cpumask", &h.workqueues.cpumask),
        ("/sys/bus/workqueue/devices/writeback/cpumask", &h.workqueues.writeback),
    ] {
        if let Some(m) = m {
            if !m.is_disjoint(&iso) {
                ev.push(format!("{name} = {m}"));
            }
        }
    }
    if ev.is_empty() {
        return None;
    }
    Some(finding(
        "workqueue-on-isolated",
        Severity::Warn,
        format!("unbound workqueue workers may run on isolated CPUs {iso}"),
        ev,
        Some("write the housekeeping CPUs to the workqueue cpumasks (`lowlat apply`, or TuneD cpu-partitioning)"),
    ))
}

/// The boot CPU cannot be nohz_full (the kernel drops it from the mask).
pub fn boot_cpu_nohz_full(h: &Host) -> Option<Finding> {
    let set = h.kernel.boot.nohz_full.as_ref()?;
    if !set.contains(0) {
        return None;
    }
    Some(finding(
        "boot-cpu-nohz-full",
        Severity::Warn,
        "nohz_full includes the boot CPU 0: the kernel removes it, so CPU 0 keeps its tick".into(),
        vec![format!("/proc/cmdline nohz_full={set}")],
        Some("keep CPU 0 (and its SMT sibling) as housekeeping; `lowlat plan` does"),
    ))
}

/// Enabled C-states with high exit latency on isolated CPUs (or any CPU when none are).
pub fn deep_cstates(h: &Host) -> Option<Finding> {
    let iso = h.isolated_cpus();
    let mut cpus = CpuSet::new();
    let mut worst: Option<(String, u64)> = None;
    for p in &h.power.cpus {
        if !iso.is_empty() && !iso.contains(p.cpu) {
            continue;
        }
        for s in &p.idle_states {
            let (Some(lat), false) = (s.exit_latency_us, s.disabled.unwrap_or(false)) else {
                continue;
            };
            if lat > DEEP_CSTATE_US {
                cpus.insert(p.cpu);
                if worst.as_ref().is_none_or(|w| lat > w.1) {
                    worst = Some((s.name.clone(), lat));
                }
            }
        }
    }
    let (name, lat) = worst?;
    Some(finding(
        "deep-cstates-enabled",
        Severity::Warn,
        format!("C-states with exit latency above {DEEP_CSTATE_US} µs are enabled on CPUs {cpus} (worst: {name}, {lat} µs)"),
        vec![format!("cpuidle state {name}: latency {lat} µs, disable 0")],
        Some("hold PM QoS (`lowlat measure` does while measuring), set pm_qos_resume_latency_us on the isolated CPUs, or boot with intel_idle.max_cstate=/processor.max_cstate="),
    ))
}

/// A non-`performance` governor on isolated CPUs.
pub fn governor_not_performance(h: &Host) -> Option<Finding> {
    let iso = h.isolated_cpus();
    let target = if iso.is_empty() { h.online_cpus() } else { iso };
    let mut cpus = CpuSet::new();
    let mut govs = std::collections::BTreeSet::new();
    for p in h.power.cpus.iter().filter(|p| target.contains(p.cpu)) {
        if let Some(g) = &p.governor {
            if g != "performance" {
                cpus.insert(p.cpu);
                govs.insert(g.clone());
            }
        }
    }
    if cpus.is_empty() {
        return None;
    }
    let govs: Vec<String> = govs.into_iter().collect();
    Some(finding(
        "governor-not-performance",
        Severity::Warn,
        format!("CPUs {cpus} use the {} governor: frequency changes add latency", govs.join("/")),
        vec![format!("cpufreq/policy*/scaling_governor = {}", govs.join(", "))],
        Some("set the `performance` governor on the isolated CPUs (`lowlat apply`, or TuneD cpu-partitioning)"),
    ))
}

/// Container cgroups that cannot run SCHED_FIFO: a v1 `cpu.rt_runtime_us` of 0 on the chain
/// from the root to the container (any level), or cgroup v2 with RT group scheduling (no
/// non-root cgroup has an RT budget). The same evidence `verify`'s `container-sched-fifo` uses.
pub fn container_rt_budget(h: &Host) -> Option<Finding> {
    use crate::rt::Tree;
    let rt = &h.cgroup.rt;
    if !rt.budgets_enforced() {
        return None;
    }
    match &rt.tree {
        Tree::V1 { containers, .. } => {
            let bad: Vec<String> = containers
                .iter()
                .filter_map(|c| c.first_zero().map(|z| format!("{}: {} = 0", c.path, z.file)))
                .collect();
            if bad.is_empty() {
                return None;
            }
            Some(finding(
                "container-rt-budget",
                Severity::Warn,
                format!(
                    "{} container cgroup{} cannot run SCHED_FIFO: cpu.rt_runtime_us is 0 on the chain (sched_setscheduler fails with EPERM)",
                    bad.len(),
                    if bad.len() == 1 { "" } else { "s" }
                ),
                bad.into_iter().take(8).collect(),
                Some("give every level of the chain an RT budget, parent first (echo 950000 > …/system.slice/cpu.rt_runtime_us, then the container's scope); docker run --cpu-rt-runtime=…"),
            ))
        }
        Tree::V2 { mount, containers } if rt.rt_group_sched == Some(true) => Some(finding(
            "container-rt-budget",
            Severity::Warn,
            format!("cgroup v2 with RT group scheduling: no task outside the root cgroup of {mount} can get SCHED_FIFO ({} container cgroups)", containers.len()),
            rt.rt_group_sched_evidence.iter().cloned().chain(containers.iter().take(8).cloned()).collect(),
            Some("boot with rt_group_sched=0 (kernel 6.16+) or a kernel without CONFIG_RT_GROUP_SCHED; or start RT tasks from the root cgroup (`lowlat measure … --rt-cgroup root`)"),
        )),
        _ => None,
    }
}

/// RT throttling: `sched_rt_runtime_us` below the period stops RT tasks each period.
pub fn rt_throttling(h: &Host) -> Option<Finding> {
    let rt = h.sysctls.values.get("kernel.sched_rt_runtime_us")?;
    let period = h
        .sysctls
        .values
        .get("kernel.sched_rt_period_us")
        .and_then(|p| p.parse::<i64>().ok())
        .unwrap_or(1_000_000);
    let runtime: i64 = rt.parse().ok()?;
    if runtime < 0 || runtime >= period {
        return None;
    }
    Some(finding(
        "rt-throttling",
        Severity::Info,
        format!("RT throttling is on: real-time tasks may use {runtime} µs of every {period} µs, then are stopped"),
        vec![format!("kernel.sched_rt_runtime_us = {runtime}"), format!("kernel.sched_rt_period_us = {period}")],
        Some("for a busy-polling RT task set kernel.sched_rt_runtime_us=-1 (with care: a runaway RT task can then starve the CPU)"),
    ))
}

/// Transparent hugepages `always`: khugepaged and compaction stalls.
pub fn thp_always(h: &Host) -> Option<Finding> {
    let v = h.memory.thp_enabled.as_deref()?;
    if v != "always" {
        return None;
    }
    Some(finding(
        "thp-always",
        Severity::Info,
        "transparent hugepages are `always`: page faults may stall on compaction and khugepaged runs everywhere".into(),
        vec!["/sys/kernel/mm/transparent_hugepage/enabled = [always]".into()],
        Some("set `madvise` or `never` (`lowlat apply`, or transparent_hugepage=never on the command line)"),
    ))
}

/// Running under a hypervisor: the host's own scheduling shows up as latency here.
pub fn hypervisor(h: &Host) -> Option<Finding> {
    let name = h.virtualization.as_ref()?;
    Some(finding(
        "hypervisor",
        Severity::Warn,
        format!("running under a hypervisor ({name}): latency results include the host's noise, which tuning this guest cannot remove"),
        h.virtualization_evidence.clone(),
        Some("measure on bare metal for final numbers, or pin and isolate the vCPUs on the host"),
    ))
}
