//! Terminal text for `lowlat cluster` progress and summaries. Pure.

use std::time::Instant;

use crate::fleet::Event;
use crate::model::{Fleet, Verdict};

/// Formats progress lines with the time since the run started.
#[derive(Debug)]
pub struct Progress {
    t0: Instant,
}

impl Default for Progress {
    fn default() -> Self {
        Self { t0: Instant::now() }
    }
}

fn clean(s: &str) -> String {
    util::term::sanitize(s, false).into_owned()
}

impl Progress {
    /// One line (with newline) per event.
    pub fn line(&self, e: &Event<'_>) -> String {
        let t = self.t0.elapsed().as_secs_f64();
        let body = match e {
            Event::Nodes { nodes, run, namespace } => {
                let shown: Vec<&str> = nodes.iter().take(8).map(String::as_str).collect();
                let more = if nodes.len() > 8 { format!(" and {} more", nodes.len() - 8) } else { String::new() };
                format!("run {run} in namespace {namespace}: {} node(s): {}{more}", nodes.len(), shown.join(", "))
            }
            Event::Created { node, job } => format!("{node}: Job {job} created"),
            Event::State { node, text } => format!("{node}: {text}"),
            Event::Done { node, status, text } => format!("{node}: {} — {text}", format!("{status:?}").to_lowercase()),
            Event::Interrupted => "interrupted: deleting the Jobs (running pods get SIGTERM and give their RT budget back)".into(),
            Event::Cleaned { jobs, pods, leftover } => {
                if leftover.is_empty() {
                    format!("cleanup: {jobs} Job(s) and {pods} pod(s) deleted, nothing labelled left")
                } else {
                    format!("cleanup: {jobs} Job(s), {pods} pod(s) deleted; STILL THERE: {}", leftover.join(", "))
                }
            }
        };
        format!("[{t:6.1}s] {}\n", clean(&body))
    }
}

/// The closing summary of a fleet check.
pub fn fleet_summary(f: &Fleet, out: &std::path::Path) -> String {
    let mut s = String::new();
    let w = f.nodes.iter().map(|n| n.node.len()).max().unwrap_or(4).max(4);
    s.push_str(&format!(
        "\n{:<w$}  {:<7}  {:<9}  {:>12}  {:>12}  {:>12}\n",
        "NODE", "VERDICT", "REALTIME", "TIMER MAX", "NOISE MAX", "FSYNC P99"
    ));
    let f_us = |v: Option<u64>| {
        v.map(|v| format!("{:.1} µs", v as f64 / 1e3)).unwrap_or_else(|| "-".into())
    };
    for n in &f.nodes {
        let rt = match n.realtime {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        s.push_str(&clean(&format!(
            "{:<w$}  {:<7}  {:<9}  {:>12}  {:>12}  {:>12}",
            n.node,
            n.verdict.label(),
            rt,
            f_us(n.timer.as_ref().map(|t| t.max_ns)),
            f_us(n.noise.as_ref().map(|t| t.max_ns)),
            f_us(n.fsync.as_ref().and_then(|t| t.p99_ns)),
        )));
        s.push('\n');
        if n.verdict == Verdict::NotRun || n.realtime == Some(false) {
            let why = n
                .reason
                .clone()
                .or_else(|| n.rt_budget.as_ref().map(|r| format!("not real-time: {}", r.detail)))
                .unwrap_or_default();
            s.push_str(&clean(&format!("{:<w$}  ↳ {why}", "")));
            s.push('\n');
        }
        if let Some(c) = n.cpus.as_ref().filter(|c| c.requested.is_some()) {
            let set = c.allowed.as_ref().map_or_else(|| "?".into(), ToString::to_string);
            let line = match c.placement {
                crate::cpus::Placement::Exclusive => format!("CPUs {set}: exclusive: {}", c.detail),
                crate::cpus::Placement::Shared => {
                    format!("CPUs {set}: NOT EXCLUSIVE: {}", c.detail)
                }
                crate::cpus::Placement::Unknown => {
                    format!("CPUs {set}: exclusivity unknown: {}", c.detail)
                }
            };
            s.push_str(&clean(&format!("{:<w$}  ↳ {line}", "")));
            s.push('\n');
        }
    }
    s.push_str(&format!(
        "\nfleet verdict: {}; wrote {} and {}\n",
        f.verdict.label(),
        out.join(crate::check::FLEET_HTML).display(),
        out.join(crate::check::FLEET_JSON).display()
    ));
    s
}

/// `cluster clean`'s pass on the objects: the namespaces cleaned and each labelled object left.
pub fn cleaned(namespaces: usize, left: &[String]) -> String {
    let mut s =
        format!("cleaned {namespaces} namespace(s); labelled objects left: {}\n", left.len());
    for l in left {
        s.push_str(&format!("  {l}\n"));
    }
    s
}

/// `cluster clean`'s pass on the nodes: one line per node, one per record found.
pub fn recovery(nodes: &[crate::clean::NodeRecovery]) -> String {
    use crate::rt::Recovery;
    let mut s = String::new();
    for n in nodes {
        let count = |o: Recovery| n.recovered.iter().filter(|r| r.outcome == o).count();
        let line = if n.status != crate::model::Status::Completed {
            format!(
                "{}: RT budget not checked ({:?}): {}",
                n.node,
                n.status,
                n.reason.as_deref().or(n.detail.as_deref()).unwrap_or("no reason given")
            )
        } else {
            format!(
                "{}: RT budget left by killed runs: {} given back, {} in use by a live run, {} failed",
                n.node,
                count(Recovery::Restored),
                count(Recovery::InUse),
                count(Recovery::Failed)
            )
        };
        s.push_str(&clean(&line));
        s.push('\n');
        for r in n.recovered.iter().filter(|r| r.outcome != Recovery::Restored) {
            s.push_str(&clean(&format!("  ↳ {}: {}", r.record, r.detail)));
            s.push('\n');
        }
    }
    s
}
