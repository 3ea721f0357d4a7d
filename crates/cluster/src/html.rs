//! The fleet report: one self-contained HTML page (no scripts, no external resources) with the
//! per-node verdict table, the worst timer / noise / fsync figures side by side, the timer
//! distributions of every node overlaid, outliers, and the nodes that did not run with the
//! API's reason. Pure.

use std::fmt::Write as _;

use crate::model::{Bin, Fleet, NodeResult, Verdict};

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

fn us(ns: u64) -> String {
    if ns >= 10_000_000 {
        format!("{:.1} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} µs", ns as f64 / 1e3)
    }
}

fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Warn => "warn",
        Verdict::Fail | Verdict::NotRun => "fail",
    }
}

const COLORS: [&str; 8] =
    ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];

/// Every node's timer histogram as one line on log-log axes (x: latency, y: samples).
fn distributions(nodes: &[&NodeResult]) -> String {
    let with: Vec<(&NodeResult, &[Bin])> = nodes
        .iter()
        .filter(|n| !n.timer_histogram.is_empty())
        .map(|n| (*n, n.timer_histogram.as_slice()))
        .collect();
    if with.is_empty() {
        return "<p>No timer histogram was gathered.</p>".into();
    }
    let (w, h, pad) = (720.0_f64, 300.0_f64, 50.0_f64);
    let lo = with.iter().flat_map(|(_, b)| b.iter().map(|b| b.lo_ns.max(100))).min().unwrap_or(100)
        as f64;
    let hi = with
        .iter()
        .flat_map(|(_, b)| b.iter().map(|b| b.hi_ns.max(b.lo_ns + 1)))
        .max()
        .unwrap_or(1000) as f64;
    let cmax =
        with.iter().flat_map(|(_, b)| b.iter().map(|b| b.count)).max().unwrap_or(1).max(1) as f64;
    let (lx0, lx1) = (lo.log10(), hi.log10().max(lo.log10() + 1.0));
    let ly1 = (cmax.log10() + 0.5).max(1.0);
    let x = |v: f64| pad + (v.max(lo).log10() - lx0) / (lx1 - lx0) * (w - 2.0 * pad);
    let y = |c: f64| h - pad - ((c.max(1.0)).log10() / ly1) * (h - 2.0 * pad);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="timer latency distributions per node">"#
    );
    let _ = write!(
        s,
        r##"<rect x="{pad}" y="{pad}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        w - 2.0 * pad,
        h - 2.0 * pad
    );
    // decade ticks on x
    let mut d = 10f64.powf(lx0.floor());
    while d <= hi * 1.0001 {
        if d >= lo {
            let xx = x(d);
            let _ = write!(
                s,
                r##"<line x1="{xx:.1}" y1="{}" x2="{xx:.1}" y2="{}" stroke="#ddd"/><text x="{xx:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"##,
                pad,
                h - pad,
                h - pad + 14.0,
                esc(&us(d as u64))
            );
        }
        d *= 10.0;
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" font-size="11" text-anchor="middle">wake-up latency (log)</text>"#,
        w / 2.0,
        h - 8.0
    );
    let _ = write!(
        s,
        r#"<text x="12" y="{}" font-size="11" transform="rotate(-90 12 {})" text-anchor="middle">samples (log)</text>"#,
        h / 2.0,
        h / 2.0
    );
    for (i, (n, bins)) in with.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<String> = bins
            .iter()
            .map(|b| format!("{:.1},{:.1}", x(((b.lo_ns + b.hi_ns) / 2) as f64), y(b.count as f64)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{}"><title>{}</title></polyline>"#,
            pts.join(" "),
            esc(&n.node)
        );
        let _ = write!(
            s,
            r#"<rect x="{}" y="{}" width="10" height="10" fill="{color}"/><text x="{}" y="{}" font-size="11">{}</text>"#,
            w - pad - 150.0,
            pad + 6.0 + 14.0 * i as f64,
            w - pad - 136.0,
            pad + 15.0 + 14.0 * i as f64,
            esc(&n.node)
        );
    }
    s.push_str("</svg>");
    s
}

fn fig(w: &Option<crate::model::Worst>, p99: bool) -> String {
    match w {
        None => "–".into(),
        Some(w) => {
            let mut t = us(w.max_ns);
            if p99 {
                if let Some(p) = w.p99_ns {
                    t = format!("{t} <small>(p99 {})</small>", us(p));
                }
            }
            if let Some(c) = w.cpu {
                t.push_str(&format!(" <small>CPU {c}</small>"));
            }
            if w.partial {
                t.push_str(" <small>partial</small>");
            }
            t
        }
    }
}

