//! Timer-latency and OS-noise sections (same shape: `threads[]` per CPU): the verdict against
//! the threshold, a percentile table, OSADL-style per-CPU histograms (linear x, log y, one
//! line per CPU, threshold marked), the per-second max time series, and for noise the
//! attribution of the noise per CPU.

use results::{Bucket, LatencyResult, LoadInfo, ThreadResult};

use super::ctx::Ctx;
use crate::input::{Body, Doc};
use crate::model::{
    fmt_count, fmt_duration_s, fmt_ns, fmt_opt_ns, Block, Cell, Chart, Headline, Heatmap, Marker,
    Note, Scale, Section, Series, SeriesStyle, Table, Verdict,
};

/// Rebin sparse buckets onto `nbins` equal bins over `[0, x_max_ns)`: points are (bin start
/// in µs, count). Runs of empty bins keep only their ends so a quiet range costs two points.
pub fn bin_histogram(buckets: &[Bucket], x_max_ns: u64, nbins: usize) -> Vec<(f64, f64)> {
    let width = nice_width(x_max_ns.max(1).div_ceil(nbins.max(1) as u64)) as f64;
    let nbins = ((x_max_ns.max(1) as f64 / width).ceil() as usize).max(1);
    let mut bins = vec![0u64; nbins];
    for b in buckets.iter().filter(|b| (b.lo_ns as f64) < width * nbins as f64) {
        let mid = b.lo_ns as f64 + (b.hi_ns.saturating_sub(b.lo_ns) as f64) / 2.0;
        let i = ((mid / width) as usize).min(nbins - 1);
        if let Some(c) = bins.get_mut(i) {
            *c = c.saturating_add(b.count);
        }
    }
    let mut out = Vec::new();
    for (i, c) in bins.iter().enumerate() {
        let prev_zero = i > 0 && bins.get(i - 1) == Some(&0);
        let next_zero = bins.get(i + 1).is_none_or(|n| *n == 0);
        if *c == 0 && prev_zero && next_zero && i + 1 < nbins {
            continue;
        }
        out.push((i as f64 * width / 1e3, *c as f64));
    }
    // the right edge of the last bin, so a step drawing closes it
    out.push((nbins as f64 * width / 1e3, bins.last().copied().unwrap_or(0) as f64));
    out
}

/// The smallest 1/2/5×10^k ns width at or above `raw_ns` (at least 100 ns, the finest
/// bucket of the latency histogram), so bins never split a source bucket unevenly.
pub fn nice_width(raw_ns: u64) -> u64 {
    let mut p = 100u64;
    loop {
        for m in [1, 2, 5] {
            if p.saturating_mul(m) >= raw_ns {
                return p.saturating_mul(m);
            }
        }
        p = p.saturating_mul(10);
        if p == u64::MAX {
            return raw_ns;
        }
    }
}

/// Downsample a per-second series to at most `max_points` points, keeping each bin's
/// maximum (spikes survive). Returns the points (seconds, µs) and the seconds per point.
pub fn downsample_max(series_ns: &[u64], max_points: usize) -> (Vec<(f64, f64)>, usize) {
    let per = series_ns.len().div_ceil(max_points.max(1)).max(1);
    let pts = series_ns
        .chunks(per)
        .enumerate()
        .map(|(i, c)| ((i * per) as f64, c.iter().copied().max().unwrap_or(0) as f64 / 1e3))
        .collect();
    (pts, per)
}

/// A series of `step`-second points downsampled to at most `max_points` (each bin's
/// maximum), x in units of `unit` seconds. Returns the points (x, µs) and the seconds each
/// drawn point covers.
pub fn time_points(
    series_ns: &[u64],
    step: u64,
    max_points: usize,
    unit: u64,
) -> (Vec<(f64, f64)>, u64) {
    let (pts, per) = downsample_max(series_ns, max_points);
    let scale = step as f64 / unit.max(1) as f64;
    (pts.into_iter().map(|(x, y)| (x * scale, y)).collect(), (per as u64).saturating_mul(step))
}

/// The unit of a time axis over `secs` seconds: (seconds per unit, its name): seconds up to
/// 10 minutes, minutes up to 10 hours, hours beyond.
pub fn time_unit(secs: u64) -> (u64, &'static str) {
    if secs > 36_000 {
        (3600, "h")
    } else if secs > 600 {
        (60, "min")
    } else {
        (1, "s")
    }
}

/// A span of seconds as a series step reads: `15 s`, `2 min`, `1 h`, `90 s`.
pub fn fmt_step(secs: u64) -> String {
    if secs >= 3600 && secs.is_multiple_of(3600) {
        format!("{} h", secs / 3600)
    } else if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}

