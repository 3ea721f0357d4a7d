//! One CPU in focus: its core, IRQs, tasks and power state.

use std::fmt::Write as _;

use host::{Host, Task};

use super::fmt::{kv, opt, set_or};
use super::irqs::cpu_irqs;
use super::tasks::{kind, rt};
use crate::term::{truncate, Paint, Style, Table};

pub(super) fn focus(out: &mut String, h: &Host, cpu: usize, st: &Style) {
    let _ = writeln!(out, "{}", st.heading(&format!("CPU {cpu}")));
    let Some(topo) = h.cpu(cpu) else {
        let _ = writeln!(
            out,
            "  CPU {cpu} does not exist on this host (online: {})\n",
            h.online_cpus()
        );
        return;
    };
    let iso = h.isolated_cpus();
    kv(
        out,
        st,
        "place",
        &format!(
            "node {}, package {}, core {}, siblings {}",
            opt(&topo.numa_node),
            opt(&topo.package),
            opt(&topo.core),
            topo.siblings
        ),
    );
    kv(out, st, "role", if iso.contains(cpu) { "isolated" } else { "housekeeping" });
    if let Some(p) = h.power.cpus.iter().find(|p| p.cpu == cpu) {
        let states: Vec<String> = p
            .idle_states
            .iter()
            .map(|s| {
                format!(
                    "{}({}µs{})",
                    s.name,
                    s.exit_latency_us.map_or("?".into(), |l| l.to_string()),
                    if s.disabled == Some(true) { ", off" } else { "" }
                )
            })
            .collect();
        kv(
            out,
            st,
            "power",
            &format!(
                "governor {}, pm_qos {}, C-states {}",
                opt(&p.governor),
                opt(&p.pm_qos_resume_latency_us),
                if states.is_empty() { "unknown".into() } else { states.join(" ") }
            ),
        );
    }
    let c = cpu_irqs(h, cpu);
    let named: Vec<String> = c.named.iter().map(|(k, v)| format!("{k} {v}")).collect();
    kv(
        out,
        st,
        "interrupts",
        &format!(
            "{} device IRQs may target it, {} effectively do, {} device interrupts; {}",
            c.allowed,
            c.effective,
            c.device_count,
            named.join(", ")
        ),
    );
    let mut t = Table::new(&["IRQ", "COUNT HERE", "AFFINITY", "EFFECTIVE", "NAME"]).right(&[0, 1]);
    for irq in h.irqs.iter().filter(|i| {
        i.affinity.as_ref().is_some_and(|a| a.contains(cpu))
            || i.counts.get(cpu).is_some_and(|n| *n > 0)
    }) {
        t.row(vec![
            irq.irq.to_string(),
            irq.counts.get(cpu).copied().unwrap_or(0).to_string(),
            set_or(&irq.affinity, "?"),
            set_or(&irq.effective_affinity, "?"),
            irq.name.clone().unwrap_or_default(),
        ]);
    }
    if !t.is_empty() {
        out.push_str(&t.render(st, 2));
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{}",
        st.heading(&format!(
            "Threads on CPU {cpu} (ps -eTo psr,pid,tid,policy,rtprio,cmd, answered)"
        ))
    );
    let Some(tasks) = &h.tasks else {
        let _ = writeln!(out, "  tasks not captured in this source\n");
        return;
    };
    let mut rows: Vec<&Task> = tasks
        .iter()
        .filter(|t| {
            t.cpu == Some(cpu)
                || (!t.per_cpu_kthread && t.allowed_cpus.as_ref().is_some_and(|a| a.contains(cpu)))
                || (t.per_cpu_kthread
                    && t.allowed_cpus.as_ref().is_some_and(|a| a.len() == 1 && a.contains(cpu)))
        })
        .collect();
    rows.sort_by_key(|t| (!t.kthread, !t.per_cpu_kthread, t.pid, t.tid));
    let mut tb = Table::new(&["PSR", "PID", "TID", "POL", "RTPRIO", "KIND", "ALLOWED", "CMD"])
        .right(&[0, 1, 2, 4]);
    for t in rows {
        let cmd = match (&t.cmdline, t.kthread) {
            (_, true) => format!("[{}]", t.comm),
            (Some(c), false) => c.clone(),
            (None, false) => t.comm.clone(),
        };
        let psr = t.cpu.map_or("?".into(), |c| c.to_string());
        let movable_here = !t.per_cpu_kthread && iso.contains(cpu);
        tb.row(vec![
            if t.cpu == Some(cpu) { psr } else { st.paint(Paint::Dim, &psr) },
            t.pid.to_string(),
            t.tid.to_string(),
            t.policy.clone(),
            if rt(t) { t.rt_priority.to_string() } else { "-".into() },
            if movable_here { st.paint(Paint::Yellow, kind(t)) } else { kind(t).to_string() },
            set_or(&t.allowed_cpus, "?"),
            truncate(&cmd, 200),
        ]);
    }
    out.push_str(&tb.render(st, 2));
    let _ = writeln!(out, "  {}", st.paint(Paint::Dim, "PSR is the last CPU the thread ran on; rows with another PSR may run here (their ALLOWED includes it)"));
    out.push('\n');
}
