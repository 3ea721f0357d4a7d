//! Before/after comparison (`lowlat report --compare BEFORE… --vs AFTER…`): the context that
//! changed, per-kind delta tables and overlays (before dashed, after solid, same colour per
//! CPU), with a headline per kind. Each side is first judged on its own, with the single
//! report's rules and its evidence rule (`sections::judge`): the headline is PASS only when
//! the after side passes on its own and did not get worse; two failing sides say "both fail"
//! ("improved but still fails" when the number went down), an after side without evidence
//! (partial, failed, newer schema, nothing measured) is never a pass. Sides measured at
//! different resolutions (oslat's 1 µs buckets against lowlat's 100 ns) say so, and
//! differences inside the coarser resolution are not coloured.

use std::collections::BTreeMap;

use results::{Bucket, ThreadResult};
use verify::Status;

use crate::input::{Body, Doc, Kind};
use crate::model::{
    fmt_delta_ns, fmt_ns, fmt_opt_ns, Block, Cell, Chart, Headline, Note, Report, Scale, Section,
    Series, SeriesStyle, Table, Verdict,
};
use crate::sections::latency::{max_ns, pct};
use crate::sections::{self, bin_histogram, Judged, Options};

type Threads<'a> = BTreeMap<usize, &'a ThreadResult>;

/// How the threads of the two sides are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pairing {
    /// By the CPU each thread ran on (every thread on both sides says it).
    Cpu,
    /// By the thread's place in its side's results (imports of cyclictest's text do not say
    /// the CPU): thread 0 with thread 0, …
    Index,
}

impl Pairing {
    /// `CPU 3` / `thread 0`.
    fn label(self, key: usize) -> String {
        match self {
            Pairing::Cpu => format!("CPU {key}"),
            Pairing::Index => format!("thread {key}"),
        }
    }

    /// The table column and chart axis.
    fn column(self) -> &'static str {
        match self {
            Pairing::Cpu => "CPU",
            Pairing::Index => "thread",
        }
    }
}

