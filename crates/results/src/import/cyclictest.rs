//! cyclictest output → [`LatencyResult`]: the text (`T:` lines, live output with cursor
//! escapes, `-h` histogram blocks in the ≤2.6 layout with `# Total:` and the ≥2.7 layout
//! without it and with empty buckets omitted, `-H` sum column, `-b` break lines) and the
//! `--json` file (overflow = cycles − Σ histogram, which the JSON does not carry).
//!
//! With `-h`, cyclictest always ends with its summary (`# Min/Avg/Max Latencies:`,
//! `# Histogram Overflows:`); an input without it was cut short and imports as `partial`,
//! its percentiles unknown. A last line without its newline is not trusted. The summary is
//! checked against the histogram (`# Total:` = Σ rows, max ≥ the highest row, …).

use serde_json::Value;

use super::{check_thread, num, rtjson, us_to_ns, ImportError, Printed};
use crate::histogram::{Bucket, HistogramData, Summary};
use crate::latency::{
    summary_from_buckets, summary_without_histogram, LatencyResult, Outliers, ThreadResult,
};
use crate::{Envelope, LatencyParams, Params};

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
/// The most overflow cycle numbers kept per thread (cyclictest lists at most its `-h N`).
const MAX_OUTLIERS: usize = 100_000;

const OVERRUNS_NOTE: &str =
    "cyclictest skips missed periods silently: overruns are not known for imported runs";
const SUMMARY_ONLY_NOTE: &str = "only cyclictest's `# Min/Avg/Max Latencies:` lines: each thread's maximum is known and judged; its sample count, percentiles and spread are not";
const OVERFLOW_PERCENTILES_NOTE: &str = "percentiles whose rank falls in cyclictest's histogram overflow (samples above its -h range) are unknown (n/a): cyclictest keeps no value for them, and the maximum is not one";
const NO_HISTOGRAM_NOTE: &str =
    "no -h histogram in the input: percentiles are unknown (n/a), and so is the spread";

/// One `T:` line (values in µs, as printed).
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

impl TLine {
    /// `(cycles, min, avg, max)` when the line has them all.
    fn stats(&self) -> Option<(u64, u64, u64, u64)> {
        Some((self.cycles?, self.min?, self.avg?, self.max?))
    }
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
    if idx >= MAX_THREADS {
        return Err(ImportError::Line {
            line: ln,
            message: format!("thread number above {MAX_THREADS}"),
            value: line.to_string(),
        });
    }
    Ok((idx, t))
}

/// cyclictest prints `Max:%8ld`: a field narrower than 8 characters was cut.
fn tline_is_cut(line: &str) -> bool {
    line.rsplit_once("Max:").is_none_or(|(_, v)| v.len() < 8)
}

fn values(rest: &str, ln: usize, what: &str) -> Result<Vec<u64>, ImportError> {
    rest.split_whitespace().map(|v| num(v, ln, what)).collect()
}

/// What the text holds, line by line.
#[derive(Default)]
struct Text {
    tlines: Vec<Option<TLine>>,
    rows: Vec<(u64, Vec<u64>)>,
    total: Option<Vec<u64>>,
    mins: Option<Vec<u64>>,
    avgs: Option<Vec<u64>>,
    maxs: Option<Vec<u64>>,
    overflows: Option<Vec<u64>>,
    /// `# Thread N: 00012 00456 # 00030 others` after `# Histogram Overflow at cycle
    /// number:`: each thread's listed cycle numbers (at most [`MAX_OUTLIERS`] kept).
    outliers: Vec<Option<Vec<u64>>>,
    histogram: bool,
    dma: bool,
    /// The last line had no newline and was left out.
    cut_line: Option<usize>,
    notes: Vec<String>,
}

