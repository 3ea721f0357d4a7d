//! The JSON header rt-tests writes for cyclictest and oslat (`rt_write_json`): literal
//! `"cmdline:"` / `"rt_test_version:"` keys (trailing colon) and a cmdline that is not
//! JSON-escaped, so parsing is lenient: a failed parse is retried with that line repaired.

use serde_json::Value;

use super::ImportError;
use crate::HostContext;

/// Parse rt-tests JSON, repairing an unescaped `cmdline` string if needed.
pub(crate) fn parse(text: &str) -> Result<Value, ImportError> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(first) => {
            let repaired: Vec<String> = text.lines().map(repair_line).collect();
            serde_json::from_str(&repaired.join("\n"))
                .map_err(|_| ImportError::Json(first.to_string()))
        }
    }
}

fn repair_line(line: &str) -> String {
    let trimmed = line.trim_start();
    for key in ["\"cmdline:\": \"", "\"cmdline\": \""] {
        if let Some(rest) = trimmed.strip_prefix(key) {
            let body = rest.strip_suffix("\",").unwrap_or(rest.trim_end_matches('"'));
            let escaped = body.replace('\\', "\\\\").replace('"', "\\\"");
            return format!("{key}{escaped}\",");
        }
    }
    line.to_string()
}

/// A header field under its buggy (`"cmdline:"`) or fixed (`"cmdline"`) name.
pub(crate) fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v.get(format!("{name}:")).or_else(|| v.get(name))
}

/// Host facts from `sysinfo`.
pub(crate) fn host(v: &Value) -> HostContext {
    let s = &v["sysinfo"];
    HostContext {
        hostname: s["nodename"].as_str().map(str::to_string),
        kernel: s["release"].as_str().map(str::to_string),
        realtime: s["realtime"].as_i64().map(|r| r == 1),
        ..HostContext::default()
    }
}

/// `"<tool> <version>"` from the header.
pub(crate) fn tool(v: &Value, name: &str) -> String {
    match field(v, "rt_test_version").and_then(Value::as_str) {
        Some(ver) => format!("{name} {ver}"),
        None => name.to_string(),
    }
}

/// The non-zero histogram entries `{"key": count}` as (key, count), sorted by key value.
pub(crate) fn histogram_entries(h: &Value) -> Result<Vec<(f64, u64)>, ImportError> {
    let mut out = Vec::new();
    if let Some(map) = h.as_object() {
        for (k, c) in map {
            let key: f64 = k
                .trim()
                .parse()
                .map_err(|_| ImportError::Json(format!("histogram key {k:?} is not a number")))?;
            let count = c.as_u64().ok_or_else(|| {
                ImportError::Json(format!("histogram count for {k:?} is not a count: {c}"))
            })?;
            out.push((key, count));
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(out)
}

/// What a non-zero `return_code` says: the tool's run failed (`None` when it is 0 or absent).
pub(crate) fn failed(v: &Value, name: &str) -> Option<String> {
    match &v["return_code"] {
        Value::Null => None,
        c if c.as_i64() == Some(0) => None,
        c => Some(format!("{name} exited with return_code {c}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescaped_cmdline_is_repaired() {
        let text = "{\n  \"cmdline:\": \"cyclictest --foo=\"a b\" -q\",\n  \"num_threads\": 0\n}";
        let v = parse(text).unwrap();
        assert_eq!(
            field(&v, "cmdline").and_then(Value::as_str),
            Some("cyclictest --foo=\"a b\" -q")
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(matches!(parse("{ nope"), Err(ImportError::Json(_))));
    }
}
