//! Output of a verify run: the grouped terminal table and JUnit XML (JSON is the serde form of
//! [`Report`]).

use std::fmt::Write;

use crate::gather::Verified;
use crate::model::{Group, Report};

/// The terminal view of a run: what was checked against what, then [`table`].
pub fn terminal(v: &Verified) -> String {
    let list = |s: &cpuset::CpuSet| if s.is_empty() { "-".to_string() } else { s.to_list() };
    let mut out = format!(
        "lowlat verify: {} against plan {:?} (isolated {}, housekeeping {}){}\n\n",
        v.source,
        v.plan.name,
        list(&v.plan.isolated),
        list(&v.plan.reserved),
        if v.live { "" } else { "; live-only checks are n.a." }
    );
    if v.plan.isolated.is_empty() {
        out.push_str("note: the plan isolates no CPU, so most checks have nothing to check; make one with `lowlat plan -o plan.yaml` and pass --plan\n\n");
    }
    out.push_str(&table(&v.report));
    out
}

/// The grouped table: one line per check, evidence indented below, fix after `→`.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    for g in Group::ALL {
        let checks: Vec<_> = report.checks.iter().filter(|c| c.group == g).collect();
        if checks.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}", g.as_str());
        for c in checks {
            let first = c.evidence.first().map(String::as_str).unwrap_or("");
            let _ = writeln!(out, "  {:<16} {:<30} {first}", c.status.as_str(), c.id);
            for e in c.evidence.iter().skip(1) {
                let _ = writeln!(out, "  {:<16} {:<30}   {e}", "", "");
            }
            if let Some(f) = &c.fix {
                let _ = writeln!(out, "  {:<16} {:<30} → {f}", "", "");
            }
        }
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "\n{} pass, {} fail, {} warn, {} expected residue, {} pending reboot, {} n.a.",
        s.pass, s.fail, s.warn, s.expected_residue, s.pending_reboot, s.not_applicable
    );
    out
}
