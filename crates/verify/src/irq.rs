//! IRQ checks: every IRQ's effective affinity against housekeeping (managed IRQs classified),
//! the default mask, interrupt activity on isolated CPUs over a live window, the local timer
//! rate, and irqbalance.

use cpuset::CpuSet;
use host::InterruptTable;

use crate::model::{Check, Group, Input, Status};
use crate::sets::{capped, Sets};

const G: Group = Group::Irq;

pub fn checks(inp: &Input<'_>, sets: &Sets) -> Vec<Check> {
    let mut out = effective(inp, sets);
    out.push(default_mask(inp, sets));
    out.extend(activity(inp, sets));
    out.push(irqbalance(inp, sets));
    out
}

fn apply_fix(inp: &Input<'_>) -> String {
    format!("`lowlat apply {}` moves movable IRQs to housekeeping", inp.plan_arg)
}

/// NTO's IRQ model is in place: the plan is for NTO's configuration and the running line has
/// `isolcpus=managed_irq` over the isolated CPUs. NTO then balances the other IRQs over every
/// CPU and moves them off a pod's CPUs only when the pod asks, so IRQs on isolated CPUs are
/// how such a node works, a risk for pods that do not ask rather than a fault of the node.
fn nto_per_pod(inp: &Input<'_>, sets: &Sets) -> bool {
    inp.plan.flavour() == plan::Flavour::Nto
        && crate::boot::covers(inp, "isolcpus", Some("managed_irq"), &sets.iso) == Some(true)
}

/// The warning an NTO node gets instead of a failure (see [`nto_per_pod`]).
fn nto_warning(c: Check, inp: &Input<'_>) -> Check {
    Check { status: Status::Warn, fix: None, ..c }
        .ev(format!(
            "the plan is for NTO's configuration (render_flavour: nto), which balances IRQs over the isolated CPUs until a pod asks: CRI-O moves them off a pod's CPUs for pods with the annotation irq-load-balancing.crio.io: \"disable\" and runtimeClassName performance-{}",
            inp.plan.name
        ))
        .fix(format!(
            "give every latency-sensitive pod that annotation and RuntimeClass; to keep IRQs off the isolated CPUs node-wide instead, `lowlat render {} openshift --beyond-nto` (irqaffinity=) or `lowlat apply {}`",
            inp.plan_arg, inp.plan_arg
        ))
}

fn effective(inp: &Input<'_>, sets: &Sets) -> Vec<Check> {
    if inp.host.irqs.is_empty() {
        return vec![
            Check::new(G, "irq-effective-affinity", Status::NotApplicable).ev("no /proc/irq data")
        ];
    }
    let mut bad = Vec::new();
    let mut managed = Vec::new();
    let mut pending = Vec::new();
    let mut n = 0usize;
    for irq in &inp.host.irqs {
        let Some(eff) = irq.effective_affinity.as_ref().or(irq.affinity.as_ref()) else { continue };
        n += 1;
        if eff.is_disjoint(&sets.iso) {
            continue;
        }
        let line = format!(
            "IRQ {} ({}): effective {}, configured {}",
            irq.irq,
            irq.name.as_deref().unwrap_or("?"),
            eff.to_list(),
            irq.affinity.as_ref().map_or("?".into(), CpuSet::to_list)
        );
        if irq.managed == Some(true) {
            managed.push(line);
        } else if irq.affinity.as_ref().is_some_and(|a| a.is_disjoint(&sets.iso)) {
            // Configured for housekeeping, still routed to an isolated CPU: on x86 without
            // interrupt remapping the move happens when the IRQ next fires.
            pending.push(line);
        } else {
            bad.push(line);
        }
    }
    let source = if inp.host.irqs.iter().any(|i| i.effective_affinity.is_some()) {
        "effective_affinity_list"
    } else {
        "smp_affinity_list (no effective_affinity_list here)"
    };
    let mut out = Vec::new();
    if bad.is_empty() {
        out.push(Check::new(G, "irq-effective-affinity", Status::Pass).ev(format!(
            "{} of {n} IRQs route to housekeeping CPUs {} ({source}); {} pending a move, {} managed",
            n - managed.len() - pending.len(),
            sets.hk.to_list(),
            pending.len(),
            managed.len()
        )));
    } else {
        let c = Check::new(G, "irq-effective-affinity", Status::Fail)
            .ev(format!(
                "{} of {n} IRQs can fire on isolated CPUs {} ({source})",
                bad.len(),
                sets.iso.to_list()
            ))
            .evs(capped(bad, 12));
        out.push(if nto_per_pod(inp, sets) { nto_warning(c, inp) } else { c.fix(apply_fix(inp)) });
    }
    if !pending.is_empty() {
        out.push(
            Check::new(G, "irq-move-pending", Status::Warn)
                .ev(format!(
                    "{} IRQs are configured for housekeeping but still routed to an isolated CPU: the kernel moves them when they next fire (x86 without interrupt remapping), so each may hit its old CPU once more",
                    pending.len()
                ))
                .evs(capped(pending, 8))
                .fix("nothing to run: the move completes on the next interrupt; `irqaffinity=` (lowlat render) routes them right from boot"),
        );
    }
    if !managed.is_empty() {
        out.push(
            Check::new(G, "irq-managed", Status::ExpectedResidue)
                .ev(format!("{} managed IRQs sit on isolated CPUs: the kernel owns their affinity", managed.len()))
                .evs(capped(managed, 8))
                .fix("isolcpus=managed_irq,<isolated> keeps managed IRQs off isolated CPUs while housekeeping CPUs are online (`lowlat plan`)"),
        );
    }
    out
}

