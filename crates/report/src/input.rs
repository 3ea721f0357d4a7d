//! Report input: each file read with its producer's own type. A document's [`Kind`] comes
//! from its `kind` field (or, for `inspect --json` and `verify --json`, which carry none, from
//! its shape); its [`Body`] is the producer's type read with serde: `results` for
//! measurements, `verify::Report`, `host::Host`, `plan::Plan`. A kind this version does not
//! know keeps its JSON (the report lists its fields); a known kind whose shape does not read
//! becomes [`Body::Unreadable`] with serde's message, shown in the report, never a panic.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Errors reading report inputs. Every one is about the input files (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    /// Over the size bound, or not text (`results::input`).
    #[error(transparent)]
    Input(#[from] results::input::InputError),
    /// A plan file that does not read (the message names the file).
    #[error(transparent)]
    Plan(#[from] plan::PlanError),
    /// Strict mode: inputs that cannot support a verdict (unreadable, newer schema, unknown
    /// kind, nothing measured), one per line.
    #[error("inputs that cannot be judged:\n{}", .0.join("\n"))]
    Unusable(Vec<String>),
}

impl util::exit::Classify for Error {
    fn exit_code(&self) -> util::exit::ExitCode {
        util::exit::ExitCode::Usage
    }
}

/// What a document is. Serialized in the report model as the contract's strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A measurement result (`timer`, `noise`, `ticks`, `fsync`, `etcd`, `watch`).
    Result(results::Kind),
    /// `lowlat verify --json`.
    Verify,
    /// `lowlat inspect --json`.
    Inspect,
    /// A plan file.
    Plan,
    /// A kind this version does not know (`hwlat`), or `unknown` when the document says none.
    Other(String),
}

impl Kind {
    /// The contract name.
    pub fn as_str(&self) -> &str {
        match self {
            Kind::Result(k) => k.as_str(),
            Kind::Verify => "verify",
            Kind::Inspect => "inspect",
            Kind::Plan => "plan",
            Kind::Other(s) => s,
        }
    }

    /// The kind named `s`.
    pub fn named(s: &str) -> Self {
        match s {
            "verify" => Kind::Verify,
            "inspect" => Kind::Inspect,
            "plan" => Kind::Plan,
            other => serde_json::from_value(Value::String(other.to_string()))
                .map(Kind::Result)
                .unwrap_or_else(|_| Kind::Other(other.to_string())),
        }
    }

    /// The kind of a JSON document: its `kind` field, else its shape (`inspect --json` and
    /// `verify --json` carry no `kind`; a `watch` series is an array of samples).
    pub fn detect(v: &Value) -> Self {
        if v.is_array() {
            return Kind::Result(results::Kind::Watch);
        }
        if let Some(k) = v.get("kind").and_then(Value::as_str) {
            return Kind::named(k);
        }
        if v.get("checks").is_some_and(Value::is_array) {
            Kind::Verify
        } else if v.get("topology").is_some() && v.get("cpus").is_some() {
            Kind::Inspect
        } else if v.get("reserved").is_some() && v.get("isolated").is_some() {
            Kind::Plan
        } else {
            Kind::Other("unknown".to_string())
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A document's content, as its producer's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// `timer` and `noise`.
    Latency(Box<results::LatencyResult>),
    Ticks(Box<results::TicksResult>),
    Fsync(Box<results::fsync::FsyncResult>),
    Etcd(Box<results::fsync::EtcdResult>),
    /// `lowlat watch` samples (its JSON lines), oldest first.
    Watch(Vec<results::fsync::WatchSample>),
    Verify(Box<verify::Report>),
    Inspect(Box<host::Host>),
    Plan(Box<plan::Plan>),
    /// A kind this version does not know.
    Other(Box<Generic>),
    /// A known kind whose shape does not read (serde's message).
    Unreadable(String),
}

/// A document of a kind this version does not chart: its top-level fields, and the envelope
/// fields every result carries (`partial`, `host`).
#[derive(Debug, Clone, PartialEq)]
pub struct Generic {
    pub fields: serde_json::Map<String, Value>,
    pub partial: bool,
    pub host: results::HostContext,
}

/// Why a document cannot support a verdict. Without strict mode the report says so loudly
/// (a banner, and no PASS from that document); in strict mode it is an input error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A known kind whose shape does not read (serde's message).
    Unreadable(String),
    /// Written for a newer `schema_version` than this version reads.
    Newer { found: u64, known: u64 },
    /// A kind this version does not know (or no kind at all).
    UnknownKind,
    /// A result without the evidence a verdict needs (`results::evidence`): no samples,
    /// unusable numbers, a failed producer, a partial run.
    NoEvidence(results::NoEvidence),
}

impl Problem {
    /// The document holds numbers of a run that did not complete (partial, failed
    /// producer): a gate fails (exit 1) rather than refusing the input (exit 2).
    pub fn is_failed_run(&self) -> bool {
        matches!(self, Problem::NoEvidence(n) if n.is_failed_run())
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Unreadable(e) => write!(f, "unreadable result: {e}"),
            Problem::Newer { found, known } => write!(
                f,
                "written for schema_version {found}, newer than this lowlat reads ({known}): its numbers may be misread"
            ),
            Problem::UnknownKind => {
                f.write_str("a kind this version of lowlat does not know: nothing in it is judged")
            }
            Problem::NoEvidence(n) => write!(f, "{n}"),
        }
    }
}

