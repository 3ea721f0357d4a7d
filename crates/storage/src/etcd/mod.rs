//! `lowlat measure etcd`: scrape a running etcd's `/metrics` (Prometheus text over plain
//! HTTP/1.1; no TLS) at the start, every interval and at the end of the window, take the WAL
//! fsync and backend commit histograms, and compute quantiles of the *difference* between two
//! scrapes (what happened in the window) with Prometheus' `histogram_quantile` interpolation.
//! etcd's buckets are 1 ms … 8.192 s, so the quantiles are interpolations inside a bucket: the
//! caveat travels with the numbers.

pub mod http;
pub mod prom;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use results::fsync::{
    EtcdHistogram, EtcdResult, EtcdWindow, Verdict, ETCD_COMMIT_P99_LIMIT_NS, ETCD_P99_LIMIT_NS,
};
use util::exit::ExitCode;

pub use http::http_get;
pub use prom::{parse_histogram, PromHistogram};

use crate::error::StorageError;

/// The two histograms etcd's disk guidance is about.
pub const WAL_FSYNC: &str = "etcd_disk_wal_fsync_duration_seconds";
pub const BACKEND_COMMIT: &str = "etcd_disk_backend_commit_duration_seconds";

/// Printed and stored with every result.
pub const CAVEAT: &str = "etcd histograms have buckets 1 ms, 2 ms, 4 ms … 8.192 s: quantiles are linear interpolations inside a bucket (a p99 of 3 ms means 'between 2 and 4 ms'); sub-millisecond behaviour is invisible — use `lowlat measure fsync` on the same directory for that";

/// What to measure.
#[derive(Debug, Clone)]
pub struct EtcdRequest {
    /// etcd's metrics URL (`http://host:port[/path]`; `/metrics` when no path is given).
    pub endpoint: String,
    /// The window: bucket deltas between the first and the last scrape.
    pub duration: Duration,
    /// Scrape this often for the per-interval series.
    pub interval: Duration,
    /// The tool that ran it, for the result (`lowlat 0.1.0`).
    pub tool: String,
}

/// A finished (or interrupted) `measure etcd`.
#[derive(Debug, Clone)]
pub struct EtcdRun {
    /// The result document (`kind: etcd`).
    pub result: EtcdResult,
    /// Stopped early by Ctrl-C.
    pub interrupted: bool,
}

impl EtcdRun {
    /// 130 when interrupted; 0 when every verdict passed or etcd did no WAL fsync in the
    /// window (nothing to judge); 1 otherwise.
    pub fn exit_code(&self) -> ExitCode {
        let pass = self.result.verdicts.iter().all(|v| v.pass);
        if self.interrupted {
            ExitCode::Interrupted
        } else if pass || self.result.wal_fsync.count == 0 {
            ExitCode::Ok
        } else {
            ExitCode::CheckFailed
        }
    }
}

type Scrape = (PromHistogram, Option<PromHistogram>);

fn scrape(url: &str) -> Result<Scrape, StorageError> {
    let text = http_get(url, Duration::from_secs(10))?;
    let wal = parse_histogram(&text, WAL_FSYNC)
        .ok_or_else(|| StorageError::NotEtcd { url: url.to_string(), metric: WAL_FSYNC })?;
    Ok((wal, parse_histogram(&text, BACKEND_COMMIT)))
}

fn ns(seconds: Option<f64>) -> u64 {
    seconds.map_or(0, |s| (s * 1e9).round() as u64)
}

/// The result's summary of one histogram over the window.
pub fn etcd_hist(metric: &str, h: &PromHistogram) -> EtcdHistogram {
    EtcdHistogram {
        metric: metric.to_string(),
        count: h.count as u64,
        mean_ns: if h.count > 0.0 { (h.sum / h.count * 1e9).round() as u64 } else { 0 },
        p50_ns: ns(h.quantile(0.5)),
        p90_ns: ns(h.quantile(0.9)),
        p99_ns: ns(h.quantile(0.99)),
        p999_ns: ns(h.quantile(0.999)),
        buckets: h.etcd_buckets(),
    }
}

/// One interval of the series: the deltas between two consecutive scrapes.
fn window(start_ns: u64, now: &Scrape, prev: &Scrape) -> EtcdWindow {
    let dw = now.0.delta(&prev.0);
    let dc = match (&now.1, &prev.1) {
        (Some(n), Some(p)) => Some(n.delta(p)),
        _ => None,
    };
    EtcdWindow {
        start_ns,
        wal_fsync_count: dw.count as u64,
        wal_fsync_p99_ns: ns(dw.quantile(0.99)),
        backend_commit_count: dc.as_ref().map_or(0, |h| h.count as u64),
        backend_commit_p99_ns: dc.as_ref().map_or(0, |h| ns(h.quantile(0.99))),
    }
}

/// etcd's guidance: WAL fsync p99 < 10 ms, backend commit p99 < 25 ms.
fn verdicts(wal: &EtcdHistogram, commit: Option<&EtcdHistogram>) -> Vec<Verdict> {
    let v = |name: &str, limit_ns: u64, value_ns: u64| Verdict {
        name: name.into(),
        limit_ns,
        value_ns,
        pass: value_ns < limit_ns,
    };
    let mut out = vec![v("etcd wal_fsync", ETCD_P99_LIMIT_NS, wal.p99_ns)];
    out.extend(commit.map(|c| v("etcd backend_commit", ETCD_COMMIT_P99_LIMIT_NS, c.p99_ns)));
    out
}