fn default_mask(inp: &Input<'_>, sets: &Sets) -> Check {
    match &inp.host.default_smp_affinity {
        None => Check::new(G, "irq-default-affinity", Status::NotApplicable)
            .ev("/proc/irq/default_smp_affinity not read"),
        Some(d) if d.is_disjoint(&sets.iso) => Check::new(G, "irq-default-affinity", Status::Pass)
            .ev(format!("default_smp_affinity = {}", d.to_list())),
        Some(d) => {
            let c = Check::new(G, "irq-default-affinity", Status::Fail).ev(format!(
                "default_smp_affinity = {} includes isolated CPUs {}",
                d.to_list(),
                d.intersection(&sets.iso).to_list()
            ));
            if nto_per_pod(inp, sets) {
                nto_warning(c, inp)
            } else {
                c.fix(apply_fix(inp))
            }
        }
    }
}

/// Per-CPU count deltas of one row between two tables, keyed by CPU number.
fn deltas(before: &InterruptTable, after: &InterruptTable, id: &str) -> Vec<(usize, u64)> {
    let (Some(b), Some(a)) =
        (before.rows.iter().find(|r| r.id == id), after.rows.iter().find(|r| r.id == id))
    else {
        return Vec::new();
    };
    after
        .cpus
        .iter()
        .enumerate()
        .filter_map(|(col, &cpu)| {
            let bcol = before.cpus.iter().position(|&c| c == cpu)?;
            let d = a.counts.get(col)?.saturating_sub(*b.counts.get(bcol)?);
            Some((cpu, d))
        })
        .collect()
}

