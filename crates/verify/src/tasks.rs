//! Task checks: every thread's allowed CPUs against housekeeping (per-CPU kthreads are
//! expected residue, the allowlisted workload and kubepods tasks are the workload), RCU
//! offload threads, kthreadd and PID 1.

use host::Task;

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
            .fix(format!("{apply}; `--allow COMM|PID` names the workload"))
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
    let rcu: Vec<&Task> = tasks
        .iter()
        .filter(|t| {
            t.kthread && ["rcuop/", "rcuos/", "rcuog/"].iter().any(|p| t.comm.starts_with(p))
        })
        .collect();
    out.push(if rcu.is_empty() {
        Check::new(G, "rcu-offload-threads", Status::NotApplicable).ev("no rcuo* threads (rcu_nocbs not in effect)")
    } else {
        let stray: Vec<String> = rcu.iter().filter(|t| on_iso(t, sets)).map(|t| line(t)).collect();
        if stray.is_empty() {
            Check::new(G, "rcu-offload-threads", Status::Pass).ev(format!("{} RCU offload threads on housekeeping", rcu.len()))
        } else {
            Check::new(G, "rcu-offload-threads", Status::Fail)
                .ev(format!("{} RCU offload threads may run on isolated CPUs: their callbacks then interrupt the workload", stray.len()))
                .evs(capped(stray, 8))
                .fix(apply.clone())
        }
    });
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
