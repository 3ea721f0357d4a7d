//! The terminal view of storage results: one fsync scenario in full, the matrix comparison
//! table, the storage environment line, `measure etcd`'s series and summary, and the
//! watchers' live lines.

use std::fmt::Write;
use std::time::{Duration, SystemTime};

use results::fsync::{EtcdResult, EtcdWindow, Scenario, StorageEnv, WatchSample};

use crate::units::fmt_ns;

/// One line describing where the probe ran.
pub fn env_line(e: &StorageEnv) -> String {
    let mut parts = vec![e.dir.clone()];
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "?".into());
    parts.push(format!("device {}", opt(&e.device)));
    parts.push(format!("{} {}", opt(&e.fs_type), e.mount_options.clone().unwrap_or_default()));
    parts.push(format!("scheduler {}", opt(&e.scheduler)));
    if let Some(w) = e.wbt_lat_usec {
        parts.push(format!("wbt_lat_usec {w}"));
    }
    parts.push(format!("write cache {}", opt(&e.write_cache)));
    let dirty: Vec<String> = e
        .dirty
        .iter()
        .filter(|(k, v)| !(k.ends_with("bytes") && **v == 0))
        .map(|(k, v)| format!("{}={v}", k.trim_start_matches("dirty_")))
        .collect();
    if !dirty.is_empty() {
        parts.push(format!("dirty {}", dirty.join(",")));
    }
    parts.push(format!("cgroup {}", opt(&e.cgroup_version)));
    parts.join(" · ")
}

/// The full text of one scenario.
pub fn scenario_text(s: &Scenario, bs: usize, sync: &str, window_ns: u64) -> String {
    let mut o = String::new();
    let l = &s.lat_ns;
    let _ = writeln!(o, "== {} ==", s.name);
    let _ = writeln!(
        o,
        "probe: pwrite {bs} B + {sync}, {:.1} s, {} ops, {:.0} IOPS",
        s.duration_ns as f64 / 1e9,
        s.ops,
        s.iops
    );
    let _ = writeln!(
        o,
        "latency: min {}  avg {}  max {}  stddev {}",
        fmt_ns(l.min),
        fmt_ns(l.avg),
        fmt_ns(l.max),
        fmt_ns(l.stddev)
    );
    let _ = writeln!(
        o,
        "         p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}",
        fmt_ns(l.p50),
        fmt_ns(l.p90),
        fmt_ns(l.p99),
        fmt_ns(l.p999),
        fmt_ns(l.p9999)
    );
    let at = |f: &dyn Fn(&results::fsync::Window) -> u64| {
        s.windows.iter().max_by_key(|w| f(w)).map_or(0.0, |w| w.start_ns as f64 / 1e9)
    };
    let _ = writeln!(
        o,
        "worst {} window: p99 {} (t={:.0}s)  max {} (t={:.0}s)   [{} windows]",
        fmt_ns(window_ns).replace(".00 ", " "),
        s.worst_window_p99_ns.map_or_else(|| "unknown".to_string(), fmt_ns),
        at(&|w| w.p99_ns),
        s.worst_window_max_ns.map_or_else(|| "unknown".to_string(), fmt_ns),
        at(&|w| w.max_ns),
        s.windows.len()
    );
    let buckets: Vec<String> = s
        .etcd_buckets
        .iter()
        .filter(|b| b.count > 0)
        .map(|b| match b.le_ns {
            Some(le) => format!("≤{}ms:{}", le as f64 / 1e6, b.count),
            None => format!(">8.192s:{}", b.count),
        })
        .collect();
    let _ = writeln!(o, "etcd buckets: {}", buckets.join("  "));
    let v: Vec<String> = s
        .verdicts
        .iter()
        .map(|v| {
            format!(
                "{} p99 < {} ms: {}",
                v.name,
                v.limit_ns / 1_000_000,
                if v.pass { "PASS" } else { "FAIL" }
            )
        })
        .collect();
    let _ = writeln!(o, "verdict: {}", v.join("; "));
    if let Some(b) = &s.bulk {
        let _ = writeln!(
            o,
            "bulk writer ({}): {} MiB in {} files, {:.2} s{}{}, started at t={:.1}s",
            b.mode,
            b.bytes >> 20,
            b.files,
            b.duration_ns as f64 / 1e9,
            b.sync_ns.map_or(String::new(), |n| format!(" (final syncfs {:.2} s)", n as f64 / 1e9)),
            if b.unfinished { ", UNFINISHED" } else { "" },
            b.start_ns as f64 / 1e9
        );
    }
    for n in &s.notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}

