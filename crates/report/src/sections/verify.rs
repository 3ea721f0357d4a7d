//! Verify section: every check with its status, evidence and fix (`verify --json`, the
//! `verify::Report`).

use verify::{Check, Status};

use super::ctx::Ctx;
use crate::input::{Body, Doc};
use crate::model::{Block, Cell, Headline, Section, Table, Verdict};

/// The report's verdict for a check's status.
pub(crate) fn verdict(s: Status) -> Verdict {
    match s {
        Status::Pass => Verdict::Pass,
        Status::Fail => Verdict::Fail,
        Status::Warn | Status::PendingReboot => Verdict::Warn,
        Status::ExpectedResidue | Status::NotApplicable => Verdict::Info,
    }
}

/// At most 140 characters, cut at a character boundary with an ellipsis.
pub(crate) fn short(s: &str) -> String {
    if s.chars().count() <= 140 {
        return s.to_string();
    }
    let mut out: String = s.chars().take(139).collect();
    out.push('…');
    out
}

/// Build the verify section.
pub fn build(doc: &Doc, _ctx: &Ctx<'_>) -> Vec<Section> {
    let Body::Verify(v) = &doc.body else { return Vec::new() };
    let mut checks: Vec<&Check> = v.checks.iter().collect();
    // Worst first, then by id, so the table reads like a to-do list.
    checks.sort_by(|a, b| verdict(b.status).cmp(&verdict(a.status)).then(a.id.cmp(&b.id)));
    // Counts per status, worst first (`6 fail, 7 pass, 14 n.a.`).
    let mut counts: Vec<(Status, usize)> = Vec::new();
    for c in &checks {
        match counts.iter_mut().find(|(s, _)| *s == c.status) {
            Some(e) => e.1 += 1,
            None => counts.push((c.status, 1)),
        }
    }
    let counts_text =
        counts.iter().map(|(s, n)| format!("{n} {}", s.as_str())).collect::<Vec<_>>().join(", ");
    let worst = checks.iter().map(|c| verdict(c.status)).max().unwrap_or(Verdict::Info);
    let mut headlines =
        vec![Headline::new(worst, format!("Verify: {} checks: {counts_text}", checks.len()))];
    for c in checks.iter().filter(|c| c.status == Status::Fail).take(5) {
        let first = c.evidence.first().map_or("", String::as_str);
        headlines.push(Headline::new(Verdict::Fail, format!("{}: {}", c.id, short(first))));
    }
    let mut blocks = Vec::new();
    let fixes = by_fix(&checks);
    if !fixes.is_empty() {
        blocks.push(Block::Table(Table {
            caption: "To fix: each command once, with the checks it fixes".into(),
            headers: ["fix", "checks"].map(String::from).to_vec(),
            rows: fixes
                .into_iter()
                .map(|(fix, ids)| vec![Cell::text(fix), Cell::text(ids.join(", "))])
                .collect(),
        }));
    }
    let rows = checks
        .iter()
        .map(|c| {
            vec![
                Cell::text(c.id.clone()),
                Cell::text(c.status.as_str()).with_verdict(verdict(c.status)),
                Cell::text(c.evidence.join("\n")),
                Cell::text(c.fix.clone().unwrap_or_default()),
            ]
        })
        .collect();
    vec![Section::new("verify", "Verify (effects on the host)", headlines, {
        blocks.push(Block::Table(Table {
            caption: "Checks, worst first".into(),
            headers: ["check", "status", "evidence", "fix"].map(String::from).to_vec(),
            rows,
        }));
        blocks
    })]
}

/// The fixes of the checks that need one (fail, warn, pending reboot), each command once,
/// worst first, with the checks it fixes: one `lowlat apply` fixes twelve failures, and the
/// report says so once (grouped as `verify`'s terminal view groups them:
/// `verify::render::by_command`).
fn by_fix(checks: &[&Check]) -> Vec<(String, Vec<String>)> {
    verify::render::by_command(
        checks.iter().filter(|c| verdict(c.status) >= Verdict::Warn).filter_map(|c| {
            Some((c.id.as_str(), c.fix.as_deref().filter(|f| !f.trim().is_empty())?))
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_verdicts() {
        assert_eq!(verdict(Status::PendingReboot), Verdict::Warn);
        assert_eq!(verdict(Status::ExpectedResidue), Verdict::Info);
        assert_eq!(verdict(Status::NotApplicable), Verdict::Info);
        assert_eq!(verdict(Status::Fail), Verdict::Fail);
    }

    #[test]
    fn failures_are_grouped_by_the_fix_they_share() {
        let check = |id: &str, status, fix: Option<&str>| Check {
            id: id.into(),
            status,
            fix: fix.map(String::from),
            group: verify::Group::Boot,
            evidence: Vec::new(),
        };
        let apply = "`lowlat apply --plan plan.yaml`";
        let checks = [
            check("irq-effective-affinity", Status::Fail, Some(apply)),
            check("task-affinity", Status::Fail, Some(apply)),
            check("cmdline-args", Status::PendingReboot, Some("reboot")),
            check("thp", Status::Fail, Some(apply)),
            check("smt-siblings", Status::Pass, Some(apply)),
            check("ksm", Status::Fail, None),
        ];
        let refs: Vec<&Check> = checks.iter().collect();
        let got = by_fix(&refs);
        assert_eq!(
            got,
            vec![
                (
                    apply.to_string(),
                    vec!["irq-effective-affinity".into(), "task-affinity".into(), "thp".into()]
                ),
                ("reboot".to_string(), vec!["cmdline-args".into()]),
            ]
        );
    }
}