/// One input document: where it came from, its kind and its content.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// File name (or a label given by the caller), shown in the report.
    pub source: String,
    pub kind: Kind,
    pub body: Body,
}

fn typed<T: DeserializeOwned>(v: Value, wrap: fn(T) -> Body) -> Body {
    serde_json::from_value(v).map_or_else(|e| Body::Unreadable(e.to_string()), wrap)
}

impl Doc {
    /// A document from an in-memory JSON value (an object, or an array of `watch` samples).
    pub fn from_value(source: impl Into<String>, value: Value) -> Self {
        use results::Kind as R;
        let kind = Kind::detect(&value);
        let body = match &kind {
            Kind::Result(R::Timer | R::Noise) => typed(value, |r| Body::Latency(Box::new(r))),
            Kind::Result(R::Ticks) => typed(value, |r| Body::Ticks(Box::new(r))),
            Kind::Result(R::Fsync) => typed(value, |r| Body::Fsync(Box::new(r))),
            Kind::Result(R::Etcd) => typed(value, |r| Body::Etcd(Box::new(r))),
            Kind::Result(R::Watch) => typed(value, Body::Watch),
            Kind::Verify => typed(value, |r| Body::Verify(Box::new(r))),
            Kind::Inspect => typed(value, |h| Body::Inspect(Box::new(h))),
            Kind::Plan => typed(value, |p| Body::Plan(Box::new(p))),
            Kind::Other(_) => {
                let host = value
                    .get("host")
                    .and_then(|h| serde_json::from_value(h.clone()).ok())
                    .unwrap_or_default();
                let partial = value.get("partial").and_then(Value::as_bool).unwrap_or(false);
                let fields = match value {
                    Value::Object(o) => o,
                    _ => serde_json::Map::new(),
                };
                Body::Other(Box::new(Generic { fields, partial, host }))
            }
        };
        Self { source: source.into(), kind, body }
    }

