//! Report input: result files read as generic JSON documents identified by `kind`, plus
//! tolerant typed views of the kinds the report understands (timer/noise, ticks, fsync,
//! verify, inspect, plan). Unknown fields are ignored and missing ones default, so each
//! measurement kind plugs in as a section as soon as its files carry the contract names.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::Error;

/// One input document: where it came from, its kind and its JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// File name (or a label given by the caller), shown in the report.
    pub source: String,
    /// `timer`, `noise`, `ticks`, `fsync`, `verify`, `inspect`, `plan`, … (`unknown` if none).
    pub kind: String,
    pub value: Value,
}

impl Doc {
    /// A document from an in-memory JSON value; the kind comes from the value's `kind`
    /// field or, failing that, from its shape.
    pub fn from_value(source: impl Into<String>, value: Value) -> Self {
        let kind = detect_kind(&value);
        Self { source: source.into(), kind, value }
    }

    /// Parse JSON text (one object, or JSON lines of `lowlat watch` samples).
    pub fn parse(source: &str, text: &str) -> Result<Self, Error> {
        if let Some(samples) = json_lines(text) {
            let watch =
                samples.first().and_then(|s| s.get("watch")).cloned().unwrap_or(Value::Null);
            let value = serde_json::json!({"kind": "watch", "watch": watch, "samples": samples});
            return Ok(Self { source: source.to_string(), kind: "watch".into(), value });
        }
        let value: Value = serde_json::from_str(text).map_err(|e| Error::Parse {
            path: source.to_string(),
            message: format!("{e} (expected a lowlat result file in JSON)"),
        })?;
        if !value.is_object() {
            return Err(Error::Parse {
                path: source.to_string(),
                message: "the top level is not a JSON object".to_string(),
            });
        }
        Ok(Self::from_value(source, value))
    }

    /// Read and parse a file: a lowlat JSON document, or a cyclictest / oslat output (text
    /// or `--json`) or fio JSON, converted by the `results` importers.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Read { path: path.display().to_string(), source: e })?;
        Self::parse_any(&path.display().to_string(), &text)
    }

    /// Parse a lowlat document or import another tool's output (see [`Doc::load`]).
    pub fn parse_any(source: &str, text: &str) -> Result<Self, Error> {
        if let Some(plan) = plan_from_yaml(text) {
            return Ok(Self::from_value(source, plan));
        }
        let head = text.trim_start().get(..15).unwrap_or("").to_ascii_lowercase();
        if head.starts_with("<!doctype html") || head.starts_with("<html") {
            return Err(Error::Parse {
                path: source.to_string(),
                message: "is an HTML report, not a result file (pass the .json files)".into(),
            });
        }
        let native = Self::parse(source, text);
        if native.as_ref().is_ok_and(|d| d.kind != "unknown") {
            return native;
        }
        match import(text) {
            Some(Ok(value)) => Ok(Self::from_value(source, value)),
            Some(Err(message)) => Err(Error::Parse { path: source.to_string(), message }),
            None => native.and_then(|d| {
                if d.value.get("jobs").is_some() || d.value.get("thread").is_some() {
                    Err(Error::Parse { path: source.to_string(), message: "not understood".into() })
                } else {
                    Ok(d)
                }
            }),
        }
    }

    /// The common envelope fields (all optional).
    pub fn envelope(&self) -> EnvelopeView {
        view(&self.value).unwrap_or_default()
    }

    /// A typed view of this document, `Err` with the serde message when the shape is wrong.
    pub fn view<T: for<'de> Deserialize<'de>>(&self) -> Result<T, Error> {
        view(&self.value).map_err(|message| Error::Parse { path: self.source.clone(), message })
    }
}

/// A lowlat plan file (YAML): its top-level `name`, `reserved`, `isolated`, `offlined` as a
/// `plan` document (all the report needs: roles in the topology grid, the plan in the header).
/// `None` unless the text starts like a plan file.
pub fn plan_from_yaml(text: &str) -> Option<Value> {
    let first = text.lines().find(|l| !l.trim().is_empty() && !l.starts_with('#'))?;
    if !first.starts_with("schema_version:") || !text.lines().any(|l| l.starts_with("reserved:")) {
        return None;
    }
    let mut o = serde_json::Map::new();
    o.insert("kind".into(), "plan".into());
    for line in text.lines() {
        for key in ["name", "reserved", "isolated", "offlined"] {
            if let Some(v) = line.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
                let v = v.trim().trim_matches(|c| c == '\'' || c == '"');
                o.insert(key.to_string(), Value::String(v.to_string()));
            }
        }
    }
    Some(Value::Object(o))
}

