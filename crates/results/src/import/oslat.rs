//! oslat output → [`LatencyResult`] (`kind` = `noise`): the text summary (`Core:`,
//! `Counter Freq:`, `NNN (us):` bucket rows labelled by their *upper* bound, `-z` elisions,
//! `Minimum/Average/Maximum/Duration`) and the `--json` file (histogram keys are upper bounds
//! too). oslat's last bucket also holds every overflow, so it is imported as the overflow.
//!
//! oslat always ends its summary with `Minimum`, `Average`, `Maximum`, `Max-Min` and
//! `Duration`: text without them was cut short and imports as `partial`, percentiles unknown.
//! Values are checked: a counter frequency of 0, a negative or absurd latency, a maximum below
//! the highest bucket or an average above the maximum are errors.

use super::{check_thread, float_to_ns, num, rtjson, ImportError, Printed};
use crate::histogram::{Bucket, HistogramData};
use crate::latency::{
    summary_from_buckets, summary_without_histogram, LatencyResult, ThreadResult,
};
use crate::{Envelope, LatencyParams, Params};

/// Import oslat text or JSON (detected by content).
pub fn import(text: &str) -> Result<LatencyResult, ImportError> {
    if super::looks_like_json(text) {
        import_json(text)
    } else {
        import_text(text)
    }
}

/// More columns than any machine has CPUs: not oslat's output.
const MAX_THREADS: usize = 8192;

#[derive(Default)]
struct Col {
    cpu: Option<u32>,
    /// (upper bound µs, count, includes overflows)
    rows: Vec<(f64, u64, bool)>,
    min_us: Option<f64>,
    avg_us: Option<f64>,
    max_us: Option<f64>,
    duration_s: Option<f64>,
}

impl Col {
    fn summary_complete(&self) -> bool {
        self.min_us.is_some() && self.avg_us.is_some() && self.max_us.is_some()
    }
}

/// One thread; `complete` = its summary was read whole (else percentiles are unknown and the
/// maximum is a lower bound from the rows read).
fn build(i: usize, col: &Col, complete: bool) -> Result<ThreadResult, ImportError> {
    let who = format!("CPU {}", col.cpu.map_or_else(|| format!("column {i}"), |c| c.to_string()));
    let mut labels: Vec<f64> = col.rows.iter().map(|r| r.0).collect();
    labels.sort_by(f64::total_cmp);
    let mut width = labels.first().copied().unwrap_or(1.0);
    for w in labels.windows(2) {
        width = width.min(w[1] - w[0]);
    }
    let width_ns = float_to_ns(width, 1000.0, "a bucket width")?.max(1);
    let mut buckets = Vec::new();
    let mut overflow = 0u64;
    for (hi_us, count, incl_overflow) in &col.rows {
        if *count == 0 {
            continue;
        }
        if *incl_overflow {
            overflow = overflow.saturating_add(*count);
            continue;
        }
        let hi = float_to_ns(*hi_us, 1000.0, "a bucket label")?;
        buckets.push(Bucket { lo_ns: hi.saturating_sub(width_ns), hi_ns: hi, count: *count });
    }
    buckets.sort_by_key(|b| b.lo_ns);
    let in_range = buckets.iter().fold(0u64, |a, b| a.saturating_add(b.count));
    let stats = match (col.min_us, col.avg_us, col.max_us) {
        (Some(min), Some(avg), Some(max)) if complete => {
            let ns = |x: f64, what: &str| float_to_ns(x, 1000.0, what);
            let s = summary_from_buckets(
                &buckets,
                overflow,
                ns(min, "the minimum")?,
                ns(avg, "the average")?,
                ns(max, "the maximum")?,
            );
            check_thread(&who, &s, &buckets, Printed::Upper)?;
            s
        }
        _ => {
            let count = in_range.saturating_add(overflow);
            let sum: f64 =
                buckets.iter().map(|b| (b.lo_ns + b.hi_ns) as f64 / 2.0 * b.count as f64).sum();
            let avg = (sum / in_range.max(1) as f64).round() as u64;
            let lo = buckets.first().map_or(0, |b| b.lo_ns);
            let hi = buckets.last().map_or(0, |b| b.hi_ns);
            summary_without_histogram(count, lo, avg, hi)
        }
    };
    Ok(ThreadResult {
        cpu: col.cpu,
        stats,
        histogram: HistogramData {
            config: None,
            count: stats.count,
            min_ns: Some(stats.min_ns),
            max_ns: Some(stats.max_ns),
            buckets,
            overflow,
            ..HistogramData::default()
        },
        ..ThreadResult::default()
    })
}

