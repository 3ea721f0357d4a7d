//! Memory: `/proc/meminfo` totals and default hugepage size, transparent hugepages, KSM, and
//! system-wide hugepages per size (per-node counts are read with the NUMA nodes).

use std::collections::BTreeMap;

use super::Ctx;
use crate::model::{Host, HugePages};
use crate::parse::{bracketed, kv};

const MM: &str = "sys/kernel/mm";

pub(super) fn read(cx: &mut Ctx, host: &mut Host) {
    let m = &mut host.memory;
    if let Some(t) = cx.text("memory.mem_total_kb", "proc/meminfo") {
        m.mem_total_kb = kv::kb(&t, "MemTotal");
        m.mem_available_kb = kv::kb(&t, "MemAvailable");
        m.default_hugepage_kb = kv::kb(&t, "Hugepagesize");
        if m.mem_total_kb.is_none() {
            cx.warn("proc/meminfo", None, "no MemTotal line");
        }
    }
    let thp = |cx: &mut Ctx, f: &str| {
        let path = format!("{MM}/transparent_hugepage/{f}");
        let v = cx.opt_value(&format!("memory.thp_{f}"), &path)?;
        let sel = bracketed(&v);
        if sel.is_none() {
            cx.warn(
                &path,
                Some(1),
                format!("no [selected] value in \"{}\"", util::term::excerpt(&v, 60)),
            );
        }
        sel
    };
    let enabled = thp(cx, "enabled");
    let defrag = thp(cx, "defrag");
    host.memory.thp_enabled = enabled;
    host.memory.thp_defrag = defrag;
    if host.memory.thp_enabled.is_none() {
        cx.unknown(
            "memory.thp_enabled",
            &format!("{MM}/transparent_hugepage/enabled"),
            "not present".into(),
        );
    }
    host.memory.ksm_run = cx.opt_value("memory.ksm_run", &format!("{MM}/ksm/run"));
    host.memory.hugepages = hugepages(cx, "memory.hugepages", &format!("{MM}/hugepages"));
}

/// The `hugepages-<N>kB/{nr,free}_hugepages` pools under `dir` (system-wide
/// `/sys/kernel/mm/hugepages` or a NUMA node's `hugepages`), keyed by page size in kB.
pub(super) fn hugepages(cx: &mut Ctx, field: &str, dir: &str) -> BTreeMap<u64, HugePages> {
    let mut out = BTreeMap::new();
    for s in cx.list(field, dir).unwrap_or_default() {
        let Some(kb) = s
            .strip_prefix("hugepages-")
            .and_then(|r| r.strip_suffix("kB"))
            .and_then(|n| n.parse().ok())
        else {
            continue;
        };
        let d = format!("{dir}/{s}");
        let total = cx.opt_int(field, &format!("{d}/nr_hugepages")).unwrap_or(0);
        let free = cx.opt_int(field, &format!("{d}/free_hugepages")).unwrap_or(0);
        out.insert(kb, HugePages { total, free });
    }
    out
}
