//! `lowlat inspect --containers`: every container/pod cgroup with its CPU usage, CFS quota
//! and throttling, cpuset (and whether it touches isolated CPUs), memory, PSI and RT
//! readiness, then each container's latency-relevant issues (`host::containers::issues`).

use std::fmt::Write as _;

use host::cgroup::Recognised;
use host::containers::{issues, Container};
use host::rt::Tree;
use host::Host;

use super::fmt::kv;
use crate::term::{truncate, Paint, Style};

fn ms(ns: Option<u64>) -> String {
    ns.map_or("?".into(), |v| format!("{:.1}s", v as f64 / 1e9))
}

fn mib(b: Option<u64>) -> String {
    b.map_or("-".into(), |v| format!("{}M", v / (1 << 20)))
}

fn row(c: &Container, h: &Host) -> String {
    let iso = h.isolated_cpus();
    let name = truncate(&util::term::sanitize(&c.path, false), 60);
    let kind = match &c.qos {
        Some(q) => format!("{:?}/{q}", c.runtime).to_lowercase(),
        None => format!("{:?}", c.runtime).to_lowercase(),
    };
    let quota = match (c.cfs_quota_us, c.cfs_period_us) {
        (Some(q), Some(p)) if p > 0 => format!("{:.2} CPU", q as f64 / p as f64),
        (None, Some(_)) => "none".into(),
        _ => "?".into(),
    };
    let thr = match (c.nr_throttled, c.nr_periods) {
        (Some(t), Some(n)) => format!("{t}/{n}"),
        _ => "?".into(),
    };
    let cpuset = c.cpuset.as_ref().map_or("?".into(), |s| {
        let on = s.intersection(&iso);
        if on.is_empty() {
            s.to_list()
        } else {
            format!("{} (iso {})", s.to_list(), on.to_list())
        }
    });
    let psi = c.cpu_pressure_avg10.map_or("-".into(), |v| format!("{v:.2}"));
    let rt = match c.rt_ready {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "?",
    };
    let by = match c.recognised {
        Recognised::NamePattern => "name",
        Recognised::Namespaces(_) => "ns",
    };
    format!(
        "  {name:<60} {kind:<22} {:>8} {quota:>9} {thr:>11} {cpuset:<18} {:>7}/{:<7} {psi:>5} {rt:<3} {by}",
        ms(c.cpu_usage_ns),
        mib(c.memory_bytes),
        mib(c.memory_limit_bytes),
    )
}

/// The containers section.
pub(super) fn containers(out: &mut String, h: &Host, st: &Style) {
    let cs = &h.cgroup.containers;
    let _ = writeln!(out, "{}", st.heading(&format!("Containers ({})", cs.len())));
    let rt = &h.cgroup.rt;
    let tree = match &rt.tree {
        Tree::V1 { mount, .. } => format!("cgroup v1, cpu controller at {mount}"),
        Tree::V2 { mount, .. } => format!("cgroup v2 at {mount}"),
        Tree::Unknown => "no cgroup hierarchy with the cpu controller found".into(),
    };
    kv(out, st, "cgroups", &tree);
    kv(
        out,
        st,
        "RT budgets",
        &format!(
            "{}; kernel.sched_rt_runtime_us = {}",
            rt.rt_group_sched_evidence.as_deref().unwrap_or("RT group scheduling unknown"),
            rt.sched_rt_runtime_us.map_or("?".into(), |v| v.to_string())
        ),
    );
    if cs.is_empty() {
        let _ = writeln!(out, "  no container cgroups found\n");
        return;
    }
    let _ = writeln!(
        out,
        "{}",
        st.paint(
            Paint::Dim,
            &format!(
                "  {:<60} {:<22} {:>8} {:>9} {:>11} {:<18} {:>15} {:>5} RT  by",
                "cgroup",
                "runtime/qos",
                "cpu",
                "quota",
                "throttled",
                "cpuset",
                "memory/limit",
                "psi"
            )
        )
    );
    for c in cs {
        let _ = writeln!(out, "{}", row(c, h));
    }
    // by: how each was recognised; the namespace evidence, for those not known by name.
    for c in cs {
        if let Recognised::Namespaces(ev) = &c.recognised {
            let differ: Vec<&str> = ev.differ.iter().map(|n| n.as_str()).collect();
            let _ = writeln!(
                out,
                "  {} {}: pid {} runs in other {} namespace{} than PID 1{}",
                st.paint(Paint::Dim, "ns"),
                util::term::sanitize(&c.path, false),
                ev.pid,
                differ.join(", "),
                if differ.len() == 1 { "" } else { "s" },
                ev.root
                    .as_ref()
                    .map(|r| format!(", root {}", util::term::sanitize(r, false)))
                    .unwrap_or_default()
            );
        }
    }
    // Containers inside containers are counted on their outer one, not listed.
    for c in cs.iter().filter(|c| c.nested_containers > 0) {
        let n = c.nested_containers;
        let _ = writeln!(
            out,
            "  {} {}: holds {n} container{} of its own (not listed apart)",
            st.paint(Paint::Dim, "nested"),
            util::term::sanitize(&c.path, false),
            if n == 1 { "" } else { "s" },
        );
    }
    let mut any = false;
    for c in cs {
        let found = issues(c, h);
        if found.is_empty() {
            continue;
        }
        if !any {
            let _ = writeln!(out, "\n  {}", st.paint(Paint::Bold, "issues"));
            any = true;
        }
        let _ = writeln!(out, "  {}", util::term::sanitize(&c.path, false));
        for i in found {
            let _ = writeln!(out, "    {} {}", st.paint(Paint::Yellow, "!"), i);
        }
    }
    out.push('\n');
}