/// "maximum per second", or "maximum per 2 min" for a result whose series step is 2 min.
fn max_per(step: u64) -> String {
    if step <= 1 {
        "maximum per second".into()
    } else {
        format!("maximum per {}", fmt_step(step))
    }
}

/// The threshold the run was measured against (`params.threshold_ns`), else `default`.
pub(crate) fn threshold(r: &LatencyResult, default: u64) -> u64 {
    r.envelope.params.latency().and_then(|p| p.threshold_ns).unwrap_or(default)
}

/// `CPU 3`, or `thread 0` (its place in the result) when the result does not say the CPU.
fn cpu_name(r: &LatencyResult, t: &ThreadResult) -> String {
    match t.cpu {
        Some(c) => format!("CPU {c}"),
        None => {
            format!("thread {}", r.threads.iter().position(|x| std::ptr::eq(x, t)).unwrap_or(0))
        }
    }
}

/// The worst latency of a thread, `None` when it took no samples.
pub(crate) fn max_ns(t: &ThreadResult) -> Option<u64> {
    t.max_known().then_some(t.stats.max_ns)
}

/// A percentile or spread of a thread, `None` when unknown: no samples, or an imported
/// summary without a histogram (shown as `n/a`).
pub(crate) fn pct(t: &ThreadResult, v: Option<u64>) -> Option<u64> {
    v.filter(|_| t.stats.count > 0)
}

/// A percentile for a table: `< 100 ns` when it lies in the first histogram bucket (its
/// value is only known to be below the edge), `n/a` when unknown.
fn pct_text(t: &ThreadResult, v: Option<u64>) -> String {
    match t.below_first_bucket(pct(t, v)) {
        Some(edge) => format!("< {}", fmt_ns(edge)),
        None => fmt_opt_ns(pct(t, v)),
    }
}

/// The load that ran, in a few words (`cpu on 0-1`, or the external command).
pub(crate) fn load_text(l: &LoadInfo) -> String {
    let mut s = l.kind.clone();
    if let Some(c) = &l.cpus {
        s.push_str(&format!(" on {c}"));
    }
    if let Some(c) = &l.command {
        s.push_str(&format!(": {c}"));
    }
    s
}