impl Text {
    fn read(text: &str) -> Result<Self, ImportError> {
        let mut t = Text::default();
        let unterminated = !text.is_empty() && !text.ends_with('\n');
        let nlines = text.lines().count();
        let mut in_hist = false;
        for (i, raw) in text.lines().enumerate() {
            let ln = i + 1;
            let maybe_cut = unterminated && ln == nlines;
            let line = strip_escapes(raw);
            let l = line.trim_end();
            let lt = l.trim_start();
            if lt.starts_with("T:") {
                if maybe_cut && tline_is_cut(lt) {
                    t.cut_line = Some(ln);
                    continue;
                }
                let (idx, tl) = parse_tline(lt, ln)?;
                if tl.stats().is_none() {
                    return Err(ImportError::Line {
                        line: ln,
                        message: "T: line without C:, Min:, Avg: and Max:".into(),
                        value: lt.to_string(),
                    });
                }
                if t.tlines.len() <= idx {
                    t.tlines.resize(idx + 1, None);
                }
                t.tlines[idx] = Some(tl);
                continue;
            }
            // A last line without its newline was cut, unless it is one that carries nothing
            // the import reads (the overflows' cycle numbers).
            let harmless = l.is_empty()
                || l.starts_with("# Thread ")
                || l.starts_with("# Histogram Overflow at");
            if maybe_cut && !harmless {
                t.cut_line = Some(ln);
                continue;
            }
            if l.starts_with("# /dev/cpu_dma_latency set to") {
                t.dma = true;
            } else if l == "# Histogram" {
                in_hist = true;
                t.histogram = true;
            } else if let Some(r) = l.strip_prefix("# Total:") {
                t.total = Some(values(r, ln, "total")?);
            } else if let Some(r) = l.strip_prefix("# Min Latencies:") {
                t.mins = Some(values(r, ln, "min latency")?);
            } else if let Some(r) = l.strip_prefix("# Avg Latencies:") {
                t.avgs = Some(values(r, ln, "avg latency")?);
            } else if let Some(r) = l.strip_prefix("# Max Latencies:") {
                t.maxs = Some(values(r, ln, "max latency")?);
            } else if let Some(r) = l.strip_prefix("# Histogram Overflows:") {
                t.overflows = Some(values(r, ln, "overflow count")?);
            } else if let Some(r) = l.strip_prefix("# Thread ").filter(|_| !maybe_cut) {
                // an overflow list: `N: cycle cycle … [# NNNNN others]`
                let Some((idx, rest)) = r.split_once(':') else { continue };
                let idx: usize = num(idx.trim(), ln, "thread number")?;
                if idx >= MAX_THREADS {
                    continue;
                }
                let listed = rest.split('#').next().unwrap_or_default();
                let mut cycles = values(listed, ln, "overflow cycle number")?;
                cycles.truncate(MAX_OUTLIERS);
                if t.outliers.len() <= idx {
                    t.outliers.resize(idx + 1, None);
                }
                t.outliers[idx] = Some(cycles);
            } else if let Some(r) = l.strip_prefix("# Break value:") {
                t.notes.push(format!(
                    "cyclictest stopped on its break threshold (-b): break value {} us",
                    r.trim()
                ));
            } else if in_hist && l.starts_with(|c: char| c.is_ascii_digit()) {
                let mut v = values(l, ln, "histogram row")?;
                let idx = v.remove(0);
                if t.rows.last().is_some_and(|(prev, _)| *prev >= idx) {
                    return Err(ImportError::Line {
                        line: ln,
                        message: "histogram rows out of order".into(),
                        value: l.to_string(),
                    });
                }
                if t.rows.len() >= 1_000_000 {
                    return Err(ImportError::Line {
                        line: ln,
                        message: "more than a million histogram rows".into(),
                        value: l.to_string(),
                    });
                }
                t.rows.push((idx, v));
            }
        }
        Ok(t)
    }

    /// With `-h`, the summary cyclictest always prints after the histogram is complete.
    fn summary_complete(&self) -> bool {
        self.mins.is_some()
            && self.avgs.is_some()
            && self.maxs.is_some()
            && self.overflows.is_some()
    }

    /// The number of measuring threads, and whether rows carry `-H`'s sum column.
    fn threads(&self) -> Result<(usize, bool), ImportError> {
        let tcount = self.tlines.len();
        let n = self.mins.as_ref().map(Vec::len).filter(|n| *n > 0).unwrap_or(tcount);
        let cols = self.rows.first().map(|r| r.1.len());
        let n = if n == 0 { cols.unwrap_or(0) } else { n };
        if n > MAX_THREADS {
            return Err(ImportError::Inconsistent(format!("{n} threads: not cyclictest output")));
        }
        let sum = cols.is_some_and(|c| c == n + 1);
        if let Some((idx, r)) = self.rows.iter().find(|(_, r)| r.len() != n + usize::from(sum)) {
            return Err(ImportError::Inconsistent(format!(
                "histogram row {idx:06} has {} columns where the others have {}",
                r.len(),
                n + usize::from(sum)
            )));
        }
        Ok((n, sum))
    }
}