/// The threads of every latency result of `kind` on one side, in order.
fn all_threads(docs: &[Doc], kind: results::Kind) -> Vec<&ThreadResult> {
    docs.iter()
        .filter(|d| d.kind == Kind::Result(kind))
        .filter_map(|d| match &d.body {
            Body::Latency(r) => Some(r.threads.iter()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The threads of one side keyed by CPU (a later document wins) or by their place.
fn threads<'a>(side: &[&'a ThreadResult], pairing: Pairing) -> Threads<'a> {
    match pairing {
        Pairing::Cpu => side.iter().filter_map(|t| Some((t.cpu? as usize, *t))).collect(),
        Pairing::Index => side.iter().copied().enumerate().collect(),
    }
}

/// The average latency of a thread, `None` when it took no samples.
fn avg_ns(t: &ThreadResult) -> Option<u64> {
    (t.stats.count > 0).then_some(t.stats.avg_ns)
}

/// Whether `after` is worse than `before` by more than measurement noise (2%).
fn worse(before: u64, after: u64) -> bool {
    after as f64 > before as f64 * 1.02
}

/// The colour of a change: better by more than 2% passes, worse by more than 2% warns, within
/// 2% or within the coarser resolution `res_ns` of the two sides it is not coloured (a value
/// that got worse is never green).
fn judge_delta(before: u64, after: u64, res_ns: u64) -> Verdict {
    if before.abs_diff(after) < res_ns {
        Verdict::Info
    } else if worse(before, after) {
        Verdict::Warn
    } else if (after as f64) < before as f64 * 0.98 {
        Verdict::Pass
    } else {
        Verdict::Info
    }
}

fn delta_cell(before: Option<u64>, after: Option<u64>, res_ns: u64) -> Cell {
    match (before, after) {
        (Some(b), Some(a)) if b.abs_diff(a) < res_ns => {
            Cell::num(format!("{} (within {} resolution)", fmt_delta_ns(b, a), fmt_ns(res_ns)))
        }
        (Some(b), Some(a)) => Cell::num(fmt_delta_ns(b, a)).with_verdict(judge_delta(b, a, res_ns)),
        _ => Cell::num("n/a"),
    }
}

/// The headline of one kind compared: each side judged on its own first, then the change
/// (`change`: `worst 9.42 ms → 3.96 ms (−58%)`, of the numbers `before` → `after`: better or
/// worse beyond 2%).
fn headline(
    what: &str,
    change: &str,
    b: Option<&Judged>,
    a: Option<&Judged>,
    (before, after): (u64, u64),
) -> Headline {
    let got_worse = worse(before, after);
    let improved = (after as f64) < before as f64 * 0.98;
    let not_judged = |j: Option<&Judged>| match j {
        Some(j) if !j.no_pass.is_empty() => Some(j.no_pass.join("; ")),
        Some(_) => None,
        None => Some("no result".into()),
    };
    let verdict = |j: Option<&Judged>| j.map_or(Verdict::Info, |j| j.verdict);
    let (vb, va) = (verdict(b), verdict(a));
    if va == Verdict::Fail && vb == Verdict::Fail {
        let how = if got_worse {
            "worse, and still fails"
        } else if improved {
            "improved but still fails"
        } else {
            "unchanged: still fails"
        };
        return Headline::new(Verdict::Fail, format!("{what}: both fail — {change}: {how}"));
    }
    if va == Verdict::Fail {
        return Headline::new(Verdict::Fail, format!("{what}: the after side fails — {change}"));
    }
    if let Some(why) = not_judged(a) {
        return Headline::new(
            Verdict::Warn,
            format!("{what}: {change}; not a pass: the after side cannot be judged ({why})"),
        );
    }
    if let Some(why) = not_judged(b) {
        return Headline::new(
            Verdict::Warn,
            format!(
                "{what}: {change}; the after side {} on its own, but the before side cannot be judged ({why}): no comparison",
                va.label()
            ),
        );
    }
    if va != Verdict::Pass {
        return Headline::new(
            va.max(Verdict::Warn),
            format!("{what}: {change}; the after side is {} on its own", va.label()),
        );
    }
    if got_worse {
        return Headline::new(
            Verdict::Warn,
            format!("{what}: {change}: worse, though the after side passes on its own"),
        );
    }
    let fixed = if vb == Verdict::Fail { ": fixed (failed before, passes after)" } else { "" };
    Headline::new(Verdict::Pass, format!("{what}: {change}{fixed}"))
}

/// The finest histogram bucket width a side recorded (`None`: no histogram): cyclictest and
/// oslat count in 1 µs buckets, lowlat's own histogram in 100 ns at the low end.
fn resolution(threads: &[&ThreadResult]) -> Option<u64> {
    threads
        .iter()
        .flat_map(|t| t.histogram.buckets.iter())
        .filter(|b| b.count > 0)
        .map(|b| b.hi_ns.saturating_sub(b.lo_ns))
        .filter(|w| *w > 0)
        .min()
}

fn latency_section(
    kind: results::Kind,
    before: &[Doc],
    after: &[Doc],
    opts: &Options,
) -> Option<Section> {
    let (sb, sa) = (all_threads(before, kind), all_threads(after, kind));
    let pairing =
        if sb.iter().chain(&sa).all(|t| t.cpu.is_some()) { Pairing::Cpu } else { Pairing::Index };
    let (b, a) = (threads(&sb, pairing), threads(&sa, pairing));
    if b.is_empty() || a.is_empty() {
        return None;
    }
    let title = if kind == results::Kind::Noise { "OS noise" } else { "Timer latency" };
    let worst = |m: &Threads<'_>| m.values().filter_map(|t| max_ns(t)).max().unwrap_or(0);
    let (wb, wa) = (worst(&b), worst(&a));
    let cpus: Vec<usize> = b.keys().filter(|c| a.contains_key(c)).copied().collect();
    let improved: Vec<(usize, i128)> = cpus
        .iter()
        .filter_map(|c| Some((*c, max_ns(b.get(c)?)? as i128 - max_ns(a.get(c)?)? as i128)))
        .collect();
    let better = improved.iter().filter(|(_, d)| *d > 0).count();
    let kinds = [Kind::Result(kind)];
    let (jb, ja) = (sections::judge(before, &kinds, opts), sections::judge(after, &kinds, opts));
    let (rb, ra) = (resolution(&sb), resolution(&sa));
    let res = match (rb, ra) {
        (Some(x), Some(y)) => x.max(y),
        _ => 1,
    };
    let change = format!("worst case {} → {} ({})", fmt_ns(wb), fmt_ns(wa), fmt_delta_ns(wb, wa));
    let mut headlines = vec![headline(title, &change, jb.as_ref(), ja.as_ref(), (wb, wa))];
    let resolution_note = match (rb, ra) {
        (Some(x), Some(y)) if x != y => Some(format!(
            "resolution differs ({} vs {}): bands below {} not comparable",
            fmt_ns(x),
            fmt_ns(y),
            fmt_ns(x.max(y))
        )),
        _ => None,
    };
    if let Some(n) = &resolution_note {
        headlines.push(Headline::new(Verdict::Warn, format!("{title}: {n}")));
    }
    if let Some((cpu, d)) = improved.iter().max_by_key(|(_, d)| *d) {
        if *d > 0 {
            let mean =
                improved.iter().map(|(_, d)| *d as f64).sum::<f64>() / improved.len().max(1) as f64;
            headlines.push(Headline::new(
                Verdict::Info,
                format!(
                    "{title}: max improved on {better} of {} {}s; most on {} ({} better), {} better on average",
                    cpus.len(),
                    pairing.column(),
                    pairing.label(*cpu),
                    fmt_ns(*d as u64),
                    fmt_ns(mean.max(0.0) as u64)
                ),
            ));
        }
    }
    let rows = cpus
        .iter()
        .filter_map(|c| {
            let (tb, ta) = (b.get(c)?, a.get(c)?);
            Some(vec![
                Cell::text(match pairing {
                    Pairing::Cpu => c.to_string(),
                    Pairing::Index => pairing.label(*c),
                }),
                Cell::num(fmt_opt_ns(avg_ns(tb))),
                Cell::num(fmt_opt_ns(avg_ns(ta))),
                delta_cell(avg_ns(tb), avg_ns(ta), res),
                Cell::num(fmt_opt_ns(pct(tb, tb.stats.p99_ns))),
                Cell::num(fmt_opt_ns(pct(ta, ta.stats.p99_ns))),
                delta_cell(pct(tb, tb.stats.p99_ns), pct(ta, ta.stats.p99_ns), res),
                Cell::num(fmt_opt_ns(max_ns(tb))),
                Cell::num(fmt_opt_ns(max_ns(ta))),
                delta_cell(max_ns(tb), max_ns(ta), res),
            ])
        })
        .collect();
    let mut blocks = Vec::new();
    if let Some(n) = resolution_note {
        blocks.push(Block::Note(Note {
            verdict: Verdict::Warn,
            text: format!(
                "The two sides' histograms have different resolutions: {n}; differences smaller than {} are not coloured.",
                fmt_ns(res)
            ),
        }));
    }
    if pairing == Pairing::Index {
        blocks.push(Block::Note(Note {
            verdict: Verdict::Info,
            text: format!(
                "Threads paired by their order (thread 0 before with thread 0 after, …): {}",
                "not every result says which CPU its threads ran on (imports of cyclictest's text do not)"
            ),
        }));
    }
    blocks.push(Block::Table(Table {
        caption: format!("Per-{} before → after (negative delta = better)", pairing.column()),
        headers: [
            pairing.column(),
            "avg before",
            "avg after",
            "Δ avg",
            "p99 before",
            "p99 after",
            "Δ p99",
            "max before",
            "max after",
            "Δ max",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }));

    // Overlay: per-CPU maxima (always available; a line needs two CPUs — with one, the
    // table above says it and an empty chart would not), then histograms when both sides
    // have them.
    let max_points = |m: &Threads<'_>| -> Vec<(f64, f64)> {
        cpus.iter().filter_map(|c| Some((*c as f64, max_ns(m.get(c)?)? as f64 / 1e3))).collect()
    };
    if cpus.len() >= 2 {
        blocks.push(Block::Chart(Chart {
            id: "max".into(),
            title: format!("{title}: maximum per {}, before and after", pairing.column()),
            x_label: pairing.column().into(),
            y_label: "max latency (µs)".into(),
            y_scale: Scale::Linear,
            series: vec![
                Series {
                    name: "before".into(),
                    style: SeriesStyle::Dashed,
                    color: 1,
                    points: max_points(&b),
                },
                Series {
                    name: "after".into(),
                    style: SeriesStyle::Line,
                    color: 0,
                    points: max_points(&a),
                },
            ],
            markers: Vec::new(),
            y_markers: Vec::new(),
            caption: "Lower is better. The worst case is the headline number of a latency run."
                .into(),
        }));
    }
    let has_hist = |m: &Threads<'_>| m.values().any(|t| !t.histogram.buckets.is_empty());
    if has_hist(&b) && has_hist(&a) {
        let x_max = wb.max(wa).max(1);
        let nbins = opts.max_points.clamp(10, 1000);
        let per_cpu = cpus.len() <= 2;
        let mut series = Vec::new();
        let merged = |m: &Threads<'_>| -> Vec<Bucket> {
            m.values().flat_map(|t| t.histogram.buckets.iter().copied()).collect()
        };
        if per_cpu {
            for c in &cpus {
                for (side, m, style) in
                    [("before", &b, SeriesStyle::DashedSteps), ("after", &a, SeriesStyle::Steps)]
                {
                    if let Some(t) = m.get(c).filter(|t| !t.histogram.buckets.is_empty()) {
                        series.push(Series {
                            name: format!("{} {side}", pairing.label(*c)),
                            style,
                            color: *c,
                            points: bin_histogram(&t.histogram.buckets, x_max, nbins),
                        });
                    }
                }
            }
        } else {
            series.push(Series {
                name: format!("all {}s before", pairing.column()),
                style: SeriesStyle::DashedSteps,
                color: 1,
                points: bin_histogram(&merged(&b), x_max, nbins),
            });
            series.push(Series {
                name: format!("all {}s after", pairing.column()),
                style: SeriesStyle::Steps,
                color: 0,
                points: bin_histogram(&merged(&a), x_max, nbins),
            });
        }
        blocks.push(Block::Chart(Chart {
            id: "hist".into(),
            title: format!("{title} histogram, before (dashed) and after (solid)"),
            x_label: "latency (µs)".into(),
            y_label: "samples (log scale)".into(),
            y_scale: Scale::Log,
            series,
            markers: Vec::new(),
            y_markers: Vec::new(),
            caption: if per_cpu {
                format!("Same colour = same {}.", pairing.column())
            } else {
                format!("All measured {}s merged.", pairing.column())
            },
        }));
    }
    Some(Section::new(kind.as_str(), &format!("{title}: before vs after"), headlines, blocks))
}

