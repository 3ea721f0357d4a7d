//! Task checks: every thread's allowed CPUs against housekeeping (per-CPU kthreads are
//! expected residue, the allowlisted workload and kubepods tasks are the workload), RCU
//! offload threads, kthreadd and PID 1.

use cpuset::CpuSet;
use host::Task;

use crate::boot;
use crate::model::{Allow, Check, Group, Input, Status};
use crate::sets::{capped, Sets};

const G: Group = Group::Tasks;

fn line(t: &Task) -> String {
    let aff = t.allowed_cpus.as_ref().map_or("?".into(), |a| a.to_list());
    if t.pid == t.tid {
        format!("pid {} ({}) allowed {aff}", t.pid, t.comm)
    } else {
        format!("pid {} tid {} ({}) allowed {aff}", t.pid, t.tid, t.comm)
    }
}

fn allowlisted(t: &Task, allow: &[Allow]) -> bool {
    allow.iter().any(|a| a.matches(t))
}

fn on_iso(t: &Task, sets: &Sets) -> bool {
    t.allowed_cpus.as_ref().is_some_and(|a| !a.is_disjoint(&sets.iso))
}

pub fn checks(inp: &Input<'_>, sets: &Sets) -> Vec<Check> {
    let Some(tasks) = &inp.host.tasks else {
        return ["task-affinity", "rcu-offload-threads", "kthreadd-affinity", "pid1-affinity"]
            .iter()
            .map(|id| {
                Check::new(G, *id, Status::NotApplicable)
                    .ev("the task list is not available (snapshot or must-gather)")
            })
            .collect();
    };
    let apply = format!(
        "`lowlat apply {}` moves movable kthreads; `--move-tasks` moves user tasks",
        inp.plan_arg
    );
    let (mut bad, mut per_cpu, mut workload) = (Vec::new(), Vec::new(), Vec::new());
    for t in tasks.iter().filter(|t| on_iso(t, sets)) {
        if t.irq_thread().is_some() {
            continue; // judged with its IRQ (`irq-threads`)
        }
        if t.per_cpu_kthread {
            per_cpu.push(line(t));
        } else if allowlisted(t, &inp.allow)
            || t.cgroup.as_deref().is_some_and(|c| c.contains("kubepods"))
        {
            workload.push(line(t));
        } else {
            bad.push(line(t));
        }
    }
    let mut out = Vec::new();
    // User tasks on isolated CPUs: the plan's systemd.cpu_affinity= would have started them
    // on housekeeping, so say so when the running kernel was booted without it.
    let users_bad = tasks.iter().any(|t| {
        on_iso(t, sets)
            && !t.kthread
            && !t.per_cpu_kthread
            && !allowlisted(t, &inp.allow)
            && !t.cgroup.as_deref().is_some_and(|c| c.contains("kubepods"))
    });
    let boot_hint = if users_bad
        && inp.plan.kernel_args.iter().any(|a| a.key == "systemd.cpu_affinity")
        && boot::arg_state(inp, "systemd.cpu_affinity") != boot::ArgState::Running
    {
        format!(
            "; booted with the plan's systemd.cpu_affinity= every service starts on housekeeping CPUs ({})",
            boot::render_fix(inp)
        )
    } else {
        String::new()
    };
    out.push(if bad.is_empty() {
        Check::new(G, "task-affinity", Status::Pass).ev(format!(
            "all {} movable threads are confined to housekeeping CPUs {}",
            tasks.len() - per_cpu.len() - workload.len(),
            sets.hk.to_list()
        ))
    } else {
        Check::new(G, "task-affinity", Status::Fail)
            .ev(format!("{} threads may run on isolated CPUs {}", bad.len(), sets.iso.to_list()))
            .evs(capped(bad, 12))
            .fix(format!("{apply}; `--allow COMM|PID` names the workload{boot_hint}"))
    });
    if !per_cpu.is_empty() {
        out.push(
            Check::new(G, "task-per-cpu-kthreads", Status::ExpectedResidue)
                .ev(format!(
                    "{} per-CPU kthreads (PF_NO_SETAFFINITY) are bound to isolated CPUs by design",
                    per_cpu.len()
                ))
                .evs(capped(per_cpu, 6)),
        );
    }
    if !workload.is_empty() {
        out.push(
            Check::new(G, "task-workload", Status::ExpectedResidue)
                .ev(format!(
                    "{} workload threads (allowlist or kubepods) use isolated CPUs",
                    workload.len()
                ))
                .evs(capped(workload, 6)),
        );
    }
    out.push(rcu_offload(inp, tasks, sets, &apply));
    out.push(irq_threads(inp, tasks, sets));
    out.push(single(
        tasks,
        2,
        "kthreadd-affinity",
        "new unbound kthreads inherit kthreadd's mask",
        &apply,
        sets,
    ));
    out.push(single(
        tasks,
        1,
        "pid1-affinity",
        "services inherit PID 1's mask",
        &format!("`lowlat render {} systemd` (CPUAffinity= drop-in or systemd.cpu_affinity=), then reboot; `lowlat apply --move-tasks` for now", inp.plan_arg),
        sets,
    ));
    out
}

