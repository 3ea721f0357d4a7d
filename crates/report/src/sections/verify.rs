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
    vec![Section::new(
        "verify",
        "Verify (effects on the host)",
        headlines,
        vec![Block::Table(Table {
            caption: "Checks, worst first".into(),
            headers: ["check", "status", "evidence", "fix"].map(String::from).to_vec(),
            rows,
        })],
    )]
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
}
