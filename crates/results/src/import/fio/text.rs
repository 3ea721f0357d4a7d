//! fio's normal (text) output, as `fio … > fio.log` keeps it: per job a `NAME: (groupid=…)`
//! header, the `write: IOPS=…(…/NNNmsec)` line, the `clat`/`lat percentiles` block, the
//! `fsync/fdatasync/sync_file_range:` section with `sync (usec): min=…, max=…, avg=…, stdev=…`
//! and its `sync percentiles (usec):` block, `issued rwts: total=r,w,t,s`; the output ends with
//! `Run status group …`. Values follow fio's `num2str` (`1935.7k`) and its units (`nsec`,
//! `usec`, `msec`). A `sync` block without a job header (pasted from a log) is one job named
//! `fio`; an output without its `Run status group` summary was cut short (`partial`).

use super::{FioImportError, Job, Read, SyncLat};

/// fio's `num2str` value: a number with an optional SI suffix (`1935.7k`).
fn si(s: &str) -> Option<f64> {
    let s = s.trim();
    let (digits, mult) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c {
                'k' | 'K' => 1e3,
                'M' => 1e6,
                'G' => 1e9,
                'T' => 1e12,
                'P' => 1e15,
                _ => return None,
            };
            (s.get(..i)?, m)
        }
        _ => (s, 1.0),
    };
    let v: f64 = digits.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * mult)
}

/// ns per unit of a `(nsec)` / `(usec)` / `(msec)` label.
fn unit(label: &str) -> Option<f64> {
    if label.contains("(nsec)") {
        Some(1.0)
    } else if label.contains("(usec)") {
        Some(1e3)
    } else if label.contains("(msec)") {
        Some(1e6)
    } else {
        None
    }
}

/// `key=value` of a comma-separated line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split(',').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().rsplit(' ').next() == Some(key)).then_some(v.trim())
    })
}

/// A percentile block being read: its name (`sync`, `clat`, `lat`), unit and entries.
struct Block {
    name: String,
    unit: f64,
    entries: Vec<(f64, u64)>,
    closed: bool,
}

/// One job as read.
#[derive(Default)]
struct JobText {
    name: String,
    header: bool,
    err: Option<String>,
    iops: Option<f64>,
    runtime_ms: Option<u64>,
    /// `sync (usec): min, max, avg, stdev` in ns.
    sync: Option<(f64, f64, f64, f64)>,
    blocks: Vec<Block>,
    writes: Option<u64>,
    syncs: Option<u64>,
}

fn text_err(line: usize, message: impl Into<String>) -> FioImportError {
    FioImportError::Text { line, message: message.into() }
}