/// Threaded IRQ handlers (`irq/N-name`; every handler on PREEMPT_RT) go where the kernel
/// routes their IRQ: on an isolated CPU they are residue of a managed IRQ there, a move still
/// pending (the IRQ now routes to housekeeping; the thread follows after its next interrupt),
/// or a failure of the IRQ's own routing, fixed by moving the IRQ.
fn irq_threads(inp: &Input<'_>, tasks: &[Task], sets: &Sets) -> Check {
    let id = "irq-threads";
    let threads: Vec<(&Task, u32)> =
        tasks.iter().filter_map(|t| t.irq_thread().map(|n| (t, n))).collect();
    if threads.is_empty() {
        return Check::new(G, id, Status::NotApplicable).ev("no threaded IRQ handlers (irq/N-…)");
    }
    let (mut managed, mut pending, mut bad) = (Vec::new(), Vec::new(), Vec::new());
    for (t, n) in threads.iter().filter(|(t, _)| on_iso(t, sets)) {
        let irq = inp.host.irqs.iter().find(|i| i.irq == *n);
        let eff = irq.and_then(|i| i.effective_affinity.as_ref().or(i.affinity.as_ref()));
        let configured = irq.and_then(|i| i.affinity.as_ref());
        if irq.is_some_and(|i| i.managed == Some(true)) {
            managed.push(format!("{} (managed IRQ {n})", line(t)));
        } else if configured.is_some_and(|c| !c.is_empty() && c.is_subset(&sets.hk)) {
            // The IRQ is configured for housekeeping: it moves (and its thread after it) when
            // it next fires, as `irq-move-pending` says for the IRQ.
            pending.push(format!(
                "{} (IRQ {n} configured for {})",
                line(t),
                configured.map(|e| e.to_list()).unwrap_or_default()
            ));
        } else {
            let at = eff.map_or("unknown CPUs".to_string(), |e| format!("CPUs {}", e.to_list()));
            bad.push(format!("{} (IRQ {n} routes to {at})", line(t)));
        }
    }
    let on_hk = threads.len() - managed.len() - pending.len() - bad.len();
    if !bad.is_empty() {
        return Check::new(G, id, Status::Fail)
            .ev(format!(
                "{} threaded IRQ handlers run on isolated CPUs because their IRQs are routed there",
                bad.len()
            ))
            .evs(capped(bad, 8))
            .fix(format!(
                "`lowlat apply {}` moves the IRQs; each handler thread follows its IRQ",
                inp.plan_arg
            ));
    }
    if !pending.is_empty() {
        return Check::new(G, id, Status::Warn)
            .ev(format!("{} threaded IRQ handlers still allow isolated CPUs: their IRQs are configured for housekeeping and the kernel moves each IRQ, and its thread, when it next fires", pending.len()))
            .evs(capped(pending, 8))
            .fix("nothing to run: the move completes on the next interrupt");
    }
    if !managed.is_empty() {
        return Check::new(G, id, Status::ExpectedResidue)
            .ev(format!("{} threaded IRQ handlers of managed IRQs sit with their IRQ on isolated CPUs ({on_hk} on housekeeping)", managed.len()))
            .evs(capped(managed, 8));
    }
    Check::new(G, id, Status::Pass).ev(format!(
        "all {} threaded IRQ handlers run on housekeeping CPUs {}",
        threads.len(),
        sets.hk.to_list()
    ))
}

