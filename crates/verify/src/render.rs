//! Output of a verify run: the grouped terminal table and JUnit XML (JSON is the serde form of
//! [`Report`]).

use std::fmt::Write;

use crate::gather::Verified;
use crate::model::{Group, Report, Status};

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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// JUnit XML: one testcase per check (classname = group); fail → `<failure>`, n.a. and
/// pending-reboot → `<skipped>`, the rest pass with their evidence in `<system-out>`.
pub fn junit(report: &Report) -> String {
    let s = &report.summary;
    let skipped = s.not_applicable + s.pending_reboot;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites><testsuite name=\"lowlat verify\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{skipped}\">",
        report.checks.len(),
        s.fail
    );
    for c in &report.checks {
        let evidence = esc(&c.evidence.join("\n"));
        let _ =
            write!(out, "  <testcase classname=\"{}\" name=\"{}\">", c.group.as_str(), esc(&c.id));
        match c.status {
            Status::Fail => {
                let msg = esc(c.evidence.first().map(String::as_str).unwrap_or("failed"));
                let fix =
                    c.fix.as_deref().map(|f| format!("\nfix: {}", esc(f))).unwrap_or_default();
                let _ = write!(out, "<failure message=\"{msg}\">{evidence}{fix}</failure>");
            }
            Status::NotApplicable | Status::PendingReboot => {
                let _ = write!(out, "<skipped message=\"{}\"/>", c.status.as_str());
            }
            Status::Pass | Status::Warn | Status::ExpectedResidue => {
                let _ = write!(out, "<system-out>{}: {evidence}</system-out>", c.status.as_str());
            }
        }
        out.push_str("</testcase>\n");
    }
    out.push_str("</testsuite></testsuites>\n");
    out
}