/// Build the section for one timer or noise document.
pub fn build(doc: &Doc, ctx: &Ctx<'_>) -> Vec<Section> {
    let Body::Latency(r) = &doc.body else { return Vec::new() };
    let noise = r.envelope.kind == results::Kind::Noise;
    let tracer = r.tracer.as_ref().and_then(|t| t.name);
    let (id, title) = match (tracer, noise) {
        (Some(results::tracer::TracerName::Hwlat), _) => ("hwlat", "Hardware latency (hwlat)"),
        (Some(results::tracer::TracerName::Osnoise), _) => ("noise", "OS noise (osnoise)"),
        (Some(results::tracer::TracerName::Timerlat), _) => ("timer", "Timer latency (timerlat)"),
        (None, true) => ("noise", "OS noise"),
        (None, false) => ("timer", "Timer latency"),
    };
    let env = &r.envelope;
    let thr =
        threshold(r, if noise { ctx.opts.noise_threshold_ns } else { ctx.opts.timer_threshold_ns });
    let load = r.load.as_ref().map(load_text);
    let mut threads: Vec<&ThreadResult> = r.threads.iter().collect();
    threads.sort_by_key(|t| t.cpu);

    let ran = r.ran_policy();
    let not_rt = r.not_realtime();
    let mut headlines = Vec::new();
    let mut blocks = Vec::new();
    let run = format!(
        "{} of {}{}",
        if env.duration_ns == 0 {
            "length unknown".to_string()
        } else {
            fmt_duration_s(env.duration_ns / 1_000_000_000)
        },
        env.tool,
        load.as_ref().map_or_else(|| ", no load recorded".to_string(), |l| format!(", load: {l}"))
    );
    if threads.is_empty() {
        headlines.push(Headline::new(
            Verdict::Warn,
            format!("{title}: no CPUs measured ({})", doc.source),
        ));
        return vec![Section::new(id, title, headlines, blocks)];
    }

    let worst = threads.iter().filter(|t| max_ns(t).is_some()).max_by_key(|t| max_ns(t));
    let overruns = threads.iter().fold(0u64, |a, t| a.saturating_add(t.overruns));
    let samples = threads.iter().fold(0u64, |a, t| a.saturating_add(t.stats.count));
    let virt_note = ctx
        .virtualized
        .as_ref()
        .map(|h| format!(" — virtualized ({h}): host noise included"))
        .unwrap_or_default();
    if tracer == Some(results::tracer::TracerName::Hwlat) {
        // hwlatdetect's verdict: any window with a gap above the detector's threshold fails.
        let t = r.tracer.as_ref();
        let det = t.and_then(|t| t.threshold_ns).unwrap_or(thr);
        let window_us = t.and_then(|t| t.period_us).unwrap_or(0);
        let windows = if window_us > 0 { env.duration_ns / (window_us * 1000) } else { 0 };
        let n: u64 = threads.iter().filter_map(|t| t.hwlat.as_ref()).map(|h| h.samples).sum();
        let text = match worst {
            Some(w) if n > 0 => format!(
                "{title}: {} window(s) of {} above {}, worst {} on {}{virt_note}",
                fmt_count(n),
                fmt_count(windows),
                fmt_ns(det),
                fmt_ns(w.stats.max_ns),
                cpu_name(r, w)
            ),
            _ => format!(
                "{title}: no gap above {} in {} windows over {} CPUs",
                fmt_ns(det),
                fmt_count(windows),
                threads.len()
            ),
        };
        headlines.push(Headline::new(if n > 0 { Verdict::Fail } else { Verdict::Pass }, text));
    } else if tracer == Some(results::tracer::TracerName::Osnoise) && worst.is_none() {
        let periods: u64 =
            threads.iter().filter_map(|t| t.osnoise.as_ref()).map(|o| o.periods).sum();
        headlines.push(Headline::new(
            Verdict::Pass,
            format!(
                "{title}: no gap at or above {} in {} periods on {} CPUs",
                fmt_ns(r.tracer.as_ref().and_then(|t| t.threshold_ns).unwrap_or(0)),
                fmt_count(periods),
                threads.len()
            ),
        ));
    } else if let Some(w) = worst {
        let max = w.stats.max_ns;
        let mut v = if max < thr { Verdict::Pass } else { Verdict::Fail };
        if v == Verdict::Pass && overruns > 0 && !noise {
            v = Verdict::Warn;
        }
        // A real-time policy asked for and refused: the numbers are not a real-time claim.
        if v == Verdict::Pass && not_rt.is_some() {
            v = Verdict::Warn;
        }
        let virt = &virt_note;
        let what =
            if tracer == Some(results::tracer::TracerName::Osnoise) { "gaps" } else { "samples" };
        headlines.push(Headline::new(
            v,
            format!(
                "{title}: {}{} {} on {} ({} {}), {} {what} on {} CPU{}{}{virt}",
                r.not_realtime_short().map(|n| format!("{n} — ")).unwrap_or_default(),
                if env.partial { "worst seen" } else { "worst" },
                fmt_ns(max),
                cpu_name(r, w),
                if max < thr { "below" } else { "at or above" },
                fmt_ns(thr),
                if threads.iter().any(|t| t.count_unknown) {
                    "an unknown number of".to_string()
                } else {
                    fmt_count(samples)
                },
                threads.len(),
                if threads.len() == 1 { "" } else { "s" },
                if overruns > 0 && !noise {
                    format!(", {} overruns", fmt_count(overruns))
                } else {
                    String::new()
                },
            ),
        ));
    }
    blocks.push(Block::Paragraph {
        text: format!(
            "{}. Run: {run}. Verdict: every CPU's maximum must be strictly below {}.",
            if let Some(s) = super::tracer::semantics(r) {
                s
            } else if noise {
                format!(
                    "Noise: gaps in a pinned busy loop{} (oslat semantics), i.e. time the CPU was taken away",
                    ran.map(|p| format!(" under {}", p.kernel_name())).unwrap_or_default()
                )
            } else {
                format!(
                    "Wake-up latency of a pinned {}thread sleeping to an absolute deadline \
                     (cyclictest semantics){}; overruns are wake-ups more than one interval late, \
                     which cyclictest silently skips",
                    ran.map(|p| format!("{} ", p.kernel_name())).unwrap_or_default(),
                    not_rt.as_ref().map(|n| format!(" — {n}")).unwrap_or_default()
                )
            },
            fmt_ns(thr)
        ),
    });
    let many = threads.len() > MANY_CPUS;
    if many {
        // The worst first; every CPU is in the charts and in the full table below them.
        let mut worst = threads.clone();
        worst.sort_by_key(|t| std::cmp::Reverse(max_ns(t)));
        worst.truncate(WORST_ROWS);
        let mut t = percentile_table(r, &worst, thr, noise);
        t.caption = format!(
            "The {} CPUs with the largest maximum, worst first (all {} CPUs below the charts)",
            worst.len(),
            threads.len()
        );
        blocks.push(Block::Table(t));
    } else {
        blocks.push(Block::Table(percentile_table(r, &threads, thr, noise)));
    }
    blocks.extend(super::tracer::blocks(r, &threads));
    for n in &r.notes {
        blocks.push(Block::Note(Note { verdict: Verdict::Warn, text: n.clone() }));
    }
    if !r.breaches.is_empty() {
        let total = r.breach_total();
        blocks.push(Block::Note(Note {
            verdict: Verdict::Warn,
            text: if total > r.breaches.len() as u64 {
                format!(
                    "{} threshold breaches; the worst {} are recorded with their time and CPU.",
                    fmt_count(total),
                    fmt_count(r.breaches.len() as u64)
                )
            } else {
                format!("{} threshold breaches recorded with their time.", fmt_count(total))
            },
        }));
    }

    if many {
        many_cpu_blocks(&mut blocks, &threads, r.series_step(), thr, title, ctx);
        let mut t = percentile_table(r, &threads, thr, noise);
        t.caption = format!("Per-CPU statistics, all {} CPUs", threads.len());
        blocks.push(Block::Table(t));
    } else {
        overlay_blocks(&mut blocks, r, &threads, thr, title, ctx);
    }

    // A tracer's own tables attribute the noise (sections::tracer).
    if noise && tracer.is_none() {
        if let Some(t) = attribution_table(&threads, env.duration_ns, r.series_step()) {
            blocks.push(Block::Table(t));
        }
    }
    blocks.push(super::ctx::run_conditions(&doc.source, &ran_conditions(r, ran), load));
    vec![Section::new(id, title, headlines, blocks)]
}