impl JobText {
    /// A `|  1.00th=[ 1528],  5.00th=[ 2896], …` line of the open block.
    fn entries(&mut self, l: &str, ln: usize) -> Result<(), FioImportError> {
        let Some(b) = self.blocks.last_mut().filter(|b| !b.closed) else {
            return Err(text_err(ln, "a percentile line outside a percentile block"));
        };
        for piece in l.trim_start_matches('|').split(',') {
            let piece = piece.trim();
            if piece.is_empty() {
                continue;
            }
            let (p, v) = piece
                .strip_suffix(']')
                .and_then(|x| x.split_once("th=["))
                .ok_or_else(|| text_err(ln, format!("not a percentile: {piece:?}")))?;
            let p: f64 = p
                .trim()
                .parse()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| text_err(ln, format!("not a percentile: {piece:?}")))?;
            let v: u64 =
                v.trim().parse().map_err(|_| text_err(ln, format!("not a value: {piece:?}")))?;
            let ns = (v as f64 * b.unit).min(u64::MAX as f64) as u64;
            b.entries.push((p, ns));
            if b.entries.len() > 1000 {
                return Err(text_err(ln, "more than 1000 percentiles"));
            }
        }
        b.closed = l.trim_end().ends_with(']');
        Ok(())
    }

    fn line(&mut self, l: &str, ln: usize) -> Result<(), FioImportError> {
        let t = l.trim();
        if t.starts_with('|') {
            return self.entries(t, ln);
        }
        if let Some(b) = self.blocks.last().filter(|b| !b.closed) {
            return Err(text_err(ln, format!("the {} percentile block ends early", b.name)));
        }
        if let Some(head) = t.strip_suffix(':').filter(|h| h.contains(" percentiles (")) {
            let name = head.split_whitespace().next().unwrap_or("").to_string();
            let unit = unit(head).ok_or_else(|| text_err(ln, format!("unknown unit in {t:?}")))?;
            self.blocks.push(Block { name, unit, entries: Vec::new(), closed: false });
        } else if let Some(rest) = t.strip_prefix("sync (") {
            let u = unit(&format!("({rest}")).ok_or_else(|| text_err(ln, "unknown unit"))?;
            let get = |k: &str| {
                field(t, k)
                    .and_then(si)
                    .ok_or_else(|| text_err(ln, format!("sync {k}= is not a number")))
            };
            self.sync =
                Some((get("min")? * u, get("max")? * u, get("avg")? * u, get("stdev")? * u));
        } else if let Some(rest) = t.strip_prefix("write:") {
            if let Some(v) = field(rest, "IOPS") {
                self.iops = Some(si(v).ok_or_else(|| text_err(ln, "IOPS= is not a number"))?);
            }
            if let Some((head, _)) = rest.split_once("msec)") {
                let ms = head.rsplit('/').next().unwrap_or("");
                self.runtime_ms = ms.trim().parse().ok();
            }
        } else if let Some(rest) = t.strip_prefix("issued rwts:") {
            let total =
                rest.split_whitespace().find_map(|w| w.strip_prefix("total=")).unwrap_or("");
            let v: Vec<u64> = total.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            self.writes = v.get(1).copied();
            self.syncs = v.get(3).copied();
        }
        Ok(())
    }

    fn finish(self, end: usize) -> Result<Job, FioImportError> {
        let name = self.name;
        if self.blocks.iter().any(|b| !b.closed) {
            return Err(text_err(
                end,
                format!("job {name}: the output ends inside a percentile block"),
            ));
        }
        let Some((min, max, mean, stddev)) = self.sync else {
            return Err(FioImportError::NoSync(name));
        };
        let Some(block) = self.blocks.iter().find(|b| b.name == "sync") else {
            return Err(FioImportError::Inconsistent(format!(
                "job {name}: a sync line but no `sync percentiles` block"
            )));
        };
        let sync = SyncLat {
            min: min.round() as u64,
            max: max.round() as u64,
            mean,
            stddev,
            percentiles: block.entries.clone(),
        };
        let lat = sync.lat_ns(&name)?;
        let mut notes = Vec::new();
        if !self.header {
            notes.push(
                "a fragment: the sync block without its job header (no IOPS, run time or count)"
                    .to_string(),
            );
        }
        let failed =
            self.err.map(|e| format!("fio reported err={e} (an errno: the job's I/O failed)"));
        if let Some(w) = self.blocks.iter().find(|b| b.name != "sync") {
            let p = |q: f64| w.entries.iter().find(|(x, _)| (x - q).abs() < 1e-6).map(|(_, v)| *v);
            if let (Some(p50), Some(p99)) = (p(50.0), p(99.0)) {
                notes.push(format!(
                    "write {} (the page-cache copy, not the sync): p50 {p50} ns, p99 {p99} ns",
                    w.name
                ));
            }
        }
        let ops = match (self.syncs.filter(|s| *s > 0), self.writes) {
            (Some(s), _) => s,
            (None, Some(w)) => {
                notes.push("fio's text does not count fdatasync calls: ops are the writes issued (one sync per write with --fdatasync=1)".into());
                w
            }
            (None, None) => 0,
        };
        Ok(Job {
            name,
            ops,
            iops: self.iops.unwrap_or(0.0),
            runtime_ms: self.runtime_ms.unwrap_or(0),
            lat,
            notes,
            failed,
        })
    }
}

