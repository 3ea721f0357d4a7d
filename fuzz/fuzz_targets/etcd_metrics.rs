//! Fuzz etcd's metrics exposition parser (`measure etcd`, issue 21): arbitrary text never
//! panics; a parsed histogram's quantiles and its usability check never panic, and a histogram
//! the check accepts has cumulative buckets ending at +Inf.
#![no_main]

use libfuzzer_sys::fuzz_target;
use storage::etcd::{parse_histogram, PromHistogram, BACKEND_COMMIT, WAL_FSYNC};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for name in [WAL_FSYNC, BACKEND_COMMIT] {
        let Some(h) = parse_histogram(&text, name) else { continue };
        let usable = PromHistogram::unusable(&h).is_none();
        let _ = h.quantile(0.99);
        let _ = h.delta(&h);
        if usable {
            assert!(h.buckets.windows(2).all(|w| w[0].1 <= w[1].1), "{h:?}");
            assert!(h.buckets.last().is_some_and(|b| b.0.is_infinite()), "{h:?}");
        }
    }
});
