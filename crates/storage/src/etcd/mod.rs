//! `lowlat measure etcd`: etcd's WAL fsync and backend commit histograms over a window, read
//! either from etcd's own `/metrics` (HTTP, or HTTPS with the cluster's CA and a client
//! certificate: OpenShift serves them only over mutual TLS) scraped at the start, every
//! interval and at the end, or from a Prometheus that scrapes etcd (`increase()` over the
//! window and each interval, [`promapi`]). Quantiles are computed from the *difference* (what
//! happened in the window) with Prometheus' `histogram_quantile` interpolation. etcd's buckets
//! are 1 ms … 8.192 s, so the quantiles are interpolations inside a bucket: the caveat travels
//! with the numbers.

pub mod http;
pub mod prom;
pub mod promapi;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use results::fsync::{
    EtcdHistogram, EtcdResult, EtcdSource, EtcdWindow, Verdict, ETCD_COMMIT_P99_LIMIT_NS,
    ETCD_P99_LIMIT_NS,
};
use util::exit::ExitCode;

pub use http::{HttpClient, TlsFiles};
pub use prom::{parse_histogram, PromHistogram};

use crate::error::StorageError;

/// The two histograms etcd's disk guidance is about.
pub const WAL_FSYNC: &str = "etcd_disk_wal_fsync_duration_seconds";
pub const BACKEND_COMMIT: &str = "etcd_disk_backend_commit_duration_seconds";

/// Printed and stored with every result.
pub const CAVEAT: &str = "etcd histograms have buckets 1 ms, 2 ms, 4 ms … 8.192 s: quantiles are linear interpolations inside a bucket (a p99 of 3 ms means 'between 2 and 4 ms'); sub-millisecond behaviour is invisible — use `lowlat measure fsync` on the same directory for that";

/// Time limit of one HTTP request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the histograms come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// etcd's metrics URL (`http(s)://host:port[/path]`; `/metrics` when no path is given),
    /// scraped live over the window.
    Metrics { endpoint: String },
    /// A Prometheus (or Thanos querier) base URL: the window that ends now, read back.
    Prometheus {
        url: String,
        /// Label matchers for etcd's series (`job="etcd"`); empty = every series, summed.
        selector: String,
    },
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct EtcdRequest {
    pub source: Source,
    /// CA / client certificate files for `https://`.
    pub tls: TlsFiles,
    /// Bearer token sent with every request (Prometheus behind OpenShift's OAuth proxy).
    pub bearer: Option<String>,
    /// The window: bucket deltas between the first and the last scrape (or Prometheus'
    /// increase over it).
    pub duration: Duration,
    /// Scrape this often for the per-interval series (Prometheus: the series' step).
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
    /// 130 when interrupted; 0 when every verdict passed on evidence; 1 otherwise — a
    /// window without evidence (no WAL fsync, buckets that do not add up:
    /// `results::evidence`) is not a pass.
    pub fn exit_code(&self) -> ExitCode {
        use results::Evidence as _;
        let pass = self.result.verdicts.iter().all(|v| v.pass);
        if self.interrupted {
            ExitCode::Interrupted
        } else if pass && self.result.no_evidence().is_none() {
            ExitCode::Ok
        } else {
            ExitCode::CheckFailed
        }
    }
}

type Scrape = (PromHistogram, Option<PromHistogram>);

