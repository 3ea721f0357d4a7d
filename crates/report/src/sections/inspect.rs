//! Inspect section: the host's own findings (no plan needed): severity, message, evidence
//! and the fix, from `inspect --json`'s `findings[]`.

use serde_json::Value;

use super::Ctx;
use crate::input::{value_text, Doc};
use crate::model::{Block, Cell, Headline, Section, Table, Verdict};

fn severity(s: &str) -> Verdict {
    match s {
        "error" => Verdict::Fail,
        "warn" | "warning" => Verdict::Warn,
        _ => Verdict::Info,
    }
}

/// Build the findings section.
pub fn build(doc: &Doc, _ctx: &Ctx<'_>) -> Vec<Section> {
    let findings = doc.value.get("findings").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut items: Vec<(Verdict, &Value)> = findings
        .iter()
        .map(|f| (severity(f.get("severity").and_then(Value::as_str).unwrap_or("info")), f))
        .collect();
    items.sort_by_key(|i| std::cmp::Reverse(i.0));
    let get = |f: &Value, k: &str| f.get(k).map(value_text).unwrap_or_default();
    // Host findings inform; they are judged by verify against a plan, so cap them at warn.
    let headlines = items
        .iter()
        .filter(|(v, _)| *v >= Verdict::Warn)
        .take(5)
        .map(|(v, f)| {
            Headline::new((*v).min(Verdict::Warn), format!("Host: {}", get(f, "message")))
        })
        .collect();
    let rows = items
        .iter()
        .map(|(v, f)| {
            vec![
                Cell::text(get(f, "id")),
                Cell::text(get(f, "severity")).with_verdict(*v),
                Cell::text(format!("{}\n{}", get(f, "message"), get(f, "evidence"))),
                Cell::text(get(f, "fix")),
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
