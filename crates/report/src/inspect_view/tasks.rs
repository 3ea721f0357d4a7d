//! What runs where: threads per CPU, by kind and scheduling policy.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use host::{Host, Task};

use crate::term::{Paint, Style, Table};

/// Kind of a task for the "what runs where" view.
pub(super) fn kind(t: &Task) -> &'static str {
    if t.per_cpu_kthread && t.allowed_cpus.as_ref().is_some_and(|a| a.len() > 1) {
        // PF_NO_SETAFFINITY but not bound: unbound workqueue workers follow the wq cpumask.
        "unbound kworker"
    } else if t.per_cpu_kthread {
        "per-cpu kthread"
    } else if t.kthread {
        "kthread"
    } else {
        "user"
    }
}

pub(super) fn rt(t: &Task) -> bool {
    t.policy == "FF" || t.policy == "RR" || t.policy == "DLN"
}

pub(super) fn tasks(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("What runs where"));
    let Some(tasks) = &h.tasks else {
        let _ = writeln!(
            out,
            "  tasks not captured in this source (must-gathers hold no /proc/<pid>)\n"
        );
        return;
    };
    let iso = h.isolated_cpus();
    let _ = writeln!(out, "  {}", st.paint(Paint::Dim, "RAN = threads whose last CPU (stat field 39) is this one; ALLOWED = movable threads whose affinity includes it"));
    let mut t = Table::new(&[
        "CPU",
        "RAN",
        "PER-CPU KTH",
        "MOVABLE KTH",
        "USER",
        "ALLOWED KTH",
        "ALLOWED USER",
        "RT THREADS",
    ])
    .right(&[0, 1, 2, 3, 4, 5, 6]);
    // One pass over the tasks (not one per CPU): linear in tasks × allowed CPUs.
    #[derive(Default)]
    struct PerCpu<'a> {
        ran: usize,
        per_cpu: usize,
        movable_kth: usize,
        user: usize,
        allowed_kth: usize,
        allowed_user: usize,
        rt: Vec<&'a Task>,
    }
    let mut per: BTreeMap<usize, PerCpu> = BTreeMap::new();
    for x in tasks {
        if let Some(c) = x.cpu {
            let e = per.entry(c).or_default();
            e.ran += 1;
            match kind(x) {
                "per-cpu kthread" => e.per_cpu += 1,
                "user" => e.user += 1,
                _ => e.movable_kth += 1,
            }
            if rt(x) {
                e.rt.push(x);
            }
        }
        if !x.per_cpu_kthread {
            for c in x.allowed_cpus.iter().flat_map(|a| a.iter()) {
                let e = per.entry(c).or_default();
                if x.kthread {
                    e.allowed_kth += 1;
                } else {
                    e.allowed_user += 1;
                }
            }
        }
    }
    for cpu in h.online_cpus().iter() {
        let e = per.remove(&cpu).unwrap_or_default();
        // RT threads that last ran here: how many, and the highest-priority one.
        let mut rts = e.rt;
        rts.sort_by_key(|x| (std::cmp::Reverse(x.rt_priority), x.pid, x.tid));
        let rts_s = match rts.first() {
            Some(top) => {
                format!("{} (top: {} {}{})", rts.len(), top.comm, top.policy, top.rt_priority)
            }
            None => "0".into(),
        };
        let (ak, au) = (e.allowed_kth, e.allowed_user);
        let flag = |n: usize| {
            if iso.contains(cpu) && n > 0 {
                st.paint(Paint::Yellow, &n.to_string())
            } else {
                n.to_string()
            }
        };
        t.row(vec![
            if iso.contains(cpu) {
                st.paint(Paint::Cyan, &format!("{cpu}*"))
            } else {
                cpu.to_string()
            },
            e.ran.to_string(),
            e.per_cpu.to_string(),
            e.movable_kth.to_string(),
            e.user.to_string(),
            flag(ak),
            flag(au),
            rts_s,
        ]);
    }
    out.push_str(&t.render(st, 2));
    let _ = writeln!(
        out,
        "  {}",
        st.paint(
            Paint::Dim,
            "`lowlat inspect --cpu N` lists every thread that ran or may run on CPU N"
        )
    );
    out.push('\n');
}
