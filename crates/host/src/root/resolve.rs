//! Path hygiene and symlink resolution inside a tree: root-relative paths only, no `..`
//! escaping the root, symlinks followed lexically from their own directory, absolute link
//! targets refused (they would point at the machine reading the tree, not the one captured).
//! Also the directory backend, which resolves links itself so a tree can never leak the
//! reader's own `/proc` or `/sys`.

use std::collections::{HashSet, VecDeque};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;
use std::sync::RwLock;

use super::ReadError;

const MAX_HOPS: usize = 40;

/// Check and canonicalize a root-relative path: strips a leading `/` and `./`, drops empty
/// and `.` components, refuses `..`.
pub fn normalize(rel: &str) -> Result<String, ReadError> {
    normalized(rel).map(std::borrow::Cow::into_owned)
}

/// [`normalize`], borrowing `rel` when it is already canonical (the readers' own paths
/// always are): no allocation per file read.
pub(crate) fn normalized(rel: &str) -> Result<std::borrow::Cow<'_, str>, ReadError> {
    if rel.split('/').all(|c| !matches!(c, "" | "." | "..")) {
        return Ok(std::borrow::Cow::Borrowed(rel));
    }
    normalize_slow(rel).map(std::borrow::Cow::Owned)
}

fn normalize_slow(rel: &str) -> Result<String, ReadError> {
    let mut out = String::with_capacity(rel.len());
    for c in rel.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                return Err(ReadError::Refused {
                    path: rel.to_string(),
                    message: "`..` is not allowed in a root-relative path".into(),
                })
            }
            c => {
                if !out.is_empty() {
                    out.push('/');
                }
                out.push_str(c);
            }
        }
    }
    Ok(out)
}

/// A path with its symlinks resolved, and the links crossed on the way (link path, target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub path: String,
    pub links: Vec<(String, String)>,
}

/// Resolve `rel` (already normalized) against a tree whose links `link_of` reports
/// (`Some(target)` when the path is a symlink). Refuses absolute targets and escapes.
pub fn resolve(
    rel: &str,
    mut link_of: impl FnMut(&str) -> Result<Option<String>, ReadError>,
) -> Result<Resolved, ReadError> {
    let mut queue: VecDeque<String> =
        rel.split('/').filter(|c| !c.is_empty()).map(str::to_string).collect();
    let mut done: Vec<String> = Vec::new();
    let mut links = Vec::new();
    let mut hops = 0;
    let refuse = |m: String| ReadError::Refused { path: rel.to_string(), message: m };
    while let Some(c) = queue.pop_front() {
        match c.as_str() {
            "." | "" => continue,
            ".." => {
                if done.pop().is_none() {
                    return Err(refuse("a symlink points outside the tree".into()));
                }
                continue;
            }
            _ => done.push(c),
        }
        let cur = done.join("/");
        if let Some(target) = link_of(&cur)? {
            hops += 1;
            if hops > MAX_HOPS {
                return Err(refuse("too many levels of symlinks".into()));
            }
            if target.starts_with('/') {
                return Err(refuse(format!(
                    "symlink {cur} -> {target} is absolute (outside the tree)"
                )));
            }
            links.push((cur, target.clone()));
            done.pop();
            for (i, t) in target.split('/').enumerate() {
                queue.insert(i, t.to_string());
            }
        }
    }
    Ok(Resolved { path: done.join("/"), links })
}

/// Lexically join a link's target onto the link's directory; `None` if it leaves the root.
pub fn lexical_target(link_path: &str, target: &str) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = link_path.split('/').filter(|c| !c.is_empty()).collect();
    parts.pop();
    for c in target.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

/// [`read_file_into`] into a new buffer.
#[cfg(test)]
pub fn read_file(f: impl Read, one_record: bool) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    read_file_into(f, one_record, &mut buf)?;
    Ok(buf)
}

/// Read a whole file with plain `read` calls into `buf` (replacing its contents: a caller
/// reading many files reuses one buffer instead of allocating one per file).
/// `File::read_to_end` first asks for the size and position (`statx` + `lseek`), which
/// procfs/sysfs cannot answer usefully; skipping them saves two syscalls per file, a third of
/// the cost of reading 100k small files.
///
/// With `one_record`, a first read shorter than the buffer is taken as the
/// whole file (true of procfs files generated in one piece, `single_open` ones such as
/// `/proc/PID/{stat,status,cgroup}`, and of regular files), saving the final empty read.
pub fn read_file_into(f: impl Read, one_record: bool, buf: &mut Vec<u8>) -> std::io::Result<()> {
    read_sized_into(f, one_record, None, buf)
}

