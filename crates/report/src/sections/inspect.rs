//! Inspect section: the host's own findings (no plan needed): severity, message, evidence
//! and the fix, from the host model's `findings`.

use host::{Finding, Severity};

use super::ctx::Ctx;
use crate::input::{Body, Doc};
use crate::model::{Block, Cell, Headline, Section, Table, Verdict};

fn verdict(s: Severity) -> Verdict {
    match s {
        Severity::Error => Verdict::Fail,
        Severity::Warn => Verdict::Warn,
        Severity::Info => Verdict::Info,
    }
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warn => "warn",
        Severity::Info => "info",
    }
}

/// Build the findings section.
pub fn build(doc: &Doc, _ctx: &Ctx<'_>) -> Vec<Section> {
    let Body::Inspect(h) = &doc.body else { return Vec::new() };
    let mut items: Vec<(Verdict, &Finding)> =
        h.findings.iter().map(|f| (verdict(f.severity), f)).collect();
    items.sort_by_key(|i| std::cmp::Reverse(i.0));
    // Host findings inform; they are judged by verify against a plan, so cap them at warn.
    let headlines = items
        .iter()
        .filter(|(v, _)| *v >= Verdict::Warn)
        .take(5)
        .map(|(v, f)| Headline::new((*v).min(Verdict::Warn), format!("Host: {}", f.message)))
        .collect();
    let rows = items
        .iter()
        .map(|(v, f)| {
            vec![
                Cell::text(f.id.clone()),
                Cell::text(severity(f.severity)).with_verdict(*v),
                Cell::text(format!("{}\n{}", f.message, f.evidence.join("; "))),
                Cell::text(f.fix.clone().unwrap_or_default()),
            ]
        })
        .collect::<Vec<_>>();
    let mut blocks = Vec::new();
    if rows.is_empty() {
        blocks.push(Block::Paragraph { text: "No findings about this host on its own.".into() });
    } else {
        blocks.push(Block::Table(Table {
            caption: "Findings about the host alone (no plan needed)".into(),
            headers: ["finding", "severity", "message and evidence", "fix"]
                .map(String::from)
                .to_vec(),
            rows,
        }));
    }
    vec![Section::new("findings", "Host findings", headlines, blocks)]
}
