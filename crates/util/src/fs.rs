//! Writing files safely: outputs are written to a fresh temporary file in the destination's
//! directory (created with `O_EXCL`, so a planted symlink is never followed) and renamed over
//! the destination, so a reader never sees half a file and a crash never leaves one; private
//! state (journals, locks) is created `0600`/`0700` whatever the umask.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` atomically: a new file beside it, fsync, rename over `path`.
/// The new file gets `mode` (e.g. `0o644`).
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let (tmp, mut f) = create_temp_beside(path, mode)?;
    let done =
        f.write_all(bytes).and_then(|()| f.sync_all()).and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Whether [`write_atomic`] could write `path` later: its directory exists and takes a new
/// file (one is created beside it and removed again), and `path` is not a directory. For
/// commands that measure for minutes or hours before they write: a path that cannot be
/// written is found before the run, not after it.
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory"));
    }
    let (tmp, f) = create_temp_beside(path, 0o600)?;
    drop(f);
    std::fs::remove_file(&tmp)
}

/// Why [`check_writable`] refused a path and what to do, in a user's words.
pub fn unwritable_hint(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "its directory does not exist: create it first".into(),
        std::io::ErrorKind::PermissionDenied => {
            "its directory is not writable by this user: choose a directory you can write".into()
        }
        std::io::ErrorKind::IsADirectory => "it is a directory: name a file in it".into(),
        _ => format!("it cannot be written there ({e}): choose another path"),
    }
}

/// Create a new, empty temporary file in `path`'s directory, named after it, with `O_EXCL` and
/// `O_NOFOLLOW` and permissions `mode`. The caller writes it and renames it over `path`.
pub fn create_temp_beside(path: &Path, mode: u32) -> std::io::Result<(PathBuf, File)> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    create_unique(dir, &format!(".{name}."), ".tmp", mode, 0)
}

