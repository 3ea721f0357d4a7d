//! The summary: source, CPUs, kernel, isolation, virtualization, what was captured.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use host::{Host, Severity};

use super::fmt::{kv, opt, set_or};
use crate::term::{Paint, Style};

pub(super) fn summary(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Summary"));
    let src = match &h.source.node {
        Some(n) => format!("{} {} (node {n})", h.source.kind, h.source.path),
        None => format!("{} {}", h.source.kind, h.source.path),
    };
    kv(out, st, "source", &src);
    if let Some(n) = &h.hostname {
        kv(out, st, "hostname", n);
    }
    let online = h.online_cpus();
    let packages: BTreeSet<i64> = h.topology.cpus.iter().filter_map(|c| c.package).collect();
    let cores: BTreeSet<(Option<i64>, Option<i64>)> =
        h.topology.cpus.iter().map(|c| (c.package, c.core)).collect();
    let model = h
        .topology
        .cpus
        .iter()
        .find_map(|c| c.model.clone())
        .unwrap_or_else(|| "unknown model".into());
    kv(
        out,
        st,
        "cpus",
        &format!(
            "{} online ({online}), {} package{}, {} cores, {} thread{}/core, {} NUMA node{} — {model}",
            online.len(),
            packages.len(),
            if packages.len() == 1 { "" } else { "s" },
            cores.len(),
            h.topology.threads_per_core,
            if h.topology.threads_per_core == 1 { "" } else { "s" },
            h.numa_nodes.len(),
            if h.numa_nodes.len() == 1 { "" } else { "s" },
        ),
    );
    let rt = match h.kernel.realtime {
        Some(true) => st.paint(Paint::Green, "PREEMPT_RT"),
        Some(false) => h.kernel.preempt.clone().unwrap_or_else(|| "not RT".into()),
        None => "RT unknown".into(),
    };
    kv(out, st, "kernel", &format!("{} ({rt})", opt(&h.kernel.release)));
    let iso = h.isolated_cpus();
    let nohz = h
        .cpus
        .nohz_full
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| h.kernel.boot.nohz_full.clone());
    kv(
        out,
        st,
        "isolation",
        &format!(
            "isolated {}, nohz_full {}, housekeeping {}",
            if iso.is_empty() { "none".to_string() } else { st.paint(Paint::Cyan, &iso.to_list()) },
            set_or(&nohz, "none"),
            online.difference(&iso).to_list()
        ),
    );
    let virt = match &h.virtualization {
        Some(v) => {
            st.paint(Paint::Yellow, &format!("{v} (latency includes the hypervisor's noise)"))
        }
        None => match &h.virtualization_unknown {
            Some(why) => st.paint(Paint::Yellow, &format!("unknown: {why}")),
            None => "bare metal (no hypervisor seen)".into(),
        },
    };
    kv(out, st, "virtualization", &virt);
    let tasks = match &h.tasks {
        Some(t) => format!("{} threads", t.len()),
        None => "tasks not captured".into(),
    };
    kv(
        out,
        st,
        "contents",
        &format!(
            "{tasks}, {} IRQs, {} PCI devices, cgroup {}",
            h.irqs.len(),
            h.pci_devices.len(),
            opt(&h.cgroup.version)
        ),
    );
    let (e, w, i) = h.findings.iter().fold((0, 0, 0), |(e, w, i), f| match f.severity {
        Severity::Error => (e + 1, w, i),
        Severity::Warn => (e, w + 1, i),
        Severity::Info => (e, w, i + 1),
    });
    kv(out, st, "findings", &format!("{e} error, {w} warning, {i} info (details at the end)"));
    out.push('\n');
}