/// `lowlat watch` output: two or more lines, each a JSON object with `t_ns` and `value_ns`.
fn json_lines(text: &str) -> Option<Vec<Value>> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < 2 || !lines.first()?.trim_start().starts_with('{') {
        return None;
    }
    let mut out = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        match serde_json::from_str::<Value>(l) {
            Ok(v) if v.get("t_ns").is_some() && v.get("value_ns").is_some() => out.push(v),
            // A crash can leave the last line cut short: keep what is whole.
            Err(_) if i + 1 == lines.len() && !out.is_empty() => break,
            _ => return None,
        }
    }
    Some(out)
}

/// Which tool wrote `text`, by content: `Some(Ok(json))` when imported, `Some(Err)` when it
/// looks like that tool's output but does not parse, `None` when it looks like none of them.
fn import(text: &str) -> Option<Result<Value, String>> {
    let to_value = |r: Result<Value, serde_json::Error>| r.map_err(|e| e.to_string());
    if text.contains("\"fio version\"") || text.contains("\"jobs\"") {
        let r = results::import::fio::import(text).map_err(|e| format!("fio JSON: {e}"));
        return Some(r.and_then(|r| to_value(serde_json::to_value(r))));
    }
    let oslat =
        text.contains("oslat") || text.contains("Counter Freq") || text.contains("\"freq\"");
    let cyclictest =
        text.contains("Latencies:") || text.contains("cyclictest") || text.contains("T: 0");
    if oslat {
        let r = results::import::oslat::import(text).map_err(|e| format!("oslat output: {e}"));
        return Some(r.and_then(|r| to_value(serde_json::to_value(r))));
    }
    if cyclictest || text.contains("\"thread\"") {
        let r = results::import::cyclictest::import(text)
            .map_err(|e| format!("cyclictest output: {e}"));
        return Some(r.and_then(|r| to_value(serde_json::to_value(r))));
    }
    None
}

fn view<T: for<'de> Deserialize<'de>>(v: &Value) -> Result<T, String> {
    T::deserialize(v).map_err(|e| e.to_string())
}

/// The kind of a document: its `kind` field, else a guess from its shape (`lowlat inspect
/// --json` and `lowlat verify --json` output carry no `kind`).
pub fn detect_kind(v: &Value) -> String {
    if let Some(k) = v.get("kind").and_then(Value::as_str) {
        return k.to_string();
    }
    if v.get("checks").is_some_and(Value::is_array) {
        return "verify".to_string();
    }
    if v.get("topology").is_some() && v.get("cpus").is_some() {
        return "inspect".to_string();
    }
    if v.get("reserved").is_some() && v.get("isolated").is_some() {
        return "plan".to_string();
    }
    "unknown".to_string()
}

/// Envelope fields every result file carries (DESIGN.md "Machine-readable contract").
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct EnvelopeView {
    pub schema_version: Option<u32>,
    pub kind: Option<String>,
    pub partial: bool,
    pub tool: Option<String>,
    pub started_at: Option<String>,
    pub duration_ns: Option<u64>,
    pub host: results::HostContext,
    pub params: Value,
}

/// A non-empty histogram bucket `[lo_ns, hi_ns)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct BucketView {
    pub lo_ns: u64,
    pub hi_ns: u64,
    pub count: u64,
}

/// `histogram {buckets[], overflow}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct HistogramView {
    pub buckets: Vec<BucketView>,
    pub overflow: u64,
}

/// One measured CPU of a timer or noise result.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ThreadView {
    pub cpu: Option<usize>,
    pub count: u64,
    pub overruns: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub stddev_ns: Option<u64>,
    pub p50_ns: Option<u64>,
    pub p90_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    pub p9999_ns: Option<u64>,
    pub histogram: Option<HistogramView>,
    /// Per-second maxima (ns), oldest first.
    #[serde(alias = "max_per_second_ns", alias = "per_second_max_ns", alias = "series_max_ns")]
    pub max_series_ns: Vec<u64>,
    /// Noise: total noise time (ns) over the run.
    #[serde(alias = "noise_ns")]
    pub total_noise_ns: Option<u64>,
    /// Noise: the largest noise time within one second (ns).
    pub max_noise_per_s_ns: Option<u64>,
    /// Noise attribution: counts or times per source (`LOC`, `TIMER`, `ksoftirqd/3`, …).
    pub attribution: Option<Value>,
    /// Threshold breaches (timestamps), counted only.
    pub breaches: Option<Value>,
    /// Noise: per-second noise time (ns).
    pub per_second_noise_ns: Vec<u64>,
    /// Noise: the worst seconds with what the CPU did in them.
    pub worst_seconds: Vec<WorstSecondView>,
}