/// Create a new file `<dir>/<prefix><pid>.<unique><suffix>` for writing, with `O_EXCL` and
/// `O_NOFOLLOW` (so a file or symlink planted at a guessed name is never opened: another name
/// is tried), extra open `flags` (e.g. `O_DSYNC`) and permissions exactly `mode`.
pub fn create_unique(
    dir: &Path,
    prefix: &str,
    suffix: &str,
    mode: u32,
    flags: i32,
) -> std::io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    for attempt in 0..64u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = dir.join(format!("{prefix}{pid}.{nanos:x}{attempt}{suffix}"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | flags)
            .open(&tmp)
        {
            Ok(f) => {
                // The umask may have narrowed `mode`; outputs get exactly what was asked.
                f.set_permissions(std::fs::Permissions::from_mode(mode))?;
                return Ok((tmp, f));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free temporary name"))
}

/// Create a new file at exactly `path` (`O_EXCL`, `O_NOFOLLOW`: an existing file or a symlink
/// there is an error, never written through), permissions `mode` (umask applies).
pub fn create_new(path: &Path, mode: u32) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Open `path` for appending, as a log or a JSON-lines series is: an existing regular file is
/// appended to, a missing one is created with `O_EXCL` and `mode` (the umask applies). A symlink
/// at the last component is never followed (`O_NOFOLLOW`): it is refused with an error saying
/// so, and so is anything but a regular file (a FIFO would block, a device is not a log).
pub fn open_append(path: &Path, mode: u32) -> std::io::Result<File> {
    use std::io::{Error, ErrorKind};
    let flags = libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // A file removed or created between the two opens only sends us round again.
    for _ in 0..8 {
        match OpenOptions::new()
            .append(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(flags)
            .open(path)
        {
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            done => return done,
        }
        let f = match OpenOptions::new()
            .append(true)
            .custom_flags(flags | libc::O_NONBLOCK)
            .open(path)
        {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(Error::new(
                ErrorKind::InvalidInput,
                "is a symbolic link, which lowlat does not write through; give the file's own path",
            )),
            // A FIFO with no reader (O_NONBLOCK keeps the open from blocking on it).
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                return Err(Error::new(ErrorKind::InvalidInput, "is not a regular file"))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            other => other?,
        };
        if !f.metadata()?.is_file() {
            return Err(Error::new(ErrorKind::InvalidInput, "is not a regular file"));
        }
        return Ok(f);
    }
    Err(Error::other("kept appearing and disappearing while being opened"))
}

/// Create a new private directory (`0700`) `<dir>/<prefix><pid>.<unique>`: `mkdir` never
/// reuses an existing entry, so nothing planted at a guessed name is written into.
pub fn create_unique_dir(dir: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt as _;
    let pid = std::process::id();
    for attempt in 0..64u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let p = dir.join(format!("{prefix}{pid}.{nanos:x}{attempt}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))?;
                return Ok(p);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free directory name"))
}

/// Open (creating it `0600` if missing) a private file — a journal, a lock — for reading and
/// appending (`append`) or reading and writing, refusing what an attacker could have planted:
/// a symlink at its last component (`O_NOFOLLOW`), anything but a regular file (a FIFO would
/// block), and a file that someone other than the caller or root owns or may write. The mode is
/// made exactly `0600` whatever the umask.
pub fn open_private(path: &Path, append: bool) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(!append)
        .append(append)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    check_trusted(&f, path, true)?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(f)
}

/// Read a private file written by [`open_private`], at most `max` bytes, with the same checks
/// (no symlink at the last component, a regular file owned by the caller or root and writable by
/// no one else).
pub fn read_private(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    check_trusted(&f, path, false)?;
    let mut bytes = Vec::new();
    f.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is larger than {max} bytes", path.display()),
        ));
    }
    Ok(bytes)
}

/// A regular file owned by the caller or root; unless `fixing` (we are about to chmod it
/// `0600`), writable by its owner only.
fn check_trusted(f: &File, path: &Path, fixing: bool) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = f.metadata()?;
    let refuse = |why: String| {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} {why}", path.display()),
        ))
    };
    if !meta.is_file() {
        return refuse("is not a regular file".into());
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me && meta.uid() != 0 {
        return refuse(format!("is owned by uid {}, not by this user or root", meta.uid()));
    }
    if !fixing && meta.mode() & 0o022 != 0 {
        return refuse(format!(
            "is writable by other users (mode {:o}); `chmod 600` it if you trust its content",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

/// Create a directory and its missing parents; each directory this call creates is made
/// exactly `0700` whatever the umask. Directories that already exist are left as they are
/// (a journal under `/tmp` must not make `/tmp` private). Fails when `path` exists and is not
/// a directory.
pub fn create_private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    let mut missing = Vec::new();
    let mut cur = path;
    loop {
        match std::fs::metadata(cur) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{} is not a directory", cur.display()),
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push(cur);
                match cur.parent() {
                    Some(p) if !p.as_os_str().is_empty() => cur = p,
                    _ => break,
                }
            }
            Err(e) => return Err(e),
        }
    }
    for dir in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?,
            // Created by someone else meanwhile: theirs, left as it is.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Do two paths name the same existing file (same device and inode)?
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_writable_finds_a_missing_directory_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        check_writable(&d.path().join("r.json")).unwrap();
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "nothing left behind");
        let e = check_writable(&d.path().join("missing/r.json")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(check_writable(d.path()).unwrap_err().kind(), std::io::ErrorKind::IsADirectory);
    }

    #[test]
    fn atomic_write_replaces_and_never_follows_links() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.json");
        write_atomic(&p, b"one", 0o644).unwrap();
        write_atomic(&p, b"two", 0o644).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o644);
        // A symlink at the destination is replaced, its target untouched.
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        write_atomic(&link, b"new", 0o644).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&link).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 3, "no temporary left");
    }

    #[test]
    fn unique_files_are_new_and_skip_planted_names() {
        let d = tempfile::tempdir().unwrap();
        let (a, _) = create_unique(d.path(), "x-", ".dsync", 0o600, libc::O_DSYNC).unwrap();
        let (b, _) = create_unique(d.path(), "x-", ".dsync", 0o600, 0).unwrap();
        assert_ne!(a, b);
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!("x-{}.", std::process::id())) && name.ends_with(".dsync")
        );
        assert_eq!(std::fs::metadata(&a).unwrap().permissions().mode() & 0o777, 0o600);
        let n = d.path().join("new");
        drop(create_new(&n, 0o644).unwrap());
        assert!(create_new(&n, 0o644).is_err(), "exists");
        std::os::unix::fs::symlink(&a, d.path().join("ln")).unwrap();
        assert!(create_new(&d.path().join("ln"), 0o644).is_err(), "a symlink");
        let x = create_unique_dir(d.path(), "probe.").unwrap();
        let y = create_unique_dir(d.path(), "probe.").unwrap();
        assert_ne!(x, y);
        assert!(std::fs::symlink_metadata(&x).unwrap().is_dir());
        assert_eq!(std::fs::metadata(&x).unwrap().permissions().mode() & 0o777, 0o700);
    }

    #[test]
    fn append_creates_or_appends_and_never_follows_a_symlink() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("w.jsonl");
        // SAFETY: umask(2) only swaps the process's file mode mask; restored below.
        let old = unsafe { libc::umask(0o027) };
        let made = open_append(&p, 0o644);
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        made.unwrap().write_all(b"one\n").unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640, "umask");
        open_append(&p, 0o644).unwrap().write_all(b"two\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one\ntwo\n");
        // A symlink, to a file or dangling, is refused; its target is neither written nor made.
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = open_append(&link, 0o644).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("made"), &dangling).unwrap();
        assert!(open_append(&dangling, 0o644).is_err());
        assert!(!d.path().join("made").exists());
        // Nor is anything but a regular file.
        let e = open_append(d.path(), 0o644).unwrap_err();
        assert!(e.kind() != std::io::ErrorKind::NotFound, "{e}");
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_append(&fifo, 0o644).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[test]
    fn private_files_and_dirs() {
        let d = tempfile::tempdir().unwrap();
        // An existing directory keeps its mode; the ones created are 0700 whatever the umask.
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        // SAFETY: umask(2) only swaps the process's file mode mask; restored below.
        let old = unsafe { libc::umask(0) };
        let dir = d.path().join("a/b");
        let made = create_private_dir(&dir);
        let f = dir.join("journal");
        let opened = open_private(&f, true);
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        made.unwrap();
        drop(opened.unwrap());
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(d.path()), 0o755, "an existing directory is left alone");
        assert_eq!(mode(&d.path().join("a")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&f), 0o600);
        create_private_dir(&dir).unwrap();
        assert!(create_private_dir(&f).is_err(), "a file is not a directory");
        // A symlink at the last component is never followed, for writing or reading.
        let link = dir.join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(open_private(&link, true).is_err(), "O_NOFOLLOW");
        assert!(read_private(&link, 100).is_err(), "O_NOFOLLOW");
        // Neither is a FIFO (it would block) nor a file others may write.
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(open_private(&fifo, true).is_err());
        assert!(read_private(&fifo, 100).is_err());
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_private(&f, 10).unwrap(), b"0123456789");
        assert!(read_private(&f, 9).is_err(), "over the cap");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = read_private(&f, 100).unwrap_err();
        assert!(e.to_string().contains("writable by other users"), "{e}");
        // Opening it for writing makes it private again.
        drop(open_private(&f, true).unwrap());
        assert_eq!(mode(&f), 0o600);
        assert!(same_file(&f, &f) && !same_file(&f, &dir));
    }
}
