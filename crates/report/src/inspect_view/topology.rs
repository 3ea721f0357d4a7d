//! The topology grid: NUMA node × core × hardware thread, with each CPU's role.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use cpuset::CpuSet;
use host::Host;

use super::fmt::{kv, opt};
use crate::term::{wrap, Paint, Style};

/// Cores grouped by NUMA node then package, each core's threads in order.
/// NUMA node → cores (ordered by package then first CPU), each core its CPUs.
pub(super) type NodeCores = BTreeMap<Option<usize>, Vec<Vec<usize>>>;

pub(super) fn cores_by_node(h: &Host) -> NodeCores {
    type Key = (Option<usize>, Option<i64>, Option<i64>);
    let mut by_core: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    for c in &h.topology.cpus {
        by_core.entry((c.numa_node, c.package, c.core)).or_default().push(c.cpu);
    }
    let mut out = NodeCores::new();
    for ((node, _, _), mut cpus) in by_core {
        cpus.sort_unstable();
        out.entry(node).or_default().push(cpus);
    }
    for v in out.values_mut() {
        v.sort_by_key(|c| c.first().copied());
    }
    out
}

pub(super) fn topology(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Topology (NUMA × core × thread)"));
    if h.topology.cpus.is_empty() {
        let _ = writeln!(out, "  unknown (no sys/devices/system/cpu)\n");
        return;
    }
    let iso = h.isolated_cpus();
    let _ = writeln!(
        out,
        "  {}",
        st.paint(Paint::Dim, "* = isolated, - = offline; columns are cores, rows are SMT threads")
    );
    let maxcpu = h.topology.cpus.iter().map(|c| c.cpu).max().unwrap_or(0);
    let cell = maxcpu.to_string().len() + 2;
    for (node, cores) in cores_by_node(h) {
        let cpus: CpuSet = cores.iter().flatten().copied().collect();
        let pkgs: CpuSet = cpus
            .iter()
            .filter_map(|c| h.cpu(c)?.package)
            .filter_map(|p| usize::try_from(p).ok())
            .collect();
        let mem =
            node.and_then(|n| h.numa_nodes.iter().find(|x| x.id == n)).and_then(|n| n.mem_total_kb);
        let _ = writeln!(
            out,
            "  {} {} {}: {} cores, cpus {}{}",
            st.paint(Paint::Bold, &format!("node {}", node.map_or("?".into(), |n| n.to_string()))),
            if pkgs.len() == 1 { "package" } else { "packages" },
            if pkgs.is_empty() { "?".to_string() } else { pkgs.to_list() },
            cores.len(),
            cpus,
            mem.map_or(String::new(), |m| format!(", {} MiB", m / 1024))
        );
        let threads = cores.iter().map(Vec::len).max().unwrap_or(1);
        let per_line = ((st.width.saturating_sub(10)) / cell).max(4);
        for chunk in cores.chunks(per_line) {
            for t in 0..threads {
                let mut line = format!("    {:<6}", format!("t{t}"));
                for core in chunk {
                    let s = match core.get(t) {
                        Some(&c) => {
                            let online = h.cpu(c).is_none_or(|x| x.online);
                            let mark = if !online {
                                "-"
                            } else if iso.contains(c) {
                                "*"
                            } else {
                                " "
                            };
                            let txt = format!("{c}{mark}");
                            let pad = " ".repeat(cell.saturating_sub(txt.len()));
                            if iso.contains(c) {
                                format!("{pad}{}", st.paint(Paint::Cyan, &txt))
                            } else {
                                format!("{pad}{txt}")
                            }
                        }
                        None => " ".repeat(cell),
                    };
                    line.push_str(&s);
                }
                let _ = writeln!(out, "{}", line.trim_end());
            }
        }
    }
    if h.numa_nodes.len() > 1 {
        let d: Vec<String> =
            h.numa_nodes.iter().map(|n| format!("node{}: {:?}", n.id, n.distances)).collect();
        kv(out, st, "distances", &d.join("  "));
    }
    let mut caches: BTreeMap<(u32, String), (usize, Option<u64>, String)> = BTreeMap::new();
    for c in &h.caches {
        let e = caches.entry((c.level, c.kind.clone())).or_insert((
            0,
            c.size_kb,
            c.shared_cpus.len().to_string(),
        ));
        e.0 += 1;
    }
    if !caches.is_empty() {
        let parts: Vec<String> = caches
            .iter()
            .map(|((l, k), (n, sz, ex))| {
                let k = match k.as_str() {
                    "Data" => "d",
                    "Instruction" => "i",
                    _ => "",
                };
                format!(
                    "L{l}{k} {}×{} ({ex} CPUs each)",
                    n,
                    sz.map_or("?".into(), |s| if s >= 1024 {
                        format!("{}M", s / 1024)
                    } else {
                        format!("{s}K")
                    })
                )
            })
            .collect();
        for (i, l) in
            wrap(&parts.join(", "), st.width, "                   ").into_iter().enumerate()
        {
            if i == 0 {
                kv(out, st, "caches", l.trim_start());
            } else {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    kv(
        out,
        st,
        "smt",
        &format!(
            "control {}, active {}",
            opt(&h.topology.smt_control),
            opt(&h.topology.smt_active)
        ),
    );
    out.push('\n');
}