/// Which part of the seed's comparison a scenario belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Baseline,
    Update,
    Tried,
    SkipFsync,
}

impl Part {
    fn of(s: &Scenario) -> Self {
        match (s.interference.as_deref(), &s.mitigation) {
            (None, _) => Self::Baseline,
            (Some("no-sync"), None) => Self::SkipFsync,
            (Some(_), None) => Self::Update,
            (Some(_), Some(_)) => Self::Tried,
        }
    }

    fn title(self) -> &'static str {
        match self {
            Self::Baseline => "Baseline",
            Self::Update => "With concurrent update",
            Self::Tried => "Mitigations tried",
            Self::SkipFsync => "Update skips fsync (≈ ostree --disable-fsync)",
        }
    }
}

/// The comparison table of a matrix, laid out like the seed's (MCO #1897): baseline, with a
/// concurrent update, the mitigations tried, the update without fsync; per row the probe's
/// sync-latency figures as fio's `sync` block gives them, the worst window, how long the
/// update took, and max against the baseline's.
pub fn matrix_table(scenarios: &[Scenario]) -> String {
    let w = scenarios.iter().map(|s| s.name.len() + 2).max().unwrap_or(10).max(10);
    let base_max = scenarios
        .iter()
        .find(|s| Part::of(s) == Part::Baseline)
        .map(|s| s.lat_ns.max)
        .filter(|m| *m > 0);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<w$} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}  verdict",
        "scenario",
        "IOPS",
        "avg",
        "stdev",
        "p50",
        "p99",
        "p99.9",
        "p99.99",
        "max",
        "worst-1s",
        "max×",
        "update"
    );
    let mut order: Vec<&Scenario> = scenarios.iter().collect();
    order.sort_by_key(|s| Part::of(s));
    let mut part = None;
    for s in order {
        let p = Part::of(s);
        if part != Some(p) {
            let _ = writeln!(o, "{}", p.title());
            part = Some(p);
        }
        let bulk = s.bulk.as_ref().map_or("-".to_string(), |b| {
            format!("{:.1} s{}", b.duration_ns as f64 / 1e9, if b.unfinished { "+" } else { "" })
        });
        let ratio = match (base_max, p) {
            (Some(m), p) if p != Part::Baseline => {
                format!("{:.1}×", s.lat_ns.max as f64 / m as f64)
            }
            _ => "-".into(),
        };
        let verdict = if s.pass() {
            "pass"
        } else if s.verdicts.iter().any(|v| v.pass) {
            "fail etcd"
        } else {
            "FAIL"
        };
        let l = &s.lat_ns;
        let _ = writeln!(
            o,
            "  {:<w2$} {:>6.0} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}  {verdict}",
            s.name,
            s.iops,
            fmt_ns(l.avg),
            fmt_ns(l.stddev),
            fmt_ns(l.p50),
            fmt_ns(l.p99),
            fmt_ns(l.p999),
            fmt_ns(l.p9999),
            fmt_ns(l.max),
            s.worst_window_p99_ns.map_or_else(|| "unknown".to_string(), fmt_ns),
            ratio,
            bulk,
            w2 = w - 2,
        );
    }
    o
}

/// `measure etcd`'s first lines: what is scraped, and the series' column heads.
pub fn etcd_header(endpoint: &str, duration: Duration, interval: Duration) -> String {
    format!(
        "lowlat measure etcd: {endpoint} for {duration:?}, every {interval:?}\n{:>8}  {:>9}  {:>12}  {:>9}  {:>12}\n",
        "t", "wal n", "wal p99", "commit n", "commit p99"
    )
}

/// One interval of `measure etcd`'s series, `t` after the start.
pub fn etcd_window(t: Duration, w: &EtcdWindow) -> String {
    format!(
        "{:>7.0}s  {:>9}  {:>12}  {:>9}  {:>12}",
        t.as_secs_f64(),
        w.wal_fsync_count,
        fmt_ns(w.wal_fsync_p99_ns),
        w.backend_commit_count,
        fmt_ns(w.backend_commit_p99_ns)
    )
}

