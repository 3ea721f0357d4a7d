//! Kernel and boot: release, preemption, the command line's isolation parameters.

use std::fmt::Write as _;

use host::Host;

use super::fmt::{kv, opt, set_or};
use crate::term::{Paint, Style};

pub(super) fn kernel(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Kernel and boot"));
    let k = &h.kernel;
    let rel = match &k.release_source {
        Some(s) => format!("{} (from {s})", opt(&k.release)),
        None => opt(&k.release),
    };
    kv(out, st, "release", &rel);
    kv(out, st, "version", &opt(&k.version));
    kv(
        out,
        st,
        "realtime",
        &format!(
            "{} — {}",
            opt(&k.realtime),
            k.realtime_evidence.as_deref().unwrap_or("no evidence")
        ),
    );
    kv(
        out,
        st,
        "clocksource",
        &format!(
            "{} (available: {})",
            opt(&k.clocksource),
            if k.available_clocksources.is_empty() {
                "unknown".into()
            } else {
                k.available_clocksources.join(" ")
            }
        ),
    );
    let b = &k.boot;
    let iso = match &b.isolcpus {
        Some(i) => format!(
            "{} (flags: {})",
            i.cpus,
            if i.flags.is_empty() { "none = domain".into() } else { i.flags.join(",") }
        ),
        None => "not set".into(),
    };
    kv(out, st, "isolcpus=", &iso);
    kv(out, st, "nohz_full=", &set_or(&b.nohz_full, "not set"));
    kv(out, st, "rcu_nocbs=", &set_or(&b.rcu_nocbs, "not set"));
    kv(out, st, "irqaffinity=", &set_or(&b.irqaffinity, "not set"));
    kv(out, st, "kthread_cpus=", &set_or(&b.kthread_cpus, "not set"));
    kv(out, st, "systemd.cpu_aff.", &set_or(&b.systemd_cpu_affinity, "not set"));
    if !b.hugepages.is_empty() {
        let hp: Vec<String> = b.hugepages.iter().map(|(k, v)| format!("{k}={v}")).collect();
        kv(out, st, "hugepages", &hp.join(" "));
    }
    const NOTABLE: &[&str] = &[
        "nohz",
        "skew_tick",
        "idle",
        "intel_idle.max_cstate",
        "processor.max_cstate",
        "intel_pstate",
        "nosoftlockup",
        "nmi_watchdog",
        "tsc",
        "mitigations",
        "rcu_nocb_poll",
        "rcutree.kthread_prio",
        "audit",
        "mce",
        "iommu",
        "intel_iommu",
        "transparent_hugepage",
        "cpuidle_haltpoll.force",
    ];
    let notable: Vec<String> = b
        .tokens
        .iter()
        .filter(|(key, _)| NOTABLE.contains(&key.as_str()))
        .map(|(key, v)| v.as_ref().map_or(key.clone(), |v| format!("{key}={v}")))
        .collect();
    if !notable.is_empty() {
        kv(out, st, "also", &notable.join(" "));
    }
    kv(out, st, "sysfs isolated", &set_or(&h.cpus.isolated, "unknown"));
    kv(out, st, "sysfs nohz_full", &set_or(&h.cpus.nohz_full, "unknown"));
    for (key, e) in &b.errors {
        kv(out, st, "cmdline error", &st.paint(Paint::Red, &format!("{key}=: {e}")));
    }
    out.push('\n');
}