fn fields(rest: &str) -> Vec<&str> {
    rest.split_whitespace().filter(|t| !t.starts_with('(') && !t.ends_with(')')).collect()
}

/// A latency or duration field: a finite, non-negative number.
fn non_negative(v: &str, ln: usize, what: &str) -> Result<f64, ImportError> {
    let x: f64 = num(v, ln, what)?;
    if !x.is_finite() || x < 0.0 {
        return Err(ImportError::Line {
            line: ln,
            message: format!("{what} is not a non-negative number"),
            value: v.to_string(),
        });
    }
    Ok(x)
}

/// Import oslat's text output.
pub fn import_text(text: &str) -> Result<LatencyResult, ImportError> {
    let mut cols: Vec<Col> = Vec::new();
    let mut version = None;
    let mut threshold_stop = None;
    let mut freq_seen = false;
    let mut max_min: Vec<f64> = Vec::new();
    let unterminated = !text.is_empty() && !text.ends_with('\n');
    let nlines = text.lines().count();
    let mut cut_line = None;
    let ensure = |cols: &mut Vec<Col>, n: usize, ln: usize| {
        if n > MAX_THREADS {
            return Err(ImportError::Line {
                line: ln,
                message: format!("more than {MAX_THREADS} columns"),
                value: n.to_string(),
            });
        }
        while cols.len() < n {
            cols.push(Col::default());
        }
        Ok(())
    };
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let l = raw.trim();
        if let Some(v) = l.strip_prefix("oslat V ") {
            version = Some(v.trim().to_string());
            continue;
        }
        if l.starts_with("oslat: Trace threshold") {
            threshold_stop = Some(l.to_string());
            continue;
        }
        let Some((label, rest)) = l.split_once(':') else { continue };
        if unterminated && ln == nlines && !cols.is_empty() {
            // The last line has no newline: its numbers may be cut.
            cut_line = Some(ln);
            continue;
        }
        let label = label.trim();
        let vals = fields(rest);
        match label {
            "Core" => {
                ensure(&mut cols, vals.len(), ln)?;
                for (c, v) in cols.iter_mut().zip(&vals) {
                    c.cpu = Some(num(v, ln, "core number")?);
                }
            }
            "Counter Freq" => {
                freq_seen = true;
                for v in &vals {
                    if num::<u64>(v, ln, "counter frequency")? == 0 {
                        return Err(ImportError::Line {
                            line: ln,
                            message: "a counter frequency of 0 MHz: oslat could not convert cycles to time".into(),
                            value: l.to_string(),
                        });
                    }
                }
            }
            "Minimum" | "Average" | "Maximum" | "Duration" | "Max-Min" => {
                ensure(&mut cols, vals.len(), ln)?;
                for (j, v) in vals.iter().enumerate() {
                    let x = non_negative(v, ln, label)?;
                    let c = &mut cols[j];
                    match label {
                        "Minimum" => c.min_us = Some(x),
                        "Average" => c.avg_us = Some(x),
                        "Maximum" => c.max_us = Some(x),
                        "Max-Min" => max_min.push(x),
                        _ => c.duration_s = Some(x),
                    }
                }
            }
            _ if label.ends_with("(us)") => {
                let bound = non_negative(label.trim_end_matches("(us)"), ln, "bucket label")?;
                let incl = rest.contains("including overflows");
                ensure(&mut cols, vals.len(), ln)?;
                for (c, v) in cols.iter_mut().zip(&vals) {
                    c.rows.push((bound, num(v, ln, "bucket count")?, incl));
                }
            }
            _ => {}
        }
    }
    if cols.is_empty() || cols.iter().all(|c| c.rows.is_empty() && c.max_us.is_none()) {
        return Err(ImportError::NoData(match threshold_stop {
            Some(t) => format!("oslat stopped on -T before printing a summary: {t}"),
            None => "no `Core:` / bucket / `Maximum:` lines: is this oslat output?".into(),
        }));
    }
    let complete = cols.iter().all(|c| c.summary_complete() && c.duration_s.is_some());
    if complete {
        let n = cols.len();
        if cols.iter().any(|c| c.cpu.is_none()) || !freq_seen {
            return Err(ImportError::Inconsistent(format!(
                "the summary has {n} columns but no `Core:` and `Counter Freq:` value for each"
            )));
        }
        let rows = cols[0].rows.len();
        if cols.iter().any(|c| c.rows.len() != rows) {
            return Err(ImportError::Inconsistent(
                "bucket rows do not have one count per core".into(),
            ));
        }
        for (c, mm) in cols.iter().zip(&max_min) {
            let (min, max) = (c.min_us.unwrap_or(0.0), c.max_us.unwrap_or(0.0));
            if (max - min - mm).abs() > 1.0 {
                return Err(ImportError::Inconsistent(format!(
                    "CPU {}: Max-Min is {mm} but Maximum - Minimum is {}",
                    c.cpu.unwrap_or(0),
                    max - min
                )));
            }
        }
    }
    let threads: Vec<ThreadResult> =
        cols.iter().enumerate().map(|(i, c)| build(i, c, complete)).collect::<Result<_, _>>()?;
    let tool = version.map_or_else(|| "oslat".to_string(), |v| format!("oslat {v}"));
    let mut envelope = Envelope::new(crate::Kind::Noise, &tool);
    envelope.partial = !complete || cut_line.is_some();
    envelope.duration_ns = duration_ns(&cols);
    envelope.params = Params::Latency(LatencyParams {
        source: Some("oslat".into()),
        format: Some("text".into()),
        ..LatencyParams::default()
    });
    let mut notes = notes();
    if !complete {
        notes.insert(0, "CUT SHORT: the input ends before oslat's summary (Minimum, Average, Maximum, Duration), which it always prints: percentiles are unknown, min, avg and max come from the bucket rows read and the true maximum may be higher".into());
    } else if let Some(ln) = cut_line {
        notes.insert(
            0,
            format!(
                "CUT SHORT: line {ln}, the last, has no newline and is incomplete: it was left out"
            ),
        );
    }
    Ok(LatencyResult {
        envelope,
        realtime: false,
        series_step_s: 1,
        threads,
        breaches: Vec::new(),
        load: None,
        notes,
        tracer: None,
    })
}

