//! Importer round trips through the report: cyclictest and oslat outputs (the `results`
//! crate's captured fixtures) load directly as report inputs, and the report's numbers are
//! the importer's numbers.

#![allow(clippy::expect_used)]

mod common;

use std::path::PathBuf;

use report::{Body, Doc};

fn results_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../results/tests/fixtures").join(name)
}

#[test]
fn cyclictest_and_oslat_outputs_load_as_report_inputs() {
    for (file, kind) in [
        ("cyclictest-2.4-h40.txt", "timer"),
        ("cyclictest-2.7-layout-h40.txt", "timer"),
        ("cyclictest-2.4-h100.json", "timer"),
        ("oslat-2.4.txt", "noise"),
        ("oslat-2.4.json", "noise"),
    ] {
        let path = results_fixture(file);
        let text = std::fs::read_to_string(&path).expect("fixture");
        let doc = Doc::load(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(doc.kind.as_str(), kind, "{file}");
        let imported = if kind == "timer" {
            results::import::cyclictest::import(&text).expect("imports")
        } else {
            results::import::oslat::import(&text).expect("imports")
        };
        let Body::Latency(view) = &doc.body else { panic!("{file}: {:?}", doc.body) };
        assert_eq!(view.threads.len(), imported.threads.len(), "{file}");
        for (v, t) in view.threads.iter().zip(&imported.threads) {
            assert_eq!(v.stats.max_ns, t.stats.max_ns, "{file}");
            assert_eq!(v.stats.count, t.stats.count, "{file}");
            assert_eq!(v.stats.p99_ns, t.stats.p99_ns, "{file}");
            let buckets: u64 = v.histogram.buckets.iter().map(|b| b.count).sum();
            assert_eq!(buckets, t.histogram.buckets.iter().map(|b| b.count).sum::<u64>(), "{file}");
        }
        let r = report::build(&[doc], &common::opts());
        let worst = imported.threads.iter().map(|t| t.stats.max_ns).max().expect("threads");
        let line = &r.sections.iter().find(|s| s.id == kind).expect("section").headlines[0].text;
        assert!(line.contains(&report::model::fmt_ns(worst)), "{file}: {line}");
    }
}

#[test]
fn a_lowlat_result_round_trips_through_the_report_model() {
    // A result written by the results crate's own types reads back with the same numbers.
    let mut h = results::Histogram::new(results::HistogramConfig::LATENCY);
    for v in [2_000u64, 2_100, 2_500, 40_000, 9_000_000] {
        h.record(v);
    }
    let t = results::latency::ThreadResult {
        cpu: Some(3),
        stats: h.summary(),
        histogram: h.to_data(),
        per_second_max_ns: vec![40_000, 9_000_000],
        ..Default::default()
    };
    let r = results::latency::LatencyResult {
        envelope: results::Envelope::new(results::Kind::Timer, "lowlat test"),
        realtime: true,
        series_step_s: 1,
        threads: vec![t],
        breaches: Vec::new(),
        load: None,
        notes: vec!["a note".into()],
        tracer: None,
    };
    let doc = Doc::from_value("t.json", serde_json::to_value(&r).expect("json"));
    let Body::Latency(v) = &doc.body else { panic!("{:?}", doc.body) };
    assert_eq!(v.threads[0].stats.max_ns, 9_000_000);
    assert_eq!(v.threads[0].stats.p50_ns, h.summary().p50_ns);
    assert_eq!(v.threads[0].per_second_max_ns, vec![40_000, 9_000_000]);
    assert_eq!(v.notes, ["a note"]);
    assert_eq!(**v, r, "the whole result reads back as written");
}

/// A result written before `series_step_s` existed (one point per second, no field) still
/// loads and reports: its charts say "per second" and span its seconds.
#[test]
fn a_result_without_a_series_step_still_loads_and_reports() {
    for kind in [results::Kind::Timer, results::Kind::Noise] {
        let mut v = common::many_cpus(kind, 32, 600, 1);
        let o = v.as_object_mut().expect("object");
        assert!(o.remove("series_step_s").is_some());
        let doc = Doc::from_value("old.json", v);
        let Body::Latency(r) = &doc.body else { panic!("{:?}", doc.body) };
        assert_eq!(r.series_step(), 1);
        let html = report::html::render(&report::build(&[doc], &common::opts()));
        assert!(html.contains(": maximum per second per CPU"), "{kind:?}");
        assert!(html.contains("10m 00s"), "{kind:?}: the axis spans the 600 s");
    }
}

#[test]
fn garbage_that_looks_like_a_tool_output_is_an_error() {
    let e = Doc::parse_any("x.txt", "# Max Latencies: zz\n").expect_err("not cyclictest");
    assert!(e.to_string().contains("x.txt"), "{e}");
    let e = Doc::parse_any("f.json", "{\"jobs\": []}").expect_err("not fio");
    assert!(e.to_string().contains("fio"), "{e}");
}

#[test]
fn fio_json_loads_as_an_fsync_section_with_the_importers_numbers() {
    // Captured on the 2-vCPU VM: fio --rw=write --ioengine=sync --fdatasync=1 --size=1m
    // --bs=2300 --name=etcd-probe --output-format=json
    let path = common::fixture("fio-etcd.json");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let imported = results::import::fio::import(&text).expect("imports");
    let doc = Doc::load(&path).expect("loads");
    assert_eq!(doc.kind.as_str(), "fsync");
    let Body::Fsync(v) = &doc.body else { panic!("{:?}", doc.body) };
    assert_eq!(v.ops, imported.ops);
    assert_eq!(v.lat_ns.p99, imported.lat_ns.p99);
    let r = report::build(&[doc], &common::opts());
    let line = &r.sections.iter().find(|s| s.id == "fsync").expect("section").headlines[0].text;
    assert!(
        line.contains(&format!("p99 {}", report::model::fmt_ns(imported.lat_ns.p99))),
        "{line}"
    );
}