/// Per-thread summary lines must have one value per thread (`-H` adds one to Max and
/// Overflows when there is more than one thread).
fn check_width(what: &str, v: &Option<Vec<u64>>, n: usize, sum: bool) -> Result<(), ImportError> {
    match v {
        Some(v) if v.len() != n && !(sum && n > 1 && v.len() == n + 1) => Err(
            ImportError::Inconsistent(format!("`# {what}` has {} values for {n} threads", v.len())),
        ),
        _ => Ok(()),
    }
}

/// Import cyclictest's text output.
pub fn import_text(text: &str) -> Result<LatencyResult, ImportError> {
    let mut t = Text::read(text)?;
    let (n, sum) = t.threads()?;
    if n == 0 {
        return Err(ImportError::NoData(match t.cut_line {
            Some(_) => "the input ends inside the only `T:` line: it was cut short".into(),
            None => {
                "no `T:` lines and no `# Min Latencies:` summary: is this cyclictest output?".into()
            }
        }));
    }
    let complete = !t.histogram || t.summary_complete();
    for (what, v) in [
        ("Min Latencies:", &t.mins),
        ("Avg Latencies:", &t.avgs),
        ("Max Latencies:", &t.maxs),
        ("Histogram Overflows:", &t.overflows),
        ("Total:", &t.total),
    ] {
        check_width(what, v, n, sum)?;
    }
    let pick = |v: &Option<Vec<u64>>, ti: usize| v.as_ref().and_then(|v| v.get(ti).copied());
    let mut notes = std::mem::take(&mut t.notes);
    let mut threads = Vec::with_capacity(n);
    for ti in 0..n {
        let who = format!("thread {ti}");
        let tl = t.tlines.get(ti).cloned().flatten();
        if !t.histogram && tl.is_none() && t.mins.is_none() {
            return Err(ImportError::Inconsistent(format!("no `T: {ti}` line")));
        }
        let tl = tl.unwrap_or_default();
        let mut buckets = Vec::new();
        for (idx, cols) in &t.rows {
            let c = cols.get(ti).copied().unwrap_or(0);
            if c > 0 {
                let lo = us_to_ns(*idx, "a histogram row")?;
                buckets.push(Bucket { lo_ns: lo, hi_ns: lo + 1000, count: c });
            }
        }
        let in_range = buckets.iter().fold(0u64, |a, b| a.saturating_add(b.count));
        if let Some(total) = pick(&t.total, ti).filter(|_| complete) {
            if total != in_range {
                return Err(ImportError::Inconsistent(format!(
                    "{who}: `# Total:` says {total} samples but its histogram rows add up to {in_range}"
                )));
            }
        }
        let overflow = pick(&t.overflows, ti).unwrap_or(0);
        let printed = (
            pick(&t.mins, ti).or(tl.min),
            pick(&t.avgs, ti).or(tl.avg),
            pick(&t.maxs, ti).or(tl.max),
        );
        // Only the summary lines (`grep Latencies`): min/avg/max per thread, no count.
        let mut count_unknown = false;
        let stats = if t.histogram && complete {
            let count = in_range.saturating_add(overflow);
            if let Some(c) = tl.cycles.filter(|c| *c != count) {
                notes.push(format!(
                    "{who}: its T: line counts {c} cycles but the histogram and its overflows hold {count}; the histogram's count is used"
                ));
            }
            let (min, avg, max) = match printed {
                _ if count == 0 => (0, 0, 0),
                (Some(min), Some(avg), Some(max)) => (min, avg, max),
                _ => return Err(ImportError::Inconsistent(format!("{who}: no summary values"))),
            };
            let (min, avg, max) = (
                us_to_ns(min, "a minimum")?,
                us_to_ns(avg, "an average")?,
                us_to_ns(max, "a maximum")?,
            );
            summary_from_buckets(&buckets, overflow, min, avg, max)
        } else if t.histogram {
            // Cut short: the rows read are a lower bound of the run; percentiles unknown.
            truncated_summary(&tl, &buckets, in_range.saturating_add(overflow))?
        } else {
            match (tl.cycles, printed) {
                (Some(0), _) => Summary::default(),
                (count, (Some(min), Some(avg), Some(max))) => {
                    count_unknown = count.is_none();
                    let s = summary_without_histogram(
                        count.unwrap_or(1),
                        us_to_ns(min, "a minimum")?,
                        us_to_ns(avg, "an average")?,
                        us_to_ns(max, "a maximum")?,
                    );
                    // Checked as one sample (min ≤ avg ≤ max), stored without a count.
                    check_thread(&who, &s, &buckets, Printed::Lower)?;
                    Summary { count: count.unwrap_or(0), ..s }
                }
                _ => return Err(ImportError::Inconsistent(format!("{who}: no C:/Min:/Avg:/Max:"))),
            }
        };
        if complete {
            check_thread(&who, &stats, &buckets, Printed::Lower)?;
        }
        threads.push(ThreadResult {
            cpu: None,
            stats,
            count_unknown,
            overruns: 0,
            histogram: HistogramData {
                config: None,
                count: stats.count,
                min_ns: Some(stats.min_ns),
                max_ns: Some(stats.max_ns),
                buckets,
                overflow,
                ..HistogramData::default()
            },
            // the listed cycle numbers of a dense (`# Total:`) histogram of N rows: the
            // samples at or above N µs
            outliers: t
                .total
                .as_ref()
                .zip(t.outliers.get(ti).cloned().flatten())
                .filter(|_| complete)
                .map(|(_, cycles)| Outliers {
                    at_or_above_ns: (t.rows.len() as u64).saturating_mul(1000),
                    count: overflow,
                    cycles,
                }),
            last_ns: tl.act.map(|a| a.saturating_mul(1000)),
            tid: tl.tid,
            priority: tl.prio,
            interval_ns: tl.interval_us.map(|i| i.saturating_mul(1000)),
            ..ThreadResult::default()
        });
    }
    let layout = if t.rows.is_empty() {
        None
    } else if t.total.is_some() {
        Some("rt-tests <=2.6 (with # Total)")
    } else {
        Some("rt-tests >=2.7 (sparse, no # Total)")
    };
    let partial = !complete || t.cut_line.is_some();
    if !complete {
        let from_t = t.tlines.iter().flatten().count() == n;
        notes.insert(
            0,
            format!(
                "CUT SHORT: the input ends before cyclictest's summary (`# Min/Avg/Max Latencies:`, `# Histogram Overflows:`), which it always prints with -h. Percentiles are unknown; {}",
                if from_t {
                    "count, min, avg and max are those of the T: lines."
                } else {
                    "min, avg and max come from the histogram rows read: the true maximum may be higher, samples past the cut are not counted."
                }
            ),
        );
    } else if let Some(ln) = t.cut_line {
        notes.insert(
            0,
            format!(
                "CUT SHORT: line {ln}, the last, has no newline and is incomplete: it was left out"
            ),
        );
    }
    if threads.iter().any(|t| t.histogram.overflow > 0 && t.stats.p9999_ns.is_none()) {
        notes.push(OVERFLOW_PERCENTILES_NOTE.into());
    }
    if threads.iter().any(|t| t.count_unknown) {
        notes.push(SUMMARY_ONLY_NOTE.into());
    } else if t.rows.is_empty() && complete {
        notes.push(NO_HISTOGRAM_NOTE.into());
    }
    notes.push(OVERRUNS_NOTE.into());
    let mut envelope = Envelope::new(crate::Kind::Timer, "cyclictest");
    envelope.partial = partial;
    envelope.params = Params::Latency(LatencyParams {
        source: Some("cyclictest".into()),
        format: Some("text".into()),
        histogram_layout: layout.map(str::to_string),
        dma_latency: Some(t.dma),
        ..LatencyParams::default()
    });
    Ok(LatencyResult {
        envelope,
        realtime: true,
        series_step_s: 1,
        threads,
        breaches: Vec::new(),
        load: None,
        notes,
        tracer: None,
    })
}

