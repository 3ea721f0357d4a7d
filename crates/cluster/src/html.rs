//! The fleet report: the per-node verdict table, the worst timer / noise / fsync figures side
//! by side, the timer distributions of every node overlaid, outliers, and the nodes that did
//! not run with the API's reason — built as a [`report::Report`] and drawn by the report crate
//! (its charts, its escaping, its verdict vocabulary), so a fix there is made once. Pure.

use report::model::{
    fmt_ns, Block, Cell, Chart, Headline, Marker, Note, Scale, Section, Series, SeriesStyle, Table,
};

use crate::cpus::Placement;
use crate::model::{Fleet, NodeResult, Verdict, Worst};

/// A fleet verdict in the report's vocabulary: a node that did not run fails the fleet.
fn verdict(v: Verdict) -> report::Verdict {
    match v {
        Verdict::Pass => report::Verdict::Pass,
        Verdict::Warn => report::Verdict::Warn,
        Verdict::Fail | Verdict::NotRun => report::Verdict::Fail,
    }
}

/// The verdict cell: the report's colour, the fleet's word (`NOT RUN` stays itself).
fn verdict_cell(v: Verdict) -> Cell {
    Cell::text(v.label()).with_verdict(verdict(v))
}

fn status(n: &NodeResult) -> String {
    format!("{:?}", n.status).to_lowercase()
}

fn fig(w: &Option<Worst>, p99: bool) -> Cell {
    let Some(w) = w else { return Cell::num("–") };
    let mut t = fmt_ns(w.max_ns);
    if let Some(p) = w.p99_ns.filter(|_| p99) {
        t.push_str(&format!(" (p99 {})", fmt_ns(p)));
    }
    if let Some(c) = w.cpu {
        t.push_str(&format!(" CPU {c}"));
    }
    if w.partial {
        t.push_str(" partial");
    }
    Cell::num(t)
}

fn realtime(n: &NodeResult) -> Cell {
    match (n.realtime, &n.rt_budget) {
        (Some(true), Some(b)) => {
            Cell::text(format!("yes ({})", format!("{:?}", b.state).to_lowercase()))
        }
        (Some(true), None) => Cell::text("yes"),
        (Some(false), _) => Cell::text("NO").with_verdict(report::Verdict::Fail),
        (None, _) => Cell::text("–"),
    }
}

fn pod_cpus(n: &NodeResult) -> Cell {
    let Some(c) = &n.cpus else { return Cell::text("–") };
    let set = c.allowed.as_ref().map_or_else(|| "?".into(), ToString::to_string);
    match c.placement {
        Placement::Exclusive => {
            Cell::text(format!("{set} exclusive")).with_verdict(report::Verdict::Pass)
        }
        Placement::Shared if c.requested.is_some() => {
            Cell::text(format!("{set} NOT EXCLUSIVE")).with_verdict(report::Verdict::Warn)
        }
        Placement::Shared => Cell::text(format!("{set} shared")),
        Placement::Unknown => {
            Cell::text(format!("{set} exclusivity unknown")).with_verdict(report::Verdict::Warn)
        }
    }
}

/// Every node's timer histogram as one line (x: latency in µs, log y: samples), the bucket
/// midpoints, as the single-node report draws its per-CPU histograms.
fn distributions(f: &Fleet, threshold_ns: Option<u64>) -> Block {
    let series: Vec<Series> = f
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.timer_histogram.is_empty())
        .map(|(i, n)| Series {
            name: n.node.clone(),
            style: SeriesStyle::Line,
            color: i,
            points: n
                .timer_histogram
                .iter()
                .map(|b| ((b.lo_ns + b.hi_ns.max(b.lo_ns)) as f64 / 2e3, b.count as f64))
                .collect(),
        })
        .collect();
    if series.is_empty() {
        return Block::Paragraph { text: "No timer histogram was gathered.".into() };
    }
    Block::Chart(Chart {
        id: "fleet-timer".into(),
        title: "Timer latency per node".into(),
        x_label: "latency (µs)".into(),
        y_label: "samples (log scale)".into(),
        y_scale: Scale::Log,
        series,
        markers: threshold_ns
            .map(|t| Marker { x: t as f64 / 1e3, label: format!("threshold {}", fmt_ns(t)) })
            .into_iter()
            .collect(),
        y_markers: Vec::new(),
        caption: "Each node's histogram, all CPUs it measured together.".into(),
    })
}

