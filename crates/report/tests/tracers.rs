//! Results measured by the kernel's tracers, as lowlat wrote them on Debian's 6.1 PREEMPT_RT
//! kernel in the lab (`docs/LAB.md`, QEMU TCG): the osnoise section ranks what caused the
//! gaps and names it in the HTML; hwlat is judged as hwlatdetect judges (any window above the
//! threshold fails; none over a full window passes — no sample is its best result, not an
//! empty one).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

mod common;

use report::model::{Block, Section, Table, Verdict};
use report::Doc;

fn section<'a>(r: &'a report::Report, id: &str) -> &'a Section {
    r.sections.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("no section {id}"))
}

fn table<'a>(s: &'a Section, caption: &str) -> &'a Table {
    s.blocks
        .iter()
        .find_map(|b| match b {
            Block::Table(t) if t.caption.starts_with(caption) => Some(t),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no table {caption:?}"))
}

#[test]
fn osnoise_causes_are_ranked_and_named_in_the_report() {
    let docs = common::docs(&["rtlab/osnoise-tcg-6.1-rt.json"]);
    let r = report::build(&docs, &common::opts());
    let s = section(&r, "noise");
    assert_eq!(s.title, "OS noise (osnoise)");
    assert!(s.headlines[0].text.contains("gaps on 4 CPUs"), "{}", s.headlines[0].text);
    let causes = table(s, "What caused the worst gaps");
    assert_eq!(causes.headers[0], "source");
    // ranked by total time: the first is the emulator's unexplained time, then named sources
    assert_eq!(causes.rows[0][0].text, "hw");
    let named: Vec<&str> =
        causes.rows.iter().filter(|r| r[0].text != "hw").map(|r| r[1].text.as_str()).collect();
    assert!(!named.is_empty(), "no IRQ or thread named");
    let gaps = table(s, "The longest gaps");
    assert!(!gaps.rows.is_empty());
    assert!(table(s, "osnoise per CPU").rows.len() == 4);
    // the /proc-counter attribution table is not drawn for a tracer result
    assert!(!s.blocks.iter().any(|b| matches!(b, Block::Table(t) if t.caption.starts_with("Noise per CPU and its attribution"))));
    let html = report::html::render(&r);
    assert!(html.contains("What caused the worst gaps"));
    assert!(html.contains(named[0]), "{} missing from the page", named[0]);
}

#[test]
fn hwlat_fails_on_samples_and_passes_on_a_quiet_full_run() {
    let docs = common::docs(&["rtlab/hwlat-tcg-6.1-rt.json"]);
    let r = report::build(&docs, &common::opts());
    let s = section(&r, "hwlat");
    assert_eq!(s.verdict, Verdict::Fail);
    assert!(s.headlines[0].text.contains("above"), "{}", s.headlines[0].text);
    assert_eq!(table(s, "hwlat per CPU").rows.len(), 8);

    // The same run with no window above the threshold: a pass, with its evidence.
    let mut v = common::value("rtlab/hwlat-tcg-6.1-rt.json");
    for t in v["threads"].as_array_mut().unwrap() {
        t["count"] = 0.into();
        t["max_ns"] = 0.into();
        t["min_ns"] = 0.into();
        t["avg_ns"] = 0.into();
        t["histogram"] = serde_json::json!({"buckets": [], "overflow": 0});
        t["hwlat"]["samples"] = 0.into();
    }
    let quiet = Doc::from_value("quiet.json", v.clone());
    let r = report::build(&[quiet], &common::opts());
    let s = section(&r, "hwlat");
    assert_eq!(s.verdict, Verdict::Pass, "{:?}", s.headlines);
    assert!(s.headlines[0].text.contains("no gap above 10.0 µs in"), "{}", s.headlines[0].text);

    // ...but not when it did not run a whole window: no evidence, no pass.
    v["duration_ns"] = 1_000.into();
    let short = Doc::from_value("short.json", v);
    let r = report::build(&[short], &common::opts());
    assert_ne!(section(&r, "hwlat").verdict, Verdict::Pass);
}
