//! The topology grid: every CPU grouped by NUMA node and physical core, coloured by role
//! (housekeeping, isolated, offline), with the worst measured latency written under the CPUs
//! that were measured.

use std::collections::BTreeMap;

use cpuset::CpuSet;

use crate::input::{Body, Doc};
use crate::model::{fmt_ns, Block, Grid, GridCell, GridGroup, Section, Verdict};

/// One CPU's place: (group label, core key, cpu, online).
type Place = (String, (i64, i64), usize, bool);

/// The topology section, when any input says which CPUs exist.
pub fn build(docs: &[Doc], timer_threshold_ns: u64) -> Option<Section> {
    let inspect = docs.iter().find_map(|d| match &d.body {
        Body::Inspect(h) => Some(h),
        _ => None,
    });
    let plan = docs.iter().find_map(|d| match &d.body {
        Body::Plan(p) => Some(p),
        _ => None,
    });

    let mut places: Vec<Place> = Vec::new();
    let mut isolated = CpuSet::new();
    let mut housekeeping: Option<CpuSet> = None;
    if let Some(h) = inspect {
        for c in &h.topology.cpus {
            let pkg = c.package.unwrap_or(0);
            let label = match c.numa_node {
                Some(n) => format!("NUMA node {n} · package {pkg}"),
                None => format!("package {pkg}"),
            };
            places.push((label, (pkg, c.core.unwrap_or(c.cpu as i64)), c.cpu, c.online));
        }
        isolated = h.isolated_cpus();
    }
    if places.is_empty() {
        // No host model: the result files' host summary lists online/isolated CPUs.
        let parse = |s: &Option<String>| s.as_deref().and_then(|s| CpuSet::parse_list(s).ok());
        if let Some(h) =
            docs.iter().filter_map(Doc::host_context).find(|h| parse(&h.online).is_some())
        {
            for cpu in parse(&h.online).unwrap_or_default().iter() {
                places.push(("CPUs".to_string(), (0, cpu as i64), cpu, true));
            }
            isolated = parse(&h.isolated).unwrap_or_default();
        }
    }
    if places.is_empty() {
        return None;
    }
    let mut source = "kernel isolation (isolcpus / cpu isolated)";
    if let Some(p) = plan {
        isolated = p.isolated.clone();
        housekeeping = Some(p.reserved.clone());
        source = "the plan";
    }

    let measured = measured_worst(docs, timer_threshold_ns);
    let mut groups: BTreeMap<String, BTreeMap<(i64, i64), Vec<GridCell>>> = BTreeMap::new();
    places.sort_by_key(|p| p.2);
    for (label, core, cpu, online) in places {
        let role = if !online {
            "offline"
        } else if isolated.contains(cpu) {
            "isolated"
        } else if housekeeping.as_ref().is_none_or(|h| h.contains(cpu)) {
            "housekeeping"
        } else {
            "unassigned"
        };
        let seen = measured.get(&cpu);
        let note = seen.map(|(ns, _)| fmt_ns(*ns)).unwrap_or_default();
        // Coloured by the worst latency too: at 252 CPUs one outlier must not look like the rest.
        let verdict = seen.map(|(ns, thr)| if ns < thr { Verdict::Pass } else { Verdict::Fail });
        groups.entry(label).or_default().entry(core).or_default().push(GridCell {
            cpu,
            role: role.to_string(),
            note,
            verdict,
        });
    }
    let grid = Grid {
        caption: format!(
            "One box per physical core, one cell per hardware thread. Roles from {source}. \
             The time under a CPU is the worst timer latency measured on it."
        ),
        groups: groups
            .into_iter()
            .map(|(label, cores)| GridGroup { label, cells: cores.into_values().collect() })
            .collect(),
        legend: vec![
            ("housekeeping".into(), "housekeeping (OS, IRQs, load)".into()),
            ("isolated".into(), "isolated (latency-critical work)".into()),
            ("unassigned".into(), "neither".into()),
            ("offline".into(), "offline".into()),
        ],
    };
    Some(Section::new("topology", "Topology", Vec::new(), vec![Block::Grid(grid)]))
}

/// Worst timer latency per CPU over every timer result, with the threshold its run was
/// judged against (the lowest, when several runs measured the CPU).
fn measured_worst(docs: &[Doc], default_threshold_ns: u64) -> BTreeMap<usize, (u64, u64)> {
    let mut out = BTreeMap::new();
    for d in docs.iter().filter(|d| d.kind == crate::Kind::Result(results::Kind::Timer)) {
        let Body::Latency(r) = &d.body else { continue };
        let thr = super::latency::threshold(r, default_threshold_ns);
        for t in r.threads.iter().filter(|t| t.stats.count > 0) {
            if let Some(cpu) = t.cpu {
                let e = out.entry(cpu as usize).or_insert((0, u64::MAX));
                *e = (e.0.max(t.stats.max_ns), e.1.min(thr));
            }
        }
    }
    out
}
