//! fio output → a lowlat `fsync` result: its JSON (`--output-format=json`, `json+`), its
//! normal text (what `fio … > fio.log` keeps), and the mixed `--output-format=normal,json`
//! (text around one JSON document: the JSON is read). Reads the sync-latency block
//! (`jobs[].sync.lat_ns`, or the text's `sync (usec):` line and `sync percentiles` block: the
//! number comparable to etcd's WAL fsync histogram), not the `write` clat, which only times
//! the page-cache copy (the text's `clat`/`lat percentiles` are kept as a note).
//!
//! Numbers are checked: percentile keys must be numbers and the percentiles must rise, the
//! mean must lie between min and max, nothing may be negative; a missing p50/p90/p99/p99.9/
//! p99.99 (fio run with another `--percentile_list`) is an error, not a 0.

mod json;
mod text;

use crate::fsync::{verdicts, FsyncResult, LatNs, Scenario, StorageEnv};
use crate::{Envelope, FsyncParams, Params};

/// Why a fio output could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum FioImportError {
    #[error("not fio JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("no jobs[] array: not fio JSON output")]
    NoJobs,
    #[error("job {0} has no sync latency block: run fio with --fdatasync=1 (or --fsync=1) so it records sync latency")]
    NoSync(String),
    #[error("line {line}: {message}")]
    Text { line: usize, message: String },
    #[error("no fio job found: expected fio's normal output (`NAME: (groupid=…)` and its `sync` block) or its JSON")]
    NotFio,
    /// Numbers that contradict each other or cannot be true.
    #[error("{0}")]
    Inconsistent(String),
}

impl util::exit::Classify for FioImportError {
    fn exit_code(&self) -> util::exit::ExitCode {
        util::exit::ExitCode::Usage
    }
}

/// The percentiles lowlat keeps, as fio names them (`99.90th`, `"99.900000"`).
const WANTED: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// One job's sync latency as fio printed it, in ns, before it becomes a [`Scenario`].
struct SyncLat {
    min: u64,
    max: u64,
    mean: f64,
    stddev: f64,
    /// (percentile, value) in fio's order.
    percentiles: Vec<(f64, u64)>,
}

impl SyncLat {
    /// Check the block and keep lowlat's percentiles.
    fn lat_ns(&self, job: &str) -> Result<LatNs, FioImportError> {
        let bad = |m: String| Err(FioImportError::Inconsistent(format!("job {job}: {m}")));
        let plausible = crate::import::MAX_PLAUSIBLE_NS as f64;
        let mean_ok = self.mean.is_finite() && (0.0..=plausible).contains(&self.mean);
        if !mean_ok || !self.stddev.is_finite() || self.stddev < 0.0 {
            return bad(format!(
                "sync mean {} / stdev {} are not latencies",
                self.mean, self.stddev
            ));
        }
        if self.min > self.max || self.max as f64 > plausible {
            return bad(format!("sync min {} ns and max {} ns", self.min, self.max));
        }
        // min/max may be rounded to 4-5 digits in the text (`1935.7k`): 0.1% slack.
        let slack = |v: u64| v as f64 * 0.001 + 1.0;
        if self.mean + slack(self.min) < self.min as f64
            || self.mean > self.max as f64 + slack(self.max)
        {
            return bad(format!(
                "the sync mean ({:.0} ns) is outside min .. max ({} .. {} ns)",
                self.mean, self.min, self.max
            ));
        }
        let mut sorted = self.percentiles.clone();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let Some(w) = sorted.windows(2).find(|w| w[1].1 < w[0].1) {
            return bad(format!(
                "the sync percentiles fall: p{} = {} ns but p{} = {} ns",
                w[0].0, w[0].1, w[1].0, w[1].1
            ));
        }
        let pick = |p: f64| sorted.iter().find(|(q, _)| (q - p).abs() < 1e-6).map(|(_, v)| *v);
        let got: Vec<Option<u64>> = WANTED.iter().map(|p| pick(*p)).collect();
        let missing: Vec<String> = WANTED
            .iter()
            .zip(&got)
            .filter(|(_, v)| v.is_none())
            .map(|(p, _)| format!("p{p}"))
            .collect();
        if !missing.is_empty() {
            return bad(format!(
                "the sync percentiles lack {} (fio's default list has them: run it without --percentile_list)",
                missing.join(", ")
            ));
        }
        let g = |i: usize| got.get(i).copied().flatten().unwrap_or(0);
        Ok(LatNs {
            min: self.min,
            avg: self.mean.round() as u64,
            max: self.max,
            stddev: self.stddev.round() as u64,
            p50: g(0),
            p90: g(1),
            p99: g(2),
            p999: g(3),
            p9999: g(4),
        })
    }
}

/// One job: what [`Scenario`] needs.
struct Job {
    name: String,
    ops: u64,
    iops: f64,
    runtime_ms: u64,
    lat: LatNs,
    notes: Vec<String>,
    /// fio's own error for the job (`error` ≠ 0 in its JSON, `err=` ≠ 0 in its text).
    failed: Option<String>,
}

