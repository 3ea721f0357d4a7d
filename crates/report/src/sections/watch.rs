//! Watch section (`lowlat watch` JSON lines): the watched latency over time (downsampled by
//! maximum), its distribution, errors, and the threads seen in uninterruptible sleep.

use super::Ctx;
use crate::input::{Doc, WatchView};
use crate::model::{
    fmt_count, fmt_ns, Block, Chart, Headline, Scale, Section, Series, SeriesStyle, Verdict,
};

fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted.get(i).copied().unwrap_or(0)
}

/// Build the watch section.
pub fn build(doc: &Doc, ctx: &Ctx<'_>) -> Vec<Section> {
    let v: WatchView = doc.view().unwrap_or_default();
    let what = v.watch.clone().unwrap_or_else(|| "watch".into());
    let title = format!("Watch: {what}");
    if v.samples.is_empty() {
        return vec![Section::new(
            "watch",
            &title,
            vec![Headline::new(Verdict::Warn, format!("{title}: no samples"))],
            Vec::new(),
        )];
    }
    let mut values: Vec<u64> = v.samples.iter().map(|s| s.value_ns).collect();
    values.sort_unstable();
    let errors = v.samples.iter().filter(|s| s.error.is_some()).count();
    let span = v.samples.last().map_or(0, |s| s.t_ns) / 1_000_000_000;
    let mut comms: Vec<String> = v
        .samples
        .iter()
        .flat_map(|s| s.dstate.iter().filter_map(|d| d.get("comm")?.as_str().map(String::from)))
        .collect();
    comms.sort();
    comms.dedup();
    let verdict = if errors > 0 { Verdict::Warn } else { Verdict::Info };
    let headlines = vec![Headline::new(
        verdict,
        format!(
            "{title}: {} samples over {}s, p50 {}, p99 {}, max {}{}",
            fmt_count(v.samples.len() as u64),
            span,
            fmt_ns(quantile(&values, 0.5)),
            fmt_ns(quantile(&values, 0.99)),
            fmt_ns(values.last().copied().unwrap_or(0)),
            if errors > 0 { format!(", {errors} samples failed") } else { String::new() }
        ),
    )];
    // Maximum per bin of whole seconds, at most `max_points` bins (memory bounded whatever the
    // timestamps say).
    let bins = (span as usize + 1).min(ctx.opts.max_points.max(1));
    let per = span.saturating_add(1).div_ceil(bins as u64).max(1);
    let mut maxima: Vec<u64> = vec![0; bins];
    for s in &v.samples {
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