/// Columns of the per-second heat map (each the maximum of its seconds).
pub const HEATMAP_COLUMNS: usize = 240;
/// Latency bins per decade of the histogram heat map.
const BINS_PER_DECADE: f64 = 20.0;

/// Many CPUs: what scales to hundreds of rows. A heat map CPU × latency bin (log x, log
/// colour), the per-CPU max / p99.9 / p99 chart sorted by CPU, and a heat map of the maximum
/// per second per CPU (OSADL's per-core plots), breaches red.
fn many_cpu_blocks(
    blocks: &mut Vec<Block>,
    threads: &[&ThreadResult],
    step: u64,
    thr: u64,
    title: &str,
    ctx: &Ctx<'_>,
) {
    let rows = |ts: &[&ThreadResult]| -> Vec<u32> {
        ts.iter().enumerate().map(|(i, t)| t.cpu.unwrap_or(i as u32)).collect()
    };
    let with_hist: Vec<&ThreadResult> =
        threads.iter().copied().filter(|t| !t.histogram.buckets.is_empty()).collect();
    if let Some(m) = histogram_heatmap(&with_hist, rows(&with_hist), thr, title) {
        blocks.push(Block::Heatmap(m));
    } else {
        blocks.push(Block::Note(Note {
            verdict: Verdict::Info,
            text: "No histogram in this result (imported summary only): table above only.".into(),
        }));
    }
    blocks.push(Block::Chart(per_cpu_chart(threads, thr, title)));
    let series: Vec<&ThreadResult> =
        threads.iter().copied().filter(|t| !t.per_second_max_ns.is_empty()).collect();
    if let Some(m) = series_heatmap(&series, rows(&series), step, thr, title, ctx.opts.max_points) {
        blocks.push(Block::Heatmap(m));
    }
}

/// Position of `ns` on the log-x axis starting at `lo_ns`, in bins.
fn log_pos(ns: f64, lo_ns: f64) -> f64 {
    (ns.max(lo_ns) / lo_ns).log10() * BINS_PER_DECADE
}

