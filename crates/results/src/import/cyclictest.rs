//! cyclictest output → [`LatencyResult`]: the text (`T:` lines, live output with cursor
//! escapes, `-h` histogram blocks in the ≤2.6 layout with `# Total:` and the ≥2.7 layout
//! without it and with empty buckets omitted, `-H` sum column, `-b` break lines) and the
//! `--json` file (overflow = cycles − Σ histogram, which the JSON does not carry).

use serde_json::{json, Value};

use super::{num, rtjson, ImportError};
use crate::histogram::{Bucket, HistogramData};
use crate::latency::{summary_from_buckets, LatencyResult, ThreadResult};
use crate::Envelope;

/// Import cyclictest text or JSON (detected by content).
pub fn import(text: &str) -> Result<LatencyResult, ImportError> {
    if super::looks_like_json(text) {
        import_json(text)
    } else {
        import_text(text)
    }
}

/// More threads than any machine has CPUs: the input is not cyclictest's.
const MAX_THREADS: usize = 8192;

#[derive(Debug, Default, Clone)]
struct TLine {
    tid: Option<u32>,
    prio: Option<u32>,
    interval_us: Option<u64>,
    cycles: Option<u64>,
    min: Option<u64>,
    act: Option<u64>,
    avg: Option<u64>,
    max: Option<u64>,
}

fn strip_escapes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn parse_tline(line: &str, ln: usize) -> Result<(usize, TLine), ImportError> {
    let cleaned = line.replace(['(', ')'], " ");
    let toks: Vec<&str> = cleaned.split_whitespace().collect();
    let mut t = TLine::default();
    let mut idx = None;
    let mut i = 0;
    while i < toks.len() {
        let tok = toks[i];
        let (key, val) = match tok.split_once(':') {
            Some((k, "")) => {
                i += 1;
                (k, toks.get(i).copied().unwrap_or(""))
            }
            Some((k, v)) => (k, v),
            None => {
                if idx.is_some() && t.tid.is_none() {
                    t.tid = Some(num(tok, ln, "thread id")?);
                }
                i += 1;
                continue;
            }
        };
        match key {
            "T" => idx = Some(num::<usize>(val, ln, "T: thread number")?),
            "P" => t.prio = Some(num(val, ln, "P: priority")?),
            "I" => t.interval_us = Some(num(val, ln, "I: interval")?),
            "C" => t.cycles = Some(num(val, ln, "C: cycles")?),
            "Min" => t.min = Some(num(val, ln, "Min")?),
            "Act" => t.act = Some(num(val, ln, "Act")?),
            "Avg" => t.avg = Some(num(val, ln, "Avg")?),
            "Max" => t.max = Some(num(val, ln, "Max")?),
            _ => {}
        }
        i += 1;
    }
    let idx = idx.ok_or_else(|| ImportError::Line {
        line: ln,
        message: "T: line without a thread number".into(),
        value: line.to_string(),
    })?;
    Ok((idx, t))
}

fn values(rest: &str, ln: usize, what: &str) -> Result<Vec<u64>, ImportError> {
    rest.split_whitespace().map(|v| num(v, ln, what)).collect()
}

