//! Memory and sysctls: hugepages per NUMA node, THP, the latency-relevant sysctls.

use std::fmt::Write as _;

use host::Host;

use super::fmt::{kv, opt, set_or};
use crate::term::{wrap, Style};

pub(super) fn memory(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Memory, sysctls, workqueues"));
    let m = &h.memory;
    kv(
        out,
        st,
        "memory",
        &format!(
            "{} MiB total, {} MiB available",
            m.mem_total_kb.map_or("?".into(), |k| (k / 1024).to_string()),
            m.mem_available_kb.map_or("?".into(), |k| (k / 1024).to_string())
        ),
    );
    kv(
        out,
        st,
        "THP",
        &format!(
            "enabled {}, defrag {}; KSM run {}",
            opt(&m.thp_enabled),
            opt(&m.thp_defrag),
            opt(&m.ksm_run)
        ),
    );
    let mut hp: Vec<String> = m
        .hugepages
        .iter()
        .filter(|(_, v)| v.total > 0)
        .map(|(k, v)| format!("{}×{k}kB ({} free)", v.total, v.free))
        .collect();
    for n in &h.numa_nodes {
        for (k, v) in n.hugepages.iter().filter(|(_, v)| v.total > 0) {
            hp.push(format!("node{}: {}×{k}kB", n.id, v.total));
        }
    }
    kv(
        out,
        st,
        "hugepages",
        &if hp.is_empty() {
            format!("none allocated (default size {} kB)", opt(&m.default_hugepage_kb))
        } else {
            hp.join(", ")
        },
    );
    if !h.sysctls.values.is_empty() {
        let s: Vec<String> = h
            .sysctls
            .values
            .iter()
            .map(|(k, v)| format!("{}={v}", k.rsplit_once('.').map_or(k.as_str(), |x| x.1)))
            .collect();
        for (i, l) in wrap(&s.join(" "), st.width, "                   ").into_iter().enumerate() {
            if i == 0 {
                kv(out, st, "sysctls", l.trim_start());
            } else {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    let w = &h.workqueues;
    kv(
        out,
        st,
        "workqueues",
        &format!(
            "unbound cpumask {}, writeback {}, {} per-queue masks",
            set_or(&w.cpumask, "unknown"),
            set_or(&w.writeback, "unknown"),
            w.per_workqueue.len()
        ),
    );
    if !h.cgroup.partitions.is_empty() {
        let p: Vec<String> = h
            .cgroup
            .partitions
            .iter()
            .map(|p| format!("{} {} ({})", p.path, p.partition, set_or(&p.cpus_effective, "?")))
            .collect();
        kv(out, st, "cpuset parts", &p.join("; "));
    }
    for b in &h.block_devices {
        kv(
            out,
            st,
            &format!("block {}", b.name),
            &format!(
                "{}, scheduler {}, wbt {}, cache {}",
                match b.rotational {
                    Some(true) => "rotational",
                    Some(false) => "non-rotational",
                    None => "?",
                },
                opt(&b.scheduler),
                b.wbt_lat_usec.as_ref().map_or("unknown".into(), |w| format!("{w} µs")),
                opt(&b.write_cache)
            ),
        );
    }
    for n in &h.net_interfaces {
        kv(
            out,
            st,
            &format!("net {}", n.name),
            &format!(
                "{} rx / {} tx queues, {}{}",
                opt(&n.rx_queues),
                opt(&n.tx_queues),
                opt(&n.operstate),
                n.pci_address.as_ref().map_or(String::new(), |a| format!(", pci {a}"))
            ),
        );
    }
    out.push('\n');
}
