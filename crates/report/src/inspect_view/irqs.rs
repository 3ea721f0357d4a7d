//! IRQs: who may land where, effective targets, top talkers.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use host::Host;

use super::fmt::{kv, set_or};
use crate::term::{Paint, Style, Table};

/// Per-CPU IRQ facts: device IRQs allowed / effectively targeted, device interrupt count,
/// and the named rows of interest.
pub(super) struct CpuIrqs {
    pub(super) allowed: usize,
    pub(super) effective: usize,
    pub(super) device_count: u64,
    pub(super) named: BTreeMap<String, u64>,
}

pub(super) fn cpu_irqs(h: &Host, cpu: usize) -> CpuIrqs {
    let mut c = CpuIrqs { allowed: 0, effective: 0, device_count: 0, named: BTreeMap::new() };
    for irq in &h.irqs {
        if irq.affinity.as_ref().is_some_and(|a| a.contains(cpu)) {
            c.allowed += 1;
        }
        if irq.effective_affinity.as_ref().is_some_and(|a| a.contains(cpu)) {
            c.effective += 1;
        }
        c.device_count += irq.counts.get(cpu).copied().unwrap_or(0);
    }
    if let Some(t) = &h.interrupts {
        if let Some(col) = t.cpus.iter().position(|&x| x == cpu) {
            for r in t.rows.iter().filter(|r| ["LOC", "RES", "CAL", "TLB"].contains(&r.id.as_str()))
            {
                c.named.insert(r.id.clone(), r.counts.get(col).copied().unwrap_or(0));
            }
        }
    }
    c
}

pub(super) fn irqs(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("IRQs (who may land where)"));
    if h.irqs.is_empty() && h.interrupts.is_none() {
        let _ = writeln!(out, "  unknown (no /proc/interrupts)\n");
        return;
    }
    kv(out, st, "default affinity", &set_or(&h.default_smp_affinity, "unknown"));
    let iso = h.isolated_cpus();
    let online = h.online_cpus();
    // Rows: every CPU on small hosts; isolated + busiest on big ones.
    let mut rows: Vec<usize> = online.iter().collect();
    let many = rows.len() > 16;
    if many {
        let mut busy: Vec<(u64, usize)> =
            rows.iter().map(|&c| (cpu_irqs(h, c).device_count, c)).collect();
        busy.sort_by(|a, b| b.cmp(a));
        let mut keep: BTreeSet<usize> = iso.iter().collect();
        keep.extend(busy.iter().take(8).map(|x| x.1));
        rows = keep.into_iter().collect();
    }
    let mut t =
        Table::new(&["CPU", "MAY GET", "EFFECTIVE", "DEVICE IRQS", "LOC", "RES", "CAL", "TLB", ""])
            .right(&[0, 1, 2, 3, 4, 5, 6, 7]);
    for cpu in &rows {
        let c = cpu_irqs(h, *cpu);
        let n = |k: &str| c.named.get(k).map_or("-".into(), |v| v.to_string());
        let mark = if iso.contains(*cpu) {
            if c.effective > 0 || c.device_count > 0 {
                st.paint(Paint::Yellow, "isolated, gets IRQs")
            } else {
                st.paint(Paint::Cyan, "isolated")
            }
        } else {
            String::new()
        };
        t.row(vec![
            cpu.to_string(),
            c.allowed.to_string(),
            c.effective.to_string(),
            c.device_count.to_string(),
            n("LOC"),
            n("RES"),
            n("CAL"),
            n("TLB"),
            mark,
        ]);
    }
    let _ = writeln!(out, "  {}", st.paint(Paint::Dim, "MAY GET = device IRQs whose smp_affinity includes the CPU; EFFECTIVE = effective_affinity; counts since boot"));
    out.push_str(&t.render(st, 2));
    if many {
        let _ = writeln!(
            out,
            "  {}",
            st.paint(
                Paint::Dim,
                &format!(
                    "(isolated and the 8 busiest of {} CPUs shown; `--cpu N` for one)",
                    online.len()
                )
            )
        );
    }
    let mut top: Vec<&host::Irq> =
        h.irqs.iter().filter(|i| i.counts.iter().sum::<u64>() > 0).collect();
    top.sort_by_key(|i| std::cmp::Reverse(i.counts.iter().sum::<u64>()));
    if !top.is_empty() {
        let _ = writeln!(out, "  {}", st.paint(Paint::Bold, "top talkers"));
        let mut t = Table::new(&["IRQ", "TOTAL", "AFFINITY", "EFFECTIVE", "NAME"]).right(&[0, 1]);
        for i in top.iter().take(10) {
            t.row(vec![
                i.irq.to_string(),
                i.counts.iter().sum::<u64>().to_string(),
                set_or(&i.affinity, "?"),
                set_or(&i.effective_affinity, "?"),
                i.name.clone().unwrap_or_default(),
            ]);
        }
        out.push_str(&t.render(st, 2));
    }
    out.push('\n');
}