    /// Parse JSON text: one object, or the JSON lines of `lowlat watch` samples.
    pub fn parse(source: &str, text: &str) -> Result<Self, Error> {
        if let Some(samples) = json_lines(text) {
            return Ok(Self {
                source: source.to_string(),
                kind: Kind::Result(results::Kind::Watch),
                body: Body::Watch(samples),
            });
        }
        if let Some(doc) = Self::parse_result_direct(source, text) {
            return Ok(doc);
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

    /// A measurement result read straight into its type, without the `Value` tree in between
    /// (the tree took ~16x the file in memory; issue 21, item 9): the `kind` field is read
    /// first by a pass that keeps nothing else. `None` (the caller takes the `Value` path, and
    /// its messages) for anything else, or when the direct read fails.
    fn parse_result_direct(source: &str, text: &str) -> Option<Self> {
        use results::Kind as R;
        #[derive(serde::Deserialize)]
        struct Probe {
            #[serde(default)]
            kind: Option<String>,
        }
        fn direct<T: DeserializeOwned>(text: &str, wrap: fn(T) -> Body) -> Option<Body> {
            serde_json::from_str(text).ok().map(wrap)
        }
        let kind = Kind::named(&serde_json::from_str::<Probe>(text).ok()?.kind?);
        let body = match &kind {
            Kind::Result(R::Timer | R::Noise) => direct(text, |r| Body::Latency(Box::new(r))),
            Kind::Result(R::Ticks) => direct(text, |r| Body::Ticks(Box::new(r))),
            Kind::Result(R::Fsync) => direct(text, |r| Body::Fsync(Box::new(r))),
            Kind::Result(R::Etcd) => direct(text, |r| Body::Etcd(Box::new(r))),
            _ => None,
        }?;
        Some(Self { source: source.to_string(), kind, body })
    }

    /// Read and parse a file: a lowlat JSON document or plan file, or a cyclictest / oslat
    /// output (text or `--json`) or fio output (text, JSON or both), converted by the
    /// `results` importers. A file over [`results::input::MAX_INPUT_BYTES`] is refused before
    /// it is read (parsing takes ~16x a file's size in memory). `-` is standard input.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let text = match results::input::read_text_or_stdin(path) {
            Ok(t) => t,
            Err(results::input::InputError::Read { path, source }) => {
                return Err(Error::Read { path, source })
            }
            Err(e) => return Err(e.into()),
        };
        Self::parse_any(&results::input::source_name(path), &text)
    }

    /// Parse a lowlat document or plan file, or import another tool's output (see
    /// [`Doc::load`]).
    pub fn parse_any(source: &str, text: &str) -> Result<Self, Error> {
        if looks_like_plan(text) {
            let plan = plan::Plan::from_yaml(text, source)?;
            return Ok(Self {
                source: source.to_string(),
                kind: Kind::Plan,
                body: Body::Plan(Box::new(plan)),
            });
        }
        let head = text.trim_start().get(..15).unwrap_or("").to_ascii_lowercase();
        if head.starts_with("<!doctype html") || head.starts_with("<html") {
            return Err(Error::Parse {
                path: source.to_string(),
                message: "is an HTML report, not a result file (pass the .json files)".into(),
            });
        }
        let native = Self::parse(source, text);
        if native.as_ref().is_ok_and(|d| d.kind != Kind::Other("unknown".into())) {
            return native;
        }
        let imported = import(text).map(|r| {
            r.map_err(|message| Error::Parse { path: source.to_string(), message })
                .map(|body| Self::imported(source, body))
        });
        match imported {
            Some(r) => r,
            None => native.and_then(|d| match &d.body {
                Body::Other(g)
                    if g.fields.contains_key("jobs") || g.fields.contains_key("thread") =>
                {
                    Err(Error::Parse { path: source.to_string(), message: "not understood".into() })
                }
                _ => Ok(d),
            }),
        }
    }

    fn imported(source: &str, body: Body) -> Self {
        let kind = match &body {
            Body::Latency(r) => Kind::Result(r.envelope.kind),
            _ => Kind::Result(results::Kind::Fsync),
        };
        Self { source: source.to_string(), kind, body }
    }

    /// The envelope of a measurement result (`None` for other documents).
    pub fn envelope(&self) -> Option<&results::Envelope> {
        match &self.body {
            Body::Latency(r) => Some(&r.envelope),
            Body::Ticks(r) => Some(&r.envelope),
            Body::Fsync(r) => Some(&r.envelope),
            Body::Etcd(r) => Some(&r.envelope),
            _ => None,
        }
    }

    /// The `schema_version` the document says it has (`None` when it says none).
    pub fn schema_version(&self) -> Option<u64> {
        match &self.body {
            Body::Inspect(h) => Some(u64::from(h.schema_version)),
            Body::Plan(p) => Some(u64::from(p.schema_version)),
            Body::Verify(v) => Some(u64::from(v.schema_version)),
            Body::Other(g) => g.fields.get("schema_version").and_then(Value::as_u64),
            _ => self.envelope().map(|e| u64::from(e.schema_version)),
        }
    }

    /// The `schema_version` this version reads for the document's kind.
    fn known_schema(&self) -> Option<u64> {
        match &self.kind {
            Kind::Result(_) => Some(u64::from(results::SCHEMA_VERSION)),
            Kind::Inspect => Some(u64::from(host::SCHEMA_VERSION)),
            Kind::Plan => Some(u64::from(plan::SCHEMA_VERSION)),
            Kind::Verify => Some(u64::from(verify::SCHEMA_VERSION)),
            Kind::Other(_) => None,
        }
    }