/// CPU × latency bin: each row a CPU's histogram on log-spaced bins from the decade below
/// its smallest sample to its worst case, coloured by count (log).
pub fn histogram_heatmap(
    threads: &[&ThreadResult],
    rows: Vec<u32>,
    thr: u64,
    title: &str,
) -> Option<Heatmap> {
    let first = threads
        .iter()
        .filter_map(|t| t.histogram.buckets.iter().find(|b| b.count > 0).map(|b| b.lo_ns))
        .min()?;
    let last = threads
        .iter()
        .filter_map(|t| {
            let top = t.histogram.buckets.iter().rev().find(|b| b.count > 0).map(|b| b.hi_ns);
            top.max(max_ns(t))
        })
        .max()?;
    let lo = 10f64.powf((first.max(10) as f64).log10().floor());
    let cols = (log_pos(last as f64, lo).ceil() as usize).max(1);
    let cells = threads
        .iter()
        .map(|t| {
            let mut row = vec![0f64; cols];
            for b in t.histogram.buckets.iter().filter(|b| b.count > 0) {
                let mid = ((b.lo_ns.max(1) as f64) * (b.hi_ns.max(b.lo_ns + 1) as f64)).sqrt();
                let i = (log_pos(mid, lo) as usize).min(cols - 1);
                row[i] += b.count as f64;
            }
            if t.histogram.overflow > 0 {
                row[cols - 1] += t.histogram.overflow as f64;
            }
            row
        })
        .collect();
    let mut x_ticks = Vec::new();
    let mut decade = lo;
    while decade <= last as f64 * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let v = decade * m;
            let pos = log_pos(v, lo);
            if pos <= cols as f64 + 1e-9 {
                x_ticks.push((pos, fmt_ns(v as u64)));
            }
        }
        decade *= 10.0;
    }
    let thr_pos = log_pos(thr as f64, lo);
    Some(Heatmap {
        id: "hist-map".into(),
        title: format!("{title}: histogram per CPU"),
        x_label: "latency (log scale)".into(),
        rows,
        x_ticks,
        cells,
        value_label: "samples (log)".into(),
        threshold: None,
        x_marker: (thr_pos <= cols as f64).then(|| (thr_pos, format!("threshold {}", fmt_ns(thr)))),
        caption: format!(
            "One row per CPU, {} bins per decade of latency; colour is the number of samples \
             (log scale), white none. The dashed line is the threshold. Samples beyond the \
             histogram's range are in the last column.",
            BINS_PER_DECADE
        ),
    })
}

/// The worst case and the tail of each CPU, sorted by CPU: an outlier CPU stands out.
fn per_cpu_chart(threads: &[&ThreadResult], thr: u64, title: &str) -> Chart {
    let x = |i: usize, t: &ThreadResult| t.cpu.map_or(i as f64, f64::from);
    let series = |name: &str, color: usize, f: &dyn Fn(&ThreadResult) -> Option<u64>| Series {
        name: name.into(),
        style: SeriesStyle::Points,
        color,
        points: threads
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((x(i, t), f(t)? as f64 / 1e3)))
            .collect(),
    };
    Chart {
        id: "per-cpu".into(),
        title: format!("{title}: worst case and tail per CPU"),
        x_label: "CPU".into(),
        y_label: "latency (µs, log scale)".into(),
        y_scale: Scale::Log,
        series: vec![
            series("max", 8, &|t| max_ns(t)),
            series("p99.9", 0, &|t| pct(t, t.stats.p999_ns)),
            series("p99", 2, &|t| pct(t, t.stats.p99_ns)),
        ],
        markers: Vec::new(),
        y_markers: vec![Marker {
            x: thr as f64 / 1e3,
            label: format!("threshold {}", fmt_ns(thr)),
        }],
        caption: "One column of points per CPU, in CPU order: the maximum, p99.9 and p99.".into(),
    }
}

/// A time-axis step (seconds) that gives at most ~8 ticks.
fn time_step(secs: u64) -> u64 {
    const STEPS: [u64; 17] =
        [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14_400, 21_600, 43_200];
    STEPS.iter().copied().find(|s| secs / s <= 8).unwrap_or_else(|| secs.div_ceil(8))
}

/// Maximum per second (per series step) per CPU: time on x (downsampled by maximum to at
/// most `HEATMAP_COLUMNS` columns), colour the maximum (log), breaches red. `step` is the
/// result's seconds per series point.
pub fn series_heatmap(
    threads: &[&ThreadResult],
    rows: Vec<u32>,
    step: u64,
    thr: u64,
    title: &str,
    max_points: usize,
) -> Option<Heatmap> {
    let step = step.max(1);
    let points = threads.iter().map(|t| t.per_second_max_ns.len()).max().filter(|s| *s > 0)?;
    let cols_max = HEATMAP_COLUMNS.min(max_points.max(10));
    let per = points.div_ceil(cols_max).max(1);
    let cols = points.div_ceil(per);
    let col_secs = (per as u64).saturating_mul(step);
    let secs = (points as u64).saturating_mul(step);
    let cells = threads
        .iter()
        .map(|t| {
            let (pts, _) = downsample_max(&t.per_second_max_ns, cols);
            let mut row: Vec<f64> = pts.iter().map(|(_, us)| *us).collect();
            row.resize(cols, 0.0);
            row
        })
        .collect();
    let tick = usize::try_from(time_step(secs)).unwrap_or(usize::MAX);
    let x_ticks = (0..=secs)
        .step_by(tick.max(1))
        .map(|t| (t as f64 / col_secs as f64, fmt_duration_s(t)))
        .collect();
    Some(Heatmap {
        id: "series-map".into(),
        title: format!("{title}: {} per CPU", max_per(step)),
        x_label: "time since start".into(),
        rows,
        x_ticks,
        cells,
        value_label: "max (µs, log)".into(),
        threshold: Some(thr as f64 / 1e3),
        x_marker: None,
        caption: if col_secs > 1 {
            format!(
                "One row per CPU; each column is the maximum of {}, so no spike is \
                 lost. Red: at or above the threshold ({}).",
                fmt_step(col_secs),
                fmt_ns(thr)
            )
        } else {
            format!(
                "One row per CPU, one column per second. Red: at or above the threshold ({}).",
                fmt_ns(thr)
            )
        },
    })
}