/// Read fio's normal output.
pub(super) fn read(text: &str) -> Result<Read, FioImportError> {
    let mut version = None;
    let mut jobs: Vec<JobText> = Vec::new();
    let mut done = Vec::new();
    let mut summary = false;
    let mut end = 0;
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        end = ln;
        let l = raw.trim_end();
        if l.strip_prefix("fio-").is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit())) {
            version = Some(l.trim().to_string());
        } else if let Some((name, rest)) =
            l.split_once(": (groupid=").filter(|_| !l.starts_with(' '))
        {
            if let Some(j) = jobs.pop() {
                done.push(j.finish(ln)?);
            }
            let err =
                rest.split_once("err=").map(|(_, e)| e.split(':').next().unwrap_or("").trim());
            jobs.push(JobText {
                name: name.trim().to_string(),
                header: true,
                err: err.filter(|e| *e != "0").map(str::to_string),
                ..JobText::default()
            });
        } else if l.starts_with("Run status group") {
            summary = true;
            if let Some(j) = jobs.pop() {
                done.push(j.finish(ln)?);
            }
        } else if let Some(j) = jobs.last_mut() {
            j.line(l, ln)?;
        } else if l.trim_start().starts_with("fsync/fdatasync/sync_file_range") {
            // A sync block pasted without its job.
            jobs.push(JobText { name: "fio".into(), ..JobText::default() });
        }
        if done.len() > 10_000 {
            return Err(text_err(ln, "more than 10000 jobs"));
        }
    }
    if let Some(j) = jobs.pop() {
        done.push(j.finish(end)?);
    }
    if done.is_empty() {
        return Err(FioImportError::NotFio);
    }
    if !summary {
        for j in &mut done {
            j.notes.insert(0, "CUT SHORT: the output ends before fio's `Run status group` summary, which it always prints".into());
        }
    }
    Ok(Read {
        version,
        jobs: done,
        partial: !summary,
        options: serde_json::Value::Null,
        format: "text",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.19's layout (seed 002's etcd run), with num2str's `k` suffix.
    const V319: &str = "etcd: (g=0): rw=write, bs=(R) 2300B-2300B, (W) 2300B-2300B, (T) 2300B-2300B, ioengine=sync, iodepth=1
fio-3.19
Starting 1 process
etcd: (groupid=0, jobs=1): err= 0: pid=408818: Wed Jul 15 02:12:16 2020
  write: IOPS=381, BW=858KiB/s (878kB/s)(29.0MiB/35815msec); 0 zone resets
    clat (usec): min=2, max=434, avg=18.88, stdev=12.67
     lat (usec): min=3, max=435, avg=19.46, stdev=12.96
    clat percentiles (usec):
     |  1.00th=[    5],  5.00th=[    5], 10.00th=[    6], 20.00th=[    7],
     | 30.00th=[    9], 40.00th=[   12], 50.00th=[   17], 60.00th=[   25],
     | 70.00th=[   26], 80.00th=[   32], 90.00th=[   36], 95.00th=[   37],
     | 99.00th=[   47], 99.50th=[   52], 99.90th=[   60], 99.95th=[   66],
     | 99.99th=[  343]
  fsync/fdatasync/sync_file_range:
    sync (usec): min=732, max=1935.7k, avg=2594.14, stdev=19014.96
    sync percentiles (usec):
     |  1.00th=[   832],  5.00th=[   881], 10.00th=[   914], 20.00th=[   971],
     | 30.00th=[  1020], 40.00th=[  1090], 50.00th=[  2933], 60.00th=[  3032],
     | 70.00th=[  3064], 80.00th=[  3130], 90.00th=[  3228], 95.00th=[  3425],
     | 99.00th=[  6194], 99.50th=[  7963], 99.90th=[ 17433], 99.95th=[ 95945],
     | 99.99th=[843056]
  cpu          : usr=0.37%, sys=2.55%, ctx=41884, majf=0, minf=15
     issued rwts: total=0,13677,0,0 short=13677,0,0,0 dropped=0,0,0,0

Run status group 0 (all jobs):
";

    #[test]
    fn fio_3_19_text_with_a_k_suffix() {
        let r = read(V319).unwrap();
        assert!(!r.partial);
        assert_eq!(r.version.as_deref(), Some("fio-3.19"));
        let j = &r.jobs[0];
        assert_eq!((j.name.as_str(), j.ops, j.runtime_ms), ("etcd", 13_677, 35_815));
        assert_eq!((j.lat.max, j.lat.p99, j.lat.p9999), (1_935_700_000, 6_194_000, 843_056_000));
        assert!(
            j.notes.iter().any(|n| n.contains("clat") && n.contains("p99 47000 ns")),
            "{:?}",
            j.notes
        );
    }

    #[test]
    fn a_sync_fragment_is_one_partial_job() {
        let frag = &V319[V319.find("  fsync/").unwrap()..V319.find("  cpu").unwrap()];
        let r = read(frag).unwrap();
        assert!(r.partial);
        assert_eq!(r.jobs[0].name, "fio");
        assert_eq!(r.jobs[0].lat.p50, 2_933_000);
    }

    #[test]
    fn cut_inside_the_sync_block_is_an_error_and_after_it_partial() {
        let inside = &V319[..V319.find("99.00th=[  6194]").unwrap()];
        assert!(read(inside).is_err());
        let after = &V319[..V319.find("  cpu").unwrap()];
        let r = read(after).unwrap();
        assert!(r.partial && r.jobs[0].notes[0].starts_with("CUT SHORT"));
    }

    #[test]
    fn values_read_like_num2str() {
        assert_eq!(si("1935.7k"), Some(1_935_700.0));
        assert_eq!(si("14349k"), Some(14_349_000.0));
        assert_eq!(si("12"), Some(12.0));
        assert_eq!(si("-1"), None);
        assert_eq!(si("1x"), None);
        assert_eq!(si("k"), None);
    }
}
