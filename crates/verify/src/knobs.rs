//! Knob-with-effect checks: workqueue masks, planned sysctls and files (THP, KSM), governor,
//! C-state limits and their usage on isolated CPUs, hugepages per NUMA node, RT throttling and
//! whether containers can run SCHED_FIFO.

use std::collections::BTreeMap;

use cpuset::CpuSet;
use plan::RuntimeItem;

use crate::model::{Check, Group, Input, Status};
use crate::sets::{capped, Sets};

const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
const KSM: &str = "/sys/kernel/mm/ksm/run";

pub fn checks(inp: &Input<'_>, sets: &Sets) -> Vec<Check> {
    let mut out = vec![workqueues(inp, sets)];
    out.extend(runtime_items(inp, &inp.files));
    out.extend(thp_ksm(inp));
    out.push(sysctl_conf(inp));
    out.push(hugepages(inp));
    out.push(rt_throttling(inp));
    out.push(container_fifo(inp));
    out
}

fn apply_fix(inp: &Input<'_>) -> String {
    format!("`lowlat apply {}`", inp.plan_arg)
}

fn workqueues(inp: &Input<'_>, sets: &Sets) -> Check {
    let wq = &inp.host.workqueues;
    let mut all: Vec<(String, &CpuSet)> = Vec::new();
    if let Some(m) = &wq.cpumask {
        all.push(("/sys/devices/virtual/workqueue/cpumask".into(), m));
    }
    if let Some(m) = &wq.writeback {
        all.push(("/sys/bus/workqueue/devices/writeback/cpumask".into(), m));
    }
    for (name, m) in &wq.per_workqueue {
        all.push((format!("/sys/devices/virtual/workqueue/{name}/cpumask"), m));
    }
    if all.is_empty() {
        return Check::new(Group::Workqueues, "workqueue-masks", Status::NotApplicable)
            .ev("no workqueue cpumask files read");
    }
    let bad: Vec<String> = all
        .iter()
        .filter(|(_, m)| !m.is_disjoint(&sets.iso))
        .map(|(p, m)| format!("{p} = {} includes isolated CPUs", m.to_list()))
        .collect();
    if bad.is_empty() {
        Check::new(Group::Workqueues, "workqueue-masks", Status::Pass).ev(format!(
            "{} unbound workqueue masks on housekeeping CPUs {}",
            all.len(),
            sets.hk.to_list()
        ))
    } else {
        Check::new(Group::Workqueues, "workqueue-masks", Status::Fail)
            .evs(capped(bad, 10))
            .fix(apply_fix(inp))
    }
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn selected(s: &str) -> String {
    s.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .map_or_else(|| norm(s), str::to_string)
}

fn compare(
    group: Group,
    id: String,
    what: &str,
    have: Option<String>,
    want: &str,
    fix: String,
) -> Check {
    match have {
        None => Check::new(group, id, Status::NotApplicable)
            .ev(format!("{what}: not readable on this host")),
        Some(h) if selected(&h) == norm(want) || norm(&h) == norm(want) => {
            Check::new(group, id, Status::Pass).ev(format!("{what} = {}", selected(&h)))
        }
        Some(h) => Check::new(group, id, Status::Fail)
            .ev(format!("{what} = {}, planned {want}", selected(&h)))
            .fix(fix),
    }
}

fn file_value(inp: &Input<'_>, files: &BTreeMap<String, String>, abs: &str) -> Option<String> {
    files.get(abs).cloned().or_else(|| match abs {
        THP => inp.host.memory.thp_enabled.clone(),
        KSM => inp.host.memory.ksm_run.clone(),
        _ => None,
    })
}

fn runtime_items(inp: &Input<'_>, files: &BTreeMap<String, String>) -> Vec<Check> {
    let mut out = Vec::new();
    for item in &inp.plan.runtime {
        match item {
            RuntimeItem::Sysctl { name, value, .. } => {
                let have = inp.host.sysctls.values.get(name).cloned().or_else(|| {
                    files.get(&format!("/proc/sys/{}", name.replace('.', "/"))).cloned()
                });
                out.push(compare(
                    Group::Sysctl,
                    format!("sysctl:{name}"),
                    name,
                    have,
                    value,
                    apply_fix(inp),
                ));
            }
            RuntimeItem::File { path, value, .. } => {
                let abs = format!("/{}", path.trim_start_matches('/'));
                let id = match abs.as_str() {
                    THP => "thp".to_string(),
                    KSM => "ksm".to_string(),
                    _ => format!("file:{abs}"),
                };
                let group = if id == "thp" || id == "ksm" { Group::Memory } else { Group::Files };
                out.push(compare(
                    group,
                    id,
                    &abs,
                    file_value(inp, files, &abs),
                    value,
                    apply_fix(inp),
                ));
            }
            RuntimeItem::Governor { cpus, governor, .. } => {
                out.push(governor_check(inp, cpus, governor))
            }
            RuntimeItem::EnergyPerfBias { cpus, value, .. } => {
                let mut bad = Vec::new();
                let mut seen = 0;
                for cpu in cpus.iter() {
                    let p = format!("/sys/devices/system/cpu/cpu{cpu}/power/energy_perf_bias");
                    if let Some(v) = files.get(&p) {
                        seen += 1;
                        if norm(v) != norm(value) {
                            bad.push(format!("{p} = {}", norm(v)));
                        }
                    }
                }
                out.push(if seen == 0 {
                    Check::new(Group::Power, "energy-perf-bias", Status::NotApplicable)
                        .ev("energy_perf_bias not exposed here")
                } else if bad.is_empty() {
                    Check::new(Group::Power, "energy-perf-bias", Status::Pass)
                        .ev(format!("{seen} CPUs at {value}"))
                } else {
                    Check::new(Group::Power, "energy-perf-bias", Status::Fail)
                        .evs(capped(bad, 8))
                        .fix(apply_fix(inp))
                });
            }
            RuntimeItem::IdleLimit { cpus, max_latency_us, disable_states, .. } => {
                out.extend(idle(inp, cpus, *max_latency_us, *disable_states))
            }
            RuntimeItem::WorkqueueMask { .. } => out.extend(writeback_scope(inp)),
            RuntimeItem::IrqAffinity { .. } | RuntimeItem::KthreadAffinity { .. } => {}
        }
    }
    out
}

/// Planned sysctls that a file under /etc/sysctl.d (or similar) would set back the next time
/// `sysctl --system` runs (boot, package scripts).
fn sysctl_conf(inp: &Input<'_>) -> Check {
    let planned: Vec<(&str, &str)> = inp
        .plan
        .runtime
        .iter()
        .filter_map(|i| match i {
            RuntimeItem::Sysctl { name, value, .. } => Some((name.as_str(), value.as_str())),
            _ => None,
        })
        .collect();
    if planned.is_empty() {
        return Check::new(Group::Sysctl, "sysctl-config-files", Status::NotApplicable)
            .ev("no sysctls planned");
    }
    if inp.sysctl_conf.is_empty() {
        return Check::new(Group::Sysctl, "sysctl-config-files", Status::Pass)
            .ev("no sysctl.d / sysctl.conf entry touches the planned sysctls (or none readable)");
    }
    let norm_key = |k: &str| k.replace('/', ".");
    let clashes: Vec<String> = inp
        .sysctl_conf
        .iter()
        .filter_map(|(file, key, value)| {
            let (name, want) = planned.iter().find(|(n, _)| *n == norm_key(key))?;
            (norm(value) != norm(want))
                .then(|| format!("{file}: {name} = {value} (planned {want})"))
        })
        .collect();
    if clashes.is_empty() {
        Check::new(Group::Sysctl, "sysctl-config-files", Status::Pass)
            .ev("no config file sets a planned sysctl to another value")
    } else {
        Check::new(Group::Sysctl, "sysctl-config-files", Status::Warn)
            .ev("the next `sysctl --system` (every boot, some package scripts) sets these back:")
            .evs(capped(clashes, 8))
            .fix("change or remove those lines, or render the plan's sysctls into /etc/sysctl.d (`lowlat render --plan FILE tuned`)")
    }
}

fn governor_check(inp: &Input<'_>, cpus: &CpuSet, want: &str) -> Check {
    let mut bad = Vec::new();
    let mut seen = 0;
    for p in inp.host.power.cpus.iter().filter(|p| cpus.contains(p.cpu)) {
        if let Some(g) = &p.governor {
            seen += 1;
            if g != want {
                bad.push(format!("cpu{} scaling_governor = {g}", p.cpu));
            }
        }
    }
    if seen == 0 {
        Check::new(Group::Power, "governor", Status::NotApplicable)
            .ev("no cpufreq governor exposed (VM or no driver)")
    } else if bad.is_empty() {
        Check::new(Group::Power, "governor", Status::Pass).ev(format!("{seen} CPUs use {want}"))
    } else {
        Check::new(Group::Power, "governor", Status::Fail)
            .ev(format!("planned {want}"))
            .evs(capped(bad, 8))
            .fix(apply_fix(inp))
    }
}

/// The writeback workqueue's pool scope, planned with the workqueue masks: one pool over the
/// cpumask (`numa` = 0 before Linux 6.6, `affinity_scope` = `system` since).
fn writeback_scope(inp: &Input<'_>) -> Option<Check> {
    let wq = &inp.host.workqueues;
    let dir = "/sys/bus/workqueue/devices/writeback";
    let (path, have, ok) = if let Some(v) = &wq.writeback_numa {
        (format!("{dir}/numa"), v.clone(), v.trim() == "0")
    } else if let Some(v) = &wq.writeback_affinity_scope {
        (format!("{dir}/affinity_scope"), v.clone(), v.split_whitespace().next() == Some("system"))
    } else {
        return Some(
            Check::new(Group::Workqueues, "writeback-scope", Status::NotApplicable)
                .ev("neither writeback/numa nor writeback/affinity_scope read"),
        );
    };
    let mask = wq.writeback.as_ref().map_or_else(|| "unknown".to_string(), CpuSet::to_list);
    Some(if ok {
        Check::new(Group::Workqueues, "writeback-scope", Status::Pass)
            .ev(format!("{path} = {have}: one writeback pool on cpumask {mask}"))
    } else {
        Check::new(Group::Workqueues, "writeback-scope", Status::Fail)
            .ev(format!(
                "{path} = {have}, planned {}: writeback workers are pooled per NUMA node or cache (cpumask {mask})",
                if path.ends_with("numa") { "0" } else { "system" }
            ))
            .fix(apply_fix(inp))
    })
}

fn idle(inp: &Input<'_>, cpus: &CpuSet, max_us: u64, disable_states: bool) -> Vec<Check> {
    let mut bad = Vec::new();
    let mut ok = 0usize;
    let want_qos = if max_us == 0 { "n/a".to_string() } else { max_us.to_string() };
    for p in inp.host.power.cpus.iter().filter(|p| cpus.contains(p.cpu)) {
        let deep: Vec<_> = tune::changes::deeper_states(&p.idle_states, max_us).collect();
        let qos_ok =
            p.pm_qos_resume_latency_us.as_deref().map(str::trim) == Some(want_qos.as_str());
        let disabled_ok = !deep.is_empty() && deep.iter().all(|s| s.disabled == Some(true));
        let no_deep = deep.is_empty() && !p.idle_states.is_empty();
        // A chosen limit disables the deeper states as well as holding PM QoS.
        let holds = if disable_states && !p.idle_states.is_empty() {
            disabled_ok || no_deep
        } else {
            qos_ok || disabled_ok || no_deep
        };
        if holds {
            ok += 1;
        } else {
            let enabled: Vec<_> =
                deep.iter().filter(|s| s.disabled != Some(true)).map(|s| s.name.as_str()).collect();
            bad.push(format!(
                "cpu{}: pm_qos_resume_latency_us = {}, deeper states enabled: {}",
                p.cpu,
                p.pm_qos_resume_latency_us.as_deref().unwrap_or("?"),
                enabled.join(" ")
            ));
        }
    }
    let how = if disable_states { "deeper states disabled" } else { "PM QoS or disabled states" };
    let mut out = vec![if ok == 0 && bad.is_empty() {
        Check::new(Group::Power, "idle-limit", Status::NotApplicable).ev("no cpuidle / PM QoS data")
    } else if bad.is_empty() {
        Check::new(Group::Power, "idle-limit", Status::Pass)
            .ev(format!("{ok} CPUs limited to exit latency <= {max_us} µs ({how})"))
    } else {
        Check::new(Group::Power, "idle-limit", Status::Fail).evs(capped(bad, 8)).fix(apply_fix(inp))
    }];
    out.push(match inp.window.as_ref().filter(|_| inp.live) {
        Some(w) => cstate_usage(inp, w, cpus, max_us),
        None => Check::new(Group::Power, "cstate-usage", Status::NotApplicable)
            .ev("needs the live host (usage deltas over a window)"),
    });
    out
}

/// One idle state's share of a window on one CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Residency {
    pub name: String,
    /// Time in the state over the window, in percent of the window.
    pub percent: f64,
    /// Times entered during the window.
    pub entered: u64,
    /// Exit latency above the limit: the state should not be used.
    pub deeper: bool,
}

