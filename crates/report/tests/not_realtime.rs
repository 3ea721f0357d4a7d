//! A run that asked for SCHED_FIFO and ran SCHED_OTHER is never called SCHED_FIFO: the
//! timer section's verdict line and header say NOT REAL-TIME with the cause, and the run
//! conditions say the policy that ran. Both a result that records `scheduling` and an older
//! one that recorded only the request and the refusal note (the field report of issue 12).

#![allow(clippy::expect_used)]

mod common;

use report::{Body, Doc};
use results::latency::{LatencyResult, ThreadResult};
use util::sched::Policy;

fn result(recorded: bool) -> LatencyResult {
    let mut h = results::Histogram::new(results::HistogramConfig::LATENCY);
    for v in [4_000u64, 5_000, 30_000] {
        h.record(v);
    }
    let t = ThreadResult {
        cpu: Some(1),
        stats: h.summary(),
        histogram: h.to_data(),
        per_second_max_ns: vec![30_000],
        ..Default::default()
    };
    let mut envelope = results::Envelope::new(results::Kind::Timer, "lowlat test");
    envelope.duration_ns = 1_000_000_000;
    envelope.params = results::Params::Latency(results::LatencyParams {
        policy: Some(Policy::Fifo),
        priority: Some(95),
        threshold_ns: Some(100_000),
        ..Default::default()
    });
    let note = "NOT REAL-TIME: could not set SCHED_FIFO priority 95: cgroup v2 with RT group scheduling: the task's cgroup /process_api/61bd has no RT budget; measured with SCHED_OTHER.";
    if recorded {
        let p = envelope.params.latency_mut();
        p.policy = Some(Policy::Other);
        p.requested_policy = Some(Policy::Fifo);
        p.priority = None;
        envelope.scheduling = Some(results::Scheduling {
            requested: Policy::Fifo,
            ran: Policy::Other,
            priority: None,
            refused: Some(host::rt::Cause {
                kind: host::rt::CauseKind::CgroupV2NonRoot,
                short: "cgroup v2 /process_api/61bd: no RT budget".into(),
                message: "cgroup v2 with RT group scheduling: the task's cgroup /process_api/61bd has no RT budget".into(),
                evidence: vec![],
                fix: "run from the root cgroup (`lowlat measure timer --rt-cgroup root`)".into(),
            }),
            rt_cgroup: None,
        });
    }
    LatencyResult {
        envelope,
        realtime: false,
        series_step_s: 1,
        threads: vec![t],
        breaches: vec![],
        load: None,
        notes: vec![note.into()],
        tracer: None,
    }
}

/// Headline, paragraphs and run conditions of the timer section.
fn texts(r: &LatencyResult) -> (String, Vec<String>, String) {
    let doc = Doc::from_value("t.json", serde_json::to_value(r).expect("json"));
    assert!(matches!(doc.body, Body::Latency(_)));
    let rep = report::build(&[doc], &common::opts());
    let s = rep.sections.iter().find(|s| s.id == "timer").expect("timer section");
    let mut paras = Vec::new();
    let mut cond = String::new();
    for b in &s.blocks {
        match b {
            report::model::Block::Paragraph { text } => paras.push(text.clone()),
            report::model::Block::Note(n) if n.text.starts_with("Run conditions") => {
                cond = n.text.clone()
            }
            _ => {}
        }
    }
    assert_eq!(s.headlines[0].verdict, report::Verdict::Warn, "below threshold, but not real-time");
    (s.headlines[0].text.clone(), paras, cond)
}

#[test]
fn a_sched_other_run_is_never_called_sched_fifo() {
    for recorded in [true, false] {
        let r = result(recorded);
        assert_eq!(r.ran_policy(), Some(Policy::Other));
        let (headline, paras, cond) = texts(&r);
        assert!(headline.starts_with("Timer latency: NOT REAL-TIME"), "{headline}");
        if recorded {
            assert!(headline.contains("/process_api/61bd"), "the cause: {headline}");
        }
        // `lowlat check` prints the report's summary: the timer line carries it, whole.
        let rep = report::build(
            &[Doc::from_value("t.json", serde_json::to_value(&r).expect("json"))],
            &common::opts(),
        );
        let summary = report::summary::render(&rep);
        let line = summary.lines().find(|l| l.contains("Timer latency")).expect("timer line");
        assert!(line.contains("NOT REAL-TIME (") && line.contains("worst 30.0 µs"), "{line}");
        assert!(!line.ends_with('…'), "not cut: {line}");
        assert!(paras[0].contains("pinned SCHED_OTHER thread"), "{paras:?}");
        assert!(paras[0].contains("NOT REAL-TIME"), "{paras:?}");
        assert!(!paras[0].contains("pinned SCHED_FIFO"), "{paras:?}");
        assert!(cond.contains(" · policy: other") && !cond.contains(" · policy: fifo"), "{cond}");
        assert!(cond.contains("requested_policy: fifo"), "{cond}");
        let html = report::html::render(&report::build(
            &[Doc::from_value("t.json", serde_json::to_value(&r).expect("json"))],
            &common::opts(),
        ));
        assert!(!html.contains("pinned SCHED_FIFO thread"));
        assert!(!html.contains(" · policy: fifo"));
        if recorded {
            insta::assert_snapshot!(
                "not_realtime_timer_section",
                format!("{headline}\n\n{}\n\n{cond}", paras.join("\n"))
            );
        }
    }
}