/// Import cyclictest's text output.
pub fn import_text(text: &str) -> Result<LatencyResult, ImportError> {
    let mut tlines: Vec<Option<TLine>> = Vec::new();
    let mut rows: Vec<(u64, Vec<u64>)> = Vec::new();
    let (mut total, mut mins, mut avgs, mut maxs, mut overflows) = (None, None, None, None, None);
    let mut notes = Vec::new();
    let mut dma = false;
    let mut in_hist = false;
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = strip_escapes(raw);
        let l = line.trim_end();
        let lt = l.trim_start();
        if lt.starts_with("T:") {
            let (idx, t) = parse_tline(lt, ln)?;
            if idx >= MAX_THREADS {
                return Err(ImportError::Line {
                    line: ln,
                    message: format!("thread number above {MAX_THREADS}"),
                    value: lt.to_string(),
                });
            }
            if tlines.len() <= idx {
                tlines.resize(idx + 1, None);
            }
            tlines[idx] = Some(t);
        } else if l.starts_with("# /dev/cpu_dma_latency set to") {
            dma = true;
        } else if l == "# Histogram" {
            in_hist = true;
        } else if let Some(r) = l.strip_prefix("# Total:") {
            total = Some(values(r, ln, "total")?);
        } else if let Some(r) = l.strip_prefix("# Min Latencies:") {
            mins = Some(values(r, ln, "min latency")?);
        } else if let Some(r) = l.strip_prefix("# Avg Latencies:") {
            avgs = Some(values(r, ln, "avg latency")?);
        } else if let Some(r) = l.strip_prefix("# Max Latencies:") {
            maxs = Some(values(r, ln, "max latency")?);
        } else if let Some(r) = l.strip_prefix("# Histogram Overflows:") {
            overflows = Some(values(r, ln, "overflow count")?);
        } else if let Some(r) = l.strip_prefix("# Break value:") {
            notes.push(format!(
                "cyclictest stopped on its break threshold (-b): break value {} us",
                r.trim()
            ));
        } else if in_hist && l.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            let mut v = values(l, ln, "histogram row")?;
            if v.is_empty() {
                continue;
            }
            let idx = v.remove(0);
            rows.push((idx, v));
        }
    }
    let nthreads =
        [tlines.len(), mins.as_ref().map_or(0, Vec::len), rows.first().map_or(0, |r| r.1.len())]
            .into_iter()
            .max()
            .unwrap_or(0);
    let nthreads = match (&mins, rows.first()) {
        // `-H` adds an all-threads sum column to every bucket row.
        (Some(m), Some(r)) if r.1.len() == m.len() + 1 => m.len(),
        _ => nthreads,
    };
    if nthreads == 0 {
        return Err(ImportError::NoData(
            "no `T:` lines and no `# Min Latencies:` summary: is this cyclictest output?".into(),
        ));
    }
    let layout = if rows.is_empty() {
        None
    } else if total.is_some() {
        Some("rt-tests <=2.6 (with # Total)")
    } else {
        Some("rt-tests >=2.7 (sparse, no # Total)")
    };
    let mut threads = Vec::with_capacity(nthreads);
    for ti in 0..nthreads {
        let t = tlines.get(ti).cloned().flatten().unwrap_or_default();
        let pick = |v: &Option<Vec<u64>>| v.as_ref().and_then(|v| v.get(ti).copied());
        let buckets: Vec<Bucket> = rows
            .iter()
            .filter_map(|(idx, cols)| {
                let c = cols.get(ti).copied().unwrap_or(0);
                (c > 0).then_some(Bucket { lo_ns: idx * 1000, hi_ns: (idx + 1) * 1000, count: c })
            })
            .collect();
        let in_range: u64 = buckets.iter().map(|b| b.count).sum();
        let overflow =
            pick(&overflows).or_else(|| Some(t.cycles?.saturating_sub(pick(&total)?))).unwrap_or(0);
        let min = pick(&mins).or(t.min).unwrap_or(0) * 1000;
        let avg = pick(&avgs).or(t.avg).unwrap_or(0) * 1000;
        let max = pick(&maxs).or(t.max).unwrap_or(0) * 1000;
        let mut stats = summary_from_buckets(&buckets, overflow, min, avg, max, None);
        if rows.is_empty() {
            stats = no_histogram(stats);
        }
        if let Some(c) = t.cycles {
            stats.count = c;
        } else {
            stats.count = in_range + overflow;
        }
        threads.push(ThreadResult {
            cpu: None,
            stats,
            overruns: 0,
            histogram: HistogramData {
                config: None,
                count: stats.count,
                min_ns: Some(min),
                max_ns: Some(max),
                buckets,
                overflow,
                ..HistogramData::default()
            },
            last_ns: t.act.map(|a| a * 1000),
            tid: t.tid,
            priority: t.prio,
            interval_ns: t.interval_us.map(|i| i * 1000),
            ..ThreadResult::default()
        });
    }
    if rows.is_empty() {
        notes.push("no -h histogram in the input: percentiles are unknown (reported as 0)".into());
    }
    notes.push(
        "cyclictest skips missed periods silently: overruns are not known for imported runs".into(),
    );
    let mut envelope = Envelope::new(crate::Kind::Timer, "cyclictest");
    envelope.params = json!({ "source": "cyclictest", "format": "text", "histogram_layout": layout, "dma_latency": dma });
    Ok(LatencyResult { envelope, realtime: true, threads, breaches: Vec::new(), load: None, notes })
}

fn no_histogram(mut s: crate::Summary) -> crate::Summary {
    s.p50_ns = 0;
    s.p90_ns = 0;
    s.p99_ns = 0;
    s.p999_ns = 0;
    s.p9999_ns = 0;
    s.stddev_ns = 0;
    s
}

