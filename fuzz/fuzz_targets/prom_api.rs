//! Fuzz the Prometheus HTTP API reader (`measure etcd --prometheus-url`, issue 21): arbitrary JSON
//! never panics; a range answer's windows are ascending, inside the asked window, and each
//! histogram is cumulative.
#![no_main]

use libfuzzer_sys::fuzz_target;
use storage::etcd::promapi::{histogram_from, parse_response, series_from, ApiData};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_response("http://fuzz/api/v1/query", &text) {
        Ok(ApiData::Matrix(m)) => {
            let (first, last) = (1_700_000_000.0, 1_700_000_600.0);
            let s = series_from(&m, first, last);
            assert!(s.windows(2).all(|w| w[0].0 < w[1].0));
            assert!(s.iter().all(|(t, _)| *t >= first - 0.001 && *t <= last + 0.001));
            for (_, h) in &s {
                assert!(h.buckets.windows(2).all(|w| w[0].1 <= w[1].1), "{h:?}");
                let _ = h.quantile(0.99);
            }
        }
        Ok(ApiData::Vector(v)) => {
            if let Some(h) = histogram_from(v.iter().map(|s| (&s.metric, s.value.1.as_str())), 0.0) {
                assert!(h.buckets.windows(2).all(|w| w[0].1 <= w[1].1), "{h:?}");
                let _ = h.quantile(0.5);
            }
        }
        _ => {}
    }
});
