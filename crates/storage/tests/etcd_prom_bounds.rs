//! `measure etcd --prometheus-url` on large `query_range` answers (issue 21, item 9): linear in
//! the points, points outside the asked window dropped, the first stop request honoured.
//! A fake Prometheus (a thread on a loopback port) answers every instant query with one small
//! histogram and every range query with points from well before the window to well after it.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use storage::etcd::{EtcdRequest, Source, TlsFiles};

/// Points each `le` series carries outside the window, on each side.
const OUTSIDE: i64 = 1000;

fn param(line: &str, name: &str) -> Option<f64> {
    let q = line.split_once('?')?.1.split(' ').next()?;
    let v = q.split('&').find_map(|kv| kv.strip_prefix(&format!("{name}=")))?;
    v.trim_end_matches('s').parse().ok()
}

fn range_answer(start: f64, end: f64, step: f64) -> String {
    let (step, first, last) = (step as i64, start as i64 - OUTSIDE * step as i64, end as i64);
    let mut body = String::from(r#"{"status":"success","data":{"resultType":"matrix","result":["#);
    for (i, le) in ["0.001", "+Inf"].iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        write!(body, r#"{{"metric":{{"le":"{le}"}},"values":["#).unwrap();
        let mut t = first;
        while t <= last + OUTSIDE * step {
            if t != first {
                body.push(',');
            }
            write!(body, r#"[{t},"3"]"#).unwrap();
            t += step;
        }
        body.push_str("]}");
    }
    body.push_str("]}}");
    body
}

const INSTANT: &str = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"le":"0.001"},"value":[1,"90"]},{"metric":{"le":"+Inf"},"value":[1,"100"]}]}}"#;

/// Serves until the test ends; `on_range` runs before each range answer is written.
fn serve(on_range: fn()) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut first = String::new();
            r.read_line(&mut first).unwrap();
            let mut h = String::new();
            while r.read_line(&mut h).is_ok_and(|n| n > 2) {
                h.clear();
            }
            let body = if first.contains("/query_range") {
                on_range();
                let p = |n| param(&first, n).unwrap();
                range_answer(p("start"), p("end"), p("step"))
            } else {
                INSTANT.to_string()
            };
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

fn request(url: String, secs: u64) -> EtcdRequest {
    EtcdRequest {
        source: Source::Prometheus { url, selector: String::new() },
        tls: TlsFiles::default(),
        bearer: None,
        duration: Duration::from_secs(secs),
        interval: Duration::from_secs(1),
        tool: "lowlat test".into(),
    }
}

/// 300 000 one-second steps, two `le` series: a 600k-point answer (plus 2000 points outside
/// the window per series). Before: the windows were joined with a linear search per window
/// (O(n²): minutes) and the points outside the window became windows of their own.
#[test]
fn a_600k_point_range_answer_is_linear_and_keeps_only_the_window() {
    let secs = 300_000;
    let url = serve(|| {});
    let stop = AtomicBool::new(false);
    let mut out = Vec::new();
    let t0 = Instant::now();
    let run = storage::etcd::run(&request(url, secs), &host::Root::live(), &stop, &mut out)
        .unwrap_or_else(|e| panic!("{e}"));
    let took = t0.elapsed();
    let w = &run.result.windows;
    assert_eq!(w.len(), secs as usize, "one window per step inside the window, none outside");
    assert!(w.iter().all(|w| w.start_ns < secs * 1_000_000_000), "a window outside: {w:?}");
    assert!(w.windows(2).all(|p| p[0].start_ns < p[1].start_ns));
    assert!(w.iter().all(|w| w.wal_fsync_count == 3 && w.backend_commit_count == 3));
    eprintln!("600k-point query_range answers (twice): {took:?}");
    assert!(took < Duration::from_secs(60), "{took:?}: not linear");
}

static STOP: AtomicBool = AtomicBool::new(false);

/// The first stop request (SIGINT/SIGTERM set this flag) ends the run: partial, no more
/// windows computed. Before, the Prometheus mode never looked at the flag.
#[test]
fn the_first_stop_request_ends_a_prometheus_read() {
    let url = serve(|| STOP.store(true, Ordering::SeqCst));
    let mut out = Vec::new();
    let run = storage::etcd::run(&request(url, 2000), &host::Root::live(), &STOP, &mut out)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(run.interrupted && run.result.envelope.partial);
    assert!(run.result.windows.is_empty(), "{} windows after the stop", run.result.windows.len());
}