/// Import cyclictest's `--json=FILE` output.
pub fn import_json(text: &str) -> Result<LatencyResult, ImportError> {
    let v = rtjson::parse(text)?;
    let threads_v = v["thread"].as_object().ok_or_else(|| {
        ImportError::Json("no \"thread\" object: is this cyclictest --json output?".into())
    })?;
    let ns = v["resolution_in_ns"].as_i64() == Some(1);
    let unit = if ns { 1 } else { 1000 };
    let mut keyed: Vec<(u64, &Value)> = threads_v
        .iter()
        .map(|(k, t)| {
            k.parse::<u64>()
                .map(|k| (k, t))
                .map_err(|_| ImportError::Json(format!("thread key {k:?}")))
        })
        .collect::<Result<_, _>>()?;
    keyed.sort_by_key(|(k, _)| *k);
    let mut threads = Vec::new();
    let mut any_hist = false;
    for (k, t) in keyed {
        let cycles = t["cycles"].as_u64().ok_or_else(|| {
            ImportError::Json(format!("thread {k}: \"cycles\" missing or not a count"))
        })?;
        let entries = rtjson::histogram_entries(&t["histogram"])?;
        any_hist |= !entries.is_empty();
        let buckets: Vec<Bucket> = entries
            .iter()
            .map(|(idx, c)| {
                let lo = *idx as u64 * unit;
                Bucket { lo_ns: lo, hi_ns: lo + unit, count: *c }
            })
            .collect();
        let in_range: u64 = buckets.iter().map(|b| b.count).sum();
        let overflow = if entries.is_empty() { 0 } else { cycles.saturating_sub(in_range) };
        let (min, max) = if cycles == 0 {
            (0, 0)
        } else {
            (t["min"].as_u64().unwrap_or(0) * unit, t["max"].as_u64().unwrap_or(0) * unit)
        };
        let avg = (t["avg"].as_f64().unwrap_or(0.0) * unit as f64).round() as u64;
        let mut stats = summary_from_buckets(&buckets, overflow, min, avg, max, None);
        if entries.is_empty() {
            stats = no_histogram(stats);
        }
        stats.count = cycles;
        let cpu = t["cpu"].as_i64().and_then(|c| u32::try_from(c).ok());
        threads.push(ThreadResult {
            cpu,
            stats,
            overruns: 0,
            histogram: HistogramData {
                config: None,
                count: cycles,
                min_ns: Some(min),
                max_ns: Some(max),
                buckets,
                overflow,
                ..HistogramData::default()
            },
            ..ThreadResult::default()
        });
    }
    let mut notes = Vec::new();
    if !any_hist {
        notes.push("no -h histogram in the input: percentiles are unknown (reported as 0)".into());
    }
    notes.push(
        "cyclictest skips missed periods silently: overruns are not known for imported runs".into(),
    );
    let mut envelope = Envelope::new(crate::Kind::Timer, &rtjson::tool(&v, "cyclictest"));
    envelope.host = rtjson::host(&v);
    envelope.started_at = v["start_time"].as_str().map(str::to_string);
    envelope.params = json!({
        "source": "cyclictest",
        "format": "json",
        "cmdline": rtjson::field(&v, "cmdline"),
        "return_code": v["return_code"],
    });
    Ok(LatencyResult { envelope, realtime: true, threads, breaches: Vec::new(), load: None, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_line_with_escape_is_parsed() {
        let text = "policy: fifo: loadavg: 1.14 0.36 0.12 2/91 7145          \n\nT: 0 ( 7145) P:95 I:1000 C:     10 Min:     28 Act:   29 Avg:   29 Max:      31\n\u{1b}[3Apolicy: fifo: x\n\nT: 0 ( 7145) P:95 I:1000 C:     20 Min:     27 Act:   29 Avg:   29 Max:      40\n";
        let r = import_text(text).unwrap();
        assert_eq!(r.threads.len(), 1);
        let t = &r.threads[0];
        assert_eq!((t.stats.count, t.stats.min_ns, t.stats.max_ns), (20, 27_000, 40_000));
        assert_eq!((t.tid, t.priority, t.interval_ns), (Some(7145), Some(95), Some(1_000_000)));
    }

    #[test]
    fn malformed_number_names_the_line() {
        let err =
            import_text("T: 0 ( 1) P:95 I:1000 C: 12x Min: 1 Act: 1 Avg: 1 Max: 1\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }

    #[test]
    fn absurd_thread_number_is_an_error_not_an_allocation() {
        let err = import_text("T: 4000000000 ( 1) P:95 I:1000 C: 1 Min: 1 Act: 1 Avg: 1 Max: 1\n");
        assert!(err.is_err());
    }

    #[test]
    fn empty_input_is_no_data() {
        assert!(matches!(import_text("hello\n"), Err(ImportError::NoData(_))));
        assert!(import_json("{}").is_err());
    }

    #[test]
    fn truncated_histogram_still_imports_what_is_there() {
        let r = import_text("# Histogram\n000001 000005\t000001\n000002 000003\t000000\n# Min Latencies: 00001 00001\n").unwrap();
        assert_eq!(r.threads.len(), 2);
        assert_eq!(r.threads[0].stats.count, 8);
    }

    #[test]
    fn sum_column_of_capital_h_is_ignored() {
        let r = import_text("# Histogram\n000001 000005\t000001\t000006\n# Min Latencies: 00001 00001\n# Max Latencies: 00001 00001 00001\n").unwrap();
        assert_eq!(r.threads.len(), 2);
    }
}
