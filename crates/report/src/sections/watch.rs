//! Watch section (`lowlat watch` JSON lines): the watched latency over time (downsampled by
//! maximum), its distribution, errors, and the threads seen in uninterruptible sleep.

use util::stats::quantile_sorted;

use super::ctx::Ctx;
use crate::input::{Body, Doc};
use crate::model::{
    fmt_count, fmt_ns, Block, Chart, Headline, Scale, Section, Series, SeriesStyle, Verdict,
};

/// Build the watch section.
pub fn build(doc: &Doc, ctx: &Ctx<'_>) -> Vec<Section> {
    let Body::Watch(samples) = &doc.body else { return Vec::new() };
    let what = samples.first().map_or("watch", |s| s.watch.as_str()).to_string();
    let title = format!("Watch: {what}");
    if samples.is_empty() {
        return vec![Section::new(
            "watch",
            &title,
            vec![Headline::new(Verdict::Warn, format!("{title}: no samples"))],
            Vec::new(),
        )];
    }
    let mut values: Vec<u64> = samples.iter().map(|s| s.value_ns).collect();
    values.sort_unstable();
    let errors = samples.iter().filter(|s| s.error.is_some()).count();
    let span = samples.last().map_or(0, |s| s.t_ns) / 1_000_000_000;
    let mut comms: Vec<&str> =
        samples.iter().flat_map(|s| s.dstate.iter().map(|d| d.comm.as_str())).collect();
    comms.sort();
    comms.dedup();
    let verdict = if errors > 0 { Verdict::Warn } else { Verdict::Info };
    let headlines = vec![Headline::new(
        verdict,
        format!(
            "{title}: {} samples over {}s, p50 {}, p99 {}, max {}{}",
            fmt_count(samples.len() as u64),
            span,
            fmt_ns(quantile_sorted(&values, 0.5).unwrap_or(0)),
            fmt_ns(quantile_sorted(&values, 0.99).unwrap_or(0)),
            fmt_ns(values.last().copied().unwrap_or(0)),
            if errors > 0 { format!(", {errors} samples failed") } else { String::new() }
        ),
    )];
    // Maximum per bin of whole seconds, at most `max_points` bins (memory bounded whatever the
    // timestamps say).
    let bins = (span as usize + 1).min(ctx.opts.max_points.max(1));
    let per = span.saturating_add(1).div_ceil(bins as u64).max(1);
    let mut maxima: Vec<u64> = vec![0; bins];
    for s in samples {
        let i = ((s.t_ns / 1_000_000_000) / per).min(bins as u64 - 1) as usize;
        if let Some(slot) = maxima.get_mut(i) {
            *slot = (*slot).max(s.value_ns);
        }
    }
    let points: Vec<(f64, f64)> = maxima
        .iter()
        .enumerate()
        .map(|(i, m)| ((i as u64 * per) as f64, *m as f64 / 1e3))
        .collect();
    let mut blocks = vec![Block::Chart(Chart {
        id: "series".into(),
        title: format!("{title}: latency over time"),
        x_label: "time since start (s)".into(),
        y_label: "latency (µs, log scale)".into(),
        y_scale: Scale::Log,
        series: vec![Series { name: what, style: SeriesStyle::Line, color: 0, points }],
        markers: Vec::new(),
        y_markers: Vec::new(),
        caption: format!("Each point is the maximum of {per} s. A step up that stays is a cliff (e.g. burst credits spent)."),
    })];
    if !comms.is_empty() {
        blocks.push(Block::Facts {
            rows: vec![("threads seen in D state".into(), comms.join(", "))],
        });
    }
    vec![Section::new("watch", &title, headlines, blocks)]
}