    /// Why this document cannot support a verdict, if it cannot.
    pub fn problem(&self) -> Option<Problem> {
        if let Body::Unreadable(e) = &self.body {
            return Some(Problem::Unreadable(e.clone()));
        }
        if let Body::Other(_) = &self.body {
            return Some(Problem::UnknownKind);
        }
        if let (Some(found), Some(known)) = (self.schema_version(), self.known_schema()) {
            if found > known {
                return Some(Problem::Newer { found, known });
            }
        }
        use results::Evidence as _;
        let missing = match &self.body {
            Body::Latency(r) => r.no_evidence(),
            Body::Ticks(r) => r.no_evidence(),
            Body::Fsync(r) => r.no_evidence(),
            Body::Etcd(r) => r.no_evidence(),
            Body::Watch(s) => s.no_evidence(),
            _ => None,
        };
        missing.map(Problem::NoEvidence)
    }

    /// The host summary the document carries (a result's `host`; an unknown kind's too).
    pub fn host_context(&self) -> Option<&results::HostContext> {
        match &self.body {
            Body::Other(g) => Some(&g.host),
            _ => self.envelope().map(|e| &e.host),
        }
    }

    /// Was the run cut short?
    pub fn partial(&self) -> bool {
        match &self.body {
            Body::Other(g) => g.partial,
            _ => self.envelope().is_some_and(|e| e.partial),
        }
    }

    /// The hypervisor, when the document says the host is virtualized.
    pub fn virtualization(&self) -> Option<&str> {
        let v = match &self.body {
            Body::Inspect(h) => h.virtualization.as_deref(),
            _ => self.host_context().and_then(|h| h.virtualization.as_deref()),
        };
        v.filter(|s| !s.is_empty())
    }
}

/// A plan file: YAML whose first line (after comments) is its `schema_version`.
fn looks_like_plan(text: &str) -> bool {
    text.lines()
        .map(str::trim_end)
        .find(|l| !l.is_empty() && !l.starts_with('#') && l != &"---")
        .is_some_and(|l| l.starts_with("schema_version:"))
}

/// `lowlat watch` output: two or more lines, each a sample. A crash can leave the last line
/// cut short: what is whole is kept.
fn json_lines(text: &str) -> Option<Vec<results::fsync::WatchSample>> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < 2 || !lines.first()?.trim_start().starts_with('{') {
        return None;
    }
    let mut out = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        match serde_json::from_str(l) {
            Ok(s) => out.push(s),
            Err(e) if e.is_eof() && i + 1 == lines.len() && !out.is_empty() => break,
            Err(_) => return None,
        }
    }
    Some(out)
}

/// Which tool wrote `text`, by content: `Some(Ok(body))` when imported, `Some(Err)` when it
/// looks like that tool's output but does not parse, `None` when it looks like none of them.
fn import(text: &str) -> Option<Result<Body, String>> {
    use results::import::{Error, Imported, Tool};
    let tool = if ["\"fio version\"", "\"jobs\"", ": (groupid=", "fsync/fdatasync/sync_file_range"]
        .iter()
        .any(|m| text.contains(m))
    {
        Tool::Fio
    } else if text.contains("oslat") || text.contains("Counter Freq") || text.contains("\"freq\"") {
        Tool::Oslat
    } else if ["Latencies:", "# Histogram", "cyclictest", "T: 0", "\"thread\""]
        .iter()
        .any(|m| text.contains(m))
    {
        Tool::Cyclictest
    } else {
        return None;
    };
    Some(match results::import::import(tool, text) {
        Ok(Imported::Latency(r)) => Ok(Body::Latency(r)),
        Ok(Imported::Fsync(r)) => Ok(Body::Fsync(r)),
        Err(Error::RtTests(tool, e)) => Err(format!("{tool} output: {e}")),
        Err(Error::Fio(e)) => Err(format!("fio output: {e}")),
    })
}

