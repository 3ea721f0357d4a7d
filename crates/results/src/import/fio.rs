//! fio JSON (`--output-format=json`) → a lowlat `fsync` result. Reads the sync-latency block
//! (`jobs[].sync.lat_ns`, the number comparable to etcd's WAL fsync histogram), not the
//! `write` clat, which only times the page-cache copy.

use crate::fsync::{verdicts, FsyncResult, LatNs, Scenario, StorageEnv};
use crate::Envelope;

/// Why a fio JSON file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum FioImportError {
    #[error("not JSON: {0} (run fio with --output-format=json; a mixed normal,json output must be cut at the first '{{')")]
    Json(#[from] serde_json::Error),
    #[error("no jobs[] array: not fio JSON output")]
    NoJobs,
    #[error("jobs[{0}] has no sync.lat_ns block: run fio with --fdatasync=1 (or --fsync=1) so it records sync latency")]
    NoSync(usize),
}

impl util::exit::Classify for FioImportError {
    fn exit_code(&self) -> util::exit::ExitCode {
        util::exit::ExitCode::Usage
    }
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0).round() as u64)).unwrap_or(0)
}

/// Import fio JSON text. One scenario per job, named after the job.
pub fn import(text: &str) -> Result<FsyncResult, FioImportError> {
    // fio --output-format=normal,json prints text first: start at the first '{'.
    let start = text.find('{').unwrap_or(0);
    let v: serde_json::Value = serde_json::from_str(text.get(start..).unwrap_or(""))?;
    let jobs = v["jobs"].as_array().ok_or(FioImportError::NoJobs)?;
    if jobs.is_empty() {
        return Err(FioImportError::NoJobs);
    }
    let mut scenarios = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let lat = &job["sync"]["lat_ns"];
        if !lat.is_object() {
            return Err(FioImportError::NoSync(i));
        }
        let p = &lat["percentile"];
        let n = lat["N"].as_u64().unwrap_or_else(|| u(&job["sync"]["total_ios"]));
        let runtime_ms = u(&job["write"]["runtime"]).max(u(&job["job_runtime"]));
        let lat_ns = LatNs {
            min: u(&lat["min"]),
            avg: u(&lat["mean"]),
            max: u(&lat["max"]),
            stddev: u(&lat["stddev"]),
            p50: u(&p["50.000000"]),
            p90: u(&p["90.000000"]),
            p99: u(&p["99.000000"]),
            p999: u(&p["99.900000"]),
            p9999: u(&p["99.990000"]),
        };
        let iops = job["write"]["iops"].as_f64().unwrap_or(0.0);
        scenarios.push(Scenario {
            name: job["jobname"].as_str().unwrap_or("fio").to_string(),
            ops: n,
            iops,
            duration_ns: runtime_ms * 1_000_000,
            lat_ns,
            verdicts: verdicts(lat_ns.p99),
            notes: vec![
                "imported from fio: no per-window series, percentiles at fio's resolution".into()
            ],
            ..Default::default()
        });
    }
    let mut env = Envelope::new(
        crate::Kind::Fsync,
        &format!(
            "fio {}",
            v["fio version"].as_str().unwrap_or("unknown").trim_start_matches("fio-")
        ),
    );
    env.duration_ns = scenarios.first().map_or(0, |s| s.duration_ns);
    env.params = jobs.first().map_or(serde_json::Value::Null, |j| j["job options"].clone());
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
    }

    #[test]
    fn rejects_without_sync_and_malformed() {
        assert!(matches!(import(r#"{"jobs":[{"write":{}}]}"#), Err(FioImportError::NoSync(0))));
        assert!(matches!(import(r#"{"x":1}"#), Err(FioImportError::NoJobs)));
        assert!(matches!(import(r#"{"jobs":[{"sync""#), Err(FioImportError::Json(_))));
        assert!(matches!(import(""), Err(FioImportError::Json(_))));
    }
}
