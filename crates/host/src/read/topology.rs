//! Topology: `/sys/devices/system/cpu` (CPU sets, per-CPU topology, caches, SMT),
//! `/proc/cpuinfo`, and `/sys/devices/system/node` (NUMA nodes, distances, node memory and
//! hugepages). Must-gathers lack the top-level `online`/`present`/… files: CPUs are then
//! inferred from the `cpuN` directories that hold a topology.

use std::collections::{BTreeMap, BTreeSet};

use cpuset::CpuSet;

use super::{numbered, Ctx};
use crate::model::{Cache, CpuTopo, Host, NumaNode};
use crate::parse::{cpuinfo, kv};

const CPU: &str = "sys/devices/system/cpu";
const NODE: &str = "sys/devices/system/node";

pub(super) fn read(cx: &mut Ctx, host: &mut Host) {
    let names = cx.list("topology.cpus", CPU).unwrap_or_default();
    let dirs = numbered(&names, "cpu");
    if names.is_empty() {
        cx.unknown("topology.cpus", CPU, "not present".into());
    }
    // Top-level sets (optional in must-gathers).
    for (field, file) in [
        ("possible", "possible"),
        ("present", "present"),
        ("online", "online"),
        ("offline", "offline"),
        ("isolated", "isolated"),
        ("nohz_full", "nohz_full"),
    ] {
        let path = format!("{CPU}/{file}");
        let v = match cx.text(&format!("cpus.{field}"), &path) {
            // 6.1 prints "(null)" in nohz_full when the kernel has CONFIG_NO_HZ_FULL but was
            // booted without nohz_full= (its mask is never allocated): no CPU is nohz_full.
            Some(t) if t.trim() == "(null)" => Some(CpuSet::new()),
            Some(t) => cx.parse_cpus(&path, &t, false),
            None => None,
        };
        match field {
            "possible" => host.cpus.possible = v,
            "present" => host.cpus.present = v,
            "online" => host.cpus.online = v,
            "offline" => host.cpus.offline = v,
            "isolated" => host.cpus.isolated = v,
            _ => host.cpus.nohz_full = v,
        }
    }
    // cpuinfo: model names and flags.
    let info = match cx.text("topology.cpus[].model", "proc/cpuinfo") {
        Some(t) => {
            let (v, issues) = cpuinfo::parse(&t);
            cx.issues("proc/cpuinfo", issues);
            v
        }
        None => Vec::new(),
    };
    let info: BTreeMap<usize, cpuinfo::CpuInfo> =
        info.into_iter().map(|c| (c.processor, c)).collect();

    let mut caches: BTreeSet<(u32, String, CpuSet)> = BTreeSet::new();
    let mut cache_list = Vec::new();
    for cpu in dirs {
        let base = format!("{CPU}/cpu{cpu}");
        cx.hold(&base);
        let t = format!("{base}/topology");
        let core = cx.opt_int::<i64>("topology.cpus[].core", &format!("{t}/core_id"));
        let online = match cx.opt_value("topology.cpus[].online", &format!("{base}/online")) {
            Some(v) => v == "1",
            // cpu0 often has no `online` file; offline CPUs have no topology.
            None => core.is_some() || cpu == 0,
        };
        let siblings = cx
            .cpus("topology.cpus[].siblings", &format!("{t}/thread_siblings_list"), true)
            .unwrap_or_else(|| CpuSet::from_cpus([cpu]));
        let ci = info.get(&cpu);
        let topo = CpuTopo {
            cpu,
            online,
            package: cx
                .opt_int("topology.cpus[].package", &format!("{t}/physical_package_id"))
                .or(ci.and_then(|c| c.physical_id)),
            die: cx.opt_int("topology.cpus[].die", &format!("{t}/die_id")),
            cluster: cx.opt_int("topology.cpus[].cluster", &format!("{t}/cluster_id")),
            core: core.or(ci.and_then(|c| c.core_id)),
            numa_node: None,
            siblings,
            model: ci.and_then(|c| c.model_name.clone()),
            family_model: ci.and_then(|c| Some((c.family?, c.model?))),
            flags: ci.map(|c| c.flags.clone()).unwrap_or_default(),
        };
        host.topology.cpus.push(topo);
        // Caches.
        if let Some(idx) = cx.list("caches", &format!("{base}/cache")) {
            for i in numbered(&idx, "index") {
                let c = format!("{base}/cache/index{i}");
                let Some(shared) = cx.cpus("caches", &format!("{c}/shared_cpu_list"), true) else {
                    continue;
                };
                let level = cx.opt_int::<u32>("caches", &format!("{c}/level")).unwrap_or(0);
                let kind = cx.opt_value("caches", &format!("{c}/type")).unwrap_or_default();
                if caches.insert((level, kind.clone(), shared.clone())) {
                    let size_kb =
                        cx.opt_value("caches", &format!("{c}/size")).and_then(|s| size_kb(&s));
                    let id = cx.opt_int("caches", &format!("{c}/id"));
                    cache_list.push(Cache { level, kind, size_kb, shared_cpus: shared, id });
                }
            }
        }
    }
    cx.release();
    cache_list.sort_by(|a, b| {
        (a.level, &a.kind, a.shared_cpus.first()).cmp(&(b.level, &b.kind, b.shared_cpus.first()))
    });
    host.caches = cache_list;

    // Infer the CPU sets a must-gather lacks.
    let found: CpuSet = host.topology.cpus.iter().map(|c| c.cpu).collect();
    let online: CpuSet = host.topology.cpus.iter().filter(|c| c.online).map(|c| c.cpu).collect();
    if host.cpus.online.is_none() && !found.is_empty() {
        host.cpus.online = Some(online.clone());
        host.cpus.present.get_or_insert_with(|| found.clone());
        host.cpus.possible.get_or_insert_with(|| found.clone());
        host.cpus.offline.get_or_insert_with(|| found.difference(&online));
        for u in cx.unknown.iter_mut().filter(|u| {
            matches!(
                u.field.as_str(),
                "cpus.online" | "cpus.present" | "cpus.possible" | "cpus.offline"
            )
        }) {
            u.reason = format!("{}; inferred from the cpuN directories", u.reason);
        }
    }
    host.topology.threads_per_core =
        host.topology.cpus.iter().map(|c| c.siblings.len()).max().unwrap_or(0);
    host.topology.smt_control = cx.opt_value("topology.smt_control", &format!("{CPU}/smt/control"));
    host.topology.smt_active =
        cx.opt_value("topology.smt_active", &format!("{CPU}/smt/active")).map(|v| v == "1");

    read_nodes(cx, host);
}

