//! Fuzz the importers (cyclictest, oslat, fio; text and JSON): arbitrary bytes never panic or
//! allocate without bound, and what imports holds together: percentiles (when known) rise and
//! lie within min..max, a whole import's min ≤ max, every result serializes and reads back
//! the same (the contract's JSON), and fio percentiles rise.
#![no_main]

use libfuzzer_sys::fuzz_target;
use results::import::{import, Imported, Tool};

fn check(r: &Imported) {
    match r {
        Imported::Latency(l) => {
            for t in &l.threads {
                let s = &t.stats;
                if !l.envelope.partial && s.count > 0 {
                    assert!(s.min_ns <= s.max_ns, "{s:?}");
                }
                let p: Vec<u64> =
                    [s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns, s.p9999_ns].into_iter().flatten().collect();
                assert!(p.windows(2).all(|w| w[0] <= w[1]), "{s:?}");
                assert!(p.iter().all(|v| *v <= s.max_ns.max(s.min_ns)), "{s:?}");
            }
            let json = serde_json::to_string(&**l).expect("serializes");
            let back: results::LatencyResult = serde_json::from_str(&json).expect("reads back");
            assert_eq!(&back, &**l);
        }
        Imported::Fsync(f) => {
            for s in &f.scenarios {
                let l = s.lat_ns;
                assert!(l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999 && l.p999 <= l.p9999, "{l:?}");
                assert!(l.min <= l.max, "{l:?}");
            }
            let json = serde_json::to_string(&**f).expect("serializes");
            let _: results::fsync::FsyncResult = serde_json::from_str(&json).expect("reads back");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for tool in [Tool::Cyclictest, Tool::Oslat, Tool::Fio] {
        if let Ok(r) = import(tool, &text) {
            check(&r);
        }
    }
});