/// [`read_file_into`] of a regular file whose size is known (`size`, from the `statx` that
/// checked its type): the buffer starts big enough for it all, and a first read that returned
/// every byte of it (and less than asked) ends the read — no final empty read, and one read
/// instead of a doubling series for a big file (`/proc/interrupts` of a 512-CPU host: 11 MB).
/// A file that turns out longer than `size` (it grew) is read on to its end as ever.
fn read_sized_into(
    mut f: impl Read,
    one_record: bool,
    size: Option<u64>,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    buf.clear();
    let first = size.map_or(0, |s| usize::try_from(s.min(super::MAX_FILE_BYTES)).unwrap_or(0));
    buf.resize(first.saturating_add(1).max(4096), 0);
    let mut len = loop {
        match f.read(buf) {
            Ok(0) => {
                buf.clear();
                return Ok(());
            }
            Ok(n) if n < buf.len() && (one_record || size.is_some_and(|s| n as u64 >= s)) => {
                buf.truncate(n);
                return Ok(());
            }
            Ok(n) => break n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    loop {
        if len == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match f.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    Ok(())
}

/// Why an opened file was not read.
enum ReadFail {
    Io(std::io::Error),
    NotRegular(&'static str),
    TooBig,
}

impl ReadFail {
    fn at(self, rel: &str) -> ReadError {
        match self {
            ReadFail::Io(e) => ReadError::from_io(rel, &e),
            ReadFail::NotRegular(what) => ReadError::Refused {
                path: rel.to_string(),
                message: format!("{what}, not a regular file"),
            },
            ReadFail::TooBig => ReadError::Refused {
                path: rel.to_string(),
                message: format!("larger than {} MiB; not read", super::MAX_FILE_BYTES >> 20),
            },
        }
    }
}

/// Read an opened file of a tree into `buf`, if it is a regular file of at most
/// [`super::MAX_FILE_BYTES`].
fn read_regular(file: std::fs::File, one_record: bool, buf: &mut Vec<u8>) -> Result<(), ReadFail> {
    // Only regular files: a FIFO would block or never end, a device (`/dev/zero`) never
    // ends, and neither is something a snapshot holds.
    let meta = file.metadata().map_err(ReadFail::Io)?;
    let ft = meta.file_type();
    if !ft.is_file() {
        return Err(ReadFail::NotRegular(super::special_kind(&ft).unwrap_or("a directory")));
    }
    let cap = super::MAX_FILE_BYTES;
    read_sized_into(std::io::Read::take(file, cap + 1), one_record, Some(meta.len()), buf)
        .map_err(ReadFail::Io)?;
    if buf.len() as u64 > cap {
        buf.clear();
        return Err(ReadFail::TooBig);
    }
    Ok(())
}

/// `openat2(dirfd, path, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, read-only and without
/// blocking (`O_NONBLOCK`: a FIFO cannot hang it); `Err(None)` when `path` holds a NUL byte.
fn openat2_beneath(
    dirfd: std::os::fd::RawFd,
    path: &str,
    extra: i32,
) -> Result<std::fs::File, Option<std::io::Error>> {
    use std::os::fd::FromRawFd as _;
    let how = OpenHow {
        flags: (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY | extra)
            as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
    };
    let fd = with_cstr(path, |c| {
        // SAFETY: `c` is a valid NUL-terminated path, `how` a properly initialized open_how
        // whose size we pass, and `dirfd` a descriptor the caller keeps open for the call.
        unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dirfd,
                c.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        }
    })
    .ok_or(None)?;
    if fd < 0 {
        return Err(Some(std::io::Error::last_os_error()));
    }
    let fd = i32::try_from(fd).map_err(|_| None)?;
    // SAFETY: the kernel just returned this fd to us; nothing else owns it.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// What opening a name beneath an open directory gave.
pub enum At {
    /// The file (or directory).
    Open(std::fs::File),
    /// `ENOENT`: the full path names nothing either (a link leaving the directory fails
    /// otherwise), so the answer is "not present" without asking again.
    Absent,
    /// Anything else: the full path is asked, and gives the answer (or the error) it always
    /// has.
    Retry,
}

impl At {
    fn of(fd: Result<std::fs::File, Option<std::io::Error>>) -> Self {
        match fd {
            Ok(f) => At::Open(f),
            Err(Some(e)) if e.raw_os_error() == Some(libc::ENOENT) => At::Absent,
            Err(_) => At::Retry,
        }
    }
}

/// `openat(dir, name)` read-only, for the live root (no confinement: the live root is `/`);
/// `extra` adds open flags (`O_DIRECTORY` to list a directory).
pub fn openat_live(dir: &std::fs::File, name: &str, extra: i32) -> At {
    use std::os::fd::{AsRawFd as _, FromRawFd as _};
    let fd = with_cstr(name, |c| {
        // SAFETY: `c` is a valid NUL-terminated path and `dir` an open descriptor we borrow
        // for the duration of the call.
        unsafe {
            libc::openat(dir.as_raw_fd(), c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC | extra)
        }
    });
    At::of(match fd {
        None => Err(None),
        Some(fd) if fd < 0 => Err(Some(std::io::Error::last_os_error())),
        // SAFETY: the kernel just returned this fd to us; nothing else owns it.
        Some(fd) => Ok(unsafe { std::fs::File::from_raw_fd(fd) }),
    })
}

/// Run `f` on `path` as a C string, built on the stack when short (no allocation per open);
/// `None` when `path` holds a NUL byte.
fn with_cstr<T>(path: &str, f: impl FnOnce(&std::ffi::CStr) -> T) -> Option<T> {
    const STACK: usize = 256;
    if path.len() < STACK {
        let mut b = [0u8; STACK];
        b[..path.len()].copy_from_slice(path.as_bytes());
        let c = std::ffi::CStr::from_bytes_with_nul(&b[..=path.len()]).ok()?;
        Some(f(c))
    } else {
        let c = std::ffi::CString::new(path).ok()?;
        Some(f(&c))
    }
}

/// The names in an open directory (without `.` and `..`), in directory order, read with
/// `getdents64` straight from the descriptor (`fdopendir` would add an `fstat` and two
/// `fcntl`s per directory). A failure part-way leaves the names read so far, as
/// `std::fs::read_dir` filtered with `.ok()` (the other listing paths) does.
pub fn list_fd(dir: &std::fs::File) -> Vec<String> {
    use std::os::fd::AsRawFd as _;
    // struct linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name[].
    const NAME: usize = 19;
    // On the stack: a zeroed heap buffer per directory cost more than the listing itself.
    let mut buf = [0u8; 8 << 10];
    let mut names = Vec::new();
    loop {
        // SAFETY: `buf` is writable for `buf.len()` bytes and `dir` an open descriptor we
        // borrow for the duration of the call.
        let n = unsafe {
            libc::syscall(libc::SYS_getdents64, dir.as_raw_fd(), buf.as_mut_ptr(), buf.len())
        };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        let Ok(n) = usize::try_from(n) else { break };
        if n == 0 {
            break;
        }
        let mut pos = 0;
        while pos + NAME <= n.min(buf.len()) {
            let reclen = usize::from(u16::from_ne_bytes([buf[pos + 16], buf[pos + 17]]));
            let Some(rec) = buf.get(pos + NAME..pos + reclen) else { break };
            let name = &rec[..rec.iter().position(|&b| b == 0).unwrap_or(rec.len())];
            if name != b"." && name != b".." {
                names.push(String::from_utf8_lossy(name).into_owned());
            }
            pos += reclen.max(1);
        }
    }
    names
}

/// What a path is, without following a final symlink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Link(String),
}

/// The kind of `full` on disk (`lstat`), `None` if it does not exist.
pub fn disk_kind(full: &std::path::Path) -> Option<Kind> {
    let m = std::fs::symlink_metadata(full).ok()?;
    Some(if m.file_type().is_symlink() {
        Kind::Link(std::fs::read_link(full).ok()?.to_string_lossy().into_owned())
    } else if m.is_dir() {
        Kind::Dir
    } else {
        Kind::File
    })
}

/// `link_of` for the live root: `lstat` under `/`.
pub fn live_link_of(p: &str) -> Result<Option<String>, ReadError> {
    Ok(match disk_kind(std::path::Path::new(&format!("/{p}"))) {
        Some(Kind::Link(t)) => Some(t),
        _ => None,
    })
}

/// `struct open_how` of `openat2(2)` (libc's is non-exhaustive).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// An unpacked tree on disk, read with links resolved inside it.
#[derive(Debug)]
pub struct DirTree {
    base: PathBuf,
    /// `O_PATH` handle on `base` for `openat2(RESOLVE_BENEATH)`: the kernel then refuses
    /// escapes itself in one syscall, with no `lstat` per component.
    base_fd: Option<std::os::fd::OwnedFd>,
    /// Cleared when the kernel lacks `openat2` (before 5.6) or a sandbox refuses it.
    openat2_ok: std::sync::atomic::AtomicBool,
    /// Prefixes known to be real directories (not links): saves an `lstat` per component.
    plain: RwLock<HashSet<String>>,
}

impl DirTree {
    pub fn new(base: PathBuf) -> Self {
        let base_fd = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(&base)
            .ok()
            .map(std::os::fd::OwnedFd::from);
        let ok = base_fd.is_some();
        Self {
            base,
            base_fd,
            openat2_ok: std::sync::atomic::AtomicBool::new(ok),
            plain: RwLock::new(HashSet::new()),
        }
    }

    /// Open `rel` beneath the base with `openat2`; `None` when openat2 is unavailable.
    /// `extra` adds open flags (`O_DIRECTORY` to list a directory).
    fn open_beneath(&self, rel: &str, extra: i32) -> Option<Result<std::fs::File, ReadError>> {
        use std::os::fd::AsRawFd as _;
        use std::sync::atomic::Ordering;
        if !self.openat2_ok.load(Ordering::Relaxed) {
            return None;
        }
        let dirfd = self.base_fd.as_ref()?.as_raw_fd();
        // The base itself is `.` (openat2 refuses an empty path).
        let path = if rel.is_empty() { "." } else { rel };
        match openat2_beneath(dirfd, path, extra) {
            Ok(f) => Some(Ok(f)),
            Err(None) => Some(Err(ReadError::Refused {
                path: rel.into(),
                message: "NUL byte in path".into(),
            })),
            Err(Some(e)) => match e.raw_os_error() {
                Some(libc::ENOSYS) | Some(libc::EPERM) | Some(libc::E2BIG) | Some(libc::EINVAL) => {
                    self.openat2_ok.store(false, Ordering::Relaxed);
                    None
                }
                Some(libc::EXDEV) => Some(Err(ReadError::Refused {
                    path: rel.into(),
                    message: "a symlink points outside the tree".into(),
                })),
                Some(libc::ELOOP) => Some(Err(ReadError::Refused {
                    path: rel.into(),
                    message: "too many levels of symlinks".into(),
                })),
                _ => Some(Err(ReadError::from_io(rel, &e))),
            },
        }
    }

    /// Open the directory `rel` for [`DirTree::read_at`] and [`list_fd`]; `None` when openat2
    /// is unavailable (then read by full path).
    pub fn open_dir(&self, rel: &str) -> Option<Result<std::fs::File, ReadError>> {
        self.open_beneath(rel, libc::O_DIRECTORY)
    }

    /// Open `name` beneath `dir`, a directory opened by [`DirTree::open_dir`]: the kernel
    /// walks `name` alone, confined beneath `dir`. `extra` adds open flags (`O_DIRECTORY` to
    /// list it).
    pub fn open_at(&self, dir: &std::fs::File, name: &str, extra: i32) -> At {
        use std::os::fd::AsRawFd as _;
        At::of(openat2_beneath(dir.as_raw_fd(), name, extra))
    }

    /// Read an opened file of the tree (`rel` names it in errors).
    pub fn read_opened(
        &self,
        file: std::fs::File,
        rel: &str,
        one_record: bool,
        buf: &mut Vec<u8>,
    ) -> Result<(), ReadError> {
        read_regular(file, one_record, buf).map_err(|f| f.at(rel))
    }

    pub(super) fn link_of(&self, p: &str) -> Result<Option<String>, ReadError> {
        if let Ok(g) = self.plain.read() {
            if g.contains(p) {
                return Ok(None);
            }
        }
        let full = self.base.join(p);
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.file_type().is_symlink() => std::fs::read_link(&full)
                .map(|t| Some(t.to_string_lossy().into_owned()))
                .map_err(|e| ReadError::from_io(p, &e)),
            Ok(m) => {
                if m.is_dir() {
                    if let Ok(mut g) = self.plain.write() {
                        g.insert(p.to_string());
                    }
                }
                Ok(None)
            }
            // Let the final open report the missing file with its full path.
            Err(_) => Ok(None),
        }
    }

    /// Resolve the directory part of `rel` (cached), leaving the last component as is.
    fn resolve_parent(&self, rel: &str) -> Result<String, ReadError> {
        match rel.rsplit_once('/') {
            Some((dir, name)) => {
                let r = resolve(dir, |p| self.link_of(p))?;
                Ok(if r.path.is_empty() { name.to_string() } else { format!("{}/{name}", r.path) })
            }
            None => Ok(rel.to_string()),
        }
    }

    #[cfg(test)]
    pub fn read(&self, rel: &str, one_record: bool) -> Result<Vec<u8>, ReadError> {
        let mut buf = Vec::new();
        self.read_into(rel, one_record, &mut buf)?;
        Ok(buf)
    }

    /// [`DirTree::read`] into `buf` (replacing its contents).
    pub fn read_into(
        &self,
        rel: &str,
        one_record: bool,
        buf: &mut Vec<u8>,
    ) -> Result<(), ReadError> {
        let file = self.open(rel)?;
        read_regular(file, one_record, buf).map_err(|f| f.at(rel))
    }

    /// Open `rel` beneath the base without blocking (`O_NONBLOCK`: a FIFO cannot hang it).
    fn open(&self, rel: &str) -> Result<std::fs::File, ReadError> {
        if let Some(f) = self.open_beneath(rel, 0) {
            return f;
        }
        let p = self.resolve_parent(rel)?;
        let open = |p: &str| {
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(self.base.join(p))
        };
        let file = match open(&p) {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                let r = resolve(&p, |q| self.link_of(q))?;
                open(&r.path).map_err(|e| ReadError::from_io(rel, &e))?
            }
            Err(e) => return Err(ReadError::from_io(rel, &e)),
        };
        Ok(file)
    }

    pub fn list(&self, rel: &str) -> Result<Vec<String>, ReadError> {
        // One `openat2(O_DIRECTORY)` confines the whole path, as for files; the manual walk
        // below costs an `lstat` per component not yet known to be a plain directory (two new
        // ones for every `proc/PID/task`).
        match self.open_dir(rel) {
            Some(Ok(dir)) => return Ok(list_fd(&dir)),
            // A refusal (a link leaving the tree) is left to the walk below, which names the
            // link and its target as it always has.
            Some(Err(e)) if !matches!(e, ReadError::Refused { .. }) => return Err(e),
            _ => {}
        }
        let r = resolve(rel, |p| self.link_of(p))?;
        let rd =
            std::fs::read_dir(self.base.join(&r.path)).map_err(|e| ReadError::from_io(rel, &e))?;
        Ok(rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect())
    }

    pub fn kind(&self, rel: &str) -> Option<Kind> {
        let p = self.resolve_parent(rel).ok()?;
        disk_kind(&self.base.join(p))
    }

    pub fn read_link(&self, rel: &str) -> Result<String, ReadError> {
        let p = self.resolve_parent(rel)?;
        std::fs::read_link(self.base.join(&p))
            .map(|t| t.to_string_lossy().into_owned())
            .map_err(|e| ReadError::from_io(rel, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_strips_and_refuses() {
        assert_eq!(normalize("/proc//cmdline").ok(), Some("proc/cmdline".into()));
        assert_eq!(normalize("./sys/./x").ok(), Some("sys/x".into()));
        assert!(normalize("sys/../../etc/passwd").is_err());
    }

    #[test]
    fn resolves_relative_links_and_refuses_escapes() {
        let links = |p: &str| -> Result<Option<String>, ReadError> {
            Ok(match p {
                "sys/bus/pci/devices/X" => Some("../../../devices/pci0000:00/X".into()),
                "sys/devices/system/node/node0/cpu0" => Some("../../cpu/cpu0".into()),
                "sys/evil" => Some("../../etc".into()),
                "sys/abs" => Some("/etc".into()),
                "sys/loop" => Some("loop".into()),
                _ => None,
            })
        };
        let r = resolve("sys/bus/pci/devices/X/numa_node", links).unwrap();
        assert_eq!(r.path, "sys/devices/pci0000:00/X/numa_node");
        assert_eq!(r.links.len(), 1);
        let r = resolve("sys/devices/system/node/node0/cpu0/topology/core_id", links).unwrap();
        assert_eq!(r.path, "sys/devices/system/cpu/cpu0/topology/core_id");
        assert!(resolve("sys/evil/passwd", links).is_err());
        assert!(resolve("sys/abs/passwd", links).is_err());
        assert!(resolve("sys/loop/x", links).is_err());
    }

    #[test]
    fn lexical_target_stays_inside() {
        assert_eq!(lexical_target("a/b/c", "../d").as_deref(), Some("a/d"));
        assert_eq!(lexical_target("a/b", "../../x"), None);
        assert_eq!(lexical_target("a/b", "/x"), None);
    }
}

#[cfg(test)]
mod dir_tests {
    #[test]
    fn one_record_reads_big_files_whole() {
        let d = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(d.path().join("big"), &big).unwrap();
        for one in [true, false] {
            let f = std::fs::File::open(d.path().join("big")).unwrap();
            assert_eq!(super::read_file(f, one).unwrap(), big);
        }
    }

    use super::*;

    /// A reader of `data` that hands out at most `step` bytes per read and counts its reads.
    struct Counted<'a> {
        data: &'a [u8],
        step: usize,
        reads: usize,
    }

    impl Read for Counted<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.reads += 1;
            let n = out.len().min(self.step).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_known_size_ends_the_read_only_when_all_of_it_came() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        // (bytes per read, the size `statx` said, reads expected)
        for (step, size, reads) in [
            (usize::MAX, Some(20_000), 1), // all at once: no final empty read
            (usize::MAX, None, 5),         // unknown size: 4 KiB doubling, then the empty read
            (7_000, Some(20_000), 4),      // short reads: on until the end
            (usize::MAX, Some(100), 5),    // the file grew past its size: read on to its end
            (usize::MAX, Some(0), 5),
        ] {
            let mut r = Counted { data: &data, step, reads: 0 };
            let mut buf = b"old".to_vec();
            read_sized_into(&mut r, false, size, &mut buf).unwrap();
            assert_eq!(buf, data, "step {step} size {size:?}");
            assert_eq!(r.reads, reads, "step {step} size {size:?}");
        }
        let mut r = Counted { data: &[], step: 1, reads: 0 };
        let mut buf = b"old".to_vec();
        read_sized_into(&mut r, false, None, &mut buf).unwrap();
        assert!(buf.is_empty());
        assert_eq!(r.reads, 1, "an empty file: one read");
    }

    #[test]
    fn manual_resolution_matches_openat2() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("sys/devices/x")).unwrap();
        std::fs::write(p.join("sys/devices/x/val"), "7\n").unwrap();
        std::os::unix::fs::symlink("devices/x", p.join("sys/x")).unwrap();
        std::os::unix::fs::symlink("/etc", p.join("sys/abs")).unwrap();
        std::os::unix::fs::symlink("../..", p.join("sys/up")).unwrap();
        for use_openat2 in [true, false] {
            let t = DirTree::new(p.to_path_buf());
            if !use_openat2 {
                t.openat2_ok.store(false, std::sync::atomic::Ordering::Relaxed);
            }
            assert_eq!(t.read("sys/x/val", false).unwrap(), b"7\n");
            assert_eq!(t.read("sys/x/val", true).unwrap(), b"7\n");
            assert!(
                matches!(t.read("sys/abs/passwd", false), Err(ReadError::Refused { .. })),
                "openat2 {use_openat2}"
            );
            assert!(
                matches!(t.read("sys/up/etc/passwd", false), Err(ReadError::Refused { .. })),
                "openat2 {use_openat2}"
            );
            assert!(t.read("sys/none", false).unwrap_err().is_not_found());
        }
    }
}
