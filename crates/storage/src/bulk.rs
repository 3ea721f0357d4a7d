//! The bulk writer that imitates an OS update (ostree pulling ~1 GiB of objects): many small
//! and medium files in their own directory tree, written by `outstanding` worker threads,
//! made durable per file (`fsync-per-file`), once at the end (`syncfs-at-end`), by write-out
//! as it goes plus a final syncfs (`trickle`), or not at all (`no-sync`). Knobs that the
//! mitigations use: idle I/O priority, a self-imposed MB/s cap, a hook run on each worker
//! thread (cgroup placement).

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sys;

/// How the bulk writer makes its files durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkMode {
    /// write + fsync + close per file (ostree `core.per-object-fsync=true`).
    FsyncPerFile,
    /// write every file, one `syncfs` at the end (ostree's default batching).
    SyncfsAtEnd,
    /// buffered writes only; the kernel writes back later.
    NoSync,
    /// `sync_file_range(WRITE)` after each file, one `syncfs` at the end.
    Trickle,
}

impl BulkMode {
    /// Every mode, in the order the matrix uses.
    pub const ALL: [BulkMode; 4] =
        [Self::FsyncPerFile, Self::SyncfsAtEnd, Self::NoSync, Self::Trickle];

    /// Parse the command-line name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Self::FsyncPerFile => "fsync-per-file",
            Self::SyncfsAtEnd => "syncfs-at-end",
            Self::NoSync => "no-sync",
            Self::Trickle => "trickle",
        }
    }
}

impl std::str::FromStr for BulkMode {
    type Err = crate::error::StorageError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| {
            crate::error::StorageError::Input(format!(
                "{s}: expected fsync-per-file, syncfs-at-end, no-sync or trickle"
            ))
        })
    }
}

/// What interferes with the probe: the built-in bulk writer, or a real update command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interference {
    Bulk(BulkMode),
    /// `sh -c` text ([`crate::command`]).
    Command(String),
}

impl Interference {
    /// The bulk mode's name, or `command`.
    pub fn name(&self) -> &str {
        match self {
            Self::Bulk(m) => m.name(),
            Self::Command(_) => "command",
        }
    }

    /// The bulk writer's mode, if it is the bulk writer.
    pub fn mode(&self) -> Option<BulkMode> {
        match self {
            Self::Bulk(m) => Some(*m),
            Self::Command(_) => None,
        }
    }
}

impl From<BulkMode> for Interference {
    fn from(m: BulkMode) -> Self {
        Self::Bulk(m)
    }
}

/// Bulk writer parameters.
#[derive(Clone)]
pub struct BulkConfig {
    pub dir: PathBuf,
    pub mode: BulkMode,
    pub bytes: u64,
    /// Worker threads = files in flight at once (ostree capped this at 3).
    pub outstanding: usize,
    pub ioprio_idle: bool,
    /// Self-imposed cap in bytes/s over all workers.
    pub rate_bps: Option<u64>,
    /// Run on each worker thread before it writes (e.g. join a throttled cgroup).
    pub on_thread_start: Option<Arc<dyn Fn() -> std::io::Result<()> + Send + Sync>>,
}

impl std::fmt::Debug for BulkConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkConfig")
            .field("dir", &self.dir)
            .field("mode", &self.mode)
            .field("bytes", &self.bytes)
            .field("outstanding", &self.outstanding)
            .field("ioprio_idle", &self.ioprio_idle)
            .field("rate_bps", &self.rate_bps)
            .finish()
    }
}

/// What the bulk writer did.
#[derive(Debug, Clone, Copy, Default)]
pub struct BulkStats {
    pub bytes: u64,
    pub files: u64,
    pub duration: Duration,
    pub sync: Option<Duration>,
    pub interrupted: bool,
}

/// File sizes of an OS update's objects: mostly small files (4–64 KiB) with medium ones
/// (256 KiB – 2 MiB) carrying most bytes. Deterministic (xorshift), independent of the seed's
/// machine.
#[derive(Debug, Clone)]
pub struct SizePlan {
    state: u64,
}

impl SizePlan {
    pub const MAX_FILE: usize = 2 << 20;

    pub fn new(seed: u64) -> Self {
        Self { state: seed | 1 }
    }
}

impl Iterator for SizePlan {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        let r = (x >> 16) as usize;
        Some(if r % 10 < 7 {
            4096 + (r >> 4) % (60 << 10)
        } else {
            (256 << 10) + (r >> 4) % ((2 << 20) - (256 << 10))
        })
    }
}

/// Split `bytes` into files, round-robin over `workers`: the per-worker size lists.
pub fn plan_files(bytes: u64, workers: usize) -> Vec<Vec<usize>> {
    let workers = workers.max(1);
    let mut out = vec![Vec::new(); workers];
    let mut left = bytes;
    for (i, sz) in SizePlan::new(0x5eed).enumerate() {
        if left == 0 {
            break;
        }
        let sz = (sz as u64).min(left) as usize;
        left -= sz as u64;
        if let Some(v) = out.get_mut(i % workers) {
            v.push(sz);
        }
    }
    out
}