/// `loc_per_s` per CPU of the ticks results on one side.
fn tick_rates(docs: &[Doc]) -> BTreeMap<u32, f64> {
    let mut out = BTreeMap::new();
    for d in docs {
        if let Body::Ticks(r) = &d.body {
            out.extend(r.cpus.iter().map(|c| (c.cpu, c.loc_per_s)));
        }
    }
    out
}

fn ticks_section(before: &[Doc], after: &[Doc]) -> Option<Section> {
    let (b, a) = (tick_rates(before), tick_rates(after));
    let cpus: Vec<u32> = b.keys().filter(|c| a.contains_key(c)).copied().collect();
    if cpus.is_empty() {
        return None;
    }
    let stopped = cpus
        .iter()
        .filter(|c| b.get(c).is_some_and(|x| *x > 10.0) && a.get(c).is_some_and(|y| *y <= 2.0))
        .count();
    let rows = cpus
        .iter()
        .filter_map(|c| {
            let (x, y) = (b.get(c)?, a.get(c)?);
            let v = if y <= x || *y <= 2.0 { Verdict::Pass } else { Verdict::Warn };
            Some(vec![
                Cell::text(c.to_string()),
                Cell::num(format!("{x:.1}")),
                Cell::num(format!("{y:.1}")),
                Cell::num(format!("{:+.1}", y - x)).with_verdict(v),
            ])
        })
        .collect();
    Some(Section::new(
        "ticks",
        "Timer ticks: before vs after",
        vec![Headline::new(
            Verdict::Info,
            format!("Timer ticks: the tick stopped on {stopped} of {} CPUs", cpus.len()),
        )],
        vec![Block::Table(Table {
            caption: "LOC (local timer) interrupts per second with a spinner on the CPU".into(),
            headers: ["CPU", "before /s", "after /s", "Δ"].map(String::from).to_vec(),
            rows,
        })],
    ))
}

