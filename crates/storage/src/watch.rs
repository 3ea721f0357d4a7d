//! The pieces of `lowlat watch`: the sync-write canary (like `dd … oflag=sync`) plus a short
//! fdatasync burst, threads in D state with `wchan` tracked across samples, PSI io, the
//! Prometheus textfile, and running a command once for `watch cmd`. Parsers are pure.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use results::fsync::{DState, WatchSample};

use crate::sys;

/// `/proc/<pid>/task/<tid>/stat` → (comm, state char). comm may contain spaces and ')'.
pub fn parse_stat(text: &str) -> Option<(String, char)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let state = text.get(close + 1..)?.trim_start().chars().next()?;
    Some((comm, state))
}

/// `/proc/pressure/io` → (some avg10, full avg10).
pub fn parse_psi(text: &str) -> (Option<f64>, Option<f64>) {
    let get = |kind: &str| {
        text.lines().find(|l| l.starts_with(kind)).and_then(|l| {
            l.split_whitespace()
                .find_map(|kv| kv.strip_prefix("avg10="))
                .and_then(|v| v.parse().ok())
        })
    };
    (get("some"), get("full"))
}

/// Threads in D state now: (pid, tid, comm, wchan).
pub fn scan_dstate(proc_root: &Path) -> Vec<(u32, u32, String, Option<String>)> {
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir(proc_root) else { return out };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(tasks) = std::fs::read_dir(p.path().join("task")) else { continue };
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else { continue };
            if let Some((comm, 'D')) = parse_stat(&stat) {
                let wchan = std::fs::read_to_string(t.path().join("wchan"))
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty() && s != "0");
                out.push((pid, tid, comm, wchan));
            }
        }
    }
    out
}

/// Tracks how many consecutive samples each thread has been in D.
#[derive(Debug, Default)]
pub struct DStateTracker {
    seen: HashMap<(u32, u32), u64>,
}

impl DStateTracker {
    /// Feed one scan; returns the threads with their time in D (consecutive samples × interval).
    pub fn update(
        &mut self,
        now: Vec<(u32, u32, String, Option<String>)>,
        interval: Duration,
    ) -> Vec<DState> {
        let mut next = HashMap::new();
        let mut out = Vec::new();
        for (pid, tid, comm, wchan) in now {
            let n = self.seen.get(&(pid, tid)).copied().unwrap_or(0) + 1;
            next.insert((pid, tid), n);
            out.push(DState { pid, tid, comm, wchan, seen_ns: n * interval.as_nanos() as u64 });
        }
        self.seen = next;
        out.sort_by(|a, b| b.seen_ns.cmp(&a.seen_ns).then(a.tid.cmp(&b.tid)));
        out
    }
}

/// Result of one canary round.
#[derive(Debug, Clone, Copy)]
pub struct CanaryResult {
    pub write_ns: u64,
    pub burst_p50_ns: u64,
    pub burst_max_ns: u64,
}

/// The canary file: an `O_DSYNC` write of `write_size` (in 1 MiB pieces, like `dd bs=1M
/// oflag=sync`), then `burst` × (2300 B pwrite + fdatasync) on a second file.
#[derive(Debug)]
pub struct Canary {
    dsync: File,
    probe: File,
    buf: Vec<u8>,
    write_size: u64,
    burst: usize,
    pub paths: [PathBuf; 2],
}

