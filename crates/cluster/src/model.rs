//! The fleet result (`fleet.json`, `schema_version` 1) and how one node's gathered files become
//! its row. Pure apart from reading a node's directory.

use std::path::Path;

use cpuset::CpuSet;
use serde::{Deserialize, Serialize};

use crate::cpus::{self, PodCpus};
use crate::{agent, rt};

/// `fleet.json`'s schema version.
pub const SCHEMA_VERSION: u32 = 1;

/// The files `cluster check` writes into its output directory.
pub const FLEET_JSON: &str = "fleet.json";
pub const FLEET_HTML: &str = "fleet-report.html";

/// One `lowlat cluster check` run over a set of nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fleet {
    pub schema_version: u32,
    /// Always `fleet`.
    #[schemars(extend("const" = "fleet"))]
    pub kind: String,
    /// lowlat version that ran the controller.
    pub tool: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub duration_ns: u64,
    /// The run id: the value of the `lowlat.io/run` label on everything it created.
    pub run: String,
    pub namespace: String,
    /// The label selector that chose the nodes.
    pub selector: String,
    pub image: String,
    /// What ran in every pod.
    pub command: Vec<String>,
    /// Ctrl-C stopped the run: nodes still running were stopped and are partial or missing.
    pub interrupted: bool,
    /// The worst node verdict (`not_run` counts as `fail`).
    pub verdict: Verdict,
    pub nodes: Vec<NodeResult>,
    pub cleanup: Cleanup,
}

/// A node's (or the fleet's) verdict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
    /// The node's pod never ran or gave no results.
    NotRun,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
            Verdict::NotRun => "NOT RUN",
        }
    }
    fn from_report(v: report::Verdict) -> Self {
        match v {
            report::Verdict::Info | report::Verdict::Pass => Verdict::Pass,
            report::Verdict::Skipped | report::Verdict::Warn => Verdict::Warn,
            report::Verdict::Fail => Verdict::Fail,
        }
    }
}

/// How a node's pod ended. Closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The pod ran to the end and its results were gathered.
    Completed,
    /// The pod ran but failed (or its results could not be read): see `reason`.
    Failed,
    /// The pod never started within `--start-timeout` (Pending, image missing, unschedulable).
    NeverStarted,
    /// The pod started but did not finish in time.
    TimedOut,
    /// Stopped by Ctrl-C.
    Interrupted,
}

/// One figure: the worst over the node's CPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Worst {
    pub max_ns: u64,
    pub p99_ns: Option<u64>,
    /// The CPU it happened on (timer/noise).
    pub cpu: Option<u32>,
    /// The measurement was cut short.
    pub partial: bool,
}

/// One histogram bucket `[lo_ns, hi_ns)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bin {
    pub lo_ns: u64,
    pub hi_ns: u64,
    pub count: u64,
}

/// One node's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeResult {
    pub node: String,
    pub status: Status,
    pub verdict: Verdict,
    /// Why it did not complete, in the API's words (pod phase, container state, conditions).
    pub reason: Option<String>,
    /// The findings that decided the verdict (from the node's own report).
    pub headlines: Vec<String>,
    pub pod: Option<String>,
    /// The measurement's exit status in the pod.
    pub exit_code: Option<i32>,
    /// Where its files are, relative to the fleet directory.
    pub dir: Option<String>,
    pub files: Vec<String>,
    /// The timer result says it ran with real-time scheduling.
    pub realtime: Option<bool>,
    /// What happened to the pod's RT budget.
    pub rt_budget: Option<rt::Report>,
    pub timer: Option<Worst>,
    pub noise: Option<Worst>,
    pub fsync: Option<Worst>,
    /// The timer histogram, all measured CPUs merged.
    pub timer_histogram: Vec<Bin>,
    /// Seconds from Job creation to the pod running, and to its end.
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    /// Which CPUs the pod had and whether they were its own (when the pod reported them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<PodCpus>,
}

/// What the controller knows of a node's pod, for judging its CPUs ([`cpus::judge`]).
#[derive(Debug, Clone)]
pub struct CpuContext<'a> {
    /// Whole CPUs asked with requests = limits (`None`: Burstable).
    pub requested: Option<u32>,
    /// The pod's `status.qosClass`.
    pub qos_class: Option<&'a str>,
    /// The node's kubelet CPU manager settings (configz), or why they were not read.
    pub kubelet: Result<cpus::Kubelet<'a>, &'a str>,
}

/// What the run deleted at the end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cleanup {
    pub jobs: usize,
    pub pods: usize,
    /// Objects still there when the run gave up waiting (names).
    pub leftover: Vec<String>,
}