fn fsync_section(before: &[Doc], after: &[Doc], opts: &Options) -> Option<Section> {
    fn get(docs: &[Doc]) -> Option<&results::fsync::FsyncResult> {
        docs.iter().find_map(|d| match &d.body {
            Body::Fsync(r) => Some(&**r),
            _ => None,
        })
    }
    let (b, a) = (get(before)?, get(after)?);
    let (lb, la) = (b.lat_ns, a.lat_ns);
    let kinds = [Kind::Result(results::Kind::Fsync)];
    let (jb, ja) = (sections::judge(before, &kinds, opts), sections::judge(after, &kinds, opts));
    let change =
        format!("{} → {} ({})", fmt_ns(lb.p99), fmt_ns(la.p99), fmt_delta_ns(lb.p99, la.p99));
    let headlines =
        vec![headline("fsync p99", &change, jb.as_ref(), ja.as_ref(), (lb.p99, la.p99))];
    let row = |name: &str, x: u64, y: u64| {
        vec![
            Cell::text(name),
            Cell::num(fmt_ns(x)),
            Cell::num(fmt_ns(y)),
            delta_cell(Some(x), Some(y), 1),
        ]
    };
    let rows = vec![
        row("p50", lb.p50, la.p50),
        row("p99", lb.p99, la.p99),
        row("p99.9", lb.p999, la.p999),
        row("max", lb.max, la.max),
        vec![
            Cell::text("IOPS"),
            Cell::num(format!("{:.0}", b.iops)),
            Cell::num(format!("{:.0}", a.iops)),
            Cell::num("higher is better"),
        ],
    ];
    Some(Section::new(
        "fsync",
        "fsync latency: before vs after",
        headlines,
        vec![Block::Table(Table {
            caption: "write + fdatasync".into(),
            headers: ["", "before", "after", "Δ"].map(String::from).to_vec(),
            rows,
        })],
    ))
}

