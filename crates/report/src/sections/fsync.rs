//! fsync section (etcd's write + fdatasync pattern): p99 against etcd's 10 ms and
//! OpenShift's 20 ms, the latency summary, the per-window chart (whole-run percentiles hide
//! interference) and the mitigation matrix when the run compared scenarios.

use super::Ctx;
use crate::input::{value_text, Doc, FsyncView, LatNs, WindowView};
use crate::model::{
    fmt_count, fmt_ns, fmt_opt_ns, Block, Cell, Chart, Headline, Marker, Scale, Section, Series,
    SeriesStyle, Table, Verdict,
};

fn judge(p99: Option<u64>, ctx: &Ctx<'_>) -> Verdict {
    match p99 {
        Some(p) if p < ctx.opts.fsync_p99_pass_ns => Verdict::Pass,
        Some(p) if p < ctx.opts.fsync_p99_warn_ns => Verdict::Warn,
        Some(_) => Verdict::Fail,
        None => Verdict::Skipped,
    }
}

fn fsync_limits(ctx: &Ctx<'_>) -> Vec<Marker> {
    vec![
        Marker {
            x: ctx.opts.fsync_p99_pass_ns as f64 / 1e6,
            label: format!("etcd p99 {}", fmt_ns(ctx.opts.fsync_p99_pass_ns)),
        },
        Marker {
            x: ctx.opts.fsync_p99_warn_ns as f64 / 1e6,
            label: format!("OpenShift p99 {}", fmt_ns(ctx.opts.fsync_p99_warn_ns)),
        },
    ]
}

fn window_points(ws: &[WindowView], f: fn(&WindowView) -> Option<u64>) -> Vec<(f64, f64)> {
    ws.iter()
        .enumerate()
        .filter_map(|(i, w)| Some((w.start_s().unwrap_or(i as f64), f(w)? as f64 / 1e6)))
        .collect()
}

