//! Fallback section for a document of a kind this report version does not chart: its kind,
//! source and top-level scalar fields, so nothing given to the report is silently dropped.

use serde_json::Value;

use crate::input::{value_text, Doc, Generic};
use crate::model::{Block, Headline, Section, Verdict};

/// Build the fallback section.
pub fn build(doc: &Doc, g: &Generic) -> Section {
    let rows = g
        .fields
        .iter()
        .map(|(k, v)| match v {
            Value::Array(a) => (k.clone(), format!("{} entries", a.len())),
            Value::Object(_) => (k.clone(), "{…}".into()),
            other => (k.clone(), value_text(other)),
        })
        .collect();
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