fn verify_section(before: &[Doc], after: &[Doc]) -> Option<Section> {
    fn get(docs: &[Doc]) -> Option<&verify::Report> {
        docs.iter().find_map(|d| match &d.body {
            Body::Verify(r) => Some(&**r),
            _ => None,
        })
    }
    let (b, a) = (get(before)?, get(after)?);
    let fails = |v: &verify::Report| v.checks.iter().filter(|c| c.status == Status::Fail).count();
    let (fb, fa) = (fails(b), fails(a));
    let verdict = if fa == 0 {
        Verdict::Pass
    } else if fa <= fb {
        Verdict::Warn
    } else {
        Verdict::Fail
    };
    let before_status: BTreeMap<&str, Status> =
        b.checks.iter().map(|c| (c.id.as_str(), c.status)).collect();
    let rows: Vec<Vec<Cell>> = a
        .checks
        .iter()
        .filter(|c| before_status.get(c.id.as_str()) != Some(&c.status))
        .map(|c| {
            let old = match before_status.get(c.id.as_str()) {
                Some(s) => Cell::text(s.as_str()).with_verdict(sections::verify::verdict(*s)),
                None => Cell::text("absent").with_verdict(Verdict::Info),
            };
            vec![
                Cell::text(c.id.clone()),
                old,
                Cell::text(c.status.as_str()).with_verdict(sections::verify::verdict(c.status)),
            ]
        })
        .collect();
    let mut blocks = Vec::new();
    if rows.is_empty() {
        blocks.push(Block::Paragraph { text: "No check changed status.".into() });
    } else {
        blocks.push(Block::Table(Table {
            caption: "Checks whose status changed".into(),
            headers: ["check", "before", "after"].map(String::from).to_vec(),
            rows,
        }));
    }
    Some(Section::new(
        "verify",
        "Verify: before vs after",
        vec![Headline::new(verdict, format!("Verify: {fb} failing before, {fa} after"))],
        blocks,
    ))
}

/// Context rows of both sides; a row that differs shows `before → after`.
fn context(before: &[(String, String)], after: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, vb) in before {
        match after.iter().find(|(ka, _)| ka == k) {
            Some((_, va)) if va == vb => out.push((k.clone(), vb.clone())),
            Some((_, va)) => {
                out.push((format!("{k} (changed)"), format!("before: {vb}\nafter: {va}")))
            }
            None => out.push((k.clone(), format!("before: {vb}\nafter: unknown"))),
        }
    }
    for (k, va) in after {
        if !before.iter().any(|(kb, _)| kb == k) {
            out.push((k.clone(), format!("before: unknown\nafter: {va}")));
        }
    }
    out
}