fn duration_ns(cols: &[Col]) -> u64 {
    (cols.iter().filter_map(|c| c.duration_s).fold(0.0, f64::max).min(1e9) * 1e9).round() as u64
}

fn notes() -> Vec<String> {
    vec!["oslat's last bucket includes every overflow: its count is imported as the overflow".into()]
}

/// `-b N` (bucket count) and `-W NS` (bucket width) from an oslat cmdline.
fn bucket_shape(cmdline: &str) -> (u64, f64) {
    let toks: Vec<&str> = cmdline.split_whitespace().collect();
    let mut n = 32;
    let mut width_us = 1.0;
    for (i, t) in toks.iter().enumerate() {
        let val = |long: &str| {
            t.strip_prefix(long)
                .map(str::to_string)
                .or_else(|| toks.get(i + 1).map(|s| s.to_string()))
        };
        if *t == "-b" || t.starts_with("--bucket-size") {
            if let Some(v) = val("--bucket-size=").and_then(|v| v.parse().ok()) {
                n = v;
            }
        } else if *t == "-W" || t.starts_with("--bucket-width") {
            if let Some(v) = val("--bucket-width=").and_then(|v| v.parse::<f64>().ok()) {
                width_us = v / 1000.0;
            }
        }
    }
    (n, width_us)
}

/// A required latency field of a JSON thread (µs): finite, not negative.
fn json_us(t: &serde_json::Value, key: &str, who: &str) -> Result<f64, ImportError> {
    t[key].as_f64().filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| {
        ImportError::Json(format!("{who}: {key:?} missing or not a latency: {}", t[key]))
    })
}

