//! The oslat exporter against oslat's own output: a real oslat 2.4 run (2 CPUs) imported, then
//! exported and imported again, keeps every bucket count, the overflow and the extremes; the
//! text has oslat's layout (what its parsing scripts and `lowlat import oslat` read).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use results::export::oslat::{to_text, DEFAULT_BUCKETS};
use results::import::oslat;

fn fixture(name: &str) -> String {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/").to_string() + name;
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn oslat_text_round_trips_through_the_importer() {
    let r = oslat::import(&fixture("oslat-2.4-2cpu.txt")).unwrap();
    let text = to_text(&r, DEFAULT_BUCKETS);
    assert!(text.contains("        Core:\t 0 1\n"), "{text}");
    assert!(text.contains("    001 (us):\t"), "{text}");
    assert!(text.contains("    032 (us):\t") && text.contains("(including overflows)\n"), "{text}");
    for key in ["Minimum", "Average", "Maximum", "Max-Min", "Duration"] {
        assert!(text.contains(&format!("{key}:\t")), "{key}: {text}");
    }
    let back = oslat::import(&text).unwrap();
    assert!(!back.envelope.partial, "{:?}", back.notes);
    assert_eq!(back.threads.len(), r.threads.len());
    for (a, b) in r.threads.iter().zip(&back.threads) {
        assert_eq!(a.cpu, b.cpu);
        assert_eq!(a.stats.count, b.stats.count, "every sample kept");
        assert_eq!(a.histogram.buckets, b.histogram.buckets, "cpu {:?}", a.cpu);
        assert_eq!(a.histogram.overflow, b.histogram.overflow);
        assert_eq!(a.stats.max_ns, b.stats.max_ns);
    }
    // Fewer rows: everything above the last row is counted in it, as oslat's -b does.
    let short = oslat::import(&to_text(&r, 4)).unwrap();
    for (a, b) in r.threads.iter().zip(&short.threads) {
        assert_eq!(a.stats.count, b.stats.count);
    }
}
