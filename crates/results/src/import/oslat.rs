//! oslat output → [`LatencyResult`] (`kind` = `noise`): the text summary (`Core:`,
//! `Counter Freq:`, `NNN (us):` bucket rows labelled by their *upper* bound, `-z` elisions,
//! `Minimum/Average/Maximum/Duration`) and the `--json` file (histogram keys are upper bounds
//! too). oslat's last bucket also holds every overflow, so it is imported as the overflow.

use serde_json::json;

use super::{num, rtjson, ImportError};
use crate::histogram::{Bucket, HistogramData};
use crate::latency::{summary_from_buckets, LatencyResult, ThreadResult};
use crate::Envelope;

/// Import oslat text or JSON (detected by content).
pub fn import(text: &str) -> Result<LatencyResult, ImportError> {
    if super::looks_like_json(text) {
        import_json(text)
    } else {
        import_text(text)
    }
}

struct Col {
    cpu: Option<u32>,
    /// (upper bound µs, count, includes overflows)
    rows: Vec<(f64, u64, bool)>,
    min_us: f64,
    avg_us: f64,
    max_us: f64,
    duration_s: Option<f64>,
}

fn build(col: &Col) -> ThreadResult {
    let mut labels: Vec<f64> = col.rows.iter().map(|r| r.0).collect();
    labels.sort_by(f64::total_cmp);
    let mut width = labels.first().copied().unwrap_or(1.0);
    for w in labels.windows(2) {
        width = width.min(w[1] - w[0]);
    }
    let width_ns = (width * 1000.0).round().max(1.0) as u64;
    let mut buckets = Vec::new();
    let mut overflow = 0;
    for (hi_us, count, incl_overflow) in &col.rows {
        if *count == 0 {
            continue;
        }
        if *incl_overflow {
            overflow += count;
            continue;
        }
        let hi = (hi_us * 1000.0).round() as u64;
        buckets.push(Bucket { lo_ns: hi.saturating_sub(width_ns), hi_ns: hi, count: *count });
    }
    buckets.sort_by_key(|b| b.lo_ns);
    let ns = |us: f64| (us * 1000.0).round() as u64;
    let stats = summary_from_buckets(
        &buckets,
        overflow,
        ns(col.min_us),
        ns(col.avg_us),
        ns(col.max_us),
        None,
    );
    ThreadResult {
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
    }
}

fn fields(rest: &str) -> Vec<&str> {
    rest.split_whitespace().filter(|t| !t.starts_with('(') && !t.ends_with(')')).collect()
}

/// Import oslat's text output.
pub fn import_text(text: &str) -> Result<LatencyResult, ImportError> {
    let mut cols: Vec<Col> = Vec::new();
    let mut version = None;
    let mut threshold_stop = None;
    let ensure = |cols: &mut Vec<Col>, n: usize| {
        while cols.len() < n {
            cols.push(Col {
                cpu: None,
                rows: Vec::new(),
                min_us: 0.0,
                avg_us: 0.0,
                max_us: 0.0,
                duration_s: None,
            });
        }
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
        let label = label.trim();
        let vals = fields(rest);
        match label {
            "Core" => {
                ensure(&mut cols, vals.len());
                for (c, v) in cols.iter_mut().zip(&vals) {
                    c.cpu = Some(num(v, ln, "core number")?);
                }
            }
            "Minimum" | "Average" | "Maximum" | "Duration" => {
                ensure(&mut cols, vals.len());
                for (c, v) in cols.iter_mut().zip(&vals) {
                    let x: f64 = num(v, ln, label)?;
                    match label {
                        "Minimum" => c.min_us = x,
                        "Average" => c.avg_us = x,
                        "Maximum" => c.max_us = x,
                        _ => c.duration_s = Some(x),
                    }
                }
            }
            _ if label.ends_with("(us)") => {
                let bound: f64 = num(label.trim_end_matches("(us)"), ln, "bucket label")?;
                let incl = rest.contains("including overflows");
                ensure(&mut cols, vals.len());
                for (c, v) in cols.iter_mut().zip(&vals) {
                    c.rows.push((bound, num(v, ln, "bucket count")?, incl));
                }
            }
            _ => {}
        }
    }
    if cols.is_empty() || cols.iter().all(|c| c.rows.is_empty() && c.max_us == 0.0) {
        return Err(ImportError::NoData(match threshold_stop {
            Some(t) => format!("oslat stopped on -T before printing a summary: {t}"),
            None => "no `Core:` / bucket / `Maximum:` lines: is this oslat output?".into(),
        }));
    }
    let threads: Vec<ThreadResult> = cols.iter().map(build).collect();
    let tool = version.map_or_else(|| "oslat".to_string(), |v| format!("oslat {v}"));
    let mut envelope = Envelope::new(crate::Kind::Noise, &tool);
    envelope.duration_ns =
        cols.iter().filter_map(|c| c.duration_s).fold(0.0, f64::max).mul_add(1e9, 0.0).round()
            as u64;
    envelope.params = json!({ "source": "oslat", "format": "text" });
    Ok(LatencyResult {
        envelope,
        realtime: false,
        threads,
        breaches: Vec::new(),
        load: None,
        notes: notes(),
    })
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

/// Import oslat's `--json=FILE` output.
pub fn import_json(text: &str) -> Result<LatencyResult, ImportError> {
    let v = rtjson::parse(text)?;
    let threads_v = v["thread"].as_object().ok_or_else(|| {
        ImportError::Json("no \"thread\" object: is this oslat --json output?".into())
    })?;
    let cmdline = rtjson::field(&v, "cmdline").and_then(|c| c.as_str()).unwrap_or("").to_string();
    let (nbuckets, width_us) = bucket_shape(&cmdline);
    let last_label = nbuckets as f64 * width_us;
    let mut keyed: Vec<(u64, &serde_json::Value)> =
        threads_v.iter().filter_map(|(k, t)| k.parse().ok().map(|k| (k, t))).collect();
    keyed.sort_by_key(|(k, _)| *k);
    let mut cols = Vec::new();
    for (_, t) in keyed {
        let rows = rtjson::histogram_entries(&t["histogram"])?
            .into_iter()
            .map(|(bound, c)| (bound, c, (bound - last_label).abs() < 1e-9))
            .collect();
        cols.push(Col {
            cpu: t["cpu"].as_i64().and_then(|c| u32::try_from(c).ok()),
            rows,
            min_us: t["min"].as_f64().unwrap_or(0.0),
            avg_us: t["avg"].as_f64().unwrap_or(0.0),
            max_us: t["max"].as_f64().unwrap_or(0.0),
            duration_s: t["duration"].as_f64(),
        });
    }
    if cols.is_empty() {
        return Err(ImportError::NoData("the \"thread\" object is empty".into()));
    }
    let threads = cols.iter().map(build).collect();
    let mut envelope = Envelope::new(crate::Kind::Noise, &rtjson::tool(&v, "oslat"));
    envelope.host = rtjson::host(&v);
    envelope.started_at = v["start_time"].as_str().map(str::to_string);
    envelope.duration_ns =
        (cols.iter().filter_map(|c| c.duration_s).fold(0.0, f64::max) * 1e9).round() as u64;
    envelope.params = json!({ "source": "oslat", "format": "json", "cmdline": cmdline });
    Ok(LatencyResult {
        envelope,
        realtime: false,
        threads,
        breaches: Vec::new(),
        load: None,
        notes: notes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
