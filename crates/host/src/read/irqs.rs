//! Interrupts: `/proc/interrupts` (per-CPU counts, chip, names, the LOC/RES/CAL/TLB rows),
//! `/proc/irq/N/{smp_affinity_list,effective_affinity_list,node}`,
//! `/proc/irq/default_smp_affinity` and `/proc/softirqs`.

use std::collections::BTreeMap;

use super::{numbered, Ctx};
use crate::model::{Host, Irq};
use crate::parse::interrupts;

pub(super) fn read(cx: &mut Ctx, host: &mut Host) {
    if let Some(t) = cx.text("interrupts", "proc/interrupts") {
        let (table, issues) = interrupts::parse(&t);
        cx.issues("proc/interrupts", issues);
        host.interrupts = Some(table);
    }
    if let Some(t) = cx.opt_text("softirqs", "proc/softirqs") {
        let (table, issues) = interrupts::parse_softirqs(&t);
        cx.issues("proc/softirqs", issues);
        host.softirqs = Some(table);
    } else {
        cx.unknown("softirqs", "proc/softirqs", "not present".into());
    }
    host.default_smp_affinity =
        cx.cpus("default_smp_affinity", "proc/irq/default_smp_affinity", false);

    let mut irqs: BTreeMap<u32, Irq> = BTreeMap::new();
    if let Some(table) = &host.interrupts {
        for row in &table.rows {
            let Ok(n) = row.id.parse::<u32>() else { continue };
            // Counts in CPU-number order: expand the table's columns onto CPU indices.
            let width = table.cpus.iter().max().map_or(0, |m| m + 1);
            let mut counts = vec![0u64; width.max(row.counts.len())];
            for (col, c) in row.counts.iter().enumerate() {
                let cpu = table.cpus.get(col).copied().unwrap_or(col);
                if let Some(slot) = counts.get_mut(cpu) {
                    *slot = *c;
                }
            }
            irqs.insert(
                n,
                Irq {
                    irq: n,
                    name: row.name.clone(),
                    chip: row.chip.clone(),
                    counts,
                    ..Default::default()
                },
            );
        }
    }
    match cx.list("irqs", "proc/irq") {
        Some(names) => {
            cx.hold("proc/irq");
            for n in numbered(&names, "") {
                let Ok(n32) = u32::try_from(n) else { continue };
                let base = format!("proc/irq/{n}");
                let irq = irqs.entry(n32).or_insert_with(|| Irq { irq: n32, ..Default::default() });
                irq.affinity =
                    cx.cpus("irqs[].affinity", &format!("{base}/smp_affinity_list"), true);
                irq.effective_affinity = cx.cpus(
                    "irqs[].effective_affinity",
                    &format!("{base}/effective_affinity_list"),
                    true,
                );
                irq.node = cx.opt_int("irqs[].node", &format!("{base}/node"));
            }
            cx.release();
        }
        None => cx.unknown("irqs[].affinity", "proc/irq", "not present".into()),
    }
    host.irqs = irqs.into_values().collect();
}
