//! Tick-rate section (`lowlat measure ticks`, the seeds' "pig" test): per-CPU timer-tick and
//! interrupt rates while a spinner runs. The result's per-CPU rows are shown whatever their
//! columns; a tick-rate column (`*tick*`/`loc*` per second) is charted and judged: an
//! isolated `nohz_full` CPU should tick about once a second, not at `CONFIG_HZ`.

use serde_json::Value;

use super::Ctx;
use crate::input::{value_text, Doc};
use crate::model::{
    Block, Cell, Chart, Headline, Scale, Section, Series, SeriesStyle, Table, Verdict,
};

/// Above this tick rate on a CPU expected to be tickless, the CPU is still ticking.
const TICKLESS_MAX_HZ: f64 = 10.0;

fn rows(v: &Value) -> Vec<&serde_json::Map<String, Value>> {
    ["cpus", "threads", "per_cpu"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_array))
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

fn rate_key(row: &serde_json::Map<String, Value>) -> Option<String> {
    let mut keys: Vec<&String> = row
        .keys()
        .filter(|k| {
            let k = k.to_ascii_lowercase();
            (k.contains("tick") || k.starts_with("loc"))
                && (k.contains("per_s") || k.ends_with("hz") || k.contains("rate"))
        })
        .collect();
    keys.sort();
    keys.first().map(|k| (*k).clone())
}

/// A verdict from a ticks row's text (`ok: …`, `tick NOT stopped …`, `periodic tick: …`)
/// or a plain status word.
fn tick_verdict(s: &str) -> Verdict {
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

/// `[[name, rate], …]` as `LOC 250, 36:virtio 600` (largest three).
fn top_rates(v: Option<&Value>) -> String {
    let mut items: Vec<(String, f64)> = v
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| Some((e.get(0)?.as_str()?.to_string(), e.get(1)?.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    items.sort_by(|a, b| b.1.total_cmp(&a.1));
    items.iter().take(3).map(|(n, r)| format!("{n} {r:.0}")).collect::<Vec<_>>().join(", ")
}

/// Build the ticks section.
pub fn build(doc: &Doc, _ctx: &Ctx<'_>) -> Vec<Section> {
    let rs = rows(&doc.value);
    if rs.is_empty() {
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
    let mut cols: Vec<String> = Vec::new();
    for r in &rs {
        for k in r.keys() {
            if !["cpu", "verdict", "status"].contains(&k.as_str())
                && !cols.contains(k)
                && !r.get(k).is_some_and(|v| v.is_array() || v.is_object())
            {
                cols.push(k.clone());
            }
        }
    }
    let key = rs.iter().find_map(|r| rate_key(r));
    let expected: Option<cpuset::CpuSet> =
        doc.envelope().host.nohz_full.and_then(|s| cpuset::CpuSet::parse_list(&s).ok());
    let has_rates = rs.iter().any(|r| r.get("rates").is_some_and(Value::is_array));
    let mut headers = vec!["CPU".to_string()];
    headers.extend(cols.iter().cloned());
    if has_rates {
        headers.push("top interrupts per second".into());
    }
    headers.push("verdict".into());
    let mut worst = Verdict::Info;
    let mut ticking = Vec::new();
    let mut points = Vec::new();
    let table_rows = rs
        .iter()
        .map(|r| {
            let cpu = r.get("cpu").and_then(Value::as_u64);
            let rate = key.as_ref().and_then(|k| r.get(k)).and_then(Value::as_f64);
            let explicit_text = ["verdict", "status"].iter().find_map(|k| r.get(*k)?.as_str());
            let explicit = explicit_text.map(tick_verdict);
            let tickless =
                cpu.is_some_and(|c| expected.as_ref().is_some_and(|e| e.contains(c as usize)));
            let v = explicit.unwrap_or(match rate {
                Some(hz) if tickless && hz > TICKLESS_MAX_HZ => Verdict::Warn,
                Some(_) if tickless => Verdict::Pass,
                _ => Verdict::Info,
            });
            if let (Some(c), Some(hz)) = (cpu, rate) {
                points.push((c as f64, hz));
                if v >= Verdict::Warn {
                    ticking.push(format!("CPU {c} {hz:.0}/s"));
                }
            }
            worst = worst.max(v);
            let mut row = vec![Cell::text(cpu.map_or("?".into(), |c| c.to_string()))];
            row.extend(cols.iter().map(|k| match r.get(k) {
                Some(Value::Number(n)) => Cell::num(n.as_f64().map_or(n.to_string(), |f| {
                    if f.fract() == 0.0 {
                        format!("{f:.0}")
                    } else {
                        format!("{f:.1}")
                    }
                })),
                Some(other) => Cell::text(value_text(other)),
                None => Cell::text("—"),
            }));
            if has_rates {
                row.push(Cell::text(top_rates(r.get("rates"))));
            }
            row.push(match explicit_text {
                Some(t) => Cell::text(t).with_verdict(v),
                None => Cell::verdict(v),
            });
            row
        })
        .collect();
    let mut headlines = Vec::new();
    let text = match (&key, ticking.is_empty()) {
        (Some(_), true) if worst == Verdict::Pass => {
            "Timer ticks: tickless CPUs tick at most 10 times a second".to_string()
        }
        (Some(_), false) => {
            format!("Timer ticks: still ticking on nohz_full CPUs: {}", ticking.join(", "))
        }
        _ => format!(
            "Timer ticks measured on {} CPU{}",
            rs.len(),
            if rs.len() == 1 { "" } else { "s" }
        ),
    };
    headlines.push(Headline::new(worst, text));
    let mut blocks = vec![Block::Table(Table {
        caption: "Per-CPU rates while a spinner runs".into(),
        headers,
        rows: table_rows,
    })];
    if let Some(k) = key {
        blocks.push(Block::Chart(Chart {
            id: "rate".into(),
            title: format!("{k} per CPU"),
            x_label: "CPU".into(),
            y_label: "ticks per second (log scale)".into(),
            y_scale: Scale::Log,
            series: vec![Series { name: k, style: SeriesStyle::Points, color: 0, points }],
            markers: Vec::new(),
            y_markers: Vec::new(),
            caption: "A nohz_full CPU running one task should show ~1 tick/s; CONFIG_HZ (100–1000/s) means the tick is still on.".into(),
        }));
    }
    blocks.push(super::run_conditions(doc));
    vec![Section::new("ticks", "Timer ticks", headlines, blocks)]
}