/// `measure etcd`'s summary: each histogram over the window, the verdicts, the caveat.
pub fn etcd_summary(r: &EtcdResult) -> String {
    let mut o = String::from("\n");
    for h in std::iter::once(&r.wal_fsync).chain(r.backend_commit.as_ref()) {
        let _ = writeln!(
            o,
            "{}: {} in window, mean {}, p50 {}, p90 {}, p99 {}, p99.9 {}",
            h.metric,
            h.count,
            fmt_ns(h.mean_ns),
            fmt_ns(h.p50_ns),
            fmt_ns(h.p90_ns),
            fmt_ns(h.p99_ns),
            fmt_ns(h.p999_ns)
        );
    }
    use results::Evidence as _;
    let missing = r.no_evidence();
    for v in &r.verdicts {
        let verdict = match &missing {
            Some(n) => format!("NO VERDICT ({n})"),
            None if v.pass => "PASS".into(),
            None => "FAIL".into(),
        };
        let _ = writeln!(o, "verdict: {} p99 < {} ms: {verdict}", v.name, v.limit_ns / 1_000_000);
    }
    let _ = writeln!(o, "caveat: {}", r.caveat);
    o
}

/// `watch storage`'s live line for a sample taken at `at`.
pub fn watch_storage_line(at: SystemTime, s: &WatchSample) -> String {
    let dline = s
        .dstate
        .iter()
        .take(3)
        .map(|d| {
            let wchan = d.wchan.as_deref().unwrap_or("?");
            format!("{}[{}] {wchan} {:.0}s", d.comm, d.tid, d.seen_ns as f64 / 1e9)
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{} sync-write {:>9}  fsync p50 {:>8} max {:>8}  D {:>2}{}  psi-io {}{}",
        util::time::hms(at),
        fmt_ns(s.value_ns),
        s.burst_p50_ns.map_or("-".into(), fmt_ns),
        s.burst_max_ns.map_or("-".into(), fmt_ns),
        s.dstate.len(),
        if dline.is_empty() { String::new() } else { format!(" ({dline})") },
        s.psi_some_avg10.map_or("-".into(), |v| format!("{v:.1}%")),
        s.error.as_deref().map_or(String::new(), |e| format!("  [{e}]"))
    )
}

/// `watch cmd`'s live line for sample number `n` (from 1), taken at `at`.
pub fn watch_cmd_line(at: SystemTime, n: u64, s: &WatchSample) -> String {
    format!(
        "{} #{n:<5} {:>9}  exit {}",
        util::time::hms(at),
        fmt_ns(s.value_ns),
        s.exit_code.map_or("signal".into(), |c| c.to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::fsync::{verdicts, BulkRun, DState, EtcdHistogram, LatNs, Verdict};

    fn sc(name: &str, p99: u64) -> Scenario {
        Scenario {
            name: name.into(),
            ops: 100,
            iops: 1000.0,
            duration_ns: 1_000_000_000,
            lat_ns: LatNs { p99, max: p99 * 2, ..Default::default() },
            worst_window_p99_ns: Some(p99),
            worst_window_max_ns: Some(p99 * 2),
            verdicts: verdicts(p99),
            ..Default::default()
        }
    }

    #[test]
    fn matrix_table_is_laid_out_like_the_seeds_comparison() {
        let with = |name: &str, p99: u64, i: &str, m: Option<&str>| {
            let mut s = sc(name, p99);
            s.interference = Some(i.into());
            s.mitigation = m.map(Into::into);
            s.bulk = Some(BulkRun { duration_ns: 7_130_000_000, ..Default::default() });
            s
        };
        let t = matrix_table(&[
            sc("baseline", 330_000),
            with("syncfs-at-end", 15_000_000, "syncfs-at-end", None),
            with("syncfs-at-end + ionice-idle", 30_000_000, "syncfs-at-end", Some("ionice-idle")),
            with("no-sync", 400_000, "no-sync", None),
        ]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 9, "{t}");
        assert_eq!(
            [lines[1], lines[3], lines[5], lines[7]],
            [
                "Baseline",
                "With concurrent update",
                "Mitigations tried",
                "Update skips fsync (≈ ostree --disable-fsync)"
            ],
            "{t}"
        );
        assert!(lines[2].starts_with("  baseline") && lines[2].ends_with("pass"), "{t}");
        assert!(lines[2].contains("330 µs"), "{t}");
        assert!(lines[4].contains("7.1 s") && lines[4].ends_with("fail etcd"), "{t}");
        assert!(lines[4].contains("45.5×"), "max 30 ms vs the baseline's 660 µs: {t}");
        assert!(lines[6].ends_with("FAIL") && lines[8].ends_with("pass"), "{t}");
    }

    #[test]
    fn scenario_text_mentions_everything() {
        let mut s = sc("baseline", 330_000);
        s.notes.push("scheduler vda restored to mq-deadline".into());
        let t = scenario_text(&s, 2300, "fdatasync", 1_000_000_000);
        for needle in [
            "pwrite 2300 B + fdatasync",
            "p99 330 µs",
            "etcd p99 < 10 ms: PASS",
            "openshift p99 < 20 ms: PASS",
            "note: scheduler",
        ] {
            assert!(t.contains(needle), "{needle} in\n{t}");
        }
    }

    #[test]
    fn etcd_lines() {
        let h = etcd_header("http://e:2379", Duration::from_secs(1), Duration::from_millis(500));
        assert!(h.starts_with("lowlat measure etcd: http://e:2379 for 1s, every 500ms\n"), "{h}");
        assert!(h.lines().nth(1).unwrap().trim_start().starts_with("t      wal n"), "{h}");
        let w = EtcdWindow {
            wal_fsync_count: 105,
            wal_fsync_p99_ns: 114_560_000,
            ..Default::default()
        };
        assert_eq!(
            etcd_window(Duration::from_secs(1), &w),
            "      1s        105     114.56 ms          0          0 µs"
        );
        let mut r = EtcdResult {
            envelope: results::Envelope::new(results::Kind::Etcd, "t"),
            endpoint: String::new(),
            source: Default::default(),
            tls: false,
            query: None,
            wal_fsync: EtcdHistogram {
                metric: "wal".into(),
                count: 3,
                buckets: vec![results::fsync::EtcdBucket { le_ns: None, count: 3 }],
                ..Default::default()
            },
            backend_commit: None,
            windows: Vec::new(),
            verdicts: vec![Verdict {
                name: "etcd wal_fsync".into(),
                limit_ns: 10_000_000,
                value_ns: 0,
                pass: true,
            }],
            caveat: "c".into(),
        };
        let t = etcd_summary(&r);
        assert!(t.starts_with("\nwal: 3 in window, mean 0 µs"), "{t}");
        assert!(t.contains("verdict: etcd wal_fsync p99 < 10 ms: PASS\ncaveat: c\n"), "{t}");
        r.wal_fsync.count = 0;
        r.wal_fsync.buckets.iter_mut().for_each(|b| b.count = 0);
        let t = etcd_summary(&r);
        assert!(t.contains("NO VERDICT (no evidence: no fsyncs observed"), "{t}");
        assert!(!t.contains("PASS"), "{t}");
    }

    #[test]
    fn watch_lines() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(3600 + 62);
        let mut s = WatchSample {
            value_ns: 3_920_000,
            burst_p50_ns: Some(3_990_000),
            ..Default::default()
        };
        s.psi_some_avg10 = Some(5.5);
        s.dstate.push(DState {
            pid: 1,
            tid: 7,
            comm: "kworker".into(),
            wchan: None,
            seen_ns: 2_000_000_000,
        });
        assert_eq!(
            watch_storage_line(at, &s),
            "01:01:02 sync-write   3.92 ms  fsync p50  3.99 ms max        -  D  1 (kworker[7] ? 2s)  psi-io 5.5%"
        );
        s.exit_code = Some(0);
        assert_eq!(watch_cmd_line(at, 1, &s), "01:01:02 #1       3.92 ms  exit 0");
        s.exit_code = None;
        assert!(watch_cmd_line(at, 2, &s).ends_with("exit signal"));
    }
}