/// The fleet report as the report crate's model.
pub fn report(f: &Fleet, threshold_ns: Option<u64>) -> report::Report {
    let mut headlines = Vec::new();
    let mut banners = Vec::new();
    if f.interrupted {
        banners.push(Note {
            verdict: report::Verdict::Fail,
            text: "Interrupted (Ctrl-C): nodes still running were stopped; their rows say so."
                .into(),
        });
    }
    for n in f.nodes.iter().filter(|n| n.realtime == Some(false)) {
        let why = n.rt_budget.as_ref().map_or("no RT budget report", |r| r.detail.as_str());
        banners.push(Note {
            verdict: report::Verdict::Fail,
            text: format!(
                "NOT REAL-TIME on {}: the timer ran with SCHED_OTHER, its numbers prove nothing \
                 about real-time latency. Why: {why}",
                n.node
            ),
        });
    }
    for n in &f.nodes {
        let v = verdict(n.verdict);
        let mut what = n.reason.clone().unwrap_or_default();
        if what.is_empty() {
            what = n.headlines.first().cloned().unwrap_or_default();
        }
        let text = if what.is_empty() {
            format!("{}: {}", n.node, n.verdict.label())
        } else {
            format!("{}: {} — {what}", n.node, n.verdict.label())
        };
        headlines.push(Headline::new(v, text));
    }
    headlines.sort_by_key(|h| std::cmp::Reverse(h.verdict));
    let rows = f
        .nodes
        .iter()
        .map(|n| {
            let mut notes: Vec<String> = n.reason.iter().cloned().collect();
            notes.extend(n.headlines.iter().cloned());
            vec![
                Cell::text(&n.node),
                verdict_cell(n.verdict),
                Cell::text(status(n)),
                realtime(n),
                fig(&n.timer, true),
                fig(&n.noise, false),
                fig(&n.fsync, true),
                pod_cpus(n),
                Cell::text(notes.join("\n")),
            ]
        })
        .collect();
    let headers = [
        "node",
        "verdict",
        "status",
        "real-time",
        "worst timer",
        "worst noise",
        "fsync max (p99)",
        "pod CPUs",
        "findings / reason",
    ];
    let mut blocks = vec![Block::Table(Table {
        caption: format!("{} node(s) selected by {}", f.nodes.len(), f.selector),
        headers: headers.map(String::from).to_vec(),
        rows,
    })];
    let outliers = f.outliers();
    if !outliers.is_empty() {
        blocks.push(Block::Note(Note {
            verdict: report::Verdict::Warn,
            text: format!(
                "Outliers (worst timer latency more than twice the fleet's median): {}",
                outliers
                    .iter()
                    .map(|n| format!(
                        "{} {}",
                        n.node,
                        n.timer.as_ref().map_or_else(String::new, |t| fmt_ns(t.max_ns))
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }));
    }
    let mut sections = vec![
        Section::new("nodes", "Verdict per node", Vec::new(), blocks),
        Section::new(
            "distributions",
            "Timer latency distributions",
            Vec::new(),
            vec![distributions(f, threshold_ns)],
        ),
    ];
    let missing: Vec<&NodeResult> =
        f.nodes.iter().filter(|n| n.verdict == Verdict::NotRun).collect();
    if !missing.is_empty() {
        let rows = missing
            .iter()
            .map(|n| {
                vec![
                    Cell::text(&n.node),
                    Cell::text(status(n)),
                    Cell::text(n.reason.as_deref().unwrap_or("-")),
                ]
            })
            .collect();
        sections.push(Section::new(
            "not-run",
            "Nodes that did not run",
            Vec::new(),
            vec![Block::Table(Table {
                caption: "The API's reason for each".into(),
                headers: ["node", "status", "reason (from the API)"].map(String::from).to_vec(),
                rows,
            })],
        ));
    }
    let files = f
        .nodes
        .iter()
        .filter_map(|n| {
            let d = n.dir.as_ref()?;
            Some(vec![
                Cell::link(&n.node, format!("{d}/lowlat-report.html")),
                Cell::text(n.files.join(", ")),
            ])
        })
        .collect();
    let mut cleanup =
        format!("Cleanup: {} Job(s), {} pod(s) deleted", f.cleanup.jobs, f.cleanup.pods);
    if !f.cleanup.leftover.is_empty() {
        cleanup.push_str(&format!("; still there: {}", f.cleanup.leftover.join(", ")));
    }
    sections.push(Section::new(
        "files",
        "Files",
        Vec::new(),
        vec![
            Block::Table(Table {
                caption: "Each node's own report and result files".into(),
                headers: ["node (its report)", "files"].map(String::from).to_vec(),
                rows: files,
            }),
            Block::Paragraph { text: cleanup },
        ],
    ));
    report::Report {
        title: format!("lowlat fleet report: {}", f.selector),
        generator: f.tool.clone(),
        verdict: verdict(f.verdict),
        headlines,
        banners,
        context: vec![
            ("Selector".into(), f.selector.clone()),
            ("Namespace".into(), f.namespace.clone()),
            ("Run".into(), f.run.clone()),
            ("Started".into(), f.started_at.clone()),
            ("Duration".into(), fmt_ns(f.duration_ns)),
            ("Image".into(), f.image.clone()),
            ("Each pod ran".into(), f.command.join(" ")),
        ],
        sections,
        inputs: vec![(crate::model::FLEET_JSON.into(), "fleet".into())],
        next: Vec::new(),
    }
}

/// JUnit XML for CI: a suite per node (its name as the hostname), a case for the node's verdict
/// (a node that did not run fails, with the API's reason) and one per verdict line of its report.
pub fn junit(f: &Fleet, timestamp: std::time::SystemTime) -> String {
    use report::junit::{Case, Suite};
    let suites: Vec<Suite> = f
        .nodes
        .iter()
        .map(|n| {
            let mut cases = vec![Case {
                class: "node".into(),
                name: format!("{}: lowlat check", n.node),
                verdict: verdict(n.verdict),
                message: n.reason.clone().unwrap_or_else(|| n.verdict.label().to_string()),
                detail: format!("status {}", status(n)),
            }];
            cases.extend(n.headlines.iter().enumerate().map(|(i, h)| Case {
                class: "finding".into(),
                name: format!("{}: finding #{}", n.node, i + 1),
                verdict: report::Verdict::Info,
                message: h.clone(),
                detail: String::new(),
            }));
            Suite {
                name: format!("lowlat cluster check: {}", n.node),
                hostname: Some(n.node.clone()),
                cases,
            }
        })
        .collect();
    let meta = report::junit::Meta {
        hostname: None,
        timestamp,
        time: Some(std::time::Duration::from_nanos(f.duration_ns)),
    };
    report::junit::write(&format!("lowlat cluster check: {}", f.selector), &suites, &meta)
}

/// The page: [`report`] drawn by the report crate.
pub fn render(f: &Fleet, threshold_ns: Option<u64>) -> String {
    report::html::render(&report(f, threshold_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    #[test]
    fn the_page_holds_every_node_and_escapes() {
        let mut a = NodeResult::not_run("<vm>", Status::Completed, String::new());
        a.reason = None;
        a.verdict = Verdict::Pass;
        a.realtime = Some(true);
        a.timer = Some(Worst { max_ns: 41_000, p99_ns: Some(9_000), cpu: Some(1), partial: false });
        a.timer_histogram = vec![
            Bin { lo_ns: 1000, hi_ns: 2000, count: 500 },
            Bin { lo_ns: 40_000, hi_ns: 42_000, count: 1 },
        ];
        a.dir = Some("vm".into());
        let b = NodeResult::not_run(
            "fake-0001",
            Status::NeverStarted,
            "not started after 20s: Pending: scheduled on fake-0001".into(),
        );
        let nodes = vec![a, b];
        let f = Fleet {
            schema_version: SCHEMA_VERSION,
            kind: "fleet".into(),
            tool: "lowlat test".into(),
            started_at: "2026-11-25T00:00:00Z".into(),
            duration_ns: 30_000_000_000,
            run: "0a1b2c3d".into(),
            namespace: "default".into(),
            selector: "lowlat.test/check=x".into(),
            image: "localhost/lowlat:0.1.0".into(),
            command: vec!["lowlat".into(), "cluster".into(), "agent".into()],
            interrupted: false,
            verdict: Fleet::judge(&nodes),
            nodes,
            cleanup: Cleanup::default(),
        };
        let html = render(&f, Some(100_000));
        assert!(html.contains("&lt;vm&gt;"));
        assert!(!html.contains("<vm>"));
        assert!(html.contains("id=\"chart-fleet-timer\""), "the node's histogram is drawn");
        let fig = &html[html.find("id=\"chart-fleet-timer\"").unwrap()..];
        let fig = &fig[..fig.find("</figure>").unwrap()];
        assert!(
            fig.contains("<svg") && fig.contains("\n&lt;vm&gt;\n</text>"),
            "the node's line, named: {fig}"
        );
        assert!(html.contains("Nodes that did not run"));
        assert!(html.contains("Pending: scheduled on fake-0001"));
        assert!(html.contains("41.0 µs"), "the report crate's units");
        assert!(html.contains("NOT RUN"));
        assert!(html.contains("href=\"vm/lowlat-report.html\""), "a link to the node's own report");
        // One verdict vocabulary: a node that did not run fails the fleet.
        assert_eq!(report(&f, None).verdict, report::Verdict::Fail);
        // JUnit: a suite per node, the one that did not run failing with the API's reason.
        let x = junit(&f, std::time::SystemTime::UNIX_EPOCH);
        assert_eq!(x.matches("<testsuite ").count(), 2, "{x}");
        assert!(x.contains("hostname=\"fake-0001\""), "{x}");
        assert!(
            x.contains("message=\"not started after 20s: Pending: scheduled on fake-0001\""),
            "{x}"
        );
    }
}