/// Rows of the "worst CPUs" table shown first when there are many CPUs.
const WORST_ROWS: usize = 16;

/// Above this many CPUs the per-CPU overlays are a tangle: draw heat maps instead.
pub const MANY_CPUS: usize = 8;

/// A few CPUs: OSADL-style histograms (one line per CPU) and the per-second max series.
fn overlay_blocks(
    blocks: &mut Vec<Block>,
    r: &LatencyResult,
    threads: &[&ThreadResult],
    thr: u64,
    title: &str,
    ctx: &Ctx<'_>,
) {
    // Histograms: linear x up to the worst max, log y, one line per CPU.
    let with_hist: Vec<&ThreadResult> =
        threads.iter().copied().filter(|t| !t.histogram.buckets.is_empty()).collect();
    if with_hist.is_empty() {
        blocks.push(Block::Note(Note {
            verdict: Verdict::Info,
            text: "No histogram in this result (imported summary only): table above only.".into(),
        }));
    } else {
        let x_max = with_hist
            .iter()
            .filter_map(|t| max_ns(t).or_else(|| t.histogram.buckets.last().map(|b| b.hi_ns)))
            .max()
            .unwrap_or(1)
            .max(thr.min(
                with_hist.iter().filter_map(|t| max_ns(t)).max().unwrap_or(0).saturating_mul(2),
            ))
            .max(1);
        let nbins = ctx.opts.max_points.clamp(10, 1000);
        let overflow: u64 =
            with_hist.iter().fold(0u64, |a, t| a.saturating_add(t.histogram.overflow));
        let body = with_hist
            .iter()
            .filter_map(|t| pct(t, t.stats.p999_ns))
            .max()
            .unwrap_or(0)
            .max(500)
            .saturating_mul(2);
        let hist_chart = |id: &str, title: String, x_max: u64, caption: String| Chart {
            id: id.into(),
            title,
            x_label: "latency (µs)".into(),
            y_label: "samples (log scale)".into(),
            y_scale: Scale::Log,
            series: with_hist
                .iter()
                .enumerate()
                .map(|(i, t)| Series {
                    name: cpu_name(r, t),
                    style: SeriesStyle::Steps,
                    // a pinned thread keeps its CPU's colour in every chart; unpinned
                    // (imported) threads get one each
                    color: t.cpu.map_or(i, |c| c as usize),
                    points: bin_histogram(&t.histogram.buckets, x_max, nbins),
                })
                .collect(),
            markers: if thr <= x_max {
                vec![Marker { x: thr as f64 / 1e3, label: format!("threshold {}", fmt_ns(thr)) }]
            } else {
                Vec::new()
            },
            y_markers: Vec::new(),
            caption: format!(
                "Bins of {}. {caption}",
                fmt_ns(nice_width(x_max.div_ceil(nbins as u64)))
            ),
        };
        blocks.push(Block::Chart(hist_chart(
            "hist",
            format!("{title} histogram per CPU"),
            x_max,
            format!(
                "Linear x to the worst case, log y (OSADL style): a single rare sample stays visible.{}",
                if overflow > 0 { format!(" {} samples beyond the histogram's range are not drawn (they count in max).", fmt_count(overflow)) } else { String::new() }
            ),
        )));
        if x_max / 8 > body {
            blocks.push(Block::Chart(hist_chart(
                "body",
                format!("{title} histogram per CPU, up to {} (2 × p99.9)", fmt_ns(body)),
                body,
                "The same data zoomed on the body of the distribution; the tail is in the chart above.".into(),
            )));
        }
    }

    // Per-second max series.
    let series: Vec<&ThreadResult> =
        threads.iter().copied().filter(|t| !t.per_second_max_ns.is_empty()).collect();
    if !series.is_empty() {
        let step = r.series_step();
        let span = series.iter().map(|t| t.per_second_max_ns.len()).max().unwrap_or(0) as u64;
        let (unit, unit_name) = time_unit(span.saturating_mul(step));
        let mut per = step;
        let chart_series = series
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let (points, p) =
                    time_points(&t.per_second_max_ns, step, ctx.opts.max_points, unit);
                per = per.max(p);
                Series {
                    name: cpu_name(r, t),
                    style: SeriesStyle::Line,
                    color: t.cpu.map_or(i, |c| c as usize),
                    points,
                }
            })
            .collect();
        blocks.push(Block::Chart(Chart {
            id: "series".into(),
            title: format!("{title}: {}", max_per(step)),
            x_label: format!("time since start ({unit_name})"),
            y_label: "max latency (µs, log scale)".into(),
            y_scale: Scale::Log,
            series: chart_series,
            markers: Vec::new(),
            y_markers: vec![Marker {
                x: thr as f64 / 1e3,
                label: format!("threshold {}", fmt_ns(thr)),
            }],
            caption: if per > step {
                format!(
                    "Downsampled: each point is the maximum of {}, so no spike is lost.",
                    fmt_step(per)
                )
            } else if step > 1 {
                format!(
                    "One point per {} (the result's series step): each is the maximum of its \
                     seconds, so no spike is lost.",
                    fmt_step(step)
                )
            } else {
                "One point per second: when did the spikes happen?".into()
            },
        }));
    }
}

