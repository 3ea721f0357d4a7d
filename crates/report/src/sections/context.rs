//! The system context in the report header: kernel, PREEMPT_RT, cmdline, isolated CPUs,
//! governor, SMT, clocksource, virtualization. Read from an `inspect` document (the host
//! model) when there is one (richer), else from the `host` summary every result carries.

use cpuset::CpuSet;

use crate::input::{Body, Doc};

fn yes_no(b: Option<bool>) -> String {
    match b {
        Some(true) => "yes".to_string(),
        Some(false) => "no".to_string(),
        None => "unknown".to_string(),
    }
}

fn on_off(b: Option<bool>) -> String {
    match b {
        Some(true) => "on".to_string(),
        Some(false) => "off".to_string(),
        None => "unknown".to_string(),
    }
}

/// A non-empty text.
fn text(s: &Option<String>) -> Option<String> {
    s.clone().filter(|s| !s.is_empty())
}

/// A non-empty CPU set as a cpu-list.
fn list(s: &Option<CpuSet>) -> Option<String> {
    s.as_ref().filter(|s| !s.is_empty()).map(CpuSet::to_list)
}

/// Context rows (label, value) for the header.
pub fn rows(docs: &[Doc]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut push = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            if !out.iter().any(|(l, _)| l == k) {
                out.push((k.to_string(), v));
            }
        }
    };
    let none = || Some("none".to_string());
    let bare_metal = || "none detected (bare metal)".to_string();
    for h in docs.iter().filter_map(|d| match &d.body {
        Body::Inspect(h) => Some(h),
        _ => None,
    }) {
        push("Host", text(&h.source.node).or_else(|| text(&h.hostname)));
        push("Kernel", text(&h.kernel.release));
        let rt = yes_no(h.kernel.realtime);
        push(
            "PREEMPT_RT",
            Some(match text(&h.kernel.preempt) {
                Some(p) => format!("{rt} ({p})"),
                None => rt,
            }),
        );
        push("Kernel cmdline", text(&h.kernel.cmdline));
        push("Online CPUs", list(&h.cpus.online));
        push("Isolated CPUs", list(&Some(h.isolated_cpus())).or_else(none));
        push("nohz_full", list(&Some(h.nohz_full_cpus())).or_else(none));
        push("Governor", governors(h));
        let smt = on_off(h.topology.smt_active);
        push(
            "SMT",
            Some(match h.topology.threads_per_core {
                0 => smt,
                n => format!("{smt} ({n} thread(s) per core)"),
            }),
        );
        push("Clocksource", text(&h.kernel.clocksource));
        push("CPU model", h.topology.cpus.first().and_then(|c| text(&c.model)));
        push(
            "Virtualization",
            Some(text(&h.virtualization).unwrap_or_else(|| match &h.virtualization_unknown {
                Some(why) => format!("unknown: {why}"),
                None => bare_metal(),
            })),
        );
    }
    for h in docs.iter().filter_map(Doc::host_context) {
        let mut h = h.clone();
        h.isolated = h.isolated.filter(|s| !s.is_empty());
        h.nohz_full = h.nohz_full.filter(|s| !s.is_empty());
        if h == Default::default() {
            continue;
        }
        push("Host", h.hostname);
        push("Kernel", h.kernel);
        push("PREEMPT_RT", h.realtime.map(|b| yes_no(Some(b))));
        push("Kernel cmdline", h.cmdline);
        push("Online CPUs", h.online);
        push("Isolated CPUs", h.isolated.or_else(none));
        push("nohz_full", h.nohz_full.or_else(none));
        push("Governor", (!h.governors.is_empty()).then(|| h.governors.join(", ")));
        push("SMT", h.smt_active.map(|b| on_off(Some(b))));
        push("Clocksource", h.clocksource);
        push("CPU model", h.cpu_model);
        push("Virtualization", Some(h.virtualization.unwrap_or_else(bare_metal)));
    }
    for (d, p) in docs.iter().filter_map(|d| match &d.body {
        Body::Plan(p) => Some((d, p)),
        _ => None,
    }) {
        push(
            "Plan",
            Some(format!(
                "{}: housekeeping {}, isolated {}{}",
                if p.name.is_empty() { d.source.as_str() } else { p.name.as_str() },
                p.reserved.to_list(),
                p.isolated.to_list(),
                if p.offlined.is_empty() {
                    String::new()
                } else {
                    format!(", offline {}", p.offlined.to_list())
                }
            )),
        );
    }
    out
}

/// Distinct governors of the host's CPUs, with how many CPUs use each.
fn governors(h: &host::Host) -> Option<String> {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for g in h.power.cpus.iter().filter_map(|c| c.governor.as_deref()) {
        *counts.entry(g).or_insert(0) += 1;
    }
    if counts.is_empty() {
        return None;
    }
    Some(counts.iter().map(|(g, n)| format!("{g} ({n} CPUs)")).collect::<Vec<_>>().join(", "))
}
