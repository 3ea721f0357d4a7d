//! Small builders for ordered YAML values (insertion order is output order, so manifests
//! read like hand-written ones and are byte-stable) and the document writer.

use serde_norway::{Mapping, Value};

/// A string value.
pub fn s(v: impl Into<String>) -> Value {
    Value::String(v.into())
}

/// An ordered mapping from `(key, value)` pairs.
pub fn map<K: Into<String>>(pairs: Vec<(K, Value)>) -> Value {
    let mut m = Mapping::new();
    for (k, v) in pairs {
        m.insert(Value::String(k.into()), v);
    }
    Value::Mapping(m)
}

/// A sequence.
pub fn seq(items: Vec<Value>) -> Value {
    Value::Sequence(items)
}

/// An integer.
pub fn int(n: u64) -> Value {
    Value::Number(n.into())
}

/// A boolean.
pub fn b(v: bool) -> Value {
    Value::Bool(v)
}

/// One YAML document as text (ends with a newline).
pub fn doc(v: &Value) -> String {
    // Serializing a Value built from strings, numbers, bools, sequences and mappings cannot
    // fail; keep a readable fallback anyway.
    serde_norway::to_string(v).unwrap_or_else(|e| format!("# cannot serialize: {e}\n"))
}

/// A header comment plus documents separated by `---`.
pub fn docs(header: &str, values: &[Value]) -> String {
    let mut out = String::new();
    for line in header.lines() {
        out.push_str("# ");
        out.push_str(&crate::quote::comment(line));
        out.push('\n');
    }
    for (i, v) in values.iter().enumerate() {
        if i > 0 || !header.is_empty() {
            out.push_str("---\n");
        }
        out.push_str(&doc(v));
    }
    out
}