/// The envelope whose run conditions say the policy that ran (an older result that recorded
/// only the request gets `policy` = what ran and `requested_policy` = what it asked for).
fn ran_conditions(r: &LatencyResult, ran: Option<util::sched::Policy>) -> results::Envelope {
    let mut env = r.envelope.clone();
    let asked = env.params.latency().and_then(|p| p.policy);
    if let (Some(ran), Some(asked)) = (ran, asked) {
        if asked != ran {
            let p = env.params.latency_mut();
            p.requested_policy = Some(asked);
            p.policy = Some(ran);
            p.priority = None;
        }
    }
    env
}

fn percentile_table(r: &LatencyResult, threads: &[&ThreadResult], thr: u64, noise: bool) -> Table {
    let mut headers: Vec<String> =
        ["CPU", "samples", "min", "avg", "p50", "p99", "p99.9", "p99.99", "max"]
            .map(String::from)
            .to_vec();
    headers.push(if noise { "stddev".into() } else { "overruns".into() });
    headers.push("verdict".into());
    let rows = threads
        .iter()
        .map(|t| {
            let v = match max_ns(t) {
                Some(m) if m >= thr => Verdict::Fail,
                Some(_) if t.overruns > 0 && !noise => Verdict::Warn,
                Some(_) => Verdict::Pass,
                None => Verdict::Skipped,
            };
            let s = &t.stats;
            // Min/avg/max are known without a count too (cyclictest's `# … Latencies` lines).
            let known = t.max_known().then_some(());
            let cpu = t.cpu.map_or_else(|| cpu_name(r, t), |c| c.to_string());
            let mut row = vec![
                Cell::text(cpu),
                Cell::num(if t.count_unknown { "unknown".into() } else { fmt_count(s.count) }),
                Cell::num(fmt_opt_ns(known.map(|()| s.min_ns))),
                Cell::num(fmt_opt_ns(known.map(|()| s.avg_ns))),
                Cell::num(pct_text(t, s.p50_ns)),
                Cell::num(pct_text(t, s.p99_ns)),
                Cell::num(pct_text(t, s.p999_ns)),
                Cell::num(pct_text(t, s.p9999_ns)),
                Cell::num(fmt_opt_ns(max_ns(t))).with_verdict(v),
            ];
            row.push(if noise {
                Cell::num(fmt_opt_ns(pct(t, s.stddev_ns)))
            } else {
                let c = Cell::num(fmt_count(t.overruns));
                if t.overruns > 0 {
                    c.with_verdict(Verdict::Warn)
                } else {
                    c
                }
            });
            row.push(Cell::verdict(v));
            row
        })
        .collect();
    Table { caption: "Per-CPU statistics".into(), headers, rows }
}

