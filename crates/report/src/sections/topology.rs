//! The topology grid: every CPU grouped by NUMA node and physical core, coloured by role
//! (housekeeping, isolated, offline), with the worst measured latency written under the CPUs
//! that were measured.

use std::collections::BTreeMap;

use cpuset::CpuSet;
use serde_json::Value;

use crate::input::{Doc, LatencyView, PlanView};
use crate::model::{fmt_ns, Block, Grid, GridCell, GridGroup, Section};

fn set(v: Option<&Value>) -> Option<CpuSet> {
    v.and_then(Value::as_str).and_then(|s| CpuSet::parse_list(s).ok())
}

/// One CPU's place: (group label, core key, cpu, online).
type Place = (String, (i64, i64), usize, bool);

/// The topology section, when any input says which CPUs exist.
pub fn build(docs: &[Doc]) -> Option<Section> {
    let inspect = docs.iter().find(|d| d.kind == "inspect");
    let plan = docs.iter().find(|d| d.kind == "plan").and_then(|d| d.view::<PlanView>().ok());

    let mut places: Vec<Place> = Vec::new();
    let mut isolated = CpuSet::new();
    let mut housekeeping: Option<CpuSet> = None;
    if let Some(d) = inspect {
        if let Some(cpus) = d.value.pointer("/topology/cpus").and_then(Value::as_array) {
            for c in cpus {
                let Some(cpu) = c.get("cpu").and_then(Value::as_u64) else { continue };
                let node = c.get("numa_node").and_then(Value::as_u64);
                let pkg = c.get("package").and_then(Value::as_i64).unwrap_or(0);
                let core = c.get("core").and_then(Value::as_i64).unwrap_or(cpu as i64);
                let online = c.get("online").and_then(Value::as_bool).unwrap_or(true);
                let label = match node {
                    Some(n) => format!("NUMA node {n} · package {pkg}"),
                    None => format!("package {pkg}"),
                };
                places.push((label, (pkg, core), cpu as usize, online));
            }
        }
        isolated = set(d.value.pointer("/cpus/isolated")).unwrap_or_default();
        if isolated.is_empty() {
            isolated = set(d.value.pointer("/kernel/boot/isolcpus/cpus")).unwrap_or_default();
        }
    }
    if places.is_empty() {
        // No inspect document: the result files' host block lists online/isolated CPUs.
        for d in docs {
            let h = d.envelope().host;
            if let Some(online) = h.online.and_then(|s| CpuSet::parse_list(&s).ok()) {
                for cpu in online.iter() {
                    places.push(("CPUs".to_string(), (0, cpu as i64), cpu, true));
                }
                isolated = h.isolated.and_then(|s| CpuSet::parse_list(&s).ok()).unwrap_or_default();
                break;
            }
        }
    }
    if places.is_empty() {
        return None;
    }
    let mut source = "kernel isolation (isolcpus / cpu isolated)";
    if let Some(p) = &plan {
        if let Some(iso) = p.isolated.as_deref().and_then(|s| CpuSet::parse_list(s).ok()) {
            isolated = iso;
            source = "the plan";
        }
        housekeeping = p.reserved.as_deref().and_then(|s| CpuSet::parse_list(s).ok());
    }

    let measured = measured_worst(docs);
    let mut groups: BTreeMap<String, BTreeMap<(i64, i64), Vec<GridCell>>> = BTreeMap::new();
    places.sort_by_key(|p| p.2);
    for (label, core, cpu, online) in places {
        let role = if !online {
            "offline"
        } else if isolated.contains(cpu) {
            "isolated"
        } else if housekeeping.as_ref().map_or(true, |h| h.contains(cpu)) {
            "housekeeping"
        } else {
            "unassigned"
        };
        let note = measured.get(&cpu).map(|ns| fmt_ns(*ns)).unwrap_or_default();
        groups.entry(label).or_default().entry(core).or_default().push(GridCell {
            cpu,
            role: role.to_string(),
            note,
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

/// Worst timer (else noise) max per CPU over every latency document.
fn measured_worst(docs: &[Doc]) -> BTreeMap<usize, u64> {
    let mut out = BTreeMap::new();
    for d in docs.iter().filter(|d| d.kind == "timer") {
        if let Ok(v) = d.view::<LatencyView>() {
            for t in v.threads {
                if let (Some(cpu), Some(max)) = (t.cpu, t.max_ns) {
                    let e = out.entry(cpu).or_insert(0);
                    *e = (*e).max(max);
                }
            }
        }
    }
    out
}
