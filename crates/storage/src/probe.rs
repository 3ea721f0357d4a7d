//! The etcd-style probe: a preallocated file, `pwrite(bs)` + `fdatasync` per op, per-op
//! latency into a fine histogram and per-window (default 1 s) p50/p99/max. [`Probe::new`]
//! does every allocation and the file setup; [`Probe::run`] is the hot loop: only the
//! measured syscalls (and the rate limiter's sleep), no allocation, no lock.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use results::fsync::Window;
use results::{Histogram, HistogramConfig};

use crate::sys::{self, SyncMode};

/// Samples kept per window for exact window percentiles (1 MiB); beyond, the window is marked
/// truncated (its max and op count stay exact).
pub const WINDOW_SAMPLES: usize = 1 << 17;

/// When the probe stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// After this many bytes written (fio `--size`): `bytes / bs` ops.
    Bytes(u64),
    /// After this long (fio `--time_based --runtime`).
    Duration(Duration),
}

/// Probe parameters.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    /// Directory the probe file is created in (removed afterwards by the caller's scratch dir).
    pub file: PathBuf,
    pub bs: usize,
    pub sync: SyncMode,
    pub stop: Stop,
    /// Bytes preallocated; offsets wrap around at this size in duration mode.
    pub file_size: u64,
    /// IOPS budget; `None` = as fast as the device allows (QD1).
    pub rate: Option<f64>,
    pub window: Duration,
    /// Never run longer than this, whatever `keep_going` says.
    pub max_duration: Duration,
}

/// The probe's raw output.
#[derive(Debug)]
pub struct ProbeOutput {
    pub hist: Histogram,
    pub windows: Vec<Window>,
    pub elapsed: Duration,
    pub ops: u64,
    pub started: Instant,
}

/// A probe ready to run: file open and preallocated, buffers allocated.
#[derive(Debug)]
pub struct Probe {
    cfg: ProbeConfig,
    file: File,
    buf: Vec<u8>,
    hist: Histogram,
    window_samples: Vec<u64>,
    windows: Vec<Window>,
}

fn open_probe_file(path: &Path, sync: SyncMode) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true).mode(0o600);
    if sync == SyncMode::Dsync {
        o.custom_flags(libc::O_DSYNC);
    }
    o.open(path)
}

impl Probe {
    /// Create and preallocate the probe file and every buffer.
    pub fn new(cfg: ProbeConfig) -> std::io::Result<Self> {
        let file = open_probe_file(&cfg.file, cfg.sync)?;
        sys::fallocate(&file, cfg.file_size.max(cfg.bs as u64))?;
        let expected_windows = match cfg.stop {
            Stop::Duration(d) => d.max(cfg.max_duration),
            Stop::Bytes(_) => cfg.max_duration,
        }
        .as_secs_f64()
            / cfg.window.as_secs_f64().max(1e-3);
        let buf: Vec<u8> = (0..cfg.bs).map(|i| b'a' + (i % 26) as u8).collect();
        Ok(Self {
            hist: Histogram::new(HistogramConfig::STORAGE),
            window_samples: Vec::with_capacity(WINDOW_SAMPLES),
            windows: Vec::with_capacity(expected_windows.ceil() as usize + 8),
            buf,
            file,
            cfg,
        })
    }

    fn close_window(&mut self, start_ns: u64, ops: u64, max_ns: u64, truncated: bool) {
        let s = &mut self.window_samples;
        s.sort_unstable();
        let q = |q: f64| util::stats::quantile_sorted(s, q).unwrap_or(0);
        let w = Window { start_ns, ops, p50_ns: q(0.5), p99_ns: q(0.99), max_ns, truncated };
        if self.windows.len() < self.windows.capacity() {
            self.windows.push(w);
        }
        s.clear();
    }

