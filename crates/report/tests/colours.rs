//! Imported threads (cyclictest's text names no CPU) each get their own colour in the
//! latency charts, as pinned threads keep their CPU's.

#![allow(clippy::expect_used, clippy::unwrap_used, reason = "test code")]

#[test]
fn imported_threads_get_a_colour_each() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../results/tests/fixtures/cyclictest-2.4-h40.txt"
    ))
    .unwrap();
    let r = results::import::cyclictest::import(&text).unwrap();
    assert!(r.threads.len() >= 2 && r.threads.iter().all(|t| t.cpu.is_none()));
    let doc = report::Doc::from_value("ct.json", serde_json::to_value(&r).unwrap());
    let model = report::build(&[doc], &report::Options::default());
    let charts: Vec<&report::model::Chart> = model
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .filter_map(|b| match b {
            report::model::Block::Chart(c) if c.series.len() >= 2 => Some(c),
            _ => None,
        })
        .collect();
    assert!(!charts.is_empty(), "a chart with a line per thread");
    for c in charts {
        let mut colours: Vec<usize> = c.series.iter().map(|s| s.color).collect();
        colours.dedup();
        assert_eq!(colours.len(), c.series.len(), "{}: {:?}", c.id, colours);
    }
}