/// Noise per CPU with what caused it, when the result carries attribution.
fn attribution_table(threads: &[&ThreadResult], duration_ns: u64, step: u64) -> Option<Table> {
    if threads.iter().all(|t| t.total_noise_ns.is_none() && t.worst_seconds.is_empty()) {
        return None;
    }
    let rows = threads
        .iter()
        .map(|t| {
            let share = match t.total_noise_ns {
                Some(n) if duration_ns > 0 => {
                    format!("{:.4}%", n as f64 * 100.0 / duration_ns as f64)
                }
                _ => "n/a".into(),
            };
            let attributed = if t.worst_seconds.is_empty() {
                "not recorded".to_string()
            } else {
                t.worst_seconds
                    .iter()
                    .take(3)
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            vec![
                Cell::text(t.cpu.map_or("?".into(), |c| c.to_string())),
                Cell::num(fmt_opt_ns(t.total_noise_ns)),
                Cell::num(share),
                Cell::num(fmt_opt_ns(t.per_second_noise_ns.iter().copied().max())),
                Cell::text(attributed),
            ]
        })
        .collect();
    Some(Table {
        caption: "Noise per CPU and its attribution (interrupt, softirq and thread activity seen during the gaps)".into(),
        headers: vec![
            "CPU".into(),
            "total noise".into(),
            "share of run".into(),
            if step > 1 { format!("worst {}", fmt_step(step)) } else { "worst second".into() },
            "attributed to (top sources)".into(),
        ],
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebinning_keeps_counts_and_collapses_empty_runs() {
        let b = [
            Bucket { lo_ns: 1_000, hi_ns: 1_100, count: 10 },
            Bucket { lo_ns: 90_000, hi_ns: 90_100, count: 1 },
        ];
        let p = bin_histogram(&b, 100_000, 100);
        // the last point closes the last bin and repeats its count
        let (bins, close) = p.split_at(p.len() - 1);
        assert_eq!(close, [(100.0, 0.0)]);
        let total: f64 = bins.iter().map(|p| p.1).sum();
        assert_eq!(total, 11.0);
        assert!(p.len() < 10, "{p:?}");
        assert_eq!(bins.last().map(|p| p.0), Some(99.0));
        assert_eq!(p.iter().find(|p| p.1 == 10.0).map(|p| p.0), Some(1.0));
    }

    #[test]
    fn bin_widths_are_round() {
        assert_eq!(nice_width(1), 100);
        assert_eq!(nice_width(105), 200);
        assert_eq!(nice_width(16_700), 20_000);
        assert_eq!(nice_width(5_000), 5_000);
    }

    #[test]
    fn downsampling_keeps_spikes() {
        let mut s = vec![1_000u64; 86_400];
        s[50_000] = 9_000_000;
        let (p, per) = downsample_max(&s, 600);
        assert!(p.len() <= 600);
        assert_eq!(per, 144);
        assert!(p.iter().any(|(_, y)| *y == 9_000.0));
        let (p, per) = downsample_max(&[1, 2, 3], 600);
        assert_eq!((p.len(), per), (3, 1));
    }

    /// A result with 2 min points: the chart's x is in hours, each drawn point names the
    /// seconds it covers, and the heat map's columns and ticks are in whole steps.
    #[test]
    fn a_stepped_series_is_drawn_on_its_own_time_axis() {
        let mut s = vec![1_000u64; 360];
        s[359] = 9_000_000;
        let (unit, name) = time_unit(360 * 120);
        assert_eq!((unit, name), (3600, "h"));
        let (p, per) = time_points(&s, 120, 600, unit);
        assert_eq!((p.len(), per), (360, 120));
        assert_eq!(p[359], (359.0 * 120.0 / 3600.0, 9_000.0));
        let (p, per) = time_points(&s, 120, 100, unit);
        assert_eq!((p.len(), per), (90, 480));
        assert_eq!(p.last().map(|p| p.1), Some(9_000.0));
        assert_eq!(
            (fmt_step(120), fmt_step(15), fmt_step(90), fmt_step(7200)),
            ("2 min".to_string(), "15 s".to_string(), "90 s".to_string(), "2 h".to_string())
        );
        assert_eq!(
            (max_per(1), max_per(60)),
            ("maximum per second".into(), "maximum per 1 min".into())
        );
        let t = ThreadResult { cpu: Some(0), per_second_max_ns: s, ..Default::default() };
        let m = series_heatmap(&[&t], vec![0], 120, 50_000, "OS noise", 2_000).expect("map");
        assert_eq!(m.title, "OS noise: maximum per 2 min per CPU");
        // 360 points in at most 240 columns: 2 points (4 min) a column.
        assert_eq!(m.cells[0].len(), 180);
        assert!(m.caption.contains("maximum of 4 min"), "{}", m.caption);
        let last = m.x_ticks.last().expect("ticks");
        assert_eq!(last, &(180.0, "12h 00m 00s".to_string()));
        assert_eq!(m.cells[0][179], 9_000.0);
    }
}