/// Per CPU of `cpus`, each idle state's residency over the window (from the `time` and
/// `usage` counters before and after), in state order. CPUs or states without both readings
/// are left out.
pub fn residency(
    before: &[host::CpuPower],
    after: &[host::CpuPower],
    window: std::time::Duration,
    cpus: &CpuSet,
    max_us: u64,
) -> Vec<(usize, Vec<Residency>)> {
    let window_us = window.as_micros().max(1) as f64;
    let mut out = Vec::new();
    for a in after.iter().filter(|p| cpus.contains(p.cpu)) {
        let Some(b) = before.iter().find(|p| p.cpu == a.cpu) else { continue };
        let states: Vec<Residency> = a
            .idle_states
            .iter()
            .filter_map(|st| {
                let was = b.idle_states.iter().find(|s| s.index == st.index)?;
                let time = st.time_us?.saturating_sub(was.time_us?);
                Some(Residency {
                    name: st.name.clone(),
                    percent: (time as f64 * 100.0 / window_us).min(100.0),
                    entered: st.usage.unwrap_or(0).saturating_sub(was.usage.unwrap_or(0)),
                    deeper: st.exit_latency_us.is_some_and(|l| l > max_us),
                })
            })
            .collect();
        if !states.is_empty() {
            out.push((a.cpu, states));
        }
    }
    out
}

