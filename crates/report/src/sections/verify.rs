//! Verify section: every check with its status, evidence and fix (`verify --json`:
//! `checks[] {id, status, evidence, fix}`, `summary {pass, fail, warn}`).

use super::Ctx;
use crate::input::{value_text, Doc, VerifyView};
use crate::model::{Block, Cell, Headline, Section, Table, Verdict};

/// Build the verify section.
pub fn build(doc: &Doc, _ctx: &Ctx<'_>) -> Vec<Section> {
    let v: VerifyView = match doc.view() {
        Ok(v) => v,
        Err(e) => {
            return vec![Section::new(
                "verify",
                "Verify",
                vec![Headline::new(Verdict::Warn, format!("Verify: unreadable result: {e}"))],
                Vec::new(),
            )]
        }
    };
    let mut checks = v.checks.clone();
    // Worst first, then by id, so the table reads like a to-do list.
    checks.sort_by(|a, b| {
        Verdict::from_status(&b.status).cmp(&Verdict::from_status(&a.status)).then(a.id.cmp(&b.id))
    });
    let count =
        |want: Verdict| checks.iter().filter(|c| Verdict::from_status(&c.status) == want).count();
    let (pass, fail, warn) = (count(Verdict::Pass), count(Verdict::Fail), count(Verdict::Warn));
    let other = checks.len() - pass - fail - warn;
    let verdict =
        checks.iter().map(|c| Verdict::from_status(&c.status)).max().unwrap_or(Verdict::Info);
    let mut headlines = vec![Headline::new(
        verdict,
        format!(
            "Verify: {pass} pass, {fail} fail, {warn} warn{}",
            if other > 0 { format!(", {other} other") } else { String::new() }
        ),
    )];
    for c in checks.iter().filter(|c| Verdict::from_status(&c.status) == Verdict::Fail).take(5) {
        headlines.push(Headline::new(
            Verdict::Fail,
            format!(
                "{}: {}",
                c.id,
                c.summary
                    .clone()
                    .or_else(|| c.title.clone())
                    .unwrap_or_else(|| value_text(&c.evidence))
            ),
        ));
    }
    let rows = checks
        .iter()
        .map(|c| {
            let v = Verdict::from_status(&c.status);
            vec![
                Cell::text(c.id.clone()),
                Cell::text(c.status.clone()).with_verdict(v),
                Cell::text(match (&c.summary, &c.title) {
                    (Some(s), _) | (None, Some(s)) => format!("{s}\n{}", value_text(&c.evidence)),
                    _ => value_text(&c.evidence),
                }),
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