    /// The hot loop. Stops on the configured bytes/duration — extended while `keep_going` is
    /// true (a bulk writer still running), never past `max_duration` — or when `stop` is set.
    pub fn run(
        mut self,
        stop: &AtomicBool,
        keep_going: &AtomicBool,
    ) -> std::io::Result<ProbeOutput> {
        let bs = self.cfg.bs as u64;
        let size = self.cfg.file_size.max(bs);
        let win_ns = self.cfg.window.as_nanos().max(1) as u64;
        let (max_ops, min_ns) = match self.cfg.stop {
            Stop::Bytes(b) => ((b / bs).max(1), 0u64),
            Stop::Duration(d) => (u64::MAX, d.as_nanos() as u64),
        };
        let max_ns = self.cfg.max_duration.as_nanos() as u64;
        let period_ns = self.cfg.rate.filter(|r| *r > 0.0).map(|r| (1e9 / r) as u64);
        let started = Instant::now();
        let mut offset = 0u64;
        let mut ops = 0u64;
        let (mut w_start, mut w_ops, mut w_max, mut w_trunc) = (0u64, 0u64, 0u64, false);
        loop {
            if let Some(p) = period_ns {
                let due = ops.saturating_mul(p);
                let now = started.elapsed().as_nanos() as u64;
                if due > now {
                    std::thread::sleep(Duration::from_nanos(due - now));
                }
            }
            if offset + bs > size {
                offset = 0;
            }
            let t0;
            match self.cfg.sync {
                SyncMode::Dsync => {
                    t0 = Instant::now();
                    sys::pwrite_all(&self.file, &self.buf, offset)?;
                }
                SyncMode::Fdatasync => {
                    sys::pwrite_all(&self.file, &self.buf, offset)?;
                    t0 = Instant::now();
                    sys::fdatasync(&self.file)?;
                }
                SyncMode::Fsync => {
                    sys::pwrite_all(&self.file, &self.buf, offset)?;
                    t0 = Instant::now();
                    sys::fsync(&self.file)?;
                }
            }
            let t1 = Instant::now();
            let lat = t1.duration_since(t0).as_nanos() as u64;
            offset += bs;
            ops += 1;
            self.hist.record(lat);
            let now_ns = t1.duration_since(started).as_nanos() as u64;
            while now_ns >= w_start + win_ns {
                self.close_window(w_start, w_ops, w_max, w_trunc);
                w_start += win_ns;
                (w_ops, w_max, w_trunc) = (0, 0, false);
            }
            w_ops += 1;
            w_max = w_max.max(lat);
            if self.window_samples.len() < self.window_samples.capacity() {
                self.window_samples.push(lat);
            } else {
                w_trunc = true;
            }
            let done = ops >= max_ops || (min_ns > 0 && now_ns >= min_ns);
            if stop.load(Ordering::Relaxed)
                || now_ns >= max_ns
                || (done && !keep_going.load(Ordering::Relaxed))
            {
                break;
            }
        }
        if w_ops > 0 {
            self.close_window(w_start, w_ops, w_max, w_trunc);
        }
        Ok(ProbeOutput {
            hist: self.hist,
            windows: self.windows,
            elapsed: started.elapsed(),
            ops,
            started,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(dir: &Path, stop: Stop) -> ProbeConfig {
        ProbeConfig {
            file: dir.join("probe.dat"),
            bs: 2300,
            sync: SyncMode::Fdatasync,
            stop,
            file_size: 1 << 20,
            rate: None,
            window: Duration::from_millis(50),
            max_duration: Duration::from_secs(30),
        }
    }

    #[test]
    fn bytes_mode_does_exactly_size_over_bs_ops() {
        let d = tempfile::tempdir().unwrap();
        let p = Probe::new(cfg(d.path(), Stop::Bytes(2300 * 40))).unwrap();
        let out = p.run(&AtomicBool::new(false), &AtomicBool::new(false)).unwrap();
        assert_eq!(out.ops, 40);
        assert_eq!(out.hist.count(), 40);
        assert_eq!(out.windows.iter().map(|w| w.ops).sum::<u64>(), 40);
        assert!(out.windows.iter().all(|w| w.p50_ns <= w.p99_ns && w.p99_ns <= w.max_ns));
    }

    #[test]
    fn rate_limit_paces_ops_and_windows_cover_time() {
        let d = tempfile::tempdir().unwrap();
        let mut c = cfg(d.path(), Stop::Duration(Duration::from_millis(500)));
        c.rate = Some(40.0);
        c.sync = SyncMode::Dsync;
        let out =
            Probe::new(c).unwrap().run(&AtomicBool::new(false), &AtomicBool::new(false)).unwrap();
        // The cap is what matters: never faster than 40/s (a loaded disk may make it slower).
        assert!((1..=21).contains(&out.ops), "{} ops at 40/s for 0.5 s", out.ops);
        assert!(out.windows.len() >= 9, "{}", out.windows.len());
        // Windows are contiguous.
        for (i, w) in out.windows.iter().enumerate() {
            assert_eq!(w.start_ns, i as u64 * 50_000_000);
        }
    }

    #[test]
    fn stop_flag_and_wraparound() {
        let d = tempfile::tempdir().unwrap();
        let mut c = cfg(d.path(), Stop::Duration(Duration::from_secs(60)));
        c.file_size = 4600; // two blocks: wraps every second op
        c.sync = SyncMode::Fsync;
        let stop = AtomicBool::new(true);
        let out = Probe::new(c).unwrap().run(&stop, &AtomicBool::new(true)).unwrap();
        assert_eq!(out.ops, 1, "the flag stops after the op in flight");
        assert_eq!(std::fs::metadata(d.path().join("probe.dat")).unwrap().len(), 4600);
    }
}