/// Build the comparison report.
pub fn build(before: &[Doc], after: &[Doc], opts: &Options) -> Report {
    let rb = sections::build(before, opts);
    let ra = sections::build(after, opts);
    let mut out = Vec::new();
    for kind in [results::Kind::Timer, results::Kind::Noise] {
        out.extend(latency_section(kind, before, after, opts));
    }
    out.extend(ticks_section(before, after));
    out.extend(fsync_section(before, after, opts));
    out.extend(verify_section(before, after));
    let mut banners: Vec<Note> = Vec::new();
    for b in rb.banners.iter().chain(ra.banners.iter()) {
        if !banners.contains(b) {
            banners.push(b.clone());
        }
    }
    let kinds =
        |d: &[Doc]| d.iter().map(|d| d.kind.to_string()).collect::<std::collections::BTreeSet<_>>();
    let (kb, ka) = (kinds(before), kinds(after));
    for k in kb.symmetric_difference(&ka) {
        banners.push(Note {
            verdict: Verdict::Info,
            text: format!("\"{k}\" results exist on one side only; not compared."),
        });
    }
    if out.is_empty() {
        banners.push(Note {
            verdict: Verdict::Warn,
            text: "No result kind is present on both sides: nothing to compare.".into(),
        });
    }
    let mut headlines: Vec<Headline> =
        out.iter().flat_map(|s| s.headlines.iter().cloned()).collect();
    headlines.sort_by_key(|h| std::cmp::Reverse(h.verdict));
    let mut inputs: Vec<(String, String)> =
        rb.inputs.iter().map(|(p, k)| (format!("before: {p}"), k.clone())).collect();
    inputs.extend(ra.inputs.iter().map(|(p, k)| (format!("after: {p}"), k.clone())));
    Report {
        title: format!("{}: before vs after", opts.title),
        generator: opts.generator.clone(),
        verdict: sections::overall(&out),
        headlines,
        banners,
        context: context(&rb.context, &ra.context),
        sections: out,
        inputs,
        next: opts.next.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_that_got_worse_is_never_green_and_resolution_hides_nothing() {
        assert_eq!(judge_delta(100_000, 101_000, 1), Verdict::Info, "worse within 2%: not green");
        assert_eq!(judge_delta(100_000, 150_000, 1), Verdict::Warn);
        assert_eq!(judge_delta(100_000, 50_000, 1), Verdict::Pass);
        assert_eq!(judge_delta(1_000, 1_900, 1_000), Verdict::Info, "inside 1 µs buckets");
        let c = delta_cell(Some(1_000), Some(1_900), 1_000);
        assert!(c.text.contains("within 1.00 µs resolution"), "{c:?}");
    }

    #[test]
    fn two_failing_sides_are_never_a_pass() {
        let fail = Judged { verdict: Verdict::Fail, no_pass: Vec::new() };
        let pass = Judged { verdict: Verdict::Pass, no_pass: Vec::new() };
        let partial = Judged { verdict: Verdict::Warn, no_pass: vec!["a: partial".into()] };
        let h = headline("T", "x", Some(&fail), Some(&fail), (9_420_000, 3_960_000));
        assert_eq!(h.verdict, Verdict::Fail);
        assert!(
            h.text.contains("both fail") && h.text.contains("improved but still fails"),
            "{}",
            h.text
        );
        let h = headline("T", "x", Some(&fail), Some(&fail), (100, 300));
        assert!(h.text.contains("worse, and still fails"), "{}", h.text);
        let h = headline("T", "x", Some(&pass), Some(&partial), (100, 50));
        assert_eq!(h.verdict, Verdict::Warn);
        assert!(h.text.contains("after side cannot be judged (a: partial)"), "{}", h.text);
        let h = headline("T", "x", Some(&partial), Some(&pass), (100, 50));
        assert_eq!(h.verdict, Verdict::Warn, "{}", h.text);
        let h = headline("T", "x", Some(&pass), Some(&pass), (100, 300));
        assert_eq!(h.verdict, Verdict::Warn, "worse is not a pass: {}", h.text);
        let h = headline("T", "x", Some(&fail), Some(&pass), (300, 100));
        assert_eq!(h.verdict, Verdict::Pass);
        assert_ne!(headline("T", "x", None, Some(&pass), (0, 1)).verdict, Verdict::Pass);
    }
}
