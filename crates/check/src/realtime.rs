//! What check's timer and noise results say about real-time, for the summary and the report:
//! where they ran from when `--rt-cgroup` moved them, and — when the timer ran NOT REAL-TIME
//! because its cgroup has no RT budget and no `--rt-cgroup` was given — the fix in check's
//! own words (`sudo lowlat check --rt-cgroup root`). Pure: reads the documents read back.

use host::rt::CauseKind;
use measure::rt_cgroup::RtCgroup;
use report::model::Note;
use report::{Body, Doc, Kind, Verdict};

/// The real-time facts of a check run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RealTime {
    /// Notes for the report and the terminal summary.
    pub notes: Vec<Note>,
    /// The timer was refused real-time for a cgroup cause that `--rt-cgroup root` fixes, and
    /// the run did not move: the cause in a few words.
    pub cgroup_fix: Option<String>,
}

fn what(kind: &results::Kind) -> &'static str {
    match kind {
        results::Kind::Timer => "Timer latency",
        _ => "OS noise",
    }
}

/// Read the timer and noise documents: which moved (and where), and the timer's cgroup cause.
pub fn from_docs(docs: &[Doc], asked: Option<&RtCgroup>) -> RealTime {
    let mut moved: Vec<(&'static str, &str)> = Vec::new();
    let mut cgroup_fix = None;
    for d in docs {
        let (Kind::Result(k @ (results::Kind::Timer | results::Kind::Noise)), Body::Latency(r)) =
            (&d.kind, &d.body)
        else {
            continue;
        };
        let Some(s) = &r.envelope.scheduling else { continue };
        if let Some(cg) = &s.rt_cgroup {
            moved.push((what(k), cg.as_str()));
        }
        let cgroup_cause = s
            .refused
            .as_ref()
            .filter(|c| matches!(c.kind, CauseKind::CgroupV1NoBudget | CauseKind::CgroupV2NonRoot));
        if *k == results::Kind::Timer && s.downgraded() && s.rt_cgroup.is_none() {
            cgroup_fix = cgroup_cause.map(|c| c.short.clone());
        }
    }
    let mut notes = Vec::new();
    if let Some(&(_, cg)) = moved.first() {
        let names: Vec<&str> = moved.iter().map(|(w, _)| *w).collect();
        let flag = asked.map_or_else(|| cg.to_string(), |a| a.to_string());
        notes.push(Note {
            verdict: Verdict::Info,
            text: format!(
                "{} ran from cgroup {cg} (--rt-cgroup {flag}) for its RT budget; lowlat moved \
                 itself there for the run and back afterwards.",
                names.join(" and ")
            ),
        });
    }
    if let Some(short) = &cgroup_fix {
        notes.push(Note {
            verdict: Verdict::Warn,
            text: format!(
                "Timer latency ran NOT REAL-TIME ({short}): rerun as `sudo lowlat check \
                 --rt-cgroup root` to measure from the root cgroup, which has the RT budget \
                 (lowlat moves itself there for the run and back)."
            ),
        });
    }
    RealTime { notes, cgroup_fix }
}

#[cfg(test)]
mod tests {
    use super::*;
    use host::rt::Cause;
    use results::{Envelope, LatencyResult, Scheduling};
    use util::sched::Policy;

    fn doc(kind: results::Kind, sched: Scheduling) -> Doc {
        let envelope = Envelope {
            schema_version: results::SCHEMA_VERSION,
            kind,
            partial: false,
            tool: "lowlat".into(),
            started_at: None,
            duration_ns: 1,
            host: results::HostContext::default(),
            params: results::Params::empty(kind),
            scheduling: Some(sched),
            failed: None,
        };
        let r = LatencyResult {
            envelope,
            realtime: false,
            series_step_s: 1,
            threads: Vec::new(),
            breaches: Vec::new(),
            load: None,
            notes: Vec::new(),
            tracer: None,
        };
        Doc { source: "x.json".into(), kind: Kind::Result(kind), body: Body::Latency(Box::new(r)) }
    }

    fn refused(kind: CauseKind) -> Scheduling {
        Scheduling {
            requested: Policy::Fifo,
            ran: Policy::Other,
            priority: None,
            refused: Some(Cause {
                kind,
                message: "m".into(),
                short: "cgroup v2 /a: no RT budget".into(),
                evidence: Vec::new(),
                fix: "f".into(),
            }),
            rt_cgroup: None,
        }
    }

    #[test]
    fn a_cgroup_refusal_names_check_s_own_fix() {
        let rt = from_docs(&[doc(results::Kind::Timer, refused(CauseKind::CgroupV2NonRoot))], None);
        assert_eq!(rt.cgroup_fix.as_deref(), Some("cgroup v2 /a: no RT budget"));
        assert_eq!(rt.notes.len(), 1);
        assert_eq!(rt.notes[0].verdict, Verdict::Warn);
        assert!(rt.notes[0].text.contains("`sudo lowlat check --rt-cgroup root`"));
        // Another cause: --rt-cgroup would not help, so it is not offered.
        let rt = from_docs(&[doc(results::Kind::Timer, refused(CauseKind::NoCapSysNice))], None);
        assert_eq!(rt, RealTime::default());
        // A noise run's refusal does not speak for the timer.
        let rt =
            from_docs(&[doc(results::Kind::Noise, refused(CauseKind::CgroupV1NoBudget))], None);
        assert_eq!(rt.cgroup_fix, None);
    }

    #[test]
    fn a_moved_run_says_where_it_ran_from() {
        let ran = Scheduling {
            requested: Policy::Fifo,
            ran: Policy::Fifo,
            priority: Some(95),
            refused: None,
            rt_cgroup: Some("/".into()),
        };
        let docs = [doc(results::Kind::Timer, ran.clone()), doc(results::Kind::Noise, ran)];
        let rt = from_docs(&docs, Some(&RtCgroup::Root));
        assert_eq!(rt.cgroup_fix, None);
        assert_eq!(rt.notes.len(), 1);
        assert_eq!(rt.notes[0].verdict, Verdict::Info);
        assert_eq!(
            rt.notes[0].text,
            "Timer latency and OS noise ran from cgroup / (--rt-cgroup root) for its RT budget; \
             lowlat moved itself there for the run and back afterwards."
        );
    }
}