impl NodeResult {
    /// A node that produced nothing.
    pub fn not_run(node: &str, status: Status, reason: String) -> Self {
        Self {
            node: node.to_string(),
            status,
            verdict: Verdict::NotRun,
            reason: Some(reason),
            headlines: vec![],
            pod: None,
            exit_code: None,
            dir: None,
            files: vec![],
            realtime: None,
            rt_budget: None,
            timer: None,
            noise: None,
            fsync: None,
            timer_histogram: vec![],
            start_s: None,
            end_s: None,
            cpus: None,
        }
    }

    /// Fill the row from the node's gathered directory (`dir` relative to `base`): the
    /// measurement results, the agent's summary and RT budget, and the verdict of the node's
    /// own report built from its files; with `ctx`, which CPUs the pod had and whether they were
    /// its own (not exclusive when asked for: at best WARN).
    pub fn read_dir(
        &mut self,
        base: &Path,
        dir: &str,
        timer_threshold_ns: u64,
        ctx: Option<&CpuContext<'_>>,
    ) {
        let path = base.join(dir);
        self.dir = Some(dir.to_string());
        let read = |name: &str| std::fs::read_to_string(path.join(name)).ok();
        let mut seen = None;
        if let Some(s) =
            read(agent::SUMMARY_FILE).and_then(|t| serde_json::from_str::<agent::Summary>(&t).ok())
        {
            self.exit_code = s.exit_code;
            if let Some(e) = s.error {
                self.reason = Some(e);
            }
            seen = s.cpus;
        }
        self.rt_budget = read(agent::RT_FILE).and_then(|t| serde_json::from_str(&t).ok());
        let mut docs = Vec::new();
        let mut measured = None;
        for name in
            ["timer.json", "noise.json", "ticks.json", "fsync.json", "verify.json", "inspect.json"]
        {
            let p = path.join(name);
            if p.is_file() {
                if let Ok(d) = report::Doc::load(&p) {
                    docs.push(d);
                }
            }
        }
        for d in &docs {
            match &d.body {
                report::Body::Latency(r) => {
                    let w = worst_latency(r);
                    match r.envelope.kind {
                        results::Kind::Timer => {
                            self.realtime = Some(r.realtime);
                            self.timer = w;
                            self.timer_histogram = merged_histogram(r);
                            measured = Some(
                                r.threads
                                    .iter()
                                    .filter_map(|t| t.cpu)
                                    .map(|c| c as usize)
                                    .collect(),
                            );
                        }
                        results::Kind::Noise => self.noise = w,
                        _ => {}
                    }
                }
                report::Body::Fsync(f) => {
                    self.fsync = Some(Worst {
                        max_ns: f.lat_ns.max,
                        p99_ns: Some(f.lat_ns.p99),
                        cpu: None,
                        partial: f.envelope.partial,
                    })
                }
                _ => {}
            }
        }
        let opts = report::Options { timer_threshold_ns, ..Default::default() };
        let rep = report::build(&docs, &opts);
        self.headlines =
            rep.headlines.iter().map(|h| format!("{}: {}", h.verdict.label(), h.text)).collect();
        self.verdict =
            if docs.is_empty() { Verdict::NotRun } else { Verdict::from_report(rep.verdict) };
        if self.exit_code == Some(1) && self.verdict < Verdict::Fail {
            self.verdict = Verdict::Fail;
        }
        if self.realtime == Some(false) && self.verdict == Verdict::Pass {
            // numbers without real-time scheduling prove nothing about real-time latency
            self.verdict = Verdict::Warn;
        }
        if let (Some(ctx), Some(seen)) = (ctx, seen) {
            self.judge_cpus(ctx, &seen, measured);
        }
    }

