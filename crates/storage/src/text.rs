//! Terminal text of fsync results: one scenario in full, the matrix comparison table, the
//! storage environment line.

use std::fmt::Write;

use results::fsync::{Scenario, StorageEnv};

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
        crate::units::fmt_ns(window_ns).replace(".00 ", " "),
        fmt_ns(s.worst_window_p99_ns),
        at(&|w| w.p99_ns),
        fmt_ns(s.worst_window_max_ns),
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

/// The comparison table of a matrix (the one the seed made by hand).
pub fn matrix_table(scenarios: &[Scenario]) -> String {
    let w = scenarios.iter().map(|s| s.name.len()).max().unwrap_or(8).max(8);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<w$}  {:>10}  {:>10}  {:>13}  {:>13}  {:>7}  {:>10}  verdict",
        "scenario", "p99", "p99.9", "worst-win p99", "worst-win max", "IOPS", "bulk"
    );
    for s in scenarios {
        let bulk = s.bulk.as_ref().map_or("-".to_string(), |b| {
            format!("{:.1} s{}", b.duration_ns as f64 / 1e9, if b.unfinished { "+" } else { "" })
        });
        let verdict = if s.pass() {
            "pass"
        } else if s.verdicts.iter().any(|v| v.pass) {
            "fail etcd"
        } else {
            "FAIL"
        };
        let _ = writeln!(
            o,
            "{:<w$}  {:>10}  {:>10}  {:>13}  {:>13}  {:>7.0}  {:>10}  {verdict}",
            s.name,
            fmt_ns(s.lat_ns.p99),
            fmt_ns(s.lat_ns.p999),
            fmt_ns(s.worst_window_p99_ns),
            fmt_ns(s.worst_window_max_ns),
            s.iops,
            bulk
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::fsync::{verdicts, BulkRun, LatNs};

    fn sc(name: &str, p99: u64) -> Scenario {
        Scenario {
            name: name.into(),
            ops: 100,
            iops: 1000.0,
            duration_ns: 1_000_000_000,
            lat_ns: LatNs { p99, max: p99 * 2, ..Default::default() },
            worst_window_p99_ns: p99,
            worst_window_max_ns: p99 * 2,
            verdicts: verdicts(p99),
            ..Default::default()
        }
    }

    #[test]
    fn matrix_table_rows_and_verdicts() {
        let mut b = sc("syncfs-at-end", 15_000_000);
        b.bulk = Some(BulkRun { duration_ns: 7_130_000_000, ..Default::default() });
        let t = matrix_table(&[sc("baseline", 330_000), b, sc("x", 30_000_000)]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert!(lines[1].starts_with("baseline") && lines[1].ends_with("pass"), "{t}");
        assert!(lines[2].contains("7.1 s") && lines[2].ends_with("fail etcd"), "{t}");
        assert!(lines[3].ends_with("FAIL"), "{t}");
        assert!(lines[1].contains("330 µs"), "{t}");
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
}