/// What one output held.
struct Read {
    /// `fio-3.33`.
    version: Option<String>,
    jobs: Vec<Job>,
    /// The output was cut short.
    partial: bool,
    /// The first job's options (JSON only).
    options: serde_json::Value,
    /// `json`, `normal,json` or `text`.
    format: &'static str,
}

/// Import fio output: JSON, mixed normal+JSON (the JSON is read), or normal text.
pub fn import(text: &str) -> Result<FsyncResult, FioImportError> {
    // The JSON document starts on a line of its own (fio may print notes or its normal
    // output around it).
    let json_start = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .find(|i| text.get(*i..).is_some_and(|t| t.starts_with('{')));
    let read = match json_start {
        Some(start) => json::read(text, start)?,
        None => text::read(text)?,
    };
    if read.jobs.is_empty() {
        return Err(FioImportError::NoJobs);
    }
    let failed: Vec<String> = read
        .jobs
        .iter()
        .filter_map(|j| j.failed.as_ref().map(|e| format!("job {}: {e}", j.name)))
        .collect();
    let scenarios: Vec<Scenario> = read
        .jobs
        .into_iter()
        .map(|j| {
            let mut notes =
                vec!["imported from fio: no per-window series, percentiles at fio's resolution"
                    .into()];
            notes.extend(j.notes);
            Scenario {
                name: j.name,
                ops: j.ops,
                iops: j.iops,
                duration_ns: j.runtime_ms.saturating_mul(1_000_000),
                lat_ns: j.lat,
                verdicts: verdicts(j.lat.p99),
                notes,
                ..Default::default()
            }
        })
        .collect();
    let version = read.version.as_deref().unwrap_or("unknown");
    let mut env =
        Envelope::new(crate::Kind::Fsync, &format!("fio {}", version.trim_start_matches("fio-")));
    env.partial = read.partial;
    env.failed = (!failed.is_empty()).then(|| failed.join("; "));
    env.duration_ns = scenarios.first().map_or(0, |s| s.duration_ns);
    env.params = Params::Fsync(FsyncParams {
        source: Some("fio".into()),
        format: Some(read.format.to_string()),
        job_options: Some(read.options).filter(|o| !o.is_null()),
        ..FsyncParams::default()
    });
    Ok(FsyncResult::new(env, StorageEnv::default(), scenarios))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIO: &str = r#"note: both iodepth >= 1 and synchronous I/O engine are selected
{
  "fio version" : "fio-3.33",
  "jobs" : [ { "jobname" : "etcd", "job options" : {"bs": "2300"},
      "write" : { "iops" : 5337.5, "runtime" : 20000, "total_ios": 106761 },
      "sync" : { "total_ios" : 0, "lat_ns" : { "min" : 66560, "max" : 23531112, "mean" : 138384.2,
        "stddev" : 1000.0, "N" : 106761,
        "percentile" : { "50.000000" : 120320, "90.000000" : 175104, "99.000000" : 313344,
                         "99.900000" : 3031040, "99.990000" : 5275648 } } } } ]
}"#;

    #[test]
    fn imports_sync_block_after_leading_text() {
        let r = import(FIO).unwrap();
        assert_eq!(r.envelope.tool, "fio 3.33");
        assert_eq!(r.ops, 106_761);
        assert_eq!(r.lat_ns.p99, 313_344);
        assert_eq!(r.lat_ns.avg, 138_384);
        assert_eq!(r.scenarios[0].duration_ns, 20_000_000_000);
        assert!(r.verdicts.iter().all(|v| v.pass));
        assert!(!r.envelope.partial);
    }

    #[test]
    fn text_after_the_json_is_ignored() {
        let mixed = format!("{FIO}\netcd: (groupid=0, jobs=1): err= 0: pid=1\n  write: IOPS=1\n");
        let r = import(&mixed).unwrap();
        assert_eq!(r.lat_ns.p99, 313_344);
        let Params::Fsync(p) = &r.envelope.params else { panic!("fsync params") };
        assert_eq!(p.format.as_deref(), Some("normal,json"));
    }

    #[test]
    fn rejects_without_sync_and_malformed() {
        assert!(matches!(
            import(r#"{"jobs":[{"jobname":"a","write":{}}]}"#),
            Err(FioImportError::NoSync(_))
        ));
        assert!(matches!(import(r#"{"x":1}"#), Err(FioImportError::NoJobs)));
        assert!(matches!(import(r#"{"jobs":[{"sync""#), Err(FioImportError::Json(_))));
        assert!(matches!(import(""), Err(FioImportError::NotFio)));
    }

    #[test]
    fn contradictions_are_errors() {
        for (from, to) in [
            ("\"99.000000\" : 313344", "\"abc\" : 313344"),
            ("\"99.000000\" : 313344", "\"99.000000\" : 100"),
            ("\"99.000000\" : 313344", "\"98.000000\" : 313344"),
            ("\"mean\" : 138384.2", "\"mean\" : 1e308"),
            ("\"max\" : 23531112", "\"max\" : -1"),
            ("\"min\" : 66560", "\"min\" : 99999999"),
            ("\"99.900000\" : 3031040", "\"99.900000\" : -5"),
        ] {
            let text = FIO.replace(from, to);
            assert!(import(&text).is_err(), "accepted {to}");
        }
    }
}
