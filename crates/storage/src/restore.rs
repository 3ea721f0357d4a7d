//! Host writes made for a run (I/O scheduler, cgroup throttle) and their undo. Every write
//! records the old value first ([`SysfsGuard`]); the undo runs on drop (normal exit, error,
//! first Ctrl-C) and, for a second Ctrl-C that exits at once, from the signal handler itself
//! through a fixed table of pre-formatted `(path, old value)` entries written with
//! async-signal-safe `open`/`write`/`rmdir` only. The table's undo is registered with
//! `util::signal::on_second_signal` the first time anything is put in it (the signal handlers
//! themselves are `util::signal::install`'s).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

/// What the signal handler undoes on a second Ctrl-C.
#[derive(Debug)]
enum Undo {
    Write {
        path: CString,
        value: Vec<u8>,
    },
    Rmdir {
        path: CString,
    },
    /// SIGKILL a process group (an interference command's).
    KillGroup {
        pgid: libc::pid_t,
    },
}

const SLOTS: usize = 16;
static TABLE: [AtomicPtr<Undo>; SLOTS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

fn register(u: Undo) -> Option<usize> {
    static HOOKED: Once = Once::new();
    HOOKED.call_once(|| {
        util::signal::on_second_signal(undo_all_from_signal);
    });
    let p = Box::into_raw(Box::new(u));
    for (i, slot) in TABLE.iter().enumerate() {
        if slot
            .compare_exchange(std::ptr::null_mut(), p, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Some(i);
        }
    }
    // SAFETY: `p` came from Box::into_raw above and was not stored anywhere.
    drop(unsafe { Box::from_raw(p) });
    None
}

fn unregister(i: Option<usize>) {
    if let Some(slot) = i.and_then(|i| TABLE.get(i)) {
        let p = slot.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: every non-null pointer in TABLE came from Box::into_raw in `register`,
            // and the swap removed it, so nobody else frees it.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// Undo everything registered, newest first. Async-signal-safe (no allocation, no locks): the
/// second-Ctrl-C path. Public so a test in its own process can exercise it.
pub fn undo_all_from_signal() {
    for slot in TABLE.iter().rev() {
        let p = slot.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if p.is_null() {
            continue;
        }
        // SAFETY: see `unregister`; the pointer is leaked here on purpose (we are exiting).
        match unsafe { &*p } {
            Undo::Write { path, value } => {
                // SAFETY: open/write/close are async-signal-safe; `path` is NUL-terminated.
                unsafe {
                    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_TRUNC);
                    if fd >= 0 {
                        libc::write(fd, value.as_ptr().cast(), value.len());
                        libc::close(fd);
                    }
                }
            }
            Undo::Rmdir { path } => {
                // SAFETY: rmdir is async-signal-safe; `path` is NUL-terminated.
                unsafe { libc::rmdir(path.as_ptr()) };
            }
            Undo::KillGroup { pgid } => {
                // SAFETY: kill is async-signal-safe; a negative pid names the group.
                unsafe { libc::kill(-*pgid, libc::SIGKILL) };
            }
        }
    }
}

fn cpath(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

/// A process group killed (SIGKILL) by a second Ctrl-C that exits at once; unregistered on
/// drop (its owner kills the group itself on every other path).
#[derive(Debug)]
pub struct GroupGuard {
    slot: Option<usize>,
}

impl GroupGuard {
    /// Register the group `pgid`.
    pub fn register(pgid: libc::pid_t) -> Self {
        Self { slot: register(Undo::KillGroup { pgid }) }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        unregister(self.slot.take());
    }
}

/// A sysfs/procfs value changed for the run; the old value is written back on drop.
#[derive(Debug)]
pub struct SysfsGuard {
    path: PathBuf,
    old: String,
    slot: Option<usize>,
    pub restored: bool,
}

impl SysfsGuard {
    /// Record `old` (already read by the caller, normalised to what the file accepts), register
    /// the undo, then write `new`.
    pub fn write(path: &Path, old: &str, new: &str) -> std::io::Result<Self> {
        let slot = cpath(path)
            .and_then(|c| register(Undo::Write { path: c, value: old.as_bytes().to_vec() }));
        let g = Self { path: path.to_path_buf(), old: old.to_string(), slot, restored: false };
        std::fs::write(path, new)?;
        Ok(g)
    }

    /// Write the old value back now.
    pub fn restore(&mut self) -> std::io::Result<()> {
        if !self.restored {
            std::fs::write(&self.path, &self.old)?;
            self.restored = true;
            unregister(self.slot.take());
        }
        Ok(())
    }
}

impl Drop for SysfsGuard {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            eprintln!(
                "lowlat: could not restore {} to {:?}: {e}; restore it by hand",
                self.path.display(),
                self.old
            );
        }
    }
}

/// A directory created for the run (a cgroup); removed on drop (and by a second Ctrl-C).
#[derive(Debug)]
pub struct DirGuard {
    pub path: PathBuf,
    slot: Option<usize>,
}

impl DirGuard {
    /// Create the directory (must not exist) and register its removal.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        std::fs::create_dir(path)?;
        let slot = cpath(path).and_then(|c| register(Undo::Rmdir { path: c }));
        Ok(Self { path: path.to_path_buf(), slot })
    }
}

impl Drop for DirGuard {
    fn drop(&mut self) {
        // A cgroup directory empties when its threads exit; give them a moment.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.path).is_ok() || !self.path.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if self.path.exists() {
            eprintln!(
                "lowlat: could not remove {}; remove it by hand (rmdir)",
                self.path.display()
            );
        }
        unregister(self.slot.take());
    }
}

/// Scratch directory for probe and bulk files: removed recursively on drop.
#[derive(Debug)]
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    /// Create `<parent>/lowlat-fsync-<pid>-<n>`.
    pub fn create(parent: &Path) -> std::io::Result<Self> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = parent.join(format!(
            "lowlat-fsync-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&path)?;
        Ok(Self { path })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            if self.path.exists() {
                eprintln!(
                    "lowlat: could not remove {}: {e}; remove it by hand",
                    self.path.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_restores_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("knob");
        std::fs::write(&p, "old").unwrap();
        {
            let g = SysfsGuard::write(&p, "old", "new").unwrap();
            assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
            assert!(g.slot.is_some());
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
    }

    #[test]
    fn scratch_is_removed_with_contents() {
        let d = tempfile::tempdir().unwrap();
        let s = Scratch::create(d.path()).unwrap();
        std::fs::create_dir_all(s.path.join("a/b")).unwrap();
        std::fs::write(s.path.join("a/b/f"), "x").unwrap();
        let p = s.path.clone();
        drop(s);
        assert!(!p.exists());
    }
}