/// Text of a free-form JSON value (a result's `params`, an unknown kind's fields) for a
/// table cell: strings bare, arrays joined, objects as `k=v`.
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
    /// The direct read (no `Value` tree) gives what the `Value` path gives, for every result
    /// kind among the fixtures; a result the direct read refuses still gets serde's message.
    #[test]
    fn results_read_directly_equal_the_value_path() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for f in ["timer.json", "noise.json", "ticks.json", "fsync.json"] {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            let direct = Doc::parse_result_direct(f, &text).unwrap_or_else(|| panic!("{f}"));
            let via = Doc::from_value(f, serde_json::from_str(&text).unwrap());
            assert_eq!(direct, via, "{f}");
        }
        let bad = r#"{"kind":"timer","threads":"no"}"#;
        assert!(Doc::parse_result_direct("b", bad).is_none());
        assert!(matches!(Doc::parse("b", bad).unwrap().body, Body::Unreadable(_)));
    }

    /// Issue 21, item 9: a 105 MB result took 1.6 GB to report. A file over the bound is
    /// refused before it is read, naming the file, its size and the limit (a sparse file here:
    /// nothing is written to disk).
    #[test]
    fn a_result_over_the_size_bound_is_refused_before_it_is_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("huge.json");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(results::input::MAX_INPUT_BYTES + 1).unwrap();
        let e = Doc::load(&p).unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, Error::Input(_)), "{m}");
        assert!(m.contains(&p.display().to_string()) && m.contains("67108865 bytes"), "{m}");
        assert!(m.contains("64 MiB") && m.contains("limit"), "{m}");
        assert!(matches!(Doc::load(&d.path().join("missing.json")), Err(Error::Read { .. })));
    }

    use super::*;

    #[test]
    fn kind_comes_from_the_field_or_the_shape() {
        let k = |v| Kind::detect(&v);
        assert_eq!(k(serde_json::json!({"kind": "timer"})), Kind::Result(results::Kind::Timer));
        assert_eq!(k(serde_json::json!({"checks": []})), Kind::Verify);
        assert_eq!(k(serde_json::json!({"topology": {}, "cpus": {}})), Kind::Inspect);
        assert_eq!(k(serde_json::json!({"kind": "hwlat"})), Kind::Other("hwlat".into()));
        assert_eq!(k(serde_json::json!({"x": 1})).as_str(), "unknown");
    }

    #[test]
    fn a_plan_file_reads_with_the_plan_crate() {
        let text = "# a comment\nschema_version: 1\nname: lowlat\n";
        assert!(looks_like_plan(text));
        assert!(!looks_like_plan("name: x\nschema_version: 1\n"));
        let e = Doc::parse_any("plan.yaml", text).unwrap_err().to_string();
        assert!(e.contains("plan.yaml: invalid plan"), "{e}");
    }

    #[test]
    fn watch_json_lines_become_one_document() {
        let line = |t: u64, v: u64| {
            serde_json::to_string(&results::fsync::WatchSample {
                time: "2026-01-01T00:00:00Z".into(),
                t_ns: t,
                watch: "storage".into(),
                value_ns: v,
                ..Default::default()
            })
            .unwrap()
        };
        let text = format!("{}\n{}\n{{\"t_ns\":2", line(0, 1000), line(1_000_000_000, 2000));
        let d = Doc::parse("w.jsonl", &text).unwrap();
        assert_eq!(d.kind, Kind::Result(results::Kind::Watch));
        let Body::Watch(s) = &d.body else { panic!("{:?}", d.body) };
        assert_eq!((s.len(), s[0].watch.as_str()), (2, "storage"));
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
    fn a_known_kind_of_the_wrong_shape_is_unreadable_not_a_panic() {
        let d = Doc::parse("t.json", r#"{"kind":"timer","threads":"nope"}"#).unwrap();
        assert!(matches!(&d.body, Body::Unreadable(e) if !e.is_empty()), "{:?}", d.body);
        assert_eq!(d.kind, Kind::Result(results::Kind::Timer));
    }

    #[test]
    fn an_unknown_kind_keeps_its_fields_and_envelope() {
        let d = Doc::parse(
            "h.json",
            r#"{"kind":"hwlat","partial":true,"host":{"virtualization":"kvm"},"gaps":[1]}"#,
        )
        .unwrap();
        assert!(d.partial());
        assert_eq!(d.virtualization(), Some("kvm"));
        let Body::Other(g) = &d.body else { panic!() };
        assert!(g.fields.contains_key("gaps"));
    }
}