fn size_kb(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(k) = s.strip_suffix('K') {
        k.parse().ok()
    } else if let Some(m) = s.strip_suffix('M') {
        m.parse::<u64>().ok().map(|m| m * 1024)
    } else {
        s.parse::<u64>().ok().map(|b| b / 1024)
    }
}

fn read_nodes(cx: &mut Ctx, host: &mut Host) {
    let Some(names) = cx.list("numa_nodes", NODE) else {
        cx.unknown("numa_nodes", NODE, "not present".into());
        return;
    };
    for id in numbered(&names, "node") {
        let base = format!("{NODE}/node{id}");
        let cpus =
            cx.cpus("numa_nodes[].cpus", &format!("{base}/cpulist"), false).unwrap_or_default();
        let distances = cx
            .opt_value("numa_nodes[].distances", &format!("{base}/distance"))
            .map(|d| d.split_whitespace().filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default();
        let meminfo = cx.opt_text("numa_nodes[].mem_total_kb", &format!("{base}/meminfo"));
        let hugepages =
            super::memory::hugepages(cx, "numa_nodes[].hugepages", &format!("{base}/hugepages"));
        for c in host.topology.cpus.iter_mut().filter(|c| cpus.contains(c.cpu)) {
            c.numa_node = Some(id);
        }
        host.numa_nodes.push(NumaNode {
            id,
            cpus,
            distances,
            mem_total_kb: meminfo.as_deref().and_then(|m| kv::kb(m, "MemTotal")),
            mem_free_kb: meminfo.as_deref().and_then(|m| kv::kb(m, "MemFree")),
            hugepages,
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cache_sizes() {
        assert_eq!(super::size_kb("32K"), Some(32));
        assert_eq!(super::size_kb("28M"), Some(28 * 1024));
        assert_eq!(super::size_kb("junk"), None);
    }
}
