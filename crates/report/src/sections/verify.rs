//! Verify section: every check with its status, evidence and fix (`verify --json`:
//! `checks[] {id, status, evidence, fix}`, `summary {pass, fail, warn}`).

use super::Ctx;
use crate::input::{value_text, Doc, VerifyView};
use crate::model::{Block, Cell, Headline, Section, Table, Verdict};

/// The first evidence line (evidence is a list of lines or one text).
fn first_line(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Array(a) => a.first().map(value_text).unwrap_or_default(),
        other => value_text(other),
    }
}

/// Evidence one fact per line.
fn lines(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join("\n"),
        other => value_text(other),
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
    // Counts per status as written, worst first (`6 fail, 7 pass, 14 n.a.`).
    let mut counts: Vec<(Verdict, String, usize)> = Vec::new();
    for c in &checks {
        match counts.iter_mut().find(|(_, s, _)| *s == c.status) {
            Some(e) => e.2 += 1,
            None => counts.push((Verdict::from_status(&c.status), c.status.clone(), 1)),
        }
    }
    let counts_text =
        counts.iter().map(|(_, s, n)| format!("{n} {s}")).collect::<Vec<_>>().join(", ");
    let verdict =
        checks.iter().map(|c| Verdict::from_status(&c.status)).max().unwrap_or(Verdict::Info);
    let mut headlines =
        vec![Headline::new(verdict, format!("Verify: {} checks: {counts_text}", checks.len()))];
    for c in checks.iter().filter(|c| Verdict::from_status(&c.status) == Verdict::Fail).take(5) {
        headlines.push(Headline::new(
            Verdict::Fail,
            format!(
                "{}: {}",
                c.id,
                short(
                    &c.summary
                        .clone()
                        .or_else(|| c.title.clone())
                        .unwrap_or_else(|| first_line(&c.evidence))
                )
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
                    (Some(s), _) | (None, Some(s)) => format!("{s}\n{}", lines(&c.evidence)),
                    _ => lines(&c.evidence),
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