    /// Record the pod's CPUs; asked-for exclusive CPUs that were not (or a timer that ran
    /// elsewhere) make the node at best WARN, with a headline saying why.
    fn judge_cpus(&mut self, ctx: &CpuContext<'_>, seen: &cpus::Seen, measured: Option<CpuSet>) {
        let c = cpus::judge(&cpus::Facts {
            requested: ctx.requested,
            qos_class: ctx.qos_class,
            kubelet: ctx.kubelet,
            seen,
            measured,
        });
        let within = c.measured_within();
        let warn = |me: &mut Self, text: String| {
            me.headlines.push(format!("{}: {text}", Verdict::Warn.label()));
            if me.verdict == Verdict::Pass {
                me.verdict = Verdict::Warn;
            }
        };
        if ctx.requested.is_some() {
            match c.placement {
                cpus::Placement::Exclusive if within != Some(false) => {
                    let on = c.measured.as_ref().filter(|m| !m.is_empty()).or(c.allowed.as_ref());
                    let on =
                        on.map(|s| format!("{} {s}", if s.len() == 1 { "CPU" } else { "CPUs" }));
                    self.headlines.push(format!(
                        "{}: measured on {}, exclusive: {}",
                        Verdict::Pass.label(),
                        on.unwrap_or_default(),
                        c.detail
                    ));
                }
                cpus::Placement::Exclusive => warn(self, c.detail.clone()),
                cpus::Placement::Shared => warn(self, format!("CPUs NOT EXCLUSIVE: {}", c.detail)),
                cpus::Placement::Unknown => {
                    warn(self, format!("CPU exclusivity unknown: {}", c.detail))
                }
            }
        } else if within == Some(false) {
            warn(self, c.detail.clone());
        }
        self.cpus = Some(c);
    }
}

fn worst_latency(r: &results::LatencyResult) -> Option<Worst> {
    r.threads.iter().filter(|t| t.stats.count > 0).max_by_key(|t| t.stats.max_ns).map(|t| Worst {
        max_ns: t.stats.max_ns,
        p99_ns: t.stats.p99_ns,
        cpu: t.cpu,
        partial: r.envelope.partial,
    })
}

fn merged_histogram(r: &results::LatencyResult) -> Vec<Bin> {
    let mut bins: std::collections::BTreeMap<(u64, u64), u64> = Default::default();
    for t in &r.threads {
        for b in &t.histogram.buckets {
            *bins.entry((b.lo_ns, b.hi_ns)).or_default() += b.count;
        }
    }
    bins.into_iter().map(|((lo_ns, hi_ns), count)| Bin { lo_ns, hi_ns, count }).collect()
}

impl Fleet {
    /// The fleet verdict: the worst node's (`not_run` is a failure); no node at all is a failure.
    pub fn judge(nodes: &[NodeResult]) -> Verdict {
        nodes.iter().map(|n| n.verdict).max().unwrap_or(Verdict::Fail)
    }

    /// Exit status: 130 interrupted, 1 when any node failed or did not run, else 0.
    pub fn exit_code(&self) -> util::exit::ExitCode {
        use util::exit::ExitCode;
        if self.interrupted {
            ExitCode::Interrupted
        } else if self.verdict >= Verdict::Fail {
            ExitCode::CheckFailed
        } else {
            ExitCode::Ok
        }
    }

