//! Fallback section for a document of a kind this report version does not chart: its kind,
//! source and top-level scalar fields, so nothing given to the report is silently dropped.

use serde_json::Value;

use crate::input::{value_text, Doc};
use crate::model::{Block, Headline, Section, Verdict};

/// Build the fallback section.
pub fn build(doc: &Doc) -> Section {
    let mut rows: Vec<(String, String)> = Vec::new();
    if let Some(o) = doc.value.as_object() {
        for (k, v) in o {
            match v {
                Value::Array(a) => rows.push((k.clone(), format!("{} entries", a.len()))),
                Value::Object(_) => rows.push((k.clone(), "{…}".into())),
                other => rows.push((k.clone(), value_text(other))),
            }
        }
    }
    Section::new(
        &format!("kind-{}", doc.kind),
        &format!("Result: {}", doc.kind),
        vec![Headline::new(
            Verdict::Info,
            format!(
                "{}: kind \"{}\" is not charted by this report version; fields listed",
                doc.source, doc.kind
            ),
        )],
        vec![Block::Facts { rows }],
    )
}