/// The statistics of a thread whose histogram was cut: from its `T:` line when it has one,
/// else from the rows read (the maximum a lower bound); percentiles unknown.
fn truncated_summary(tl: &TLine, buckets: &[Bucket], read: u64) -> Result<Summary, ImportError> {
    if let Some((c, min, avg, max)) = tl.stats() {
        if c == 0 {
            return Ok(Summary::default());
        }
        return Ok(summary_without_histogram(
            c,
            us_to_ns(min, "a minimum")?,
            us_to_ns(avg, "an average")?,
            us_to_ns(max, "a maximum")?,
        ));
    }
    let (Some(first), Some(last)) = (buckets.first(), buckets.last()) else {
        return Ok(Summary::default());
    };
    let sum: f64 = buckets.iter().map(|b| (b.lo_ns as f64 + 500.0) * b.count as f64).sum();
    let avg = (sum / read.max(1) as f64).round() as u64;
    Ok(summary_without_histogram(read, first.lo_ns, avg, last.lo_ns))
}

/// A JSON number that must be a whole, non-negative value.
fn json_u64(t: &Value, key: &str, who: &str) -> Result<u64, ImportError> {
    t[key].as_u64().ok_or_else(|| {
        ImportError::Json(format!(
            "{who}: {key:?} missing or not a non-negative integer: {}",
            t[key]
        ))
    })
}

