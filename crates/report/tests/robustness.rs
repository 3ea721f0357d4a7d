//! Never panic on input: every fixture mutated many ways (values replaced by nulls, strings,
//! negative, huge and fractional numbers, empty or odd arrays and objects) still builds a
//! report model and renders HTML. Deterministic (a fixed-seed generator, no extra crates).

#![allow(clippy::expect_used)]

mod common;

use serde_json::{json, Value};

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn odd_value(r: &mut Lcg) -> Value {
    match r.below(11) {
        0 => Value::Null,
        1 => json!("<b>\"odd\"</b>"),
        2 => json!(-1),
        3 => json!(u64::MAX),
        4 => json!(1.5e300),
        5 => json!([]),
        6 => json!({}),
        7 => json!([[1, 2], ["x"], null]),
        8 => json!(true),
        9 => json!(0),
        _ => json!(-0.5),
    }
}

/// Replace the value at a random path with an odd one.
fn mutate(v: &mut Value, r: &mut Lcg, depth: usize) {
    let replace = depth > 0 && r.below(4) == 0;
    if replace {
        *v = odd_value(r);
        return;
    }
    match v {
        Value::Object(o) if !o.is_empty() => {
            let i = r.below(o.len());
            if let Some((_, child)) = o.iter_mut().nth(i) {
                mutate(child, r, depth + 1);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            let i = r.below(a.len());
            if let Some(child) = a.get_mut(i) {
                mutate(child, r, depth + 1);
            }
        }
        _ => *v = odd_value(r),
    }
}

#[test]
fn mutated_inputs_never_panic() {
    let names = [
        "inspect.json",
        "verify.json",
        "timer.json",
        "noise.json",
        "ticks.json",
        "fsync.json",
        "watch-storage.jsonl",
        "ht-on.json",
    ];
    let base: Vec<(&str, Value)> = names.iter().map(|n| (*n, common::value(n))).collect();
    let mut r = Lcg(7);
    for round in 0..400 {
        let mut docs = base.clone();
        for _ in 0..3 {
            let i = r.below(docs.len());
            if let Some((_, v)) = docs.get_mut(i) {
                mutate(v, &mut r, 0);
            }
        }
        let docs: Vec<report::Doc> =
            docs.into_iter().map(|(n, v)| report::Doc::from_value(n, v)).collect();
        let model = report::build(&docs, &common::opts());
        let html = report::html::render(&model);
        assert!(html.contains("</html>"), "round {round}");
        assert!(!html.contains("<b>\"odd\"</b>"), "round {round}: unescaped input");
        let cmp = report::compare::build(&docs[..4], &docs[4..], &common::opts());
        let _ = report::summary::render(&cmp);
    }
}

#[test]
fn empty_and_extreme_documents_render() {
    let cases = [
        json!({"kind": "timer"}),
        json!({"kind": "timer", "threads": []}),
        json!({"kind": "timer", "threads": [{}]}),
        json!({"kind": "timer", "threads": [{"cpu": 0, "max_ns": u64::MAX, "histogram": {"buckets": [{"lo_ns": u64::MAX - 1, "hi_ns": u64::MAX, "count": u64::MAX}], "overflow": u64::MAX}, "max_series_ns": [u64::MAX, 0]}]}),
        json!({"kind": "noise", "threads": [{"cpu": 1, "worst_seconds": [{}], "attribution": [1, "x"]}]}),
        json!({"kind": "fsync", "windows": [{}], "scenarios": [{}]}),
        json!({"kind": "ticks", "cpus": [{"cpu": 0, "loc_per_s": -5.0, "rates": [["LOC"]]}]}),
        json!({"kind": "verify", "checks": [{"status": 3}]}),
        json!({"checks": [{}]}),
        json!({"topology": {"cpus": [{"cpu": 100000}]}, "cpus": {"isolated": "garbage"}}),
        json!({"kind": "plan", "reserved": "0-", "isolated": 5}),
        json!({"kind": ""}),
    ];
    for (i, v) in cases.iter().enumerate() {
        let docs = [report::Doc::from_value(format!("case{i}"), v.clone())];
        let html = report::html::render(&report::build(&docs, &common::opts()));
        assert!(html.contains("</html>"), "case {i}");
    }
}