/// Run `measure etcd`: scrape, print a line per interval and the summary to `out`, and return
/// the result. `root` is the host the result's host summary is read from; `stop` ends the
/// window early (the result then covers what ran).
pub fn run(
    req: &EtcdRequest,
    root: &host::Root,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<EtcdRun, StorageError> {
    let started = SystemTime::now();
    let t0 = Instant::now();
    let first = scrape(&req.endpoint)?;
    let mut last = first.clone();
    let mut windows = Vec::new();
    let text = crate::text::etcd_header(&req.endpoint, req.duration, req.interval);
    out.write_all(text.as_bytes()).map_err(StorageError::View)?;
    while t0.elapsed() < req.duration && !stop.load(Ordering::SeqCst) {
        let left = req.duration.saturating_sub(t0.elapsed()).min(req.interval);
        crate::pace::sleep_until(Instant::now() + left, Duration::from_millis(100), stop);
        let now = scrape(&req.endpoint)?;
        let w = window(windows.len() as u64 * req.interval.as_nanos() as u64, &now, &last);
        writeln!(out, "{}", crate::text::etcd_window(t0.elapsed(), &w))
            .map_err(StorageError::View)?;
        windows.push(w);
        last = now;
    }
    let wal = etcd_hist(WAL_FSYNC, &last.0.delta(&first.0));
    let commit = match (&last.1, &first.1) {
        (Some(l), Some(f)) => Some(etcd_hist(BACKEND_COMMIT, &l.delta(f))),
        _ => None,
    };
    let mut result = EtcdResult {
        envelope: results::Envelope::new(results::Kind::Etcd, &req.tool),
        endpoint: req.endpoint.clone(),
        verdicts: verdicts(&wal, commit.as_ref()),
        wal_fsync: wal,
        backend_commit: commit,
        windows,
        caveat: CAVEAT.into(),
    };
    out.write_all(crate::text::etcd_summary(&result).as_bytes()).map_err(StorageError::View)?;
    let interrupted = stop.load(Ordering::SeqCst);
    let e = &mut result.envelope;
    e.partial = interrupted;
    e.started_at = Some(util::time::rfc3339_millis(started));
    e.duration_ns = t0.elapsed().as_nanos() as u64;
    e.host = results::HostContext::from_host(&host::read(root));
    e.params = serde_json::json!({
        "endpoint": req.endpoint,
        "duration_ns": req.duration.as_nanos() as u64,
        "interval_ns": req.interval.as_nanos() as u64,
    });
    Ok(EtcdRun { result, interrupted })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(fast: f64, slow: f64) -> PromHistogram {
        PromHistogram {
            buckets: vec![(0.001, fast), (0.128, fast + slow), (f64::INFINITY, fast + slow)],
            sum: fast * 0.0005 + slow * 0.1,
            count: fast + slow,
        }
    }

    #[test]
    fn windows_and_verdicts_judge_the_deltas() {
        let (a, b) = ((hist(1000.0, 0.0), None), (hist(1100.0, 5.0), Some(hist(10.0, 0.0))));
        let w = window(5, &b, &a);
        assert_eq!((w.start_ns, w.wal_fsync_count, w.backend_commit_count), (5, 105, 0));
        assert!(w.wal_fsync_p99_ns > 1_000_000, "{w:?}");
        let wal = etcd_hist(WAL_FSYNC, &b.0.delta(&a.0));
        assert_eq!(wal.count, 105);
        assert_eq!(wal.buckets.iter().map(|b| b.count).sum::<u64>(), 105);
        let v = verdicts(&wal, Some(&etcd_hist(BACKEND_COMMIT, &hist(10.0, 0.0))));
        assert_eq!(v.len(), 2);
        assert!(!v[0].pass && v[1].pass, "{v:?}");
    }

    #[test]
    fn exit_codes() {
        let wal = etcd_hist(WAL_FSYNC, &hist(0.0, 5.0));
        let mut run = EtcdRun {
            result: EtcdResult {
                envelope: results::Envelope::new(results::Kind::Etcd, "t"),
                endpoint: String::new(),
                verdicts: verdicts(&wal, None),
                wal_fsync: wal,
                backend_commit: None,
                windows: Vec::new(),
                caveat: CAVEAT.into(),
            },
            interrupted: false,
        };
        assert_eq!(run.exit_code(), ExitCode::CheckFailed);
        run.result.wal_fsync.count = 0;
        assert_eq!(run.exit_code(), ExitCode::Ok, "nothing to judge");
        run.interrupted = true;
        assert_eq!(run.exit_code(), ExitCode::Interrupted);
    }

    #[test]
    fn a_server_that_is_not_etcd_is_an_input_error() {
        use std::io::{Read as _, Write as _};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let _ = s.read(&mut [0u8; 1024]).unwrap();
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnope").unwrap();
        });
        let e = scrape(&format!("http://127.0.0.1:{port}")).unwrap_err();
        t.join().unwrap();
        assert!(e.is_input() && e.to_string().contains(WAL_FSYNC), "{e}");
    }
}