/// One attributed worst second of a noise run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct WorstSecondView {
    pub second: u64,
    pub max_ns: u64,
    pub noise_ns: u64,
    /// `[name, count]` pairs.
    pub interrupts: Vec<(String, u64)>,
    pub softirqs: Vec<(String, u64)>,
    pub context_switches: Option<u64>,
    /// One-line explanation written by the measurement.
    pub text: String,
}

/// A timer or noise result (`threads[]`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LatencyView {
    pub threads: Vec<ThreadView>,
    /// Optional series at the top level: `{cpu, max_ns[]}` per CPU.
    pub series: Vec<SeriesView>,
    /// Threshold breaches `{cpu, t_ns, value_ns}`.
    pub breaches: Vec<Value>,
    /// The load that ran on the housekeeping CPUs (`{kind, cpus, command}`).
    pub load: Option<Value>,
    /// Notes the measurement wrote (privileges missing, throttling, …).
    pub notes: Vec<String>,
}

/// A per-CPU series kept beside the threads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SeriesView {
    pub cpu: Option<usize>,
    #[serde(alias = "max_per_second_ns", alias = "values_ns")]
    pub max_ns: Vec<u64>,
}

impl LatencyView {
    /// The per-second max series of a thread: its own, else the top-level one for its CPU.
    pub fn series_for(&self, t: &ThreadView) -> Vec<u64> {
        if !t.max_series_ns.is_empty() {
            return t.max_series_ns.clone();
        }
        self.series.iter().find(|s| s.cpu == t.cpu).map(|s| s.max_ns.clone()).unwrap_or_default()
    }
}

/// The latency summary inside an fsync result or scenario (`lat_ns {min, avg, …}`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LatNs {
    pub min: Option<u64>,
    pub avg: Option<u64>,
    pub max: Option<u64>,
    pub stddev: Option<u64>,
    pub p50: Option<u64>,
    pub p90: Option<u64>,
    pub p99: Option<u64>,
    pub p999: Option<u64>,
    pub p9999: Option<u64>,
}

/// One per-second (or per-window) slice of an fsync run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct WindowView {
    /// Window start, seconds since the run began.
    #[serde(alias = "t_s", alias = "second", alias = "start_s")]
    pub t: Option<f64>,
    /// Window start, ns since the run began (lowlat's `windows[]`).
    pub start_ns: Option<u64>,
    pub ops: Option<u64>,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub lat_ns: Option<LatNs>,
}

impl WindowView {
    /// Window start in seconds, from either shape.
    pub fn start_s(&self) -> Option<f64> {
        self.t.or_else(|| self.start_ns.map(|n| n as f64 / 1e9))
    }
    /// The window's p99 (ns), from either shape.
    pub fn p99(&self) -> Option<u64> {
        self.p99_ns.or_else(|| self.lat_ns.as_ref().and_then(|l| l.p99))
    }
    /// The window's max (ns), from either shape.
    pub fn max(&self) -> Option<u64> {
        self.max_ns.or_else(|| self.lat_ns.as_ref().and_then(|l| l.max))
    }
}

/// One row of the fsync mitigation matrix.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ScenarioView {
    #[serde(alias = "scenario", alias = "label")]
    pub name: Option<String>,
    pub interference: Option<Value>,
    pub mitigation: Option<Value>,
    pub ops: Option<u64>,
    pub iops: Option<f64>,
    pub lat_ns: LatNs,
    pub windows: Vec<WindowView>,
}

/// An fsync result.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FsyncView {
    pub ops: Option<u64>,
    pub iops: Option<f64>,
    pub lat_ns: Option<LatNs>,
    pub windows: Vec<WindowView>,
    pub scenarios: Vec<ScenarioView>,
    /// Storage environment (device, scheduler, filesystem, …) as recorded.
    #[serde(alias = "storage")]
    pub environment: Option<Value>,
}

