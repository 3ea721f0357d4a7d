//! The thin seam over the Linux syscalls the probe, the bulk writer and the mitigations use
//! (pwrite, fdatasync/fsync, fallocate, syncfs, sync_file_range, ioprio_set, statvfs).
//! Each wrapper returns `std::io::Result` and never allocates, so they can sit in hot loops.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// How the probe makes each write durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// `pwrite` then `fdatasync` (etcd's WAL, fio `--fdatasync=1`); the fdatasync is timed.
    Fdatasync,
    /// `pwrite` then `fsync` (fio `--fsync=1`); the fsync is timed.
    Fsync,
    /// File opened `O_DSYNC`; the `pwrite` itself is timed.
    Dsync,
}

impl SyncMode {
    /// Parse `fdatasync|fsync|dsync`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "fdatasync" => Some(Self::Fdatasync),
            "fsync" => Some(Self::Fsync),
            "dsync" | "o_dsync" => Some(Self::Dsync),
            _ => None,
        }
    }

    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fdatasync => "fdatasync",
            Self::Fsync => "fsync",
            Self::Dsync => "dsync",
        }
    }
}

impl std::str::FromStr for SyncMode {
    type Err = crate::error::StorageError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| {
            crate::error::StorageError::Input(format!("{s:?}: expected fdatasync, fsync or dsync"))
        })
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Write all of `buf` at `offset` (loops on short writes; no allocation).
pub fn pwrite_all(f: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        let rest = buf.get(done..).unwrap_or(&[]);
        // SAFETY: `rest` is a valid slice for `rest.len()` bytes; the fd is owned by `f`.
        let n = unsafe {
            libc::pwrite(
                f.as_raw_fd(),
                rest.as_ptr().cast(),
                rest.len(),
                (offset + done as u64) as libc::off_t,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "pwrite wrote 0 bytes"));
        }
        done += n as usize;
    }
    Ok(())
}

/// `fdatasync(2)`.
pub fn fdatasync(f: &File) -> io::Result<()> {
    // SAFETY: plain syscall on an fd owned by `f`.
    check(unsafe { libc::fdatasync(f.as_raw_fd()) })
}

/// `fsync(2)`.
pub fn fsync(f: &File) -> io::Result<()> {
    // SAFETY: plain syscall on an fd owned by `f`.
    check(unsafe { libc::fsync(f.as_raw_fd()) })
}

/// `fallocate(fd, 0, 0, len)`: mode 0 extends the file with unwritten extents, like etcd's
/// WAL segments and fio's layout.
pub fn fallocate(f: &File, len: u64) -> io::Result<()> {
    // SAFETY: plain syscall on an fd owned by `f`.
    check(unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len as libc::off_t) })
}

/// `syncfs(2)` on the filesystem holding `f` (a file or directory).
pub fn syncfs(f: &File) -> io::Result<()> {
    // SAFETY: plain syscall on an fd owned by `f`.
    check(unsafe { libc::syncfs(f.as_raw_fd()) })
}

/// `sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)`: start write-out of the whole file.
pub fn start_writeback(f: &File) -> io::Result<()> {
    // SAFETY: plain syscall on an fd owned by `f`.
    check(unsafe { libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) })
}

/// I/O priority class idle for the calling thread (`ionice -c3`).
pub fn set_ioprio_idle() -> io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    const IOPRIO_CLASS_IDLE: libc::c_long = 3;
    const IOPRIO_CLASS_SHIFT: libc::c_long = 13;
    // SAFETY: ioprio_set(which, who=0 → calling thread, prio) has no pointer arguments.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Space and flags of the filesystem holding `path`.
#[derive(Debug, Clone, Copy)]
pub struct FsStat {
    pub free_bytes: u64,
    pub read_only: bool,
}

/// `statvfs(2)`.
pub fn statvfs(path: &std::path::Path) -> io::Result<FsStat> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: zeroed statvfs is a valid out-parameter; `c` is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: see above.
    check(unsafe { libc::statvfs(c.as_ptr(), &mut st) })?;
    Ok(FsStat {
        free_bytes: st.f_bavail as u64 * st.f_frsize as u64,
        read_only: st.f_flag & libc::ST_RDONLY != 0,
    })
}

/// `access(path, W_OK)`: false on a read-only mount even for root.
pub fn writable(path: &std::path::Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: `c` is NUL-terminated.
    check(unsafe { libc::access(c.as_ptr(), libc::W_OK) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_mode_names_roundtrip() {
        for m in [SyncMode::Fdatasync, SyncMode::Fsync, SyncMode::Dsync] {
            assert_eq!(SyncMode::parse(m.name()), Some(m));
        }
        assert_eq!(SyncMode::parse("sync"), None);
        assert!("sync".parse::<SyncMode>().unwrap_err().to_string().contains("fdatasync"));
        assert_eq!(serde_json::to_value(SyncMode::Dsync).unwrap(), "dsync");
    }

    #[test]
    fn pwrite_fallocate_fdatasync_on_a_temp_file() {
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.path().join("x"))
            .unwrap();
        fallocate(&f, 8192).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 8192);
        pwrite_all(&f, b"hello", 4096).unwrap();
        fdatasync(&f).unwrap();
        fsync(&f).unwrap();
        start_writeback(&f).unwrap();
        syncfs(&f).unwrap();
        let st = statvfs(d.path()).unwrap();
        assert!(st.free_bytes > 0 && !st.read_only);
        writable(d.path()).unwrap();
    }
}