fn scrape(client: &HttpClient, url: &str) -> Result<Scrape, StorageError> {
    let text = client.get(url, &[])?;
    let wal = parse_histogram(&text, WAL_FSYNC)
        .ok_or_else(|| StorageError::NotEtcd { url: url.to_string(), metric: WAL_FSYNC })?;
    let commit = parse_histogram(&text, BACKEND_COMMIT);
    for (metric, h) in [(WAL_FSYNC, Some(&wal)), (BACKEND_COMMIT, commit.as_ref())] {
        if let Some(why) = h.and_then(PromHistogram::unusable) {
            return Err(StorageError::Unusable { url: url.to_string(), metric, why });
        }
    }
    Ok((wal, commit))
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

/// Run `measure etcd`: read the histograms, print a line per interval and the summary to
/// `out`, and return the result. `root` is the host the result's host summary is read from;
/// `stop` ends a live window early (the result then covers what ran).
pub fn run(
    req: &EtcdRequest,
    root: &host::Root,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<EtcdRun, StorageError> {
    let client = HttpClient::new(&req.tls, req.bearer.clone(), REQUEST_TIMEOUT)?;
    let started = SystemTime::now();
    let t0 = Instant::now();
    let (endpoint, source, query, read) = match &req.source {
        Source::Metrics { endpoint } => {
            let url = http::metrics_url(endpoint)?;
            let r = scrape_window(&client, &url, req, stop, out)?;
            (url, EtcdSource::Metrics, None, r)
        }
        Source::Prometheus { url, selector } => {
            http::check_url(url)?;
            promapi::check_selector(selector)?;
            let api =
                promapi::PromApi { client: &client, base: url.clone(), selector: selector.clone() };
            let query = api.bucket_expr(WAL_FSYNC, req.duration);
            (
                url.clone(),
                EtcdSource::Prometheus,
                Some(query),
                prometheus_window(&api, req, stop, out)?,
            )
        }
    };
    let (wal, commit, windows) = read;
    let mut result = EtcdResult {
        envelope: results::Envelope::new(results::Kind::Etcd, &req.tool),
        endpoint: endpoint.clone(),
        source,
        tls: endpoint.starts_with("https://"),
        query,
        verdicts: verdicts(&wal, commit.as_ref()),
        wal_fsync: wal,
        backend_commit: commit,
        windows,
        caveat: CAVEAT.into(),
    };
    // A verdict needs evidence (`results::evidence`): without it none of them passes.
    if results::Evidence::no_evidence(&result).is_some() {
        result.verdicts.iter_mut().for_each(|v| v.pass = false);
    }
    out.write_all(crate::text::etcd_summary(&result).as_bytes()).map_err(StorageError::View)?;
    let interrupted = stop.load(Ordering::SeqCst);
    let e = &mut result.envelope;
    e.partial = interrupted;
    e.started_at = Some(util::time::rfc3339_millis(started));
    e.duration_ns = t0.elapsed().as_nanos() as u64;
    e.host = results::HostContext::from_host(&host::read(root));
    let (selector, prometheus) = match &req.source {
        Source::Prometheus { selector, .. } => (Some(selector.as_str()), true),
        Source::Metrics { .. } => (None, false),
    };
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    e.params = results::Params::Etcd(results::EtcdParams {
        endpoint: Some(endpoint.to_string()),
        prometheus: Some(prometheus),
        selector: selector.map(str::to_string),
        duration_ns: Some(req.duration.as_nanos() as u64),
        interval_ns: Some(req.interval.as_nanos() as u64),
        cacert: path(&req.tls.cacert),
        cert: path(&req.tls.cert),
        key: path(&req.tls.key),
        bearer_token: Some(req.bearer.is_some()),
        ..results::EtcdParams::default()
    });
    Ok(EtcdRun { result, interrupted })
}

type Read = (EtcdHistogram, Option<EtcdHistogram>, Vec<EtcdWindow>);

/// Scrape etcd live: at the start, every interval, at the end.
fn scrape_window(
    client: &HttpClient,
    url: &str,
    req: &EtcdRequest,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<Read, StorageError> {
    let t0 = Instant::now();
    let first = scrape(client, url)?;
    let mut last = first.clone();
    let mut windows = Vec::new();
    let text = crate::text::etcd_header(url, req.duration, req.interval);
    out.write_all(text.as_bytes()).map_err(StorageError::View)?;
    while t0.elapsed() < req.duration && !stop.load(Ordering::SeqCst) {
        let left = req.duration.saturating_sub(t0.elapsed()).min(req.interval);
        crate::pace::sleep_until(Instant::now() + left, Duration::from_millis(100), stop);
        let now = scrape(client, url)?;
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
    Ok((wal, commit, windows))
}

/// Read the window that ends now back from Prometheus. Linear in the points of the range
/// answers (the windows are joined by timestamp, not searched); `stop` (the first SIGINT or
/// SIGTERM) is honoured between requests and between windows: the run is then partial with the
/// windows computed so far. One request can still take up to its time limit (10 s).
fn prometheus_window(
    api: &promapi::PromApi<'_>,
    req: &EtcdRequest,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<Read, StorageError> {
    let stopped = || stop.load(Ordering::SeqCst);
    let end = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
        .floor();
    let secs = req.duration.as_secs().max(1);
    let range = Duration::from_secs(secs);
    let start = end - secs as f64;
    let step = Duration::from_secs(req.interval.as_secs().max(1));
    let wal = api.increase(WAL_FSYNC, range, end)?.ok_or_else(|| StorageError::NoSeries {
        url: api.base.clone(),
        query: api.bucket_expr(WAL_FSYNC, range),
    })?;
    let commit = api.increase(BACKEND_COMMIT, range, end)?;
    for (metric, h) in [(WAL_FSYNC, Some(&wal)), (BACKEND_COMMIT, commit.as_ref())] {
        if let Some(why) = h.and_then(PromHistogram::unusable) {
            return Err(StorageError::Unusable { url: api.base.clone(), metric, why });
        }
    }
    let text = crate::text::etcd_header(&api.base, range, step);
    out.write_all(text.as_bytes()).map_err(StorageError::View)?;
    let wal_hist = etcd_hist(WAL_FSYNC, &wal);
    let commit_hist = commit.as_ref().map(|c| etcd_hist(BACKEND_COMMIT, c));
    let mut windows = Vec::new();
    if stopped() {
        return Ok((wal_hist, commit_hist, windows));
    }
    let ws = api.series(WAL_FSYNC, step, start, end)?;
    if stopped() {
        return Ok((wal_hist, commit_hist, windows));
    }
    let cs = api.series(BACKEND_COMMIT, step, start, end)?;
    // Both are ascending by time (`series_from`): keyed by millisecond, each window finds its
    // commit histogram in O(log n) — a search through `cs` per window was O(n²).
    let cs: std::collections::BTreeMap<i64, &PromHistogram> =
        cs.iter().map(|(t, h)| ((t * 1000.0).round() as i64, h)).collect();
    for (t, h) in &ws {
        if stopped() {
            break;
        }
        let c = cs.get(&((t * 1000.0).round() as i64)).copied();
        let w = EtcdWindow {
            start_ns: ((t - step.as_secs_f64() - start).max(0.0) * 1e9) as u64,
            wal_fsync_count: h.count.round() as u64,
            wal_fsync_p99_ns: ns(h.quantile(0.99)),
            backend_commit_count: c.map_or(0, |c| c.count.round() as u64),
            backend_commit_p99_ns: c.map_or(0, |c| ns(c.quantile(0.99))),
        };
        let at = Duration::from_secs_f64((t - start).max(0.0));
        writeln!(out, "{}", crate::text::etcd_window(at, &w)).map_err(StorageError::View)?;
        windows.push(w);
    }
    if windows.is_empty() && !stopped() {
        writeln!(out, "note: no per-interval data: an interval needs at least two of Prometheus' scrapes (OpenShift scrapes etcd every 30 s: use 1m or more)")
            .map_err(StorageError::View)?;
    }
    Ok((wal_hist, commit_hist, windows))
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
                source: EtcdSource::Metrics,
                tls: false,
                query: None,
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
        assert_eq!(run.exit_code(), ExitCode::CheckFailed, "no fsync: nothing to pass");
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
        let c = HttpClient::new(&TlsFiles::default(), None, REQUEST_TIMEOUT).unwrap();
        let e = scrape(&c, &format!("http://127.0.0.1:{port}/metrics")).unwrap_err();
        t.join().unwrap();
        assert!(e.is_input() && e.to_string().contains(WAL_FSYNC), "{e}");
    }
}
