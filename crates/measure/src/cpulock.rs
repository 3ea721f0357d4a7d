//! Measurements own their CPUs: an exclusive `flock` per measured CPU (`cpu-N.lock` in
//! [`DIR`]), held for the whole run and released by the kernel when the process ends, even on
//! SIGKILL, so a lock is never stale. Two measurements on one CPU disturb each other (a noise
//! run counted a timer run's wake-ups as a 19.5 ms gap; both said PASS): the second is refused
//! with the CPU and the holder, before it starts (issue 21, item 5).
//!
//! The directory is `0755` and the lock files `0644`, so a measurement run without root still
//! takes the lock files root's runs created (an `flock` needs only a read-only descriptor).
//! Where this user can neither create nor open a lock file, the run goes on without it and
//! its result says so. Files are opened without following a symlink and must be regular.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::os::unix::io::AsRawFd as _;
use std::path::{Path, PathBuf};

use crate::error::MeasureError;

/// Where the per-CPU locks live on a live host.
pub const DIR: &str = "/run/lowlat-cpu";

/// The locks of one run's CPUs, released on drop.
#[derive(Debug)]
pub struct CpuLocks {
    _files: Vec<File>,
    /// Why some CPUs are not locked (this user cannot create the lock files): for the
    /// result's notes.
    pub not_locked: Option<String>,
}

/// Lock every CPU in `cpus` under `dir` for a run described by `what` (`measure timer`),
/// or fail with [`MeasureError::CpuBusy`] naming the first CPU another process holds.
pub fn acquire(dir: &Path, cpus: &[u32], what: &str) -> Result<CpuLocks, MeasureError> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut why = None;
    let made = std::fs::DirBuilder::new().recursive(true).mode(0o755).create(dir);
    for &cpu in cpus {
        let path = dir.join(format!("cpu-{cpu}.lock"));
        let file = match made.as_ref().map_err(clone_err).and_then(|()| open(&path)) {
            Ok(f) => f,
            Err(e) => {
                skipped.push(cpu);
                why.get_or_insert_with(|| format!("{}: {e}", path.display()));
                continue;
            }
        };
        // SAFETY: flock on a valid open descriptor; no memory is passed.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(MeasureError::CpuBusy { cpu, holder: holder(&file, &path) });
        }
        let mut f = &file;
        // Only the holder's own words; a read-only descriptor (another user's file) keeps
        // the previous text, which is why the holder text is advisory.
        if f.set_len(0).is_ok() {
            let _ = f.rewind();
            let _ = writeln!(f, "pid {} ({what})", std::process::id());
        }
        files.push(file);
    }
    let not_locked = why.map(|why| {
        format!(
            "CPU LOCK: CPU(s) {skipped:?} not locked ({why}): a second measurement on them would not be refused; run as root to take the lock"
        )
    });
    Ok(CpuLocks { _files: files, not_locked })
}

fn clone_err(e: &std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), e.to_string())
}

/// Open (creating `0644` if needed) without following a symlink; read-only when this user
/// may not write it. Anything but a regular file is refused.
fn open(path: &Path) -> std::io::Result<File> {
    let rw = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path);
    let f = match rw {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)?,
        Err(e) => return Err(e),
    };
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(f)
}

/// What the holder wrote in the lock file (`pid 123 (measure timer)`), bounded and made
/// printable.
fn holder(file: &File, path: &Path) -> String {
    let mut text = String::new();
    let _ = file.take(200).read_to_string(&mut text);
    let text = util::term::sanitize(text.trim(), false);
    if text.is_empty() {
        format!("a process holding {}", path.display())
    } else {
        format!("{text}, holding {}", path.display())
    }
}

/// The lock directory: [`DIR`], or `LOWLAT_CPU_LOCK_DIR` when set (tests that measure in
/// parallel on one CPU give each run its own).
pub fn dir() -> PathBuf {
    std::env::var_os("LOWLAT_CPU_LOCK_DIR").map_or_else(|| PathBuf::from(DIR), PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use util::exit::{Classify as _, ExitCode};

    #[test]
    fn a_second_run_on_a_cpu_is_refused_until_the_first_ends() {
        let d = tempfile::tempdir().unwrap();
        let first = acquire(d.path(), &[1, 2], "measure timer").unwrap();
        assert_eq!(first.not_locked, None);
        match acquire(d.path(), &[3, 2], "measure noise") {
            Err(e @ MeasureError::CpuBusy { cpu: 2, .. }) => {
                let m = e.to_string();
                assert!(m.contains(&format!("pid {} (measure timer)", std::process::id())), "{m}");
                assert!(m.contains("CPU 2") && m.contains("--cpus"), "{m}");
                assert_eq!(e.exit_code(), ExitCode::Usage);
            }
            other => panic!("expected CPU 2 busy, got {other:?}"),
        }
        assert!(acquire(d.path(), &[3], "measure noise").is_ok(), "other CPUs are free");
        drop(first);
        assert!(acquire(d.path(), &[1, 2], "measure noise").is_ok(), "released on drop");
    }

    #[test]
    fn a_planted_symlink_is_never_followed_and_the_run_says_it_is_unlocked() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("cpu-1.lock")).unwrap();
        let l = acquire(d.path(), &[1], "measure timer").unwrap();
        assert!(l.not_locked.as_deref().is_some_and(|n| n.contains("CPU LOCK")), "{l:?}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }
}
