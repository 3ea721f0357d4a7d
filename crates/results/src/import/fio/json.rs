//! fio's JSON (`--output-format=json` / `json+`, alone or inside `normal,json` output): the
//! first JSON document, read with a streaming parser so text after it is left alone.

use serde_json::Value;

use super::{FioImportError, Job, Read, SyncLat};

fn bad(m: String) -> FioImportError {
    FioImportError::Inconsistent(m)
}

/// A latency value in ns: a non-negative number.
fn ns(v: &Value, what: &str) -> Result<f64, FioImportError> {
    v.as_f64()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| bad(format!("{what} is not a latency in ns: {v}")))
}

/// A count or millisecond figure: absent is 0, present must be a non-negative number.
fn count(v: &Value, what: &str) -> Result<u64, FioImportError> {
    match v {
        Value::Null => Ok(0),
        v => v
            .as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .map(|x| x.round() as u64)
            .ok_or_else(|| bad(format!("{what} is not a non-negative number: {v}"))),
    }
}

fn job(j: &Value, i: usize) -> Result<Job, FioImportError> {
    let name = j["jobname"].as_str().map_or_else(|| format!("#{i}"), str::to_string);
    let lat = &j["sync"]["lat_ns"];
    if !lat.is_object() {
        return Err(FioImportError::NoSync(name));
    }
    let who = format!("job {name}: sync.lat_ns");
    let n = match &lat["N"] {
        Value::Null => count(&j["sync"]["total_ios"], &format!("job {name}: sync.total_ios"))?,
        v => count(v, &format!("{who}.N"))?,
    };
    if n == 0 {
        return Err(bad(format!("job {name}: fio recorded no sync (N = 0)")));
    }
    let mut percentiles = Vec::new();
    if let Some(p) = lat["percentile"].as_object() {
        for (k, v) in p {
            let q: f64 =
                k.trim().parse().ok().filter(|q: &f64| (0.0..=100.0).contains(q)).ok_or_else(
                    || bad(format!("{who}.percentile: key {k:?} is not a percentile")),
                )?;
            percentiles.push((q, ns(v, &format!("{who}.percentile[{k:?}]"))?.round() as u64));
        }
    }
    let sync = SyncLat {
        min: ns(&lat["min"], &format!("{who}.min"))?.round() as u64,
        max: ns(&lat["max"], &format!("{who}.max"))?.round() as u64,
        mean: ns(&lat["mean"], &format!("{who}.mean"))?,
        stddev: ns(&lat["stddev"], &format!("{who}.stddev"))?,
        percentiles,
    };
    let notes = Vec::new();
    let failed = match &j["error"] {
        Value::Null => None,
        v if v.as_i64() == Some(0) => None,
        v => Some(format!("fio reported error {v} (an errno: the job's I/O failed)")),
    };
    let iops = j["write"]["iops"].as_f64().unwrap_or(0.0);
    if !iops.is_finite() || iops < 0.0 {
        return Err(bad(format!("job {name}: write.iops {iops}")));
    }
    Ok(Job {
        lat: sync.lat_ns(&name)?,
        ops: n,
        iops,
        runtime_ms: count(&j["write"]["runtime"], "write.runtime")?
            .max(count(&j["job_runtime"], "job_runtime")?),
        name,
        notes,
        failed,
    })
}

/// Read the JSON document that starts at byte `start` of `text`.
pub(super) fn read(text: &str, start: usize) -> Result<Read, FioImportError> {
    let doc = text.get(start..).unwrap_or("");
    let mut stream = serde_json::Deserializer::from_str(doc).into_iter::<Value>();
    let v = match stream.next() {
        Some(v) => v?,
        None => return Err(FioImportError::NoJobs),
    };
    let rest = doc.get(stream.byte_offset()..).unwrap_or("");
    let before = text.get(..start).unwrap_or("");
    let normal = |t: &str| t.lines().any(|l| l.contains(": (groupid="));
    let format = if normal(before) || normal(rest) { "normal,json" } else { "json" };
    let jobs = v["jobs"].as_array().ok_or(FioImportError::NoJobs)?;
    let jobs = jobs.iter().enumerate().map(|(i, j)| job(j, i)).collect::<Result<Vec<_>, _>>()?;
    Ok(Read {
        version: v["fio version"].as_str().map(str::to_string),
        options: v["jobs"][0]["job options"].clone(),
        jobs,
        partial: false,
        format,
    })
}