impl Canary {
    /// Create the canary files in `dir` (removed by [`Canary::remove`] / on drop).
    pub fn new(dir: &Path, write_size: u64, burst: usize) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let a = dir.join(format!("lowlat-watch-{}.dsync", std::process::id()));
        let b = dir.join(format!("lowlat-watch-{}.fsync", std::process::id()));
        let mk = |p: &Path, flags| {
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .custom_flags(flags)
                .open(p)
        };
        let dsync = mk(&a, libc::O_DSYNC)?;
        let probe = mk(&b, 0)?;
        if let Err(e) = sys::fallocate(&probe, 1 << 20) {
            let _ = std::fs::remove_file(&a);
            let _ = std::fs::remove_file(&b);
            return Err(e);
        }
        Ok(Self { dsync, probe, buf: vec![0x5a; 1 << 20], write_size, burst, paths: [a, b] })
    }

    /// One round.
    pub fn run_once(&mut self) -> std::io::Result<CanaryResult> {
        let t = Instant::now();
        let mut off = 0u64;
        while off < self.write_size {
            let n = (self.write_size - off).min(self.buf.len() as u64) as usize;
            sys::pwrite_all(&self.dsync, self.buf.get(..n).unwrap_or(&self.buf), off)?;
            off += n as u64;
        }
        let write_ns = t.elapsed().as_nanos() as u64;
        let mut lat = Vec::with_capacity(self.burst);
        for i in 0..self.burst {
            sys::pwrite_all(
                &self.probe,
                self.buf.get(..2300).unwrap_or(&self.buf),
                (i as u64 % 400) * 2300,
            )?;
            let t = Instant::now();
            sys::fdatasync(&self.probe)?;
            lat.push(t.elapsed().as_nanos() as u64);
        }
        lat.sort_unstable();
        Ok(CanaryResult {
            write_ns,
            burst_p50_ns: lat.get(lat.len() / 2).copied().unwrap_or(0),
            burst_max_ns: lat.last().copied().unwrap_or(0),
        })
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Prometheus textfile-collector text for the latest sample.
pub fn prometheus_text(s: &WatchSample, samples: u64, cliff_ratio: Option<f64>) -> String {
    let w = &s.watch;
    let mut o = String::new();
    let mut m = |name: &str, help: &str, v: f64| {
        o += &format!("# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{watch=\"{w}\"}} {v}\n");
    };
    m(
        "lowlat_watch_latency_seconds",
        "Latest canary sync write (storage) or command duration (cmd).",
        s.value_ns as f64 / 1e9,
    );
    m("lowlat_watch_samples", "Samples taken since the watcher started.", samples as f64);
    if let Some(v) = s.burst_max_ns {
        m(
            "lowlat_watch_fsync_burst_max_seconds",
            "Slowest fdatasync of the latest burst.",
            v as f64 / 1e9,
        );
    }
    if w == "storage" {
        m(
            "lowlat_watch_dstate_threads",
            "Threads in uninterruptible sleep (D) at the latest sample.",
            s.dstate.len() as f64,
        );
        let longest = s.dstate.iter().map(|d| d.seen_ns).max().unwrap_or(0);
        m(
            "lowlat_watch_dstate_longest_seconds",
            "Longest time a thread has been seen in D.",
            longest as f64 / 1e9,
        );
    }
    if let Some(v) = s.psi_some_avg10 {
        m("lowlat_watch_psi_io_some_avg10", "PSI io some avg10 (percent).", v);
    }
    m(
        "lowlat_watch_cliff_ratio",
        "after/before ratio of the detected cliff, 0 when none.",
        cliff_ratio.unwrap_or(0.0),
    );
    o
}

/// Write a file atomically (temp + rename), as textfile collectors expect.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("prom.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_comm() {
        let s = "1234 (kworker/u30:2+fl) D 2 0 0 0 -1";
        assert_eq!(parse_stat(s), Some(("kworker/u30:2+fl".into(), 'D')));
        assert_eq!(parse_stat("5 (a) b) S 1"), Some(("a) b".into(), 'S')));
        assert_eq!(parse_stat("5 (trunc"), None);
        assert_eq!(parse_stat(""), None);
    }

    #[test]
    fn psi_lines() {
        let t = "some avg10=1.50 avg60=0.60 avg300=1.08 total=11882962\nfull avg10=0.25 avg60=0.40 avg300=0.60 total=7910191\n";
        assert_eq!(parse_psi(t), (Some(1.5), Some(0.25)));
        assert_eq!(parse_psi("garbage"), (None, None));
    }

    #[test]
    fn dstate_durations_accumulate_and_reset() {
        let mut t = DStateTracker::default();
        let i = Duration::from_secs(1);
        let a = (1, 1, "udevd".to_string(), Some("folio_wait_bit".to_string()));
        let b = (2, 3, "kworker".to_string(), None);
        t.update(vec![a.clone()], i);
        let out = t.update(vec![a.clone(), b.clone()], i);
        assert_eq!(out[0].seen_ns, 2_000_000_000);
        assert_eq!(out[0].wchan.as_deref(), Some("folio_wait_bit"));
        assert_eq!(out[1].seen_ns, 1_000_000_000);
        let out = t.update(vec![a], i);
        assert_eq!(out.len(), 1);
        let out = t.update(vec![b], i);
        assert_eq!(out[0].seen_ns, 1_000_000_000, "left D: counter restarts");
    }

    #[test]
    fn live_scan_and_canary_work() {
        let _ = scan_dstate(Path::new("/proc"));
        let d = tempfile::tempdir().unwrap();
        let mut c = Canary::new(d.path(), 64 << 10, 3).unwrap();
        let r = c.run_once().unwrap();
        assert!(r.write_ns > 0 && r.burst_p50_ns <= r.burst_max_ns);
        drop(c);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn prometheus_text_format() {
        let s = WatchSample {
            watch: "storage".into(),
            value_ns: 1_500_000_000,
            psi_some_avg10: Some(2.0),
            ..Default::default()
        };
        let t = prometheus_text(&s, 7, Some(20.0));
        assert!(t.contains("lowlat_watch_latency_seconds{watch=\"storage\"} 1.5\n"), "{t}");
        assert!(t.contains(
            "# TYPE lowlat_watch_samples gauge\nlowlat_watch_samples{watch=\"storage\"} 7\n"
        ));
        assert!(t.contains("lowlat_watch_cliff_ratio{watch=\"storage\"} 20\n"));
        let d = tempfile::tempdir().unwrap();
        write_atomic(&d.path().join("x.prom"), &t).unwrap();
        assert_eq!(std::fs::read_to_string(d.path().join("x.prom")).unwrap(), t);
    }
}
