//! Tick-rate section (`lowlat measure ticks`, the seeds' "pig" test): per-CPU timer-tick and
//! interrupt rates while a spinner runs, judged by the measurement's own verdict per CPU: an
//! isolated `nohz_full` CPU should tick about once a second, not at `CONFIG_HZ`.

use super::ctx::Ctx;
use crate::input::{Body, Doc};
use crate::model::{
    Block, Cell, Chart, Headline, Scale, Section, Series, SeriesStyle, Table, Verdict,
};

/// A verdict from a CPU's verdict text (`ok: …`, `tick NOT stopped …`, `periodic tick: …`).
pub(crate) fn tick_verdict(s: &str) -> Verdict {
    let l = s.to_ascii_lowercase();
    if l.starts_with("ok") || l == "pass" {
        Verdict::Pass
    } else if l.contains("not stopped") || l.starts_with("warn") {
        Verdict::Warn
    } else if l.starts_with("fail") {
        Verdict::Fail
    } else {
        Verdict::Info
    }
}

/// `(name, rate)` pairs as `LOC 250, 36:virtio 600` (largest three).
fn top_rates(rates: &[(String, f64)]) -> String {
    let mut items: Vec<&(String, f64)> = rates.iter().collect();
    items.sort_by(|a, b| b.1.total_cmp(&a.1));
    items.iter().take(3).map(|(n, r)| format!("{n} {r:.0}")).collect::<Vec<_>>().join(", ")
}

fn rate(f: f64) -> String {
    if f.fract() == 0.0 {
        format!("{f:.0}")
    } else {
        format!("{f:.1}")
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Build the ticks section.
pub fn build(doc: &Doc, _ctx: &Ctx<'_>) -> Vec<Section> {
    let Body::Ticks(r) = &doc.body else { return Vec::new() };
    if r.cpus.is_empty() {
        return vec![Section::new(
            "ticks",
            "Timer ticks",
            vec![Headline::new(
                Verdict::Warn,
                format!("Timer ticks: no per-CPU rows in {}", doc.source),
            )],
            Vec::new(),
        )];
    }
    let mut worst = Verdict::Info;
    let mut ticking = Vec::new();
    let mut points = Vec::new();
    let rows = r
        .cpus
        .iter()
        .map(|c| {
            let v = tick_verdict(&c.verdict);
            points.push((f64::from(c.cpu), c.loc_per_s));
            if v >= Verdict::Warn {
                ticking.push(format!("CPU {} {:.0}/s", c.cpu, c.loc_per_s));
            }
            worst = worst.max(v);
            vec![
                Cell::text(c.cpu.to_string()),
                Cell::text(yes_no(c.nohz_full)),
                Cell::text(yes_no(c.isolated)),
                Cell::num(rate(c.loc_per_s)),
                Cell::text(c.expected.clone()),
                Cell::text(top_rates(&c.rates)),
                Cell::text(c.verdict.clone()).with_verdict(v),
            ]
        })
        .collect();
    let n = r.cpus.len();
    let text = if !ticking.is_empty() {
        format!("Timer ticks: still ticking on nohz_full CPUs: {}", ticking.join(", "))
    } else if worst == Verdict::Pass {
        "Timer ticks: tickless CPUs tick at most 10 times a second".to_string()
    } else {
        format!("Timer ticks measured on {n} CPU{}", if n == 1 { "" } else { "s" })
    };
    let mut blocks = vec![Block::Table(Table {
        caption: "Per-CPU rates while a spinner runs".into(),
        headers: [
            "CPU",
            "nohz_full",
            "isolated",
            "LOC per second",
            "expected",
            "top interrupts per second",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })];
    for n in &r.notes {
        blocks.push(Block::Note(crate::model::Note { verdict: Verdict::Warn, text: n.clone() }));
    }
    blocks.push(Block::Chart(Chart {
        id: "rate".into(),
        title: "Local timer interrupts (LOC) per CPU".into(),
        x_label: "CPU".into(),
        y_label: "ticks per second (log scale)".into(),
        y_scale: Scale::Log,
        series: vec![Series {
            name: "LOC per second".into(),
            style: SeriesStyle::Points,
            color: 0,
            points,
        }],
        markers: Vec::new(),
        y_markers: Vec::new(),
        caption: "A nohz_full CPU running one task should show ~1 tick/s; CONFIG_HZ (100–1000/s) means the tick is still on.".into(),
    }));
    blocks.push(super::ctx::run_conditions(&doc.source, &r.envelope, None));
    vec![Section::new("ticks", "Timer ticks", vec![Headline::new(worst, text)], blocks)]
}
