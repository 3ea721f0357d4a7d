//! Issue 21, item 1: `measure etcd` said PASS, exit 0, on no evidence — an idle window (0
//! fsyncs), a static metrics file served by any HTTP server, NaN or +Inf buckets, a body with
//! no parsable bucket, negative, out-of-order or mislabelled buckets. Each of the hostile
//! bodies under `testdata/verdicts/etcd-metrics/` is served here by a plain HTTP server and
//! measured for real: none may pass.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use results::Evidence as _;
use storage::etcd::{EtcdRequest, Source, TlsFiles};
use util::exit::{Classify as _, ExitCode};

fn corpus(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/verdicts/etcd-metrics")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Serve `body` to every request until dropped (a static metrics file behind any server).
struct Server {
    url: String,
    done: Arc<AtomicBool>,
}

impl Server {
    fn start(body: String) -> Self {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let url = format!("http://127.0.0.1:{}/metrics", l.local_addr().unwrap().port());
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let Ok((mut s, _)) = l.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                s.set_nonblocking(false).unwrap();
                let _ = s.read(&mut [0u8; 4096]);
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Self { url, done }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

fn measure(file: &str) -> (Result<storage::etcd::EtcdRun, storage::StorageError>, String) {
    let server = Server::start(corpus(file));
    let req = EtcdRequest {
        source: Source::Metrics { endpoint: server.url.clone() },
        tls: TlsFiles::default(),
        bearer: None,
        duration: Duration::from_millis(300),
        interval: Duration::from_millis(150),
        tool: "test".into(),
    };
    let mut out = Vec::new();
    let stop = AtomicBool::new(false);
    let r = storage::etcd::run(&req, &host::Root::live(), &stop, &mut out);
    (r, String::from_utf8_lossy(&out).into_owned())
}

/// An idle etcd and a static file: the window saw no fsync. Measured, not passed: exit 1,
/// "no fsyncs observed", no PASS anywhere, every verdict in the JSON `pass: false`.
#[test]
fn an_idle_or_static_endpoint_is_no_fsyncs_observed_not_a_pass() {
    for file in ["idle.prom", "static.prom"] {
        let (run, out) = measure(file);
        let run = run.unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(run.exit_code(), ExitCode::CheckFailed, "{file}: {out}");
        assert!(out.contains("no fsyncs observed"), "{file}: {out}");
        assert!(!out.contains("PASS"), "{file}: {out}");
        assert!(run.result.verdicts.iter().all(|v| !v.pass), "{file}");
        assert!(run.result.no_evidence().is_some(), "{file}");
    }
}

/// Numbers no verdict can rest on: an input error (exit 2) naming the metric and what is wrong.
#[test]
fn unusable_histograms_are_input_errors_that_say_why() {
    let cases = [
        ("nan-bucket.prom", "not a finite non-negative number"),
        ("inf-bucket.prom", "not a finite non-negative number"),
        ("negative-bucket.prom", "not a finite non-negative number"),
        ("no-bucket.prom", "no _bucket"),
        ("no-inf-bucket.prom", "not le=\"+Inf\""),
        ("out-of-order.prom", "buckets are cumulative"),
        ("mislabelled.prom", "the +Inf bucket counts 0 but _count is 400"),
    ];
    for (file, why) in cases {
        let (run, out) = measure(file);
        let e = match run {
            Ok(r) => panic!("{file}: measured ({:?}): {out}", r.result.verdicts),
            Err(e) => e,
        };
        assert_eq!(e.exit_code(), ExitCode::Usage, "{file}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains("etcd_disk_wal_fsync_duration_seconds") && msg.contains(why),
            "{file}: {msg}"
        );
        assert!(!out.contains("PASS"), "{file}: {out}");
    }
}

mod agreement {
    use proptest::prelude::*;
    use results::Evidence as _;
    use results::NoEvidence;
    use storage::etcd::{etcd_hist, PromHistogram, WAL_FSYNC};

    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            8 => (0u32..5000).prop_map(f64::from),
            3 => 0.0f64..5000.0,
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => -100.0f64..0.0,
        ]
    }

    proptest! {
        /// The scrape's check and the evidence rule agree: a histogram the scrape accepts
        /// (whole live counts, or Prometheus' fractional increase()) is never "unusable" to
        /// the rule; every other one is refused with a reason, and nothing panics.
        #[test]
        fn what_the_scrape_accepts_the_evidence_rule_accepts(
            counts in prop::collection::vec(value(), 0..8),
            inf in value(),
            count in value(),
            well_formed in any::<bool>(),
        ) {
            let les = [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128];
            let mut counts = counts;
            let (mut inf, mut count) = (inf, count);
            if well_formed {
                // Cumulative, as a real client writes it (fractional: Prometheus' increase()).
                counts.retain(|c| c.is_finite() && *c >= 0.0);
                counts.sort_by(f64::total_cmp);
                inf = counts.last().copied().unwrap_or(0.0) + inf.abs().min(10.0).floor();
                count = inf;
            }
            let mut buckets: Vec<(f64, f64)> = les.iter().copied().zip(counts).collect();
            buckets.push((f64::INFINITY, inf));
            let h = PromHistogram { buckets, sum: 1.0, count };
            let accepted = h.unusable().is_none();
            prop_assert!(accepted || !well_formed || !inf.is_finite(), "{h:?}: {:?}", h.unusable());
            if accepted {
                let r = results::fsync::EtcdResult {
                    envelope: results::Envelope::new(results::Kind::Etcd, "t"),
                    endpoint: String::new(),
                    source: Default::default(),
                    tls: false,
                    query: None,
                    wal_fsync: etcd_hist(WAL_FSYNC, &h),
                    backend_commit: None,
                    windows: Vec::new(),
                    verdicts: Vec::new(),
                    caveat: String::new(),
                };
                let n = r.no_evidence();
                prop_assert!(!matches!(n, Some(NoEvidence::Unusable(_))), "{n:?} for {h:?}");
            }
        }
    }
}
