//! fsync section (etcd's write + fdatasync pattern): p99 against etcd's 10 ms and
//! OpenShift's 20 ms, the latency summary, the per-window chart (whole-run percentiles hide
//! interference) and the mitigation matrix when the run compared scenarios. A `measure etcd`
//! result (etcd's own WAL fsync histogram) is judged against the same targets.

use results::fsync::{EtcdResult, FsyncResult, LatNs, Scenario, StorageEnv, Window};

use super::ctx::Ctx;
use crate::input::{Body, Doc};
use crate::model::{
    fmt_count, fmt_ns, Block, Cell, Chart, Headline, Marker, Scale, Section, Series, SeriesStyle,
    Table, Verdict,
};

fn judge(p99: u64, ctx: &Ctx<'_>) -> Verdict {
    if p99 < ctx.opts.fsync_p99_pass_ns {
        Verdict::Pass
    } else if p99 < ctx.opts.fsync_p99_warn_ns {
        Verdict::Warn
    } else {
        Verdict::Fail
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

fn limits_text(ctx: &Ctx<'_>) -> String {
    format!(
        "etcd wants p99 < {}, OpenShift < {}",
        fmt_ns(ctx.opts.fsync_p99_pass_ns),
        fmt_ns(ctx.opts.fsync_p99_warn_ns)
    )
}

/// (window start in s, value in ms) points.
fn window_points(ws: &[Window], f: fn(&Window) -> u64) -> Vec<(f64, f64)> {
    ws.iter().map(|w| (w.start_ns as f64 / 1e9, f(w) as f64 / 1e6)).collect()
}

/// Build the section of an fsync or etcd document.
pub fn build(doc: &Doc, ctx: &Ctx<'_>) -> Vec<Section> {
    match &doc.body {
        Body::Fsync(r) => vec![fsync(doc, r, ctx)],
        Body::Etcd(r) => vec![etcd(doc, r, ctx)],
        _ => Vec::new(),
    }
}

fn fsync(doc: &Doc, r: &FsyncResult, ctx: &Ctx<'_>) -> Section {
    let mut headlines = Vec::new();
    let mut blocks = Vec::new();
    let limits = limits_text(ctx);
    if r.ops > 0 {
        let verdict = judge(r.lat_ns.p99, ctx);
        headlines.push(Headline::new(
            verdict,
            format!(
                "fsync: p99 {} (max {}), {} ops at {:.0} IOPS; {limits}",
                fmt_ns(r.lat_ns.p99),
                fmt_ns(r.lat_ns.max),
                fmt_count(r.ops),
                r.iops
            ),
        ));
        blocks.push(Block::Table(Table {
            caption: "write + fdatasync latency over the whole run".into(),
            headers: ["ops", "IOPS", "min", "avg", "p50", "p90", "p99", "p99.9", "p99.99", "max"]
                .map(String::from)
                .to_vec(),
            rows: vec![lat_row(r.ops, r.iops, &r.lat_ns, verdict)],
        }));
    }
    if !r.windows.is_empty() {
        blocks.push(Block::Chart(Chart {
            id: "windows".into(),
            title: "fsync latency per window".into(),
            x_label: "time since start (s)".into(),
            y_label: "latency (ms, log scale)".into(),
            y_scale: Scale::Log,
            series: vec![
                Series { name: "p99".into(), style: SeriesStyle::Line, color: 0, points: window_points(&r.windows, |w| w.p99_ns) },
                Series { name: "max".into(), style: SeriesStyle::Dashed, color: 3, points: window_points(&r.windows, |w| w.max_ns) },
            ],
            markers: Vec::new(),
            y_markers: fsync_limits(ctx),
            caption: format!("Per-window percentiles show interference that whole-run numbers average away ({limits})."),
        }));
    }
    // A single scenario is the run above; the matrix only says something with two or more.
    if r.scenarios.len() > 1 {
        headlines.extend(matrix(&r.scenarios, ctx, &mut blocks));
    }
    blocks.push(super::ctx::run_conditions(&doc.source, &r.envelope, None));
    blocks.push(Block::Facts { rows: environment(&r.environment) });
    if headlines.is_empty() {
        headlines.push(Headline::new(
            Verdict::Warn,
            format!("fsync: no latency data in {}", doc.source),
        ));
    }
    Section::new("fsync", "fsync latency (etcd pattern)", headlines, blocks)
}

/// The mitigation matrix (table and chart); returns its headline.
fn matrix(scenarios: &[Scenario], ctx: &Ctx<'_>, blocks: &mut Vec<Block>) -> Option<Headline> {
    let limits = limits_text(ctx);
    let mut rows = Vec::new();
    let mut series = Vec::new();
    for (i, s) in scenarios.iter().enumerate() {
        let verdict = judge(s.lat_ns.p99, ctx);
        let mut row = vec![
            Cell::text(s.name.clone()),
            Cell::text(s.interference.clone().unwrap_or_else(|| "—".into())),
            Cell::text(s.mitigation.clone().unwrap_or_else(|| "—".into())),
        ];
        row.extend(lat_row(s.ops, s.iops, &s.lat_ns, verdict));
        row.push(Cell::verdict(verdict));
        rows.push(row);
        if !s.windows.is_empty() {
            series.push(Series {
                name: s.name.clone(),
                style: SeriesStyle::Line,
                color: i,
                points: window_points(&s.windows, |w| w.p99_ns),
            });
        }
    }
    let worst = scenarios.iter().map(|s| judge(s.lat_ns.p99, ctx)).max().unwrap_or(Verdict::Info);
    let mitigated =
        |s: &&Scenario| s.mitigation.as_deref().is_some_and(|m| !matches!(m, "" | "none"));
    let best = scenarios.iter().filter(mitigated).min_by_key(|s| s.lat_ns.p99);
    blocks.push(Block::Table(Table {
        caption: "Mitigation matrix: each interference scenario and mitigation side by side".into(),
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
            caption: limits,
        }));
    }
    match best {
        Some(s) => Some(Headline::new(
            judge(s.lat_ns.p99, ctx),
            format!("fsync mitigations: best is \"{}\" with p99 {}", s.name, fmt_ns(s.lat_ns.p99)),
        )),
        None if worst > Verdict::Pass => Some(Headline::new(
            worst,
            "fsync scenarios: no mitigation keeps p99 within the targets".to_string(),
        )),
        None => None,
    }
}

fn etcd(doc: &Doc, r: &EtcdResult, ctx: &Ctx<'_>) -> Section {
    let limits = limits_text(ctx);
    let w = &r.wal_fsync;
    let mut blocks =
        vec![Block::Note(crate::model::Note { verdict: Verdict::Info, text: r.caveat.clone() })];
    let headline = if w.count > 0 {
        Headline::new(
            judge(w.p99_ns, ctx),
            format!(
                "etcd WAL fsync: p99 {} over {} fsyncs of {}; {limits}",
                fmt_ns(w.p99_ns),
                fmt_count(w.count),
                r.endpoint
            ),
        )
    } else {
        Headline::new(Verdict::Warn, format!("etcd: no WAL fsync in the window ({})", doc.source))
    };
    let hist_row = |h: &results::fsync::EtcdHistogram| {
        vec![
            Cell::text(h.metric.clone()),
            Cell::num(fmt_count(h.count)),
            Cell::num(fmt_ns(h.mean_ns)),
            Cell::num(fmt_ns(h.p50_ns)),
            Cell::num(fmt_ns(h.p90_ns)),
            Cell::num(fmt_ns(h.p99_ns)),
            Cell::num(fmt_ns(h.p999_ns)),
        ]
    };
    blocks.push(Block::Table(Table {
        caption: "etcd's own histograms over the window".into(),
        headers: ["metric", "count", "mean", "p50", "p90", "p99", "p99.9"]
            .map(String::from)
            .to_vec(),
        rows: std::iter::once(w).chain(r.backend_commit.as_ref()).map(hist_row).collect(),
    }));
    if !r.windows.is_empty() {
        let points = r
            .windows
            .iter()
            .map(|w| (w.start_ns as f64 / 1e9, w.wal_fsync_p99_ns as f64 / 1e6))
            .collect();
        blocks.push(Block::Chart(Chart {
            id: "windows".into(),
            title: "etcd WAL fsync p99 per interval".into(),
            x_label: "time since start (s)".into(),
            y_label: "p99 latency (ms, log scale)".into(),
            y_scale: Scale::Log,
            series: vec![Series {
                name: "WAL fsync p99".into(),
                style: SeriesStyle::Line,
                color: 0,
                points,
            }],
            markers: Vec::new(),
            y_markers: fsync_limits(ctx),
            caption: limits,
        }));
    }
    blocks.push(super::ctx::run_conditions(&doc.source, &r.envelope, None));
    Section::new("etcd", "etcd disk latency", vec![headline], blocks)
}

fn lat_row(ops: u64, iops: f64, l: &LatNs, v: Verdict) -> Vec<Cell> {
    vec![
        Cell::num(fmt_count(ops)),
        Cell::num(format!("{iops:.0}")),
        Cell::num(fmt_ns(l.min)),
        Cell::num(fmt_ns(l.avg)),
        Cell::num(fmt_ns(l.p50)),
        Cell::num(fmt_ns(l.p90)),
        Cell::num(fmt_ns(l.p99)).with_verdict(v),
        Cell::num(fmt_ns(l.p999)),
        Cell::num(fmt_ns(l.p9999)),
        Cell::num(fmt_ns(l.max)),
    ]
}

/// The storage environment as label/value rows (what is unknown is left out).
fn environment(e: &StorageEnv) -> Vec<(String, String)> {
    let mut rows = vec![("dir".to_string(), e.dir.clone())];
    let mut opt = |k: &str, v: Option<String>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            rows.push((k.to_string(), v));
        }
    };
    opt("device", e.device.clone());
    opt("devno", e.devno.clone());
    opt("scheduler", e.scheduler.clone());
    opt("schedulers_available", Some(e.schedulers_available.join(", ")));
    opt("wbt_lat_usec", e.wbt_lat_usec.map(|v| v.to_string()));
    opt("write_cache", e.write_cache.clone());
    opt("rotational", e.rotational.map(|v| v.to_string()));
    opt("fs_type", e.fs_type.clone());
    opt("mount_point", e.mount_point.clone());
    opt("mount_source", e.mount_source.clone());
    opt("mount_options", e.mount_options.clone());
    let dirty: Vec<String> = e.dirty.iter().map(|(k, v)| format!("{k}={v}")).collect();
    opt("dirty", Some(dirty.join(", ")));
    opt("cgroup_version", e.cgroup_version.clone());
    opt("free_bytes", e.free_bytes.map(|v| v.to_string()));
    rows
}