/// The effect of an idle limit over the window: residency per state on each limited CPU, and
/// whether any state deeper than the limit was entered.
fn cstate_usage(inp: &Input<'_>, w: &crate::model::Window, cpus: &CpuSet, max_us: u64) -> Check {
    let per_cpu = residency(&w.idle_before, &w.idle_after, w.duration, cpus, max_us);
    if per_cpu.is_empty() {
        return Check::new(Group::Power, "cstate-usage", Status::NotApplicable)
            .ev("no cpuidle time/usage counters on the limited CPUs");
    }
    let secs = w.duration.as_secs_f64();
    let line = |cpu: usize, states: &[Residency]| {
        let parts: Vec<String> = states
            .iter()
            .map(|s| {
                format!("{} {:.1}%{}", s.name, s.percent, if s.deeper { " (deeper)" } else { "" })
            })
            .collect();
        format!("cpu{cpu}: {}", parts.join(", "))
    };
    let entered: Vec<String> = per_cpu
        .iter()
        .flat_map(|(cpu, states)| {
            states.iter().filter(|s| s.deeper && s.entered > 0).map(move |s| {
                format!(
                    "cpu{cpu} entered {} {} times ({:.1}% of {secs:.1} s) despite the {max_us} µs limit",
                    s.name, s.entered, s.percent
                )
            })
        })
        .collect();
    let table: Vec<String> = per_cpu.iter().map(|(c, s)| line(*c, s)).collect();
    if entered.is_empty() {
        Check::new(Group::Power, "cstate-usage", Status::Pass)
            .ev(format!(
                "no idle state deeper than {max_us} µs entered on {} in {secs:.1} s; residency per state:",
                cpus.to_list()
            ))
            .evs(capped(table, 8))
    } else {
        Check::new(Group::Power, "cstate-usage", Status::Fail)
            .evs(capped(entered, 8))
            .ev("residency per state:")
            .evs(capped(table, 8))
            .fix(apply_fix(inp))
    }
}