    /// Nodes whose worst timer latency is more than twice the fleet's median worst: the ones
    /// to look at first.
    pub fn outliers(&self) -> Vec<&NodeResult> {
        let mut maxes: Vec<u64> =
            self.nodes.iter().filter_map(|n| n.timer.as_ref().map(|t| t.max_ns)).collect();
        if maxes.len() < 3 {
            return vec![];
        }
        maxes.sort_unstable();
        let median = maxes[(maxes.len() - 1) / 2];
        self.nodes
            .iter()
            .filter(|n| n.timer.as_ref().is_some_and(|t| t.max_ns > 2 * median.max(1)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, v: Verdict, max: Option<u64>) -> NodeResult {
        let mut n = NodeResult::not_run(name, Status::Completed, String::new());
        n.verdict = v;
        n.reason = None;
        n.timer = max.map(|m| Worst { max_ns: m, p99_ns: None, cpu: Some(1), partial: false });
        n
    }

    #[test]
    fn the_worst_node_decides() {
        assert_eq!(
            Fleet::judge(&[node("a", Verdict::Pass, None), node("b", Verdict::Warn, None)]),
            Verdict::Warn
        );
        assert_eq!(
            Fleet::judge(&[node("a", Verdict::Pass, None), node("b", Verdict::NotRun, None)]),
            Verdict::NotRun
        );
        assert_eq!(Fleet::judge(&[]), Verdict::Fail);
    }

    #[test]
    fn outliers_are_far_above_the_median() {
        let nodes = vec![
            node("a", Verdict::Pass, Some(10_000)),
            node("b", Verdict::Pass, Some(12_000)),
            node("c", Verdict::Fail, Some(90_000)),
            node("d", Verdict::NotRun, None),
        ];
        let f = Fleet {
            schema_version: SCHEMA_VERSION,
            kind: "fleet".into(),
            tool: "t".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            duration_ns: 0,
            run: "r".into(),
            namespace: "default".into(),
            selector: "x=y".into(),
            image: "i".into(),
            command: vec![],
            interrupted: false,
            verdict: Fleet::judge(&nodes),
            nodes,
            cleanup: Cleanup::default(),
        };
        let o: Vec<_> = f.outliers().iter().map(|n| n.node.as_str()).collect();
        assert_eq!(o, ["c"]);
        assert_eq!(f.exit_code(), util::exit::ExitCode::CheckFailed);
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["schema_version"], 1);
        assert_eq!(json["nodes"][3]["verdict"], "not_run");
        let back: Fleet = serde_json::from_value(json).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn a_node_directory_becomes_a_row() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("vm");
        std::fs::create_dir(&dir).unwrap();
        let mut h = results::Histogram::new(results::HistogramConfig::LATENCY);
        for v in [3_000, 4_000, 5_000, 40_000] {
            h.record(v);
        }
        let mut r = results::LatencyResult {
            envelope: results::Envelope::new(results::Kind::Timer, "lowlat test"),
            realtime: true,
            series_step_s: 1,
            threads: vec![results::ThreadResult {
                cpu: Some(1),
                stats: h.summary(),
                histogram: h.to_data(),
                priority: Some(95),
                ..Default::default()
            }],
            breaches: vec![],
            load: None,
            notes: vec![],
            tracer: None,
        };
        r.envelope.duration_ns = 1_000_000_000;
        std::fs::write(dir.join("timer.json"), serde_json::to_string(&r).unwrap()).unwrap();
        std::fs::write(
            dir.join(agent::SUMMARY_FILE),
            serde_json::to_string(&agent::Summary {
                exit_code: Some(0),
                args: vec![],
                error: None,
                interrupted: false,
                cpus: None,
            })
            .unwrap(),
        )
        .unwrap();
        let mut n = NodeResult::not_run("vm", Status::Completed, String::new());
        n.reason = None;
        n.read_dir(d.path(), "vm", 100_000, None);
        assert_eq!(n.realtime, Some(true));
        assert_eq!(n.timer.as_ref().unwrap().max_ns, h.max().unwrap());
        assert_eq!(n.timer_histogram.iter().map(|b| b.count).sum::<u64>(), 4);
        assert_eq!(n.exit_code, Some(0));
        assert_ne!(n.verdict, Verdict::NotRun);
        assert_eq!(n.cpus, None, "no CPUs reported, none judged");

        // The pod reported its CPUs: exclusive under a static kubelet, a PASS headline; the
        // same pod under policy none is NOT EXCLUSIVE and at best WARN.
        let seen = crate::cpus::Seen {
            allowed: CpuSet::parse_list("1").ok(),
            online: CpuSet::parse_list("0-1").ok(),
            errors: vec![],
        };
        let summary = agent::Summary {
            exit_code: Some(0),
            args: vec![],
            error: None,
            interrupted: false,
            cpus: Some(seen),
        };
        std::fs::write(dir.join(agent::SUMMARY_FILE), serde_json::to_string(&summary).unwrap())
            .unwrap();
        let row = |k: crate::cpus::Kubelet<'_>| {
            let mut n = NodeResult::not_run("vm", Status::Completed, String::new());
            n.reason = None;
            let ctx =
                CpuContext { requested: Some(1), qos_class: Some("Guaranteed"), kubelet: Ok(k) };
            n.read_dir(d.path(), "vm", 100_000, Some(&ctx));
            n
        };
        let kubelet = |p| crate::cpus::Kubelet { policy: Some(p), reserved: Some("0") };
        let n = row(kubelet("static"));
        let c = n.cpus.as_ref().unwrap();
        assert_eq!(c.placement, crate::cpus::Placement::Exclusive);
        assert_eq!(c.measured.as_ref().map(CpuSet::to_list).as_deref(), Some("1"));
        assert!(
            n.headlines.iter().any(|h| h.starts_with("PASS: measured on CPU 1, exclusive: CPU 1")),
            "{:?}",
            n.headlines
        );
        let exclusive_verdict = n.verdict;
        let n = row(kubelet("none"));
        assert_eq!(n.cpus.as_ref().unwrap().placement, crate::cpus::Placement::Shared);
        assert!(n.headlines.iter().any(|h| h.starts_with("WARN: CPUs NOT EXCLUSIVE")));
        assert!(n.verdict >= Verdict::Warn && n.verdict >= exclusive_verdict, "{:?}", n.verdict);
        let json = serde_json::to_value(&n).unwrap();
        assert_eq!(json["cpus"]["placement"], "shared");
        assert_eq!(json["cpus"]["allowed"], "1");
    }
}