fn worker(
    cfg: &BulkConfig,
    idx: usize,
    sizes: &[usize],
    stop: &AtomicBool,
    written: &AtomicU64,
    files: &AtomicU64,
) -> std::io::Result<()> {
    if let Some(hook) = &cfg.on_thread_start {
        hook()?;
    }
    if cfg.ioprio_idle {
        sys::set_ioprio_idle()?;
    }
    let buf: Vec<u8> =
        (0..SizePlan::MAX_FILE).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let per_worker_bps = cfg.rate_bps.map(|r| (r / cfg.outstanding.max(1) as u64).max(1));
    let start = Instant::now();
    let mut mine = 0u64;
    for (n, sz) in sizes.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        // ostree-like layout: objects/<xx>/<file>, 256 files per subdirectory.
        let sub = cfg.dir.join(format!("{:02x}", (idx * 7 + n / 256) % 256));
        if n % 256 == 0 {
            std::fs::create_dir_all(&sub)?;
        }
        let path = sub.join(format!("w{idx}-{n}.file"));
        let mut f = File::create(&path)?;
        f.write_all(buf.get(..*sz).unwrap_or(&buf))?;
        match cfg.mode {
            BulkMode::FsyncPerFile => sys::fsync(&f)?,
            BulkMode::Trickle => sys::start_writeback(&f)?,
            BulkMode::SyncfsAtEnd | BulkMode::NoSync => {}
        }
        drop(f);
        mine += *sz as u64;
        written.fetch_add(*sz as u64, Ordering::Relaxed);
        files.fetch_add(1, Ordering::Relaxed);
        if let Some(bps) = per_worker_bps {
            let due = Duration::from_secs_f64(mine as f64 / bps as f64);
            let el = start.elapsed();
            if due > el {
                std::thread::sleep(due - el);
            }
        }
    }
    Ok(())
}

/// Write the bulk data; returns when every file is written and (per mode) synced, or `stop`.
pub fn run_bulk(cfg: &BulkConfig, stop: &AtomicBool) -> std::io::Result<BulkStats> {
    std::fs::create_dir_all(&cfg.dir)?;
    let plan = plan_files(cfg.bytes, cfg.outstanding);
    let written = AtomicU64::new(0);
    let files = AtomicU64::new(0);
    let start = Instant::now();
    let results: Vec<std::io::Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = plan
            .iter()
            .enumerate()
            .map(|(i, sizes)| {
                let (w, f) = (&written, &files);
                s.spawn(move || worker(cfg, i, sizes, stop, w, f))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| Err(std::io::Error::other("bulk worker panicked")))
            })
            .collect()
    });
    for r in results {
        r?;
    }
    let mut sync = None;
    if matches!(cfg.mode, BulkMode::SyncfsAtEnd | BulkMode::Trickle)
        && !stop.load(Ordering::Relaxed)
    {
        let t = Instant::now();
        // The final syncfs runs on a thread with the workers' priority, like `sync -f` would.
        let d = File::open(&cfg.dir)?;
        std::thread::scope(|s| {
            s.spawn(|| -> std::io::Result<()> {
                if let Some(hook) = &cfg.on_thread_start {
                    hook()?;
                }
                if cfg.ioprio_idle {
                    sys::set_ioprio_idle()?;
                }
                sys::syncfs(&d)
            })
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("syncfs thread panicked")))
        })?;
        sync = Some(t.elapsed());
    }
    Ok(BulkStats {
        bytes: written.load(Ordering::Relaxed),
        files: files.load(Ordering::Relaxed),
        duration: start.elapsed(),
        sync,
        interrupted: stop.load(Ordering::Relaxed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_roundtrip() {
        for m in BulkMode::ALL {
            assert_eq!(BulkMode::parse(m.name()), Some(m));
        }
        assert_eq!(BulkMode::parse("fsync"), None);
        let e = "ostree".parse::<BulkMode>().unwrap_err();
        assert!(e.is_input() && e.to_string().contains("expected fsync-per-file"), "{e}");
    }

    #[test]
    fn plan_covers_bytes_exactly_with_mixed_sizes() {
        let p = plan_files(64 << 20, 3);
        let all: Vec<usize> = p.iter().flatten().copied().collect();
        assert_eq!(all.iter().map(|s| *s as u64).sum::<u64>(), 64 << 20);
        assert!(all.iter().all(|s| *s <= SizePlan::MAX_FILE && *s > 0));
        let small = all.iter().filter(|s| **s < 65 << 10).count();
        assert!(small * 2 > all.len(), "mostly small files: {small}/{}", all.len());
        assert_eq!(p.len(), 3);
    }

    #[test]
    fn every_mode_writes_all_files() {
        for m in BulkMode::ALL {
            let d = tempfile::tempdir().unwrap();
            let cfg = BulkConfig {
                dir: d.path().join("bulk"),
                mode: m,
                bytes: 4 << 20,
                outstanding: 2,
                ioprio_idle: true,
                rate_bps: None,
                on_thread_start: None,
            };
            let st = run_bulk(&cfg, &AtomicBool::new(false)).unwrap();
            assert_eq!(st.bytes, 4 << 20, "{m:?}");
            assert_eq!(st.sync.is_some(), matches!(m, BulkMode::SyncfsAtEnd | BulkMode::Trickle));
            let on_disk: u64 = walk(&d.path().join("bulk"));
            assert_eq!(on_disk, 4 << 20);
        }
    }

    #[test]
    fn rate_cap_slows_the_writer() {
        let d = tempfile::tempdir().unwrap();
        let cfg = BulkConfig {
            dir: d.path().join("bulk"),
            mode: BulkMode::NoSync,
            bytes: 2 << 20,
            outstanding: 1,
            ioprio_idle: false,
            rate_bps: Some(8 << 20),
            on_thread_start: None,
        };
        let st = run_bulk(&cfg, &AtomicBool::new(false)).unwrap();
        assert!(st.duration >= Duration::from_millis(240), "{:?}", st.duration);
    }

    fn walk(p: &std::path::Path) -> u64 {
        std::fs::read_dir(p)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    walk(&e.path())
                } else {
                    e.metadata().unwrap().len()
                }
            })
            .sum()
    }
}