fn activity(inp: &Input<'_>, sets: &Sets) -> Vec<Check> {
    let Some(w) = inp.window.as_ref().filter(|_| inp.live) else {
        return vec![
            Check::new(G, "irq-activity", Status::NotApplicable)
                .ev("needs the live host (counts are sampled over a window)"),
            Check::new(G, "tick-rate", Status::NotApplicable).ev("needs the live host"),
        ];
    };
    let secs = w.duration.as_secs_f64().max(0.001);
    let mut bad = Vec::new();
    let mut residue = Vec::new();
    for row in w.interrupts_after.rows.iter().filter(|r| r.id.bytes().all(|b| b.is_ascii_digit())) {
        let managed =
            inp.host.irqs.iter().any(|i| i.irq.to_string() == row.id && i.managed == Some(true));
        for (cpu, d) in deltas(&w.interrupts_before, &w.interrupts_after, &row.id) {
            if d > 0 && sets.iso.contains(cpu) {
                let line = format!(
                    "IRQ {} ({}): +{d} on CPU {cpu}",
                    row.id,
                    row.name.as_deref().unwrap_or("?")
                );
                if managed {
                    residue.push(line);
                } else {
                    bad.push(line);
                }
            }
        }
    }
    let window = format!("over {:.1} s on isolated CPUs {}", secs, sets.iso.to_list());
    let act = if !bad.is_empty() {
        Check::new(G, "irq-activity", Status::Fail)
            .ev(format!("device interrupts fired {window}"))
            .evs(capped(bad, 10))
            .fix(apply_fix(inp))
    } else if !residue.is_empty() {
        Check::new(G, "irq-activity", Status::ExpectedResidue)
            .ev(format!("only managed IRQs fired {window}"))
            .evs(capped(residue, 10))
    } else {
        Check::new(G, "irq-activity", Status::Pass).ev(format!("no device interrupt {window}"))
    };
    let mut rates = Vec::new();
    let mut worst = 0.0f64;
    for cpu in sets.iso.iter() {
        let rate = |id: &str| {
            deltas(&w.interrupts_before, &w.interrupts_after, id)
                .into_iter()
                .find(|(c, _)| *c == cpu)
                .map(|(_, d)| d as f64 / secs)
        };
        if let Some(loc) = rate("LOC") {
            worst = worst.max(loc);
            let others: Vec<String> = ["RES", "CAL", "TLB", "IWI"]
                .iter()
                .filter_map(|id| rate(id).map(|r| format!("{id} {r:.0}/s")))
                .collect();
            rates.push(format!("CPU {cpu}: LOC {loc:.0}/s, {}", others.join(", ")));
        }
    }
    let nohz = inp.plan.kernel_args.iter().any(|a| a.key == "nohz_full");
    let tick = if rates.is_empty() {
        Check::new(G, "tick-rate", Status::NotApplicable).ev("no LOC row in /proc/interrupts")
    } else if nohz && worst > 10.0 {
        Check::new(G, "tick-rate", Status::Warn)
            .ev("nohz_full is planned but the tick still runs: with one task per isolated CPU LOC should be ~1/s")
            .evs(rates)
            .fix("check that nohz_full is active (sysfs-nohz-full) and only one task runs on each isolated CPU (`lowlat inspect` what-runs-where)")
    } else {
        Check::new(G, "tick-rate", Status::Pass).evs(rates)
    };
    vec![act, tick]
}

fn irqbalance(inp: &Input<'_>, sets: &Sets) -> Check {
    let Some(ib) = &inp.irqbalance else {
        return Check::new(G, "irqbalance", Status::NotApplicable)
            .ev("irqbalance state unknown (no task list)");
    };
    if !ib.running {
        return Check::new(G, "irqbalance", Status::Pass).ev("irqbalance is not running");
    }
    let fix = format!(
        "`lowlat render {} irqbalance` writes IRQBALANCE_BANNED_CPULIST, then restart irqbalance",
        inp.plan_arg
    );
    match &ib.ban {
        Some((file, var, value)) => {
            let ban = if var.ends_with("CPULIST") {
                CpuSet::parse_list(value)
            } else {
                CpuSet::parse_mask(value)
            };
            match ban {
                Ok(b) if sets.iso.is_subset(&b) => {
                    Check::new(G, "irqbalance", Status::Pass).ev(format!(
                        "irqbalance runs; {file}: {var}={value} covers isolated {}",
                        sets.iso.to_list()
                    ))
                }
                Ok(b) => Check::new(G, "irqbalance", Status::Fail)
                    .ev(format!(
                        "irqbalance runs; {file}: {var}={value} leaves isolated CPUs {} to it",
                        sets.iso.difference(&b).to_list()
                    ))
                    .fix(fix),
                Err(e) => Check::new(G, "irqbalance", Status::Fail)
                    .ev(format!("{file}: {var}={value} does not parse: {e}"))
                    .fix(fix),
            }
        }
        None => {
            // Without a ban variable irqbalance skips the kernel's isolated and nohz_full CPUs.
            let auto = inp
                .host
                .cpus
                .isolated
                .clone()
                .unwrap_or_default()
                .union(&inp.host.cpus.nohz_full.clone().unwrap_or_default());
            if sets.iso.is_subset(&auto) {
                Check::new(G, "irqbalance", Status::Pass)
                    .ev(format!("irqbalance runs without a ban; it skips the kernel's isolated/nohz_full CPUs {}", auto.to_list()))
            } else {
                Check::new(G, "irqbalance", Status::Fail)
                    .ev(format!(
                        "irqbalance runs with no ban and will spread IRQs onto isolated CPUs {}",
                        sets.iso.difference(&auto).to_list()
                    ))
                    .fix(fix)
            }
        }
    }
}
