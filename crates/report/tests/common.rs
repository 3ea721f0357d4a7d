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

/// A deterministic pseudo-random sequence (no rand dependency).
pub fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

/// A synthetic `kind` result of `cpus` CPUs × `secs` seconds written with the `results`
/// types, as `lowlat measure` writes it: ~150 non-empty buckets per CPU, a max series of one
/// point per `step` seconds (`series_step_s`), a few noisy CPUs (every 16th) and occasional
/// spikes above 50 µs.
pub fn many_cpus(kind: results::Kind, cpus: u32, secs: usize, step: u64) -> Value {
    let points = secs.div_ceil(step.max(1) as usize);
    let mut seed = u64::from(cpus);
    let threads: Vec<results::ThreadResult> = (0..cpus)
        .map(|cpu| {
            let noisy = cpu % 16 == 5;
            let mut h = results::Histogram::new(results::HistogramConfig::LATENCY);
            let mut series = Vec::with_capacity(points);
            for _ in 0..points {
                let spike = lcg(&mut seed).is_multiple_of(if noisy { 20 } else { 400 });
                let max = if spike {
                    50_000 + lcg(&mut seed) % 200_000
                } else {
                    3_000 + lcg(&mut seed) % 9_000
                };
                series.push(max);
                h.record(max);
                for _ in 0..40 {
                    h.record(1_000 + lcg(&mut seed) % 3_000 + (lcg(&mut seed) % 8).pow(4) * 10);
                }
            }
            results::ThreadResult {
                cpu: Some(cpu),
                stats: h.summary(),
                histogram: h.to_data(),
                per_second_max_ns: series,
                ..Default::default()
            }
        })
        .collect();
    let mut envelope = results::Envelope::new(kind, "lowlat test");
    envelope.duration_ns = secs as u64 * 1_000_000_000;
    envelope.params =
        results::Params::read(kind, json!({ "threshold_ns": 50_000 })).expect("params");
    let r = results::LatencyResult {
        envelope,
        realtime: true,
        series_step_s: step,
        threads,
        breaches: Vec::new(),
        load: None,
        notes: Vec::new(),
        tracer: None,
    };
    serde_json::to_value(r).expect("result serializes")
}
