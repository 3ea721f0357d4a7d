//! Golden tests for the report's data (the section model, not HTML bytes): verdicts,
//! headlines, tables and chart shapes built from the fixture results.

mod common;

use common::{digest, docs, opts};
use report::model::{Block, Verdict};

const ALL: &[&str] = &[
    "inspect.json",
    "verify.json",
    "timer.json",
    "noise.json",
    "ticks.json",
    "fsync.json",
    "watch-storage.jsonl",
    "future-kind.json",
];

#[test]
fn full_report_model_is_stable() {
    let r = report::build(&docs(ALL), &opts());
    insta::assert_json_snapshot!("full_report", digest(&r));
}

#[test]
fn compare_model_makes_the_seed_smt_improvement_visible() {
    let r = report::compare::build(&docs(&["ht-on.json"]), &docs(&["ht-off.json"]), &opts());
    insta::assert_json_snapshot!("compare_ht", digest(&r));
    let text: Vec<&str> = r.headlines.iter().map(|h| h.text.as_str()).collect();
    assert!(text.iter().any(|t| t.contains("86.0 µs → 82.0 µs")), "{text:?}");
    assert!(text.iter().any(|t| t.contains("most on CPU 5 (9.00 µs better)")), "{text:?}");
    assert!(r.context.iter().any(|(k, _)| k == "SMT (changed)"), "{:?}", r.context);
    assert_eq!(r.verdict, Verdict::Pass);
}

#[test]
fn compare_of_one_cpu_draws_no_empty_chart() {
    let one = |name: &str| {
        let mut d = docs(&[name]);
        if let report::Body::Latency(r) = &mut d[0].body {
            r.threads.truncate(1);
        }
        d
    };
    let r = report::compare::build(&one("timer.json"), &one("timer-after.json"), &opts());
    let timer = r.sections.iter().find(|s| s.id == "timer").expect("timer section");
    let mut charts = 0;
    for b in &timer.blocks {
        if let Block::Chart(c) = b {
            charts += 1;
            assert!(!c.id.ends_with("max"), "a per-CPU line through one CPU: {}", c.title);
            for s in &c.series {
                assert!(s.points.len() >= 2, "{} / {}: {} points", c.title, s.name, s.points.len());
            }
        }
    }
    assert!(charts > 0, "the histogram overlay is still drawn");
    assert!(timer.blocks.iter().any(|b| matches!(b, Block::Table(_))), "the per-CPU table");
}

#[test]
fn compare_model_overlays_histograms_and_diffs_fsync_and_verify() {
    let before = docs(&["timer.json", "fsync.json", "verify.json", "ticks.json"]);
    let after =
        docs(&["timer-after.json", "fsync-after.json", "verify-after.json", "ticks-after.json"]);
    let r = report::compare::build(&before, &after, &opts());
    insta::assert_json_snapshot!("compare_tuned", digest(&r));
    let ids: Vec<&str> = r.sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["timer", "ticks", "fsync", "verify"]);
    assert!(r.headlines.iter().any(|h| h.text == "Timer ticks: the tick stopped on 1 of 8 CPUs"));
    let timer = &r.sections[0];
    let overlay = timer.blocks.iter().find_map(|b| match b {
        Block::Chart(c) if c.id.ends_with("hist") => Some(c),
        _ => None,
    });
    let overlay = overlay.expect("histogram overlay");
    assert_eq!(overlay.series.len(), 2, "4 CPUs merged, before and after");
    assert!(
        r.headlines.iter().any(|h| h.text.starts_with("fsync p99: 14.5 ms → 5.08 ms")),
        "{:?}",
        r.headlines
    );
    assert!(
        r.headlines.iter().any(|h| h.text == "Verify: 1 failing before, 0 after"),
        "{:?}",
        r.headlines
    );
    assert_eq!(r.verdict, Verdict::Pass);
}

#[test]
fn sections_come_in_report_order_with_worst_verdict_overall() {
    let r = report::build(&docs(ALL), &opts());
    let ids: Vec<&str> = r.sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "topology",
            "verify",
            "timer",
            "noise",
            "ticks",
            "fsync",
            "watch",
            "findings",
            "kind-hwlat"
        ]
    );
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(r.headlines.first().map(|h| h.verdict), Some(Verdict::Fail));
    // The partial unknown kind is announced, not dropped.
    assert!(r.banners.iter().any(|b| b.text.contains("future-kind.json (hwlat) is partial")));
}

#[test]
fn every_chart_has_axes_units_and_named_series() {
    let r = report::build(&docs(ALL), &opts());
    let charts: Vec<_> = r
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .filter_map(|b| if let Block::Chart(c) = b { Some(c) } else { None })
        .collect();
    assert!(charts.len() >= 6, "{}", charts.len());
    for c in charts {
        assert!(c.x_label.contains('(') || c.x_label == "CPU", "x unit: {}", c.x_label);
        assert!(c.y_label.contains('(') || c.y_label.contains("per"), "y unit: {}", c.y_label);
        assert!(
            !c.series.is_empty()
                && c.series.iter().all(|s| !s.name.is_empty() && !s.points.is_empty())
        );
    }
}

#[test]
fn virtualized_results_are_labelled_loudly() {
    let mut v = common::value("timer.json");
    v["host"]["virtualization"] = serde_json::json!("kvm");
    let d = [report::Doc::from_value("timer.json", v)];
    let r = report::build(&d, &opts());
    assert!(r
        .banners
        .iter()
        .any(|b| b.verdict == Verdict::Warn && b.text.contains("host noise included")));
    assert!(r.headlines.iter().any(|h| h.text.contains("virtualized (kvm): host noise included")));
    let html = report::html::render(&r);
    assert!(html.contains("Virtualized (kvm): host noise included"));
}

#[test]
fn input_strings_are_escaped_in_html() {
    let r = report::build(&docs(&["inspect.json"]), &opts());
    let html = report::html::render(&r);
    assert!(!html.contains("<script>alert(1)</script>"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

#[test]
fn html_is_self_contained() {
    let r = report::build(&docs(ALL), &opts());
    let html = report::html::render(&r);
    assert!(html.contains("default-src 'none'"), "a CSP forbids every fetch");
    for bad in ["<script", "src=", "url(", "@import", "href=\"http", "<link"] {
        assert!(!html.contains(bad), "found {bad}");
    }
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
}

#[test]
fn a_plan_file_sets_the_roles_and_the_header() {
    let r = report::build(&docs(&["inspect.json", "plan.yaml"]), &opts());
    let plan = r.context.iter().find(|(k, _)| k == "Plan").map(|(_, v)| v.as_str());
    assert_eq!(plan, Some("lowlat: housekeeping 0,4,8,12, isolated 1-3,5-7,9-11,13-15"));
    let grid = r.sections[0].blocks.iter().find_map(|b| match b {
        Block::Grid(g) => Some(g),
        _ => None,
    });
    assert!(grid.expect("topology grid").caption.contains("Roles from the plan"));
}