fn thp_ksm(inp: &Input<'_>) -> Vec<Check> {
    let planned = |p: &str| {
        inp.plan.runtime.iter().any(|i| matches!(i, RuntimeItem::File { path, .. } if path.trim_start_matches('/') == p.trim_start_matches('/')))
    };
    let mut out = Vec::new();
    if !planned(THP) {
        let v = inp.host.memory.thp_enabled.clone().unwrap_or_else(|| "unknown".into());
        out.push(
            Check::new(Group::Memory, "thp", Status::NotApplicable)
                .ev(format!("not planned; transparent_hugepage/enabled = {v}")),
        );
    }
    if !planned(KSM) {
        let v = inp.host.memory.ksm_run.clone().unwrap_or_else(|| "unknown".into());
        let status = if v == "1" { Status::Warn } else { Status::NotApplicable };
        out.push(
            Check::new(Group::Memory, "ksm", status)
                .ev(format!("not planned; ksm/run = {v}"))
                .fix("KSM scans memory on every CPU: plan `ksm/run=2` (lowlat plan) and apply"),
        );
    }
    out
}

fn size_kb(size: &str) -> Option<u64> {
    let s = size.trim().to_ascii_uppercase();
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1),
        'M' => (&s[..s.len() - 1], 1024),
        'G' => (&s[..s.len() - 1], 1024 * 1024),
        _ => (s.as_str(), 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

fn hugepages(inp: &Input<'_>) -> Check {
    let reqs = &inp.plan.options.hugepages;
    if reqs.is_empty() {
        return Check::new(Group::Memory, "hugepages", Status::NotApplicable)
            .ev("no hugepages planned");
    }
    let mut bad = Vec::new();
    let mut ev = Vec::new();
    for r in reqs {
        let Some(kb) = size_kb(&r.size) else {
            bad.push(format!("{}: unknown page size", r.size));
            continue;
        };
        let have = match r.node {
            Some(n) => inp
                .host
                .numa_nodes
                .iter()
                .find(|x| x.id == n)
                .and_then(|x| x.hugepages.get(&kb))
                .map(|h| h.total),
            None => inp.host.memory.hugepages.get(&kb).map(|h| h.total),
        };
        let place = r.node.map_or("system-wide".to_string(), |n| format!("node {n}"));
        match have {
            Some(h) if h >= r.count => {
                ev.push(format!("{} x{} {place}: {h} allocated", r.size, r.count))
            }
            Some(h) => bad.push(format!("{} x{} {place}: only {h} allocated", r.size, r.count)),
            None => bad.push(format!("{} x{} {place}: none of that size", r.size, r.count)),
        }
    }
    if bad.is_empty() {
        Check::new(Group::Memory, "hugepages", Status::Pass).evs(ev)
    } else {
        Check::new(Group::Memory, "hugepages", Status::Fail)
            .evs(bad)
            .evs(ev)
            .fix(format!("`lowlat render {} cmdline` adds hugepagesz=/hugepages= (per-node: the OpenShift profile); reboot", inp.plan_arg))
    }
}

fn rt_throttling(inp: &Input<'_>) -> Check {
    let Some(v) = inp.host.sysctls.values.get("kernel.sched_rt_runtime_us") else {
        return Check::new(Group::Rt, "rt-throttling", Status::NotApplicable)
            .ev("kernel.sched_rt_runtime_us not read");
    };
    let rt = inp.host.kernel.realtime == Some(true);
    let ev = format!("kernel.sched_rt_runtime_us = {v}");
    match (v.trim() == "-1", rt, inp.plan.options.rt_kernel) {
        (true, false, _) => Check::new(Group::Rt, "rt-throttling", Status::Warn)
            .ev(ev)
            .ev("RT throttling is off on a non-RT kernel: a runaway SCHED_FIFO task can starve kthreads and hang the CPU")
            .fix("keep sched_rt_runtime_us=950000 unless the kernel is PREEMPT_RT (and run stalld)"),
        (false, _, true) => Check::new(Group::Rt, "rt-throttling", Status::Warn)
            .ev(ev)
            .ev("RT throttling is on: a busy-polling FIFO workload is paused for 50 ms each second")
            .fix(format!("plan kernel.sched_rt_runtime_us=-1 with the RT kernel and apply (`lowlat apply {}`)", inp.plan_arg)),
        _ => Check::new(Group::Rt, "rt-throttling", Status::Pass).ev(ev),
    }
}

fn container_fifo(inp: &Input<'_>) -> Check {
    use host::rt::Tree;
    const ID: &str = "container-sched-fifo";
    let rt = &inp.rt;
    let group = rt.rt_group_sched_evidence.clone().unwrap_or_else(|| {
        "RT group scheduling unknown (no /proc/config.gz or /boot/config-<release>)".into()
    });
    let runtime = rt.sched_rt_runtime_us.map(|v| format!("kernel.sched_rt_runtime_us = {v}"));
    if rt.rt_group_sched == Some(false) {
        return Check::new(Group::Rt, ID, Status::Pass)
            .ev(group)
            .ev("no RT group scheduling: containers need only CAP_SYS_NICE");
    }
    if !rt.budgets_enforced() {
        return Check::new(Group::Rt, ID, Status::Pass)
            .evs(runtime)
            .ev("RT bandwidth is off: the kernel does not check cgroup RT budgets; containers need only CAP_SYS_NICE");
    }
    match &rt.tree {
        Tree::Unknown => Check::new(Group::Rt, ID, Status::NotApplicable)
            .ev("no cgroup hierarchy with the cpu controller in /proc/mounts"),
        Tree::V1 { mount, containers } => {
            let zero: Vec<String> = containers
                .iter()
                .filter_map(|c| {
                    let z = c.first_zero()?;
                    let parent = c.chain.iter().take_while(|l| l.rt_runtime_us != Some(0)).last();
                    Some(format!(
                        "{}: {} = 0{}",
                        c.path,
                        z.file,
                        parent
                            .and_then(|p| p
                                .rt_runtime_us
                                .map(|v| format!(" (parent {} = {v})", p.file)))
                            .unwrap_or_default()
                    ))
                })
                .collect();
            if containers.is_empty() {
                let root = format!("{mount}/cpu.rt_runtime_us");
                return Check::new(Group::Rt, ID, Status::Pass)
                    .ev(format!("no container cgroups under {mount} (root budget in {root})"));
            }
            if zero.is_empty() {
                let ok: Vec<String> = containers
                    .iter()
                    .map(|c| {
                        let v: Vec<String> = c
                            .chain
                            .iter()
                            .map(|l| l.rt_runtime_us.map_or("?".into(), |v| v.to_string()))
                            .collect();
                        format!("{}: cpu.rt_runtime_us root→leaf {}", c.path, v.join(" → "))
                    })
                    .collect();
                Check::new(Group::Rt, ID, Status::Pass).evs(capped(ok, 8))
            } else {
                Check::new(Group::Rt, ID, Status::Fail)
                    .ev(format!(
                        "{} of {} container cgroups have cpu.rt_runtime_us = 0 on their chain: sched_setscheduler(SCHED_FIFO) fails with EPERM inside them",
                        zero.len(),
                        containers.len()
                    ))
                    .evs(capped(zero, 8))
                    .fix("give every level of the chain an RT budget, parent first (e.g. echo 950000 > …/system.slice/cpu.rt_runtime_us, then the container's scope; docker run --cpu-rt-runtime=…)")
            }
        }
        Tree::V2 { mount, containers } => {
            let status = if rt.rt_group_sched.is_none() {
                return Check::new(Group::Rt, ID, Status::NotApplicable)
                    .ev(group)
                    .ev(format!("cgroup v2 at {mount}: whether non-root cgroups may run SCHED_FIFO depends on CONFIG_RT_GROUP_SCHED"));
            } else if containers.is_empty() {
                Status::Warn
            } else {
                Status::Fail
            };
            let names: Vec<String> =
                containers.iter().map(|c| format!("{c}: no RT budget (cgroup v2)")).collect();
            Check::new(Group::Rt, ID, status)
                .ev(group)
                .evs(runtime)
                .ev(format!("cgroup v2 at {mount} with RT group scheduling: no task outside the root cgroup can get SCHED_FIFO (EPERM), containers and services alike"))
                .evs(capped(names, 8))
                .fix("boot with rt_group_sched=0 (kernel 6.16+) or a kernel without CONFIG_RT_GROUP_SCHED; or run the RT task from the root cgroup")
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes() {
        assert_eq!(super::size_kb("2M"), Some(2048));
        assert_eq!(super::size_kb("1G"), Some(1_048_576));
        assert_eq!(super::size_kb("x"), None);
    }
}
