//! Power: governors, frequency limits and idle states per CPU.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use cpuset::CpuSet;
use host::Host;

use super::fmt::{kv, opt};
use crate::term::{Paint, Style, Table};

pub(super) fn power(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Power"));
    let p = &h.power;
    kv(out, st, "cpuidle driver", &opt(&p.cpuidle_driver));
    kv(out, st, "intel_pstate", &opt(&p.intel_pstate_status));
    let mut gov: BTreeMap<String, CpuSet> = BTreeMap::new();
    let mut qos: BTreeMap<String, CpuSet> = BTreeMap::new();
    for c in &p.cpus {
        let g = match (&c.scaling_driver, &c.governor) {
            (Some(d), Some(g)) => format!("{d}/{g}"),
            (None, Some(g)) => g.clone(),
            _ => "no cpufreq".into(),
        };
        gov.entry(g).or_default().insert(c.cpu);
        qos.entry(c.pm_qos_resume_latency_us.clone().unwrap_or_else(|| "unknown".into()))
            .or_default()
            .insert(c.cpu);
    }
    let g: Vec<String> = gov.iter().map(|(g, s)| format!("{g} on {s}")).collect();
    let g = if g.is_empty() { "unknown".to_string() } else { g.join("; ") };
    kv(out, st, "governor", &g);
    let q: Vec<String> = qos.iter().map(|(v, s)| format!("{v} on {s}")).collect();
    if !q.is_empty() {
        kv(out, st, "pm_qos resume", &format!("{} (µs; 0 = no limit)", q.join("; ")));
    }
    // C-states: one row per state name, CPUs where it is enabled.
    let mut states: BTreeMap<(usize, String), (Option<u64>, CpuSet, CpuSet)> = BTreeMap::new();
    for c in &p.cpus {
        for s in &c.idle_states {
            let e = states.entry((s.index, s.name.clone())).or_insert((
                s.exit_latency_us,
                CpuSet::new(),
                CpuSet::new(),
            ));
            if s.disabled.unwrap_or(false) {
                e.2.insert(c.cpu);
            } else {
                e.1.insert(c.cpu);
            }
        }
    }
    if states.is_empty() {
        kv(out, st, "C-states", "unknown (no cpuidle)");
    } else {
        let mut t = Table::new(&["STATE", "EXIT µs", "ENABLED ON", "DISABLED ON"]).right(&[1]);
        for ((_, name), (lat, en, dis)) in states {
            let deep = lat.is_some_and(|l| l > host::findings::DEEP_CSTATE_US) && !en.is_empty();
            let lat = lat.map_or("?".into(), |l| l.to_string());
            t.row(vec![
                name,
                if deep { st.paint(Paint::Yellow, &lat) } else { lat },
                if en.is_empty() { "-".into() } else { en.to_list() },
                if dis.is_empty() { "-".into() } else { dis.to_list() },
            ]);
        }
        out.push_str(&t.render(st, 2));
    }
    out.push('\n');
}
