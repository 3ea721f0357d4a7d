//! The system context in the report header: kernel, PREEMPT_RT, cmdline, isolated CPUs,
//! governor, SMT, clocksource, virtualization. Read from an `inspect` document when there is
//! one (richer), else from the `host` block every result file carries.

use serde_json::Value;

use crate::input::Doc;

fn s(v: &Value, ptr: &str) -> Option<String> {
    match v.pointer(ptr)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The hypervisor's name when any input says the host is virtualized.
pub fn virtualization(docs: &[Doc]) -> Option<String> {
    docs.iter().find_map(|d| {
        s(&d.value, "/virtualization").or_else(|| s(&d.value, "/host/virtualization"))
    })
}

fn yes_no(b: Option<bool>) -> String {
    match b {
        Some(true) => "yes".to_string(),
        Some(false) => "no".to_string(),
        None => "unknown".to_string(),
    }
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
    for d in docs.iter().filter(|d| d.kind == "inspect") {
        let v = &d.value;
        push("Host", s(v, "/source/node").or_else(|| s(v, "/hostname")));
        push("Kernel", s(v, "/kernel/release"));
        let rt = v.pointer("/kernel/realtime").and_then(Value::as_bool);
        let preempt = s(v, "/kernel/preempt");
        push(
            "PREEMPT_RT",
            Some(match preempt {
                Some(p) => format!("{} ({p})", yes_no(rt)),
                None => yes_no(rt),
            }),
        );
        push("Kernel cmdline", s(v, "/kernel/cmdline"));
        push("Online CPUs", s(v, "/cpus/online"));
        push("Isolated CPUs", s(v, "/cpus/isolated").or_else(|| Some("none".to_string())));
        push("nohz_full", s(v, "/cpus/nohz_full").or_else(|| Some("none".to_string())));
        push("Governor", governors_of_inspect(v));
        let smt = v.pointer("/topology/smt_active").and_then(Value::as_bool);
        let tpc = v.pointer("/topology/threads_per_core").and_then(Value::as_u64);
        push(
            "SMT",
            Some(match tpc {
                Some(n) if n > 0 => format!("{} ({n} thread(s) per core)", on_off(smt)),
                _ => on_off(smt),
            }),
        );
        push("Clocksource", s(v, "/kernel/clocksource"));
        push("CPU model", s(v, "/topology/cpus/0/model"));
        push(
            "Virtualization",
            Some(s(v, "/virtualization").unwrap_or_else(|| "none detected (bare metal)".into())),
        );
    }
    for d in docs.iter().filter(|d| d.kind != "inspect") {
        let mut h = d.envelope().host;
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
        push("Isolated CPUs", h.isolated.or_else(|| Some("none".to_string())));
        push("nohz_full", h.nohz_full.or_else(|| Some("none".to_string())));
        push("Governor", (!h.governors.is_empty()).then(|| h.governors.join(", ")));
        push("SMT", h.smt_active.map(|b| on_off(Some(b))));
        push("Clocksource", h.clocksource);
        push("CPU model", h.cpu_model);
        push(
            "Virtualization",
            Some(h.virtualization.unwrap_or_else(|| "none detected (bare metal)".into())),
        );
    }
    for d in docs.iter().filter(|d| d.kind == "plan") {
        let p: crate::input::PlanView = d.view().unwrap_or_default();
        push(
            "Plan",
            Some(format!(
                "{}: housekeeping {}, isolated {}{}",
                p.name.unwrap_or_else(|| d.source.clone()),
                p.reserved.unwrap_or_else(|| "?".into()),
                p.isolated.unwrap_or_else(|| "?".into()),
                p.offlined
                    .filter(|o| !o.is_empty())
                    .map(|o| format!(", offline {o}"))
                    .unwrap_or_default()
            )),
        );
    }
    out
}

fn on_off(b: Option<bool>) -> String {
    match b {
        Some(true) => "on".to_string(),
        Some(false) => "off".to_string(),
        None => "unknown".to_string(),
    }
}

/// Distinct governors in `power.cpus[].governor`, with how many CPUs use each.
fn governors_of_inspect(v: &Value) -> Option<String> {
    let cpus = v.pointer("/power/cpus")?.as_array()?;
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for c in cpus {
        if let Some(g) = c.get("governor").and_then(Value::as_str) {
            *counts.entry(g.to_string()).or_insert(0) += 1;
        }
    }
    if counts.is_empty() {
        return None;
    }
    Some(counts.iter().map(|(g, n)| format!("{g} ({n} CPUs)")).collect::<Vec<_>>().join(", "))
}