/// The CPU of a thread: absent or -1 (not pinned) is `None`; anything else must be a CPU.
pub(crate) fn json_cpu(t: &Value, who: &str) -> Result<Option<u32>, ImportError> {
    match &t["cpu"] {
        Value::Null => Ok(None),
        v if v.as_i64() == Some(-1) => Ok(None),
        v => {
            v.as_u64().and_then(|c| u32::try_from(c).ok()).map(Some).ok_or_else(|| {
                ImportError::Json(format!("{who}: \"cpu\" is not a CPU number: {v}"))
            })
        }
    }
}

/// Import cyclictest's `--json=FILE` output.
pub fn import_json(text: &str) -> Result<LatencyResult, ImportError> {
    let v = rtjson::parse(text)?;
    let threads_v = v["thread"].as_object().ok_or_else(|| {
        ImportError::Json("no \"thread\" object: is this cyclictest --json output?".into())
    })?;
    if threads_v.is_empty() {
        return Err(ImportError::NoData("the \"thread\" object is empty".into()));
    }
    let ns = v["resolution_in_ns"].as_i64() == Some(1);
    let unit = if ns { 1 } else { 1000 };
    let to_ns =
        |x: u64, what: &str| if ns { super::plausible_ns(x, what) } else { us_to_ns(x, what) };
    let mut keyed: Vec<(u64, &Value)> = threads_v
        .iter()
        .map(|(k, t)| {
            k.parse::<u64>()
                .map(|k| (k, t))
                .map_err(|_| ImportError::Json(format!("thread key {k:?} is not a number")))
        })
        .collect::<Result<_, _>>()?;
    keyed.sort_by_key(|(k, _)| *k);
    let mut threads = Vec::new();
    let mut any_hist = false;
    for (k, t) in keyed {
        let who = format!("thread {k}");
        let cycles = json_u64(t, "cycles", &who)?;
        let entries = rtjson::histogram_entries(&t["histogram"])?;
        any_hist |= !entries.is_empty();
        let mut buckets = Vec::with_capacity(entries.len());
        for (idx, c) in &entries {
            if *idx < 0.0 || idx.fract() != 0.0 {
                return Err(ImportError::Json(format!("{who}: histogram bucket {idx}")));
            }
            let lo = to_ns(*idx as u64, "a histogram bucket")?;
            buckets.push(Bucket { lo_ns: lo, hi_ns: lo + unit, count: *c });
        }
        let in_range = buckets.iter().fold(0u64, |a, b| a.saturating_add(b.count));
        if in_range > cycles {
            return Err(ImportError::Inconsistent(format!(
                "{who}: its histogram holds {in_range} samples but it counts {cycles} cycles"
            )));
        }
        let overflow = if entries.is_empty() { 0 } else { cycles - in_range };
        let stats = if cycles == 0 {
            Summary::default()
        } else {
            let min = to_ns(json_u64(t, "min", &who)?, "a minimum")?;
            let max = to_ns(json_u64(t, "max", &who)?, "a maximum")?;
            let avg = t["avg"].as_f64().ok_or_else(|| {
                ImportError::Json(format!("{who}: \"avg\" missing or not a number"))
            })?;
            let avg = super::float_to_ns(avg, unit as f64, "an average")?;
            if entries.is_empty() {
                summary_without_histogram(cycles, min, avg, max)
            } else {
                summary_from_buckets(&buckets, overflow, min, avg, max)
            }
        };
        check_thread(&who, &stats, &buckets, Printed::Lower)?;
        threads.push(ThreadResult {
            cpu: json_cpu(t, &who)?,
            stats,
            overruns: 0,
            histogram: HistogramData {
                config: None,
                count: cycles,
                min_ns: Some(stats.min_ns),
                max_ns: Some(stats.max_ns),
                buckets,
                overflow,
                ..HistogramData::default()
            },
            ..ThreadResult::default()
        });
    }
    let mut notes = Vec::new();
    if threads.iter().any(|t| t.histogram.overflow > 0 && t.stats.p9999_ns.is_none()) {
        notes.push(OVERFLOW_PERCENTILES_NOTE.into());
    }
    if !any_hist {
        notes.push(NO_HISTOGRAM_NOTE.into());
    }
    notes.push(OVERRUNS_NOTE.into());
    let mut envelope = Envelope::new(crate::Kind::Timer, &rtjson::tool(&v, "cyclictest"));
    envelope.host = rtjson::host(&v);
    envelope.started_at = v["start_time"].as_str().map(str::to_string);
    envelope.failed = rtjson::failed(&v, "cyclictest");
    envelope.params = Params::Latency(LatencyParams {
        source: Some("cyclictest".into()),
        format: Some("json".into()),
        cmdline: rtjson::field(&v, "cmdline").and_then(Value::as_str).map(str::to_string),
        return_code: v["return_code"].as_i64(),
        ..LatencyParams::default()
    });
    Ok(LatencyResult {
        envelope,
        realtime: true,
        series_step_s: 1,
        threads,
        breaches: Vec::new(),
        load: None,
        notes,
        tracer: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H2: &str = "# Histogram\n000001 000005\t000001\n000002 000003\t000000\n# Total: 000000008 000000001\n# Min Latencies: 00001 00001\n# Avg Latencies: 00001 00001\n# Max Latencies: 00002 00001\n# Histogram Overflows: 00000 00000\n# Histogram Overflow at cycle number:\n# Thread 0:\n# Thread 1:\n";

    #[test]
    fn live_line_with_escape_is_parsed() {
        let text = "policy: fifo: loadavg: 1.14 0.36 0.12 2/91 7145          \n\nT: 0 ( 7145) P:95 I:1000 C:     10 Min:     28 Act:   29 Avg:   29 Max:      31\n\u{1b}[3Apolicy: fifo: x\n\nT: 0 ( 7145) P:95 I:1000 C:     20 Min:     27 Act:   29 Avg:   29 Max:      40\n";
        let r = import_text(text).unwrap();
        assert_eq!(r.threads.len(), 1);
        let t = &r.threads[0];
        assert_eq!((t.stats.count, t.stats.min_ns, t.stats.max_ns), (20, 27_000, 40_000));
        assert_eq!((t.tid, t.priority, t.interval_ns), (Some(7145), Some(95), Some(1_000_000)));
        assert_eq!(t.stats.p99_ns, None, "no histogram: unknown, not 0");
        assert!(!r.envelope.partial);
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
        assert!(matches!(import_json(r#"{"thread":{}}"#), Err(ImportError::NoData(_))));
    }

    #[test]
    fn a_whole_histogram_imports_with_its_summary() {
        let r = import_text(H2).unwrap();
        assert!(!r.envelope.partial, "{:?}", r.notes);
        assert_eq!(r.threads.len(), 2);
        assert_eq!(r.threads[0].stats.count, 8);
        assert_eq!(r.threads[0].stats.p50_ns, Some(1_999));
    }

    #[test]
    fn a_histogram_cut_before_its_summary_is_partial_not_zero() {
        for cut in [H2.find("# Total").unwrap(), H2.find("# Max").unwrap() + 20] {
            let r = import_text(&H2[..cut]).unwrap();
            assert!(r.envelope.partial, "cut at {cut}");
            assert!(r.notes[0].starts_with("CUT SHORT"), "{:?}", r.notes);
            let t = &r.threads[0];
            assert_eq!(t.stats.p99_ns, None);
            assert_eq!(t.stats.max_ns, 2_000, "the highest row read is a lower bound of the max");
        }
    }

    #[test]
    fn a_cut_t_line_is_left_out_and_partial() {
        let whole =
            "T: 0 ( 7163) P:99 I:1000 C:  10000 Min:     14 Act:   57 Avg:   55 Max:     131\n";
        let r = import_text(whole).unwrap();
        assert!(!r.envelope.partial);
        let no_newline = whole.trim_end();
        assert!(!import_text(no_newline).unwrap().envelope.partial, "Max:%8ld is whole");
        let cut = &whole[..whole.len() - 3];
        assert!(matches!(import_text(cut), Err(ImportError::NoData(_))));
        let two = format!("{whole}{cut}");
        let r = import_text(&two).unwrap();
        assert!(r.envelope.partial);
        assert_eq!(r.threads[0].stats.max_ns, 131_000);
    }

    #[test]
    fn contradictions_are_errors() {
        let bad = [
            H2.replace("# Total: 000000008", "# Total: 000000009"),
            H2.replace("# Max Latencies: 00002", "# Max Latencies: 00001"),
            H2.replace("# Min Latencies: 00001 00001", "# Min Latencies: 00003 00001"),
            H2.replace("# Avg Latencies: 00001", "# Avg Latencies: 00009"),
            H2.replace("000002 000003\t000000", "000002 000003"),
            H2.replace("# Min Latencies: 00001 00001", "# Min Latencies: 00001"),
            H2.replace("000002 000003", "000001 000003"),
            H2.replace("# Max Latencies: 00002", "# Max Latencies: 99999999999999999"),
            "T: 0 ( 1) P:95 I:1000 C: 10 Min: 5 Act: 1 Avg: 9 Max: 3\n".into(),
            "T: 0 ( 1) P:95 I:1000 C: 10\nT: 0 ( 1) P:95 I:1000 C: 10 Min: 1 Act: 1 Avg: 1 Max:        1\n".into(),
        ];
        for text in &bad {
            assert!(import_text(text).is_err(), "accepted:\n{text}");
        }
    }

    #[test]
    fn json_contradictions_are_errors() {
        let ok = r#"{"thread":{"0":{"histogram":{"3":2},"cycles":3,"min":3,"max":50,"avg":20.0,"cpu":1}}}"#;
        let r = import_json(ok).unwrap();
        assert_eq!((r.threads[0].cpu, r.threads[0].histogram.overflow), (Some(1), 1));
        for (from, to) in [
            ("\"max\":50", "\"max\":-1"),
            ("\"max\":50", "\"max\":2"),
            ("\"avg\":20.0", "\"avg\":1e308"),
            ("\"cpu\":1", "\"cpu\":\"x\""),
            ("\"cycles\":3", "\"cycles\":1"),
            ("{\"3\":2}", "{\"three\":2}"),
            ("\"0\":{", "\"zero\":{"),
            ("\"min\":3,", ""),
        ] {
            let text = ok.replace(from, to);
            assert!(import_json(&text).is_err(), "accepted {to}");
        }
        let unpinned = ok.replace("\"cpu\":1", "\"cpu\":-1");
        assert_eq!(import_json(&unpinned).unwrap().threads[0].cpu, None);
    }

    #[test]
    fn sum_column_of_capital_h_is_ignored() {
        let r = import_text("# Histogram\n000001 000005\t000001\t000006\n# Min Latencies: 00001 00001\n# Avg Latencies: 00001 00001\n# Max Latencies: 00001 00001 00001\n# Histogram Overflows: 00000 00000 00000\n").unwrap();
        assert_eq!(r.threads.len(), 2);
        assert!(!r.envelope.partial);
    }
}