/// One verify check.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CheckView {
    pub id: String,
    pub status: String,
    pub title: Option<String>,
    #[serde(alias = "message")]
    pub summary: Option<String>,
    pub evidence: Value,
    pub fix: Option<String>,
}

/// `verify --json`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct VerifyView {
    pub checks: Vec<CheckView>,
    pub summary: Value,
}

/// One `lowlat watch` sample.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct WatchSampleView {
    pub time: Option<String>,
    pub t_ns: u64,
    pub value_ns: u64,
    pub burst_max_ns: Option<u64>,
    pub dstate: Vec<Value>,
    pub error: Option<String>,
}

/// A `lowlat watch` series (JSON lines).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct WatchView {
    pub watch: Option<String>,
    pub samples: Vec<WatchSampleView>,
}

/// A plan document (`reserved`, `isolated`, `offlined` as cpu-lists).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PlanView {
    pub name: Option<String>,
    pub reserved: Option<String>,
    pub isolated: Option<String>,
    pub offlined: Option<String>,
}

/// Text of a JSON value for a table cell: strings bare, arrays joined, objects as `k=v`.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join("; "),
        Value::Object(o) => o
            .iter()
            .filter(|(_, v)| !v.is_null() && v.as_str() != Some(""))
            .map(|(k, v)| format!("{k}={}", value_text(v)))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_comes_from_the_field_or_the_shape() {
        assert_eq!(detect_kind(&serde_json::json!({"kind": "timer"})), "timer");
        assert_eq!(detect_kind(&serde_json::json!({"checks": []})), "verify");
        assert_eq!(detect_kind(&serde_json::json!({"topology": {}, "cpus": {}})), "inspect");
        assert_eq!(detect_kind(&serde_json::json!({"x": 1})), "unknown");
    }

    #[test]
    fn plan_yaml_becomes_a_plan_document() {
        let d = Doc::parse_any(
            "plan.yaml",
            "schema_version: 1\nname: lowlat\nreserved: '0'\nisolated: 1-3\noptions:\n  name: x\n",
        )
        .unwrap();
        assert_eq!(d.kind, "plan");
        assert_eq!(d.value["reserved"], "0");
        assert_eq!(d.value["isolated"], "1-3");
        assert_eq!(d.value["name"], "lowlat");
        assert!(plan_from_yaml("name: x\nreserved: 1\n").is_none());
    }

    #[test]
    fn watch_json_lines_become_one_document() {
        let text = "{\"t_ns\":0,\"value_ns\":1000,\"watch\":\"storage\"}\n{\"t_ns\":1000000000,\"value_ns\":2000}\n{\"t_ns\":2";
        let d = Doc::parse("w.jsonl", text).unwrap();
        assert_eq!(d.kind, "watch");
        let v: WatchView = d.view().unwrap();
        assert_eq!((v.samples.len(), v.watch.as_deref()), (2, Some("storage")));
        assert!(Doc::parse("x", "{\"a\":1}\n{\"b\":2}").is_err());
    }

    #[test]
    fn malformed_input_is_an_error_naming_the_file() {
        let e = Doc::parse("r.json", "{\"kind\": ").unwrap_err().to_string();
        assert!(e.contains("r.json"), "{e}");
        let e = Doc::parse("r.json", "[1,2]").unwrap_err().to_string();
        assert!(e.contains("not a JSON object"), "{e}");
    }

    #[test]
    fn views_tolerate_extra_and_missing_fields() {
        let d = Doc::parse(
            "t.json",
            r#"{"kind":"timer","future_field":3,"threads":[{"cpu":1,"max_ns":5000,"new":true}]}"#,
        )
        .unwrap();
        let v: LatencyView = d.view().unwrap();
        assert_eq!(v.threads[0].max_ns, Some(5000));
        assert_eq!(v.threads[0].count, 0);
        assert!(d.envelope().host.kernel.is_none());
    }

    #[test]
    fn wrong_types_are_reported_not_panicked() {
        let d = Doc::parse("t.json", r#"{"kind":"timer","threads":"nope"}"#).unwrap();
        let e = d.view::<LatencyView>().unwrap_err().to_string();
        assert!(e.contains("t.json"), "{e}");
    }
}
