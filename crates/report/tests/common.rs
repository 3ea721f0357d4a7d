//! Shared helpers for the report's integration tests: fixture paths and a model digest that
//! keeps the data a golden file should pin (verdicts, tables, chart shapes) without the
//! thousands of chart points.

#![allow(dead_code, clippy::expect_used)]

use std::path::PathBuf;

use report::{Doc, Options};
use serde_json::{json, Value};

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

pub fn docs(names: &[&str]) -> Vec<Doc> {
    names
        .iter()
        .map(|n| {
            let mut d = Doc::load(&fixture(n)).expect("fixture loads");
            d.source = (*n).to_string();
            d
        })
        .collect()
}

/// A fixture as the JSON a caller would hand to `Doc::from_value` (JSON lines: an array).
pub fn value(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture(name)).expect("fixture reads");
    if name.ends_with(".jsonl") {
        let lines: Vec<Value> =
            text.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
        return Value::Array(lines);
    }
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// Options with a fixed generator so golden files do not change with the version.
pub fn opts() -> Options {
    Options { generator: "lowlat (test)".into(), ..Options::default() }
}

/// The report model as JSON, each chart series reduced to its size and extremes.
pub fn digest(report: &report::Report) -> Value {
    let mut v = serde_json::to_value(report).expect("model serializes");
    digest_value(&mut v);
    v
}

fn digest_value(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Array(points)) = o.get("points") {
                let ys: Vec<f64> = points.iter().filter_map(|p| p.get(1)?.as_f64()).collect();
                let xs: Vec<f64> = points.iter().filter_map(|p| p.get(0)?.as_f64()).collect();
                let max = |a: &[f64]| a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = ys.iter().sum();
                o.insert(
                    "points".into(),
                    json!({"n": points.len(), "x_max": max(&xs), "y_max": max(&ys), "y_sum": sum.round()}),
                );
            }
            for (_, x) in o.iter_mut() {
                digest_value(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(digest_value),
        _ => {}
    }
}
