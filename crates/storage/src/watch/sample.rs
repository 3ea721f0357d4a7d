//! What one watcher sample is made of: the sync-write canary (like `dd … oflag=sync`) plus a
//! short fdatasync burst, threads in D state with `wchan` tracked across samples, PSI io, and
//! the Prometheus textfile. Kernel files are read through [`host::Root`]; parsers are pure.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use results::fsync::{DState, WatchSample};

use crate::sys;

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

/// `/proc/pressure/io` of `root`: (some avg10, full avg10); `None`s where there is no PSI.
pub fn read_psi(root: &host::Root) -> (Option<f64>, Option<f64>) {
    root.read_string("proc/pressure/io").map_or((None, None), |t| parse_psi(&t))
}

/// Threads in D state now: (pid, tid, comm, wchan), from `proc/*/task/*/{stat,wchan}`.
pub fn scan_dstate(root: &host::Root) -> Vec<(u32, u32, String, Option<String>)> {
    let ids = |dir: &str| -> Vec<u32> {
        root.list_dir(dir).unwrap_or_default().iter().filter_map(|n| n.parse().ok()).collect()
    };
    let mut out = Vec::new();
    for pid in ids("proc") {
        for tid in ids(&format!("proc/{pid}/task")) {
            let task = format!("proc/{pid}/task/{tid}");
            let Ok(text) = root.read_record_string(&format!("{task}/stat")) else { continue };
            let Ok(stat) = host::parse::task::stat(&text) else { continue };
            if stat.state == "D" {
                let wchan = root
                    .read_trimmed(&format!("{task}/wchan"))
                    .ok()
                    .filter(|s| !s.is_empty() && s != "0");
                out.push((pid, tid, stat.comm, wchan));
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
    /// Create the canary files in `dir` (removed on drop): new files with unique names
    /// (`lowlat-watch-<pid>.<n>.{dsync,fsync}`, `O_EXCL`), so a symlink planted in a shared
    /// directory is never followed.
    pub fn new(dir: &Path, write_size: u64, burst: usize) -> std::io::Result<Self> {
        let mk =
            |suffix, flags| util::fs::create_unique(dir, "lowlat-watch-", suffix, 0o600, flags);
        let (a, dsync) = mk(".dsync", libc::O_DSYNC)?;
        let (b, probe) = match mk(".fsync", 0) {
            Ok(x) => x,
            Err(e) => {
                let _ = std::fs::remove_file(&a);
                return Err(e);
            }
        };
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
            burst_p50_ns: util::stats::quantile_sorted(&lat, 0.5).unwrap_or(0),
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

/// Prometheus textfile-collector text for the latest sample (`util::prom`).
pub fn prometheus_text(s: &WatchSample, samples: u64, cliff_ratio: Option<f64>) -> String {
    let w = s.watch.as_str();
    let mut o = util::prom::Metrics::new();
    let mut m = |name: &str, help: &str, v: f64| o.gauge(name, help, &[("watch", w)], v);
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
    o.text().to_string()
}

/// Replace a textfile-collector file atomically (a new file beside it, then rename), as the
/// collector expects. Unlike `util::fs::write_atomic` it does not fsync: on a stalled disk —
/// the very thing being watched — an fsync would block the sampling loop.
pub fn write_textfile(path: &Path, text: &str) -> std::io::Result<()> {
    let (tmp, mut f) = util::fs::create_temp_beside(path, 0o644)?;
    let done = f.write_all(text.as_bytes()).and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake `/proc` with one thread in D (with a `wchan`), one sleeping, one unreadable.
    #[test]
    fn dstate_scan_and_psi_on_a_fake_proc() {
        let d = tempfile::tempdir().unwrap();
        let stat = |comm: &str, st: &str| {
            format!("9 ({comm}) {st} 2 0 0 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0")
        };
        for (pid, tid, comm, st) in [(9, 9, "jbd2/vda-8", "D"), (9, 10, "sleepy", "S")] {
            let t = d.path().join(format!("proc/{pid}/task/{tid}"));
            std::fs::create_dir_all(&t).unwrap();
            std::fs::write(t.join("stat"), stat(comm, st)).unwrap();
            std::fs::write(t.join("wchan"), "jbd2_journal_commit_transaction").unwrap();
        }
        std::fs::create_dir_all(d.path().join("proc/11/task/11")).unwrap();
        std::fs::create_dir_all(d.path().join("proc/self")).unwrap();
        let root = host::Root::open(d.path()).unwrap();
        let found = scan_dstate(&root);
        assert_eq!(
            found,
            [(9, 9, "jbd2/vda-8".to_string(), Some("jbd2_journal_commit_transaction".to_string()))]
        );
        assert_eq!(read_psi(&root), (None, None));
        std::fs::create_dir_all(d.path().join("proc/pressure")).unwrap();
        std::fs::write(
            d.path().join("proc/pressure/io"),
            "some avg10=2.00 avg60=0 avg300=0 total=1\n",
        )
        .unwrap();
        assert_eq!(read_psi(&root), (Some(2.0), None));
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
        let _ = scan_dstate(&host::Root::live());
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
        write_textfile(&d.path().join("x.prom"), &t).unwrap();
        write_textfile(&d.path().join("x.prom"), &t).unwrap();
        assert_eq!(std::fs::read_to_string(d.path().join("x.prom")).unwrap(), t);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "no temporary file left");
    }
}