/// Import oslat's `--json=FILE` output.
pub fn import_json(text: &str) -> Result<LatencyResult, ImportError> {
    let v = rtjson::parse(text)?;
    let threads_v = v["thread"].as_object().ok_or_else(|| {
        ImportError::Json("no \"thread\" object: is this oslat --json output?".into())
    })?;
    let cmdline = rtjson::field(&v, "cmdline").and_then(|c| c.as_str()).unwrap_or("").to_string();
    let (nbuckets, width_us) = bucket_shape(&cmdline);
    let last_label = nbuckets as f64 * width_us;
    let mut keyed: Vec<(u64, &serde_json::Value)> = threads_v
        .iter()
        .map(|(k, t)| {
            k.parse()
                .map(|k| (k, t))
                .map_err(|_| ImportError::Json(format!("thread key {k:?} is not a number")))
        })
        .collect::<Result<_, _>>()?;
    keyed.sort_by_key(|(k, _)| *k);
    let mut cols = Vec::new();
    for (k, t) in keyed {
        let who = format!("thread {k}");
        if let Some(f) = t.get("freq") {
            if f.as_f64().is_none_or(|f| !f.is_finite() || f <= 0.0) {
                return Err(ImportError::Json(format!(
                    "{who}: a counter frequency of {f} MHz: oslat could not convert cycles to time"
                )));
            }
        }
        let rows = rtjson::histogram_entries(&t["histogram"])?
            .into_iter()
            .map(|(bound, c)| (bound, c, (bound - last_label).abs() < 1e-9))
            .collect();
        cols.push(Col {
            cpu: super::cyclictest::json_cpu(t, &who)?,
            rows,
            min_us: Some(json_us(t, "min", &who)?),
            avg_us: Some(json_us(t, "avg", &who)?),
            max_us: Some(json_us(t, "max", &who)?),
            duration_s: t["duration"].as_f64().filter(|d| d.is_finite() && *d >= 0.0),
        });
    }
    if cols.is_empty() {
        return Err(ImportError::NoData("the \"thread\" object is empty".into()));
    }
    let threads =
        cols.iter().enumerate().map(|(i, c)| build(i, c, true)).collect::<Result<_, _>>()?;
    let mut envelope = Envelope::new(crate::Kind::Noise, &rtjson::tool(&v, "oslat"));
    envelope.host = rtjson::host(&v);
    envelope.started_at = v["start_time"].as_str().map(str::to_string);
    envelope.duration_ns = duration_ns(&cols);
    envelope.failed = rtjson::failed(&v, "oslat");
    envelope.params = Params::Latency(LatencyParams {
        source: Some("oslat".into()),
        format: Some("json".into()),
        cmdline: Some(cmdline),
        ..LatencyParams::default()
    });
    Ok(LatencyResult {
        envelope,
        realtime: false,
        series_step_s: 1,
        threads,
        breaches: Vec::new(),
        load: None,
        notes: notes(),
        tracer: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = "oslat V 2.40\n        Core:\t 1\nCounter Freq:\t 2445 (Mhz)\n    001 (us):\t 100\n    002 (us):\t 5\n    003 (us):\t 1 (including overflows)\n     Minimum:\t 1 (us)\n     Average:\t 1.050 (us)\n     Maximum:\t 40 (us)\n     Max-Min:\t 39 (us)\n    Duration:\t 1.999 (sec)\n\n";

    #[test]
    fn threshold_stop_without_summary_is_explained() {
        let err = import_text(
            "oslat: Trace threshold (50 us) triggered on cpu 1 with 301 us!\nStopping the test.\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("-T"), "{err}");
    }

    #[test]
    fn bucket_shape_from_cmdline() {
        assert_eq!(bucket_shape("oslat -b 64 -W 500"), (64, 0.5));
        assert_eq!(bucket_shape("oslat -D 2"), (32, 1.0));
    }

    #[test]
    fn bad_count_names_the_line() {
        let err = import_text("        Core:\t 1\n    001 (us):\t 12z\n").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    #[test]
    fn whole_summary_imports_and_a_cut_one_is_partial() {
        let r = import_text(ONE).unwrap();
        assert!(!r.envelope.partial);
        assert_eq!(r.threads[0].stats.max_ns, 40_000);
        assert_eq!(r.threads[0].stats.p50_ns, Some(1_000));
        for cut in [ONE.find("     Minimum").unwrap(), ONE.find("    Duration").unwrap() + 14] {
            let r = import_text(&ONE[..cut]).unwrap();
            assert!(r.envelope.partial, "cut at {cut}");
            assert!(r.notes[0].starts_with("CUT SHORT"));
            assert_eq!(r.threads[0].stats.p99_ns, None);
            assert_ne!(r.threads[0].stats.max_ns, 0, "a lower bound, not 0");
        }
    }

    #[test]
    fn contradictions_are_errors() {
        for (from, to) in [
            ("2445 (Mhz)", "0 (Mhz)"),
            ("Maximum:\t 40", "Maximum:\t -1"),
            ("Maximum:\t 40", "Maximum:\t 1"),
            ("Max-Min:\t 39", "Max-Min:\t 0"),
            ("Average:\t 1.050", "Average:\t 1e308"),
            ("Average:\t 1.050", "Average:\t inf"),
            ("Max-Min:\t 39", "Max-Min:\t 9"),
            ("Core:\t 1", "Core:\t x"),
        ] {
            let text = ONE.replace(from, to);
            assert!(import_text(&text).is_err(), "accepted {to}");
        }
        let ok = r#"{"thread":{"0":{"cpu":1,"freq":2445,"min":1,"avg":1.0,"max":40,"duration":2.0,"histogram":{"1":100,"32":1}}}}"#;
        assert!(import_json(ok).is_ok());
        for (from, to) in [
            ("\"freq\":2445", "\"freq\":0"),
            ("\"cpu\":1", "\"cpu\":\"x\""),
            ("\"max\":40", "\"max\":-1"),
            ("\"avg\":1.0", "\"avg\":1e308"),
            ("\"0\":{", "\"x\":{"),
        ] {
            let text = ok.replace(from, to);
            assert!(import_json(&text).is_err(), "accepted {to}");
        }
    }
}