/// Build the fsync section.
pub fn build(doc: &Doc, ctx: &Ctx<'_>) -> Vec<Section> {
    let v: FsyncView = match doc.view() {
        Ok(v) => v,
        Err(e) => {
            return vec![Section::new(
                "fsync",
                "fsync latency",
                vec![Headline::new(Verdict::Warn, format!("fsync: unreadable result: {e}"))],
                Vec::new(),
            )]
        }
    };
    let lat = v.lat_ns.clone().unwrap_or_default();
    let mut headlines = Vec::new();
    let mut blocks = Vec::new();
    let limits = format!(
        "etcd wants p99 < {}, OpenShift < {}",
        fmt_ns(ctx.opts.fsync_p99_pass_ns),
        fmt_ns(ctx.opts.fsync_p99_warn_ns)
    );
    if v.lat_ns.is_some() {
        let verdict = judge(lat.p99, ctx);
        headlines.push(Headline::new(
            verdict,
            format!(
                "fsync: p99 {} (max {}), {} ops at {:.0} IOPS; {limits}",
                fmt_opt_ns(lat.p99),
                fmt_opt_ns(lat.max),
                fmt_count(v.ops.unwrap_or(0)),
                v.iops.unwrap_or(0.0)
            ),
        ));
        blocks.push(Block::Table(Table {
            caption: "write + fdatasync latency over the whole run".into(),
            headers: ["ops", "IOPS", "min", "avg", "p50", "p90", "p99", "p99.9", "p99.99", "max"]
                .map(String::from)
                .to_vec(),
            rows: vec![lat_row(v.ops, v.iops, &lat, Some(verdict))],
        }));
    }
    if !v.windows.is_empty() {
        blocks.push(Block::Chart(Chart {
            id: "windows".into(),
            title: "fsync latency per window".into(),
            x_label: "time since start (s)".into(),
            y_label: "latency (ms, log scale)".into(),
            y_scale: Scale::Log,
            series: vec![
                Series { name: "p99".into(), style: SeriesStyle::Line, color: 0, points: window_points(&v.windows, WindowView::p99) },
                Series { name: "max".into(), style: SeriesStyle::Dashed, color: 3, points: window_points(&v.windows, WindowView::max) },
            ],
            markers: Vec::new(),
            y_markers: fsync_limits(ctx),
            caption: format!("Per-window percentiles show interference that whole-run numbers average away ({limits})."),
        }));
    }
    // A single scenario is the run above; the matrix only says something with two or more.
    if v.scenarios.len() > 1 {
        let mut rows = Vec::new();
        let mut series = Vec::new();
        for (i, s) in v.scenarios.iter().enumerate() {
            let verdict = judge(s.lat_ns.p99, ctx);
            let name = s.name.clone().unwrap_or_else(|| format!("scenario {}", i + 1));
            let mut row = vec![
                Cell::text(name.clone()),
                Cell::text(s.interference.as_ref().map(value_text).unwrap_or_else(|| "—".into())),
                Cell::text(s.mitigation.as_ref().map(value_text).unwrap_or_else(|| "—".into())),
            ];
            row.extend(lat_row(s.ops, s.iops, &s.lat_ns, Some(verdict)));
            row.push(Cell::verdict(verdict));
            rows.push(row);
            if !s.windows.is_empty() {
                series.push(Series {
                    name,
                    style: SeriesStyle::Line,
                    color: i,
                    points: window_points(&s.windows, WindowView::p99),
                });
            }
        }
        let worst =
            v.scenarios.iter().map(|s| judge(s.lat_ns.p99, ctx)).max().unwrap_or(Verdict::Info);
        let mitigated = |s: &&crate::input::ScenarioView| {
            s.mitigation.as_ref().is_some_and(|m| !matches!(value_text(m).as_str(), "" | "none"))
        };
        let best = v
            .scenarios
            .iter()
            .filter(mitigated)
            .filter(|s| s.lat_ns.p99.is_some())
            .min_by_key(|s| s.lat_ns.p99)
            .and_then(|s| Some((s.name.clone()?, s.lat_ns.p99?)));
        if let Some((name, p99)) = best {
            headlines.push(Headline::new(
                judge(Some(p99), ctx),
                format!("fsync mitigations: best is \"{name}\" with p99 {}", fmt_ns(p99)),
            ));
        } else if worst > Verdict::Pass {
            headlines.push(Headline::new(
                worst,
                "fsync scenarios: no mitigation keeps p99 within the targets".to_string(),
            ));
        }
        blocks.push(Block::Table(Table {
            caption: "Mitigation matrix: each interference scenario and mitigation side by side"
                .into(),
            headers: [
                "scenario",
                "interference",
                "mitigation",
                "ops",
                "IOPS",
                "min",
                "avg",
                "p50",
                "p90",
                "p99",
                "p99.9",
                "p99.99",
                "max",
                "verdict",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }));
        if !series.is_empty() {
            blocks.push(Block::Chart(Chart {
                id: "scenarios".into(),
                title: "fsync p99 per window, by scenario".into(),
                x_label: "time since start (s)".into(),
                y_label: "p99 latency (ms, log scale)".into(),
                y_scale: Scale::Log,
                series,
                markers: Vec::new(),
                y_markers: fsync_limits(ctx),
                caption: limits.clone(),
            }));
        }
    }
    blocks.push(super::run_conditions(doc));
    if let Some(env) = &v.environment {
        if let Some(o) = env.as_object() {
            blocks.push(Block::Facts {
                rows: o.iter().map(|(k, v)| (k.clone(), value_text(v))).collect(),
            });
        }
    }
    if headlines.is_empty() {
        headlines.push(Headline::new(
            Verdict::Warn,
            format!("fsync: no latency data in {}", doc.source),
        ));
    }
    vec![Section::new("fsync", "fsync latency (etcd pattern)", headlines, blocks)]
}

fn lat_row(ops: Option<u64>, iops: Option<f64>, l: &LatNs, v: Option<Verdict>) -> Vec<Cell> {
    let p99 = Cell::num(fmt_opt_ns(l.p99));
    vec![
        Cell::num(ops.map_or("—".into(), fmt_count)),
        Cell::num(iops.map_or("—".into(), |i| format!("{i:.0}"))),
        Cell::num(fmt_opt_ns(l.min)),
        Cell::num(fmt_opt_ns(l.avg)),
        Cell::num(fmt_opt_ns(l.p50)),
        Cell::num(fmt_opt_ns(l.p90)),
        match v {
            Some(v) => p99.with_verdict(v),
            None => p99,
        },
        Cell::num(fmt_opt_ns(l.p999)),
        Cell::num(fmt_opt_ns(l.p9999)),
        Cell::num(fmt_opt_ns(l.max)),
    ]
}