/// The page.
pub fn render(f: &Fleet) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>lowlat fleet report: {sel}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}
.pass{{background:#dfd}}.warn{{background:#ffd}}.fail{{background:#fdd}}.loud{{color:#a00;font-weight:bold}}small{{color:#555}}</style></head><body>
<h1>lowlat fleet report <span class="{vc}">{verdict}</span></h1>
<p>{count} node(s) selected by <code>{sel}</code> in namespace <code>{ns}</code>, run <code>{run}</code>, started {at}, {dur:.0} s. Image <code>{img}</code>; each pod ran <code>{cmd}</code>. Written by {tool}.</p>"#,
        sel = esc(&f.selector),
        vc = class(f.verdict),
        verdict = f.verdict.label(),
        count = f.nodes.len(),
        ns = esc(&f.namespace),
        run = esc(&f.run),
        at = esc(&f.started_at),
        dur = f.duration_ns as f64 / 1e9,
        img = esc(&f.image),
        cmd = esc(&f.command.join(" ")),
        tool = esc(&f.tool),
    );
    if f.interrupted {
        s.push_str(r#"<p class="loud">Interrupted (Ctrl-C): nodes still running were stopped; their rows say so.</p>"#);
    }
    let not_rt: Vec<&NodeResult> = f.nodes.iter().filter(|n| n.realtime == Some(false)).collect();
    for n in &not_rt {
        let why = n
            .rt_budget
            .as_ref()
            .map(|r| r.detail.clone())
            .unwrap_or_else(|| "no RT budget report".into());
        let _ = write!(
            s,
            r#"<p class="loud">NOT REAL-TIME on {}: the timer ran with SCHED_OTHER, its numbers prove nothing about real-time latency. Why: {}</p>"#,
            esc(&n.node),
            esc(&why)
        );
    }
    s.push_str("<h2>Verdict per node</h2><table><tr><th>node</th><th>verdict</th><th>status</th><th>real-time</th><th>worst timer</th><th>worst noise</th><th>fsync max (p99)</th><th>pod CPUs</th><th>findings / reason</th></tr>");
    for n in &f.nodes {
        let rt = match (n.realtime, &n.rt_budget) {
            (Some(true), Some(b)) => {
                format!("yes <small>({})</small>", esc(&format!("{:?}", b.state).to_lowercase()))
            }
            (Some(true), None) => "yes".into(),
            (Some(false), _) => r#"<span class="loud">NO</span>"#.into(),
            (None, _) => "–".into(),
        };
        let mut notes: Vec<String> = n.headlines.iter().map(|h| esc(h)).collect();
        if let Some(r) = &n.reason {
            notes.insert(0, esc(r));
        }
        let cpus = match &n.cpus {
            Some(c) => {
                let set = c.allowed.as_ref().map_or_else(|| "?".into(), ToString::to_string);
                let (cls, word) = match c.placement {
                    crate::cpus::Placement::Exclusive => ("pass", "exclusive"),
                    crate::cpus::Placement::Shared if c.requested.is_some() => {
                        ("warn", "NOT EXCLUSIVE")
                    }
                    crate::cpus::Placement::Shared => ("", "shared"),
                    crate::cpus::Placement::Unknown => ("warn", "exclusivity unknown"),
                };
                format!(r#"{} <span class="{cls}">{word}</span>"#, esc(&set))
            }
            None => "–".into(),
        };
        let _ = write!(
            s,
            r#"<tr><td>{}</td><td class="{}">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(&n.node),
            class(n.verdict),
            n.verdict.label(),
            esc(&format!("{:?}", n.status).to_lowercase()),
            rt,
            fig(&n.timer, true),
            fig(&n.noise, false),
            fig(&n.fsync, true),
            cpus,
            notes.join("<br>")
        );
    }
    s.push_str("</table>");
    let outliers = f.outliers();
    if !outliers.is_empty() {
        s.push_str(
            "<h2>Outliers</h2><p>Worst timer latency more than twice the fleet's median:</p><ul>",
        );
        for n in outliers {
            let _ = write!(s, "<li>{}: {}</li>", esc(&n.node), fig(&n.timer, false));
        }
        s.push_str("</ul>");
    }
    s.push_str("<h2>Timer latency distributions</h2>");
    let all: Vec<&NodeResult> = f.nodes.iter().collect();
    s.push_str(&distributions(&all));
    let missing: Vec<&NodeResult> =
        f.nodes.iter().filter(|n| n.verdict == Verdict::NotRun).collect();
    if !missing.is_empty() {
        s.push_str("<h2>Nodes that did not run</h2><table><tr><th>node</th><th>status</th><th>reason (from the API)</th></tr>");
        for n in missing {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&n.node),
                esc(&format!("{:?}", n.status).to_lowercase()),
                esc(n.reason.as_deref().unwrap_or("-"))
            );
        }
        s.push_str("</table>");
    }
    s.push_str("<h2>Files</h2><ul>");
    for n in &f.nodes {
        if let Some(d) = &n.dir {
            let _ = write!(
                s,
                r#"<li><a href="{d}/lowlat-report.html">{}</a>: {}</li>"#,
                esc(&n.node),
                esc(&n.files.join(", ")),
                d = esc(d)
            );
        }
    }
    let _ = writeln!(
        s,
        "</ul><p><small>Cleanup: {} Job(s), {} pod(s) deleted{}.</small></p></body></html>",
        f.cleanup.jobs,
        f.cleanup.pods,
        if f.cleanup.leftover.is_empty() {
            String::new()
        } else {
            format!("; still there: {}", esc(&f.cleanup.leftover.join(", ")))
        }
    );
    s
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
        let html = render(&f);
        assert!(html.contains("&lt;vm&gt;"));
        assert!(!html.contains("<vm>"));
        assert!(html.contains("<polyline"), "the node's histogram is drawn");
        assert!(html.contains("Nodes that did not run"));
        assert!(html.contains("Pending: scheduled on fake-0001"));
        assert!(html.contains("41.0 µs"));
        assert!(html.contains("NOT RUN"));
    }
}
