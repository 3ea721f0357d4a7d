//! What `--prometheus FILE` exports (node_exporter's textfile collector), on `util::prom`:
//! a latency result (timer, noise, hwlat) per CPU, a ticks result per CPU, an fsync result's
//! percentiles, a verify report per check, a check's verdict per section. Gauges only; every
//! family starts with `lowlat_`; 1/0 for booleans and one-hot verdicts.

use results::Evidence as _;
use util::prom::Metrics;

use crate::model::{Report, Verdict};

const VERDICTS: [Verdict; 5] =
    [Verdict::Info, Verdict::Pass, Verdict::Skipped, Verdict::Warn, Verdict::Fail];

fn s(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A timer or noise result: per CPU the worst, p99 (when known) and sample count; whether it
/// ran real-time, was cut short, and holds evidence at all.
pub fn latency(r: &results::LatencyResult) -> Metrics {
    let mut m = Metrics::new();
    let kind = r.envelope.kind.to_string();
    for t in &r.threads {
        let cpu = t.cpu.map_or_else(|| "unpinned".to_string(), |c| c.to_string());
        let l = [("kind", kind.as_str()), ("cpu", cpu.as_str())];
        m.gauge("lowlat_latency_max_seconds", "Worst latency on the CPU.", &l, s(t.stats.max_ns));
        if let Some(p) = t.stats.p99_ns {
            m.gauge("lowlat_latency_p99_seconds", "99th percentile on the CPU.", &l, s(p));
        }
        m.gauge("lowlat_latency_samples", "Samples taken on the CPU.", &l, t.stats.count as f64);
    }
    let k = [("kind", kind.as_str())];
    let flag = if r.realtime { 1.0 } else { 0.0 };
    m.gauge("lowlat_latency_realtime", "1 when the threads ran real-time.", &k, flag);
    run_flags(&mut m, "lowlat_latency", &k, &r.envelope, r.no_evidence().is_none());
    m
}

/// Whether a run was cut short, whether it holds evidence, and its length, under `prefix`
/// with `labels`.
fn run_flags(
    m: &mut Metrics,
    prefix: &str,
    labels: &[(&str, &str)],
    env: &results::Envelope,
    evidence: bool,
) {
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    m.gauge(
        &format!("{prefix}_partial"),
        "1 when the run was cut short.",
        labels,
        flag(env.partial),
    );
    m.gauge(
        &format!("{prefix}_evidence"),
        "1 when the result holds evidence a verdict can stand on.",
        labels,
        flag(evidence),
    );
    m.gauge(&format!("{prefix}_duration_seconds"), "Run length.", labels, s(env.duration_ns));
}

/// A ticks result: per CPU the local timer interrupts per second and whether the CPU is
/// nohz_full (1 tick a second is the goal there), with the run's flags.
pub fn ticks(r: &results::TicksResult) -> Metrics {
    let mut m = Metrics::new();
    for c in &r.cpus {
        let cpu = c.cpu.to_string();
        let nohz = if c.nohz_full { "1" } else { "0" };
        m.gauge(
            "lowlat_ticks_local_timer_per_second",
            "Local timer interrupts per second on the CPU while one task spun there.",
            &[("cpu", cpu.as_str()), ("nohz_full", nohz)],
            c.loc_per_s,
        );
    }
    run_flags(&mut m, "lowlat_ticks", &[], &r.envelope, r.no_evidence().is_none());
    m
}

/// An fsync result: the latency percentiles, operations per second, the worst window's p99
/// (when windows were kept), with the run's flags.
pub fn fsync(r: &results::fsync::FsyncResult) -> Metrics {
    let mut m = Metrics::new();
    let l = &r.lat_ns;
    // a gauge per percentile: the `quantile` label is reserved for summaries (promtool)
    let percentiles =
        [("p50", l.p50), ("p90", l.p90), ("p99", l.p99), ("p99.9", l.p999), ("max", l.max)];
    for (p, ns) in percentiles {
        m.gauge(
            "lowlat_fsync_latency_seconds",
            "fsync latency percentile (max: the worst fsync).",
            &[("percentile", p)],
            s(ns),
        );
    }
    m.gauge("lowlat_fsync_operations", "fsyncs measured.", &[], r.ops as f64);
    m.gauge("lowlat_fsync_iops", "fsyncs per second.", &[], r.iops);
    if let Some(w) = r.worst_window_p99_ns {
        m.gauge("lowlat_fsync_worst_window_p99_seconds", "p99 of the worst window.", &[], s(w));
    }
    run_flags(&mut m, "lowlat_fsync", &[], &r.envelope, r.no_evidence().is_none());
    m
}

/// A `measure etcd` result: etcd's WAL fsync (and backend commit, when read) percentiles as
/// interpolated in etcd's buckets, the operations in the window, with the run's flags.
pub fn etcd(r: &results::fsync::EtcdResult) -> Metrics {
    let mut m = Metrics::new();
    for h in std::iter::once(&r.wal_fsync).chain(r.backend_commit.as_ref()) {
        let percentiles =
            [("p50", h.p50_ns), ("p90", h.p90_ns), ("p99", h.p99_ns), ("p99.9", h.p999_ns)];
        for (p, ns) in percentiles {
            m.gauge(
                "lowlat_etcd_latency_seconds",
                "Percentile of etcd's histogram over the window (interpolated in its buckets).",
                &[("metric", h.metric.as_str()), ("percentile", p)],
                s(ns),
            );
        }
        m.gauge(
            "lowlat_etcd_operations",
            "Operations etcd counted in the window.",
            &[("metric", h.metric.as_str())],
            h.count as f64,
        );
    }
    run_flags(&mut m, "lowlat_etcd", &[], &r.envelope, r.no_evidence().is_none());
    m
}

/// A verify report: each check's status one-hot, the counts, and 1 when nothing failed.
pub fn verify(r: &verify::Report) -> Metrics {
    let mut m = Metrics::new();
    for c in &r.checks {
        m.gauge(
            "lowlat_verify_check",
            "1 for the check's status (pass, fail, warn, n.a., expected-residue, pending-reboot).",
            &[("id", &c.id), ("group", c.group.as_str()), ("status", c.status.as_str())],
            1.0,
        );
    }
    let sm = &r.summary;
    for (status, n) in [
        ("pass", sm.pass),
        ("fail", sm.fail),
        ("warn", sm.warn),
        ("expected-residue", sm.expected_residue),
        ("pending-reboot", sm.pending_reboot),
        ("n.a.", sm.not_applicable),
    ] {
        m.gauge("lowlat_verify_checks", "Checks by status.", &[("status", status)], n as f64);
    }
    m.gauge(
        "lowlat_verify_passed",
        "1 when no check failed.",
        &[],
        if r.passed() { 1.0 } else { 0.0 },
    );
    m
}

/// A report model (`check`): the overall verdict and each section's, one-hot.
pub fn report(model: &Report, kind: &str) -> Metrics {
    let mut m = Metrics::new();
    for v in VERDICTS {
        m.gauge(
            "lowlat_verdict",
            "1 for the overall verdict.",
            &[("of", kind), ("verdict", v.class())],
            if model.verdict == v { 1.0 } else { 0.0 },
        );
    }
    for sec in &model.sections {
        m.gauge(
            "lowlat_section_verdict",
            "1 for each report section's verdict.",
            &[("of", kind), ("section", &sec.id), ("verdict", sec.verdict.class())],
            1.0,
        );
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verify_report_exports_one_line_per_check_and_the_counts() {
        let r = verify::Report::new(vec![verify::Check {
            id: "smt\"siblings".into(),
            group: verify::Group::ALL[0],
            status: verify::Status::Fail,
            evidence: vec!["x".into()],
            fix: None,
        }]);
        let t = verify(&r).text().to_string();
        assert!(
            t.contains(
                "lowlat_verify_check{id=\"smt\\\"siblings\",group=\"boot\",status=\"fail\"} 1\n"
            ),
            "{t}"
        );
        assert!(t.contains("lowlat_verify_checks{status=\"fail\"} 1\n"), "{t}");
        assert!(t.contains("lowlat_verify_passed 0\n"), "{t}");
    }

    #[test]
    fn ticks_and_fsync_results_export_their_figures() {
        let fixture = |rel: &str| {
            std::fs::read_to_string(format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))).expect(rel)
        };
        let t: results::TicksResult =
            serde_json::from_str(&fixture("tests/fixtures/ticks.json")).expect("ticks");
        let text = ticks(&t).text().to_string();
        let c = &t.cpus[0];
        assert!(
            text.contains(&format!(
                "lowlat_ticks_local_timer_per_second{{cpu=\"{}\",nohz_full=\"{}\"}} {}\n",
                c.cpu,
                u8::from(c.nohz_full),
                c.loc_per_s
            )),
            "{text}"
        );
        assert!(text.contains("lowlat_ticks_evidence 1\n"), "{text}");
        let f: results::fsync::FsyncResult =
            serde_json::from_str(&fixture("tests/fixtures/fsync.json")).expect("fsync");
        let text = fsync(&f).text().to_string();
        let p99 = f.lat_ns.p99 as f64 / 1e9;
        assert!(
            text.contains(&format!("lowlat_fsync_latency_seconds{{percentile=\"p99\"}} {p99}\n")),
            "{text}"
        );
        assert!(text.contains(&format!("lowlat_fsync_operations {}\n", f.ops)), "{text}");
        assert!(text.contains("lowlat_fsync_partial 0\n"), "{text}");
        // an idle etcd window: the figures are there, and the evidence flag says 0
        let e: results::fsync::EtcdResult =
            serde_json::from_str(&fixture("../../testdata/verdicts/results/etcd-idle.json"))
                .expect("etcd");
        let text = etcd(&e).text().to_string();
        assert!(
            text.contains(
                "lowlat_etcd_operations{metric=\"etcd_disk_wal_fsync_duration_seconds\"} 0\n"
            ),
            "{text}"
        );
        assert!(text.contains("percentile=\"p99\"} 0\n"), "{text}");
        assert!(text.contains("lowlat_etcd_evidence 0\n"), "{text}");
    }
}
