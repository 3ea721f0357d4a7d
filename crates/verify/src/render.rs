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
    // The verdict first, then the few commands that fix the failures (each once, with the
    // checks it fixes), then the details.
    let s = &v.report.summary;
    let total = v.report.checks.len();
    let rest = format!(
        "{} pass, {} warn, {} expected residue, {} pending reboot, {} n.a.",
        s.pass, s.warn, s.expected_residue, s.pending_reboot, s.not_applicable
    );
    if s.fail == 0 {
        let _ = writeln!(out, "PASS: no check of {total} fails ({rest})");
    } else {
        let _ = writeln!(out, "FAIL: {} of {total} checks fail ({rest})", s.fail);
    }
    let fixes = fixes(&v.report);
    if !fixes.is_empty() {
        out.push_str(
            "
to fix the failures:
",
        );
        for (i, (fix, ids)) in fixes.iter().enumerate() {
            let _ = writeln!(out, "  [{}] {fix}", i + 1);
            let _ = writeln!(out, "      fixes {}: {}", ids.len(), ids.join(", "));
        }
    }
    out.push_str(
        "
details:
",
    );
    out.push_str(&grouped(&v.report, &fixes));
    out
}

/// The command a fix starts with (its first `…` span), else the whole fix: failures that one
/// command fixes share it.
fn command(fix: &str) -> &str {
    let mut parts = fix.splitn(3, '`');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(_), Some(cmd), Some(_)) if !cmd.is_empty() => cmd,
        _ => fix,
    }
}

/// The commands that fix the failures, each once, in the order of their first failure, with
/// the checks each fixes ([`by_command`]; a failure without a fix is listed as such).
pub fn fixes(report: &Report) -> Vec<(String, Vec<String>)> {
    let failed = report.checks.iter().filter(|c| c.status == crate::model::Status::Fail);
    by_command(
        failed.map(|c| {
            (c.id.as_str(), c.fix.as_deref().unwrap_or("(no fix known: see the evidence)"))
        }),
    )
}

/// `(check id, fix)` pairs grouped by the command each fix starts with, each command once in
/// the order of its first check, with the checks it fixes: fixes that start with the same
/// command share one entry, shown with the shortest of their texts (a longer one, with its
/// nuances, stays with its check in the details). The terminal view and the HTML report's
/// "To fix" table both group this way.
pub fn by_command<'a>(
    checks: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(&str, &str, Vec<String>)> = Vec::new();
    for (id, fix) in checks {
        let key = command(fix);
        match out.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, shown, ids)) => {
                if fix.len() < shown.len() {
                    *shown = fix;
                }
                ids.push(id.to_string());
            }
            None => out.push((key, fix, vec![id.to_string()])),
        }
    }
    out.into_iter().map(|(_, shown, ids)| (shown.to_string(), ids)).collect()
}

/// The grouped table: one line per check, evidence indented below, fix after `→`.
pub fn table(report: &Report) -> String {
    grouped(report, &[])
}

/// The table; a failure whose fix is numbered in `fixes` points to it instead of repeating it.
fn grouped(report: &Report, fixes: &[(String, Vec<String>)]) -> String {
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
            let numbered = fixes.iter().position(|(_, ids)| ids.contains(&c.id));
            match (&c.fix, numbered) {
                // The same words as in the list above: point to it; a fix that says more keeps
                // its words.
                (Some(f), Some(n)) if fixes[n].0 == *f => {
                    let _ = writeln!(out, "  {:<16} {:<30} → fix [{}]", "", "", n + 1);
                }
                (Some(f), Some(n)) => {
                    let _ = writeln!(out, "  {:<16} {:<30} → [{}] {f}", "", "", n + 1);
                }
                (Some(f), None) => {
                    let _ = writeln!(out, "  {:<16} {:<30} → {f}", "", "");
                }
                (None, _) => {}
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