/// RCU callback offloading: with `rcu_nocbs=` planned, every planned CPU has its offload
/// thread (`rcuop/N`, `rcuos/N` on older kernels) — the effect of the boot argument — and
/// the offload threads (with their grace-period threads `rcuog/N`) run on housekeeping CPUs.
fn rcu_offload(inp: &Input<'_>, tasks: &[Task], sets: &Sets, apply: &str) -> Check {
    let rcu: Vec<&Task> = tasks
        .iter()
        .filter(|t| {
            t.kthread && ["rcuop/", "rcuos/", "rcuog/"].iter().any(|p| t.comm.starts_with(p))
        })
        .collect();
    let offloaded: CpuSet = rcu
        .iter()
        .filter_map(|t| {
            let n = t.comm.strip_prefix("rcuop/").or_else(|| t.comm.strip_prefix("rcuos/"))?;
            n.parse().ok()
        })
        .collect();
    let planned = inp.plan.kernel_args.iter().find(|a| a.key == "rcu_nocbs");
    if let Some(arg) = planned {
        // `rcu_nocbs` without a value offloads every CPU (kernels 5.17 and later).
        let want = match arg.value.as_deref() {
            Some(v) => CpuSet::parse_list(v).unwrap_or_else(|_| sets.iso.clone()),
            None => inp.host.online_cpus(),
        };
        let missing = want.difference(&offloaded);
        if !missing.is_empty() {
            let ev = format!(
                "planned rcu_nocbs={} but CPUs {} have no RCU offload thread (rcuop/N): their RCU callbacks run on them, in softirq or rcuc context",
                want.to_list(),
                missing.to_list()
            );
            return match boot::arg_state(inp, "rcu_nocbs") {
                boot::ArgState::Running => Check::new(G, "rcu-offload-threads", Status::Fail)
                    .ev(ev)
                    .ev("the running command line carries rcu_nocbs=")
                    .fix("boot a kernel built with CONFIG_RCU_NOCB_CPU=y (distribution and RT kernels have it); check dmesg for 'Offload RCU callbacks'"),
                boot::ArgState::Staged => Check::new(G, "rcu-offload-threads", Status::PendingReboot)
                    .ev(ev)
                    .ev("the boot loader has the planned rcu_nocbs=")
                    .fix("reboot"),
                boot::ArgState::Absent => Check::new(G, "rcu-offload-threads", Status::Fail)
                    .ev(ev)
                    .ev("the running command line does not carry the planned rcu_nocbs=")
                    .fix(boot::render_fix(inp)),
            };
        }
    }
    if rcu.is_empty() {
        return Check::new(G, "rcu-offload-threads", Status::NotApplicable)
            .ev("rcu_nocbs is not planned and no RCU offload threads run");
    }
    let stray: Vec<String> = rcu.iter().filter(|t| on_iso(t, sets)).map(|t| line(t)).collect();
    if stray.is_empty() {
        let of = if offloaded.is_empty() {
            String::new()
        } else {
            format!(" (offload threads for CPUs {})", offloaded.to_list())
        };
        Check::new(G, "rcu-offload-threads", Status::Pass)
            .ev(format!("{} RCU offload threads on housekeeping{of}", rcu.len()))
    } else {
        Check::new(G, "rcu-offload-threads", Status::Fail)
            .ev(format!("{} RCU offload threads may run on isolated CPUs: their callbacks then interrupt the workload", stray.len()))
            .evs(capped(stray, 8))
            .fix(apply.to_string())
    }
}

fn single(tasks: &[Task], pid: u32, id: &str, why: &str, fix: &str, sets: &Sets) -> Check {
    match tasks.iter().find(|t| t.pid == pid && t.tid == pid) {
        None => {
            Check::new(G, id, Status::NotApplicable).ev(format!("pid {pid} not in the task list"))
        }
        Some(t) if t.allowed_cpus.is_none() => {
            Check::new(G, id, Status::NotApplicable).ev(format!("pid {pid}: affinity unknown"))
        }
        Some(t) if on_iso(t, sets) => {
            Check::new(G, id, Status::Fail).ev(format!("{}: {why}", line(t))).fix(fix)
        }
        Some(t) => Check::new(G, id, Status::Pass).ev(line(t)),
    }
}
