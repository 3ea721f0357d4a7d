//! Where host files come from: the live `/`, an unpacked directory, a `.tgz` read in memory,
//! or a must-gather node's `sysinfo.tgz`. Paths given to a [`Root`] are root-relative
//! (`proc/cmdline`, `sys/devices/system/cpu`); `..` and absolute paths are refused and symlinks
//! are resolved inside the tree, never outside it. A [`Root`] can record every access so that
//! `lowlat snapshot` captures exactly what was read.

pub mod manifest;
mod must_gather;
mod resolve;
mod tgz;

use std::fmt;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use must_gather::{find_nodes, MustGatherError};
use resolve::At;
pub use resolve::{lexical_target, normalize, Kind, Resolved};
pub use tgz::TgzError;

use crate::model::Source;

/// The largest file read from a snapshot, archive or directory (kernel files are a few KiB;
/// `/proc/interrupts` of a big machine a few MiB). A bigger file reads as refused.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// The most an archive may keep in memory: files, plus names and a fixed cost per entry.
pub const MAX_KEPT_BYTES: u64 = 128 << 20;
/// The most an archive may unpack to (the tar stream after gzip), kept or not.
pub const MAX_STREAM_BYTES: u64 = 1 << 30;

/// What a non-regular, non-directory file is, for messages.
pub(crate) fn special_kind(ft: &std::fs::FileType) -> Option<&'static str> {
    Some(if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        return None;
    })
}

/// Why a file could not be read. Missing files are normal (containers, old kernels,
/// must-gathers): callers turn them into "unknown".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: not present")]
    NotFound { path: String },
    #[error("{path}: permission denied")]
    PermissionDenied { path: String },
    #[error("{path}: {message}")]
    Other { path: String, message: String },
    #[error("{path}: refused ({message})")]
    Refused { path: String, message: String },
}

impl ReadError {
    /// Short reason for the "unknown" list.
    pub fn reason(&self) -> String {
        match self {
            ReadError::NotFound { .. } => "not present".to_string(),
            ReadError::PermissionDenied { .. } => "permission denied".to_string(),
            ReadError::Other { message, .. } | ReadError::Refused { message, .. } => {
                message.clone()
            }
        }
    }

    /// Whether the file simply does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::NotFound { .. })
    }

    fn from_io(path: &str, e: &std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => ReadError::NotFound { path: path.to_string() },
            std::io::ErrorKind::PermissionDenied => {
                ReadError::PermissionDenied { path: path.to_string() }
            }
            _ => match e.raw_os_error() {
                // ENOTDIR: a path component is a file; ENODEV/ENXIO/ESRCH: vanished process.
                Some(20) | Some(3) => ReadError::NotFound { path: path.to_string() },
                _ => ReadError::Other { path: path.to_string(), message: e.to_string() },
            },
        }
    }
}

/// Error opening a root.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{path}: does not exist (give a directory, a .tgz snapshot, or a must-gather directory with --must-gather)")]
    Missing { path: PathBuf },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Tgz(#[from] TgzError),
    #[error(transparent)]
    MustGather(#[from] MustGatherError),
}

impl util::exit::Classify for OpenError {
    fn exit_code(&self) -> util::exit::ExitCode {
        match self {
            // A path that does not exist is the caller's mistake; one that exists but cannot
            // be read (EACCES, EIO, …) is a runtime failure of this machine.
            OpenError::Missing { .. } => util::exit::ExitCode::Usage,
            OpenError::Io { .. } => util::exit::ExitCode::Runtime,
            OpenError::Tgz(e) => util::exit::Classify::exit_code(e),
            OpenError::MustGather(e) => util::exit::Classify::exit_code(e),
        }
    }
}

/// One recorded access (for `lowlat snapshot`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// A file read: its bytes, or why it failed.
    Read { path: String, result: Result<Vec<u8>, ReadError> },
    /// A directory listed: the names, or why it failed.
    List { path: String, result: Result<Vec<String>, ReadError> },
    /// A symlink read.
    Link { path: String, result: Result<String, ReadError> },
}

#[derive(Debug)]
enum Backend {
    Live,
    Dir(resolve::DirTree),
    Tgz(tgz::TgzTree),
}

/// A view of a host's `/proc` and `/sys`. Cheap to share by reference; `Sync`.
#[derive(Debug)]
pub struct Root {
    backend: Backend,
    source: Source,
    record: Option<Arc<Mutex<Vec<Access>>>>,
}

/// A directory of a [`Root`] held open so that the files in it are read by name: on a live or
/// directory root the kernel then walks only the name, not the whole path, for each file
/// (every thread's `stat` and `status` under `proc/PID/task`, the per-CPU sysfs files).
/// Listings and reads give the same results, and are recorded the same, as
/// [`Root::list_dir`], [`Root::read_string`] and [`Root::read_record_into`] of the full path:
/// a name that is not there answers "not present" at once, and anything unusual (a name with
/// an empty, `.` or `..` component, a link leaving the directory, any other failed open, a
/// tarball root) goes through the full path.
#[derive(Debug)]
pub struct OpenDir<'r> {
    root: &'r Root,
    /// The path as given (what is recorded and reported).
    rel: String,
    /// The same, normalized (what the backends take).
    norm: String,
    fd: Option<std::fs::File>,
}

impl OpenDir<'_> {
    /// This directory's root-relative path, as given to [`Root::open_dir`].
    pub fn path(&self) -> &str {
        &self.rel
    }

    /// The full root-relative path of `name` in this directory.
    pub fn path_of(&self, name: &str) -> String {
        format!("{}/{name}", self.rel)
    }

    /// [`Root::list_dir`] of this directory.
    pub fn list(&self) -> Result<Vec<String>, ReadError> {
        let Some(fd) = &self.fd else { return self.root.list_dir(&self.rel) };
        let mut names = resolve::list_fd(fd);
        names.sort();
        if self.root.record.is_some() {
            self.root.push(Access::List { path: self.rel.clone(), result: Ok(names.clone()) });
        }
        Ok(names)
    }

    /// [`Root::read_record_into`] of `name` in this directory.
    pub fn read_record_into(&self, name: &str, buf: &mut Vec<u8>) -> Result<(), ReadError> {
        self.read_into(name, true, buf)
    }

    /// [`Root::read_string`] of `name` in this directory.
    pub fn read_string(&self, name: &str) -> Result<String, ReadError> {
        let mut buf = Vec::new();
        self.read_into(name, false, &mut buf)?;
        Ok(match String::from_utf8(buf) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// [`Root::list_dir`] of `name` (a directory in this one).
    pub fn list_dir(&self, name: &str) -> Result<Vec<String>, ReadError> {
        let res = match self.open_at(name, libc::O_DIRECTORY) {
            At::Open(sub) => {
                let mut names = resolve::list_fd(&sub);
                names.sort();
                Ok(names)
            }
            At::Absent => Err(self.absent(name)),
            At::Retry => return self.root.list_dir(&self.path_of(name)),
        };
        if self.root.record.is_some() {
            self.root.push(Access::List { path: self.path_of(name), result: res.clone() });
        }
        res
    }

    fn read_into(&self, name: &str, one_record: bool, buf: &mut Vec<u8>) -> Result<(), ReadError> {
        let res = match self.open_at(name, 0) {
            At::Open(f) => match &self.root.backend {
                Backend::Dir(d) => d.read_opened(f, &self.full(name), one_record, buf),
                _ => resolve::read_file_into(f, one_record, buf)
                    .map_err(|e| ReadError::from_io(&self.full(name), &e)),
            },
            At::Absent => Err(self.absent(name)),
            At::Retry => {
                let path = self.path_of(name);
                return if one_record {
                    self.root.read_record_into(&path, buf)
                } else {
                    let res = self.root.read_bytes(&path).map(|b| *buf = b);
                    if res.is_err() {
                        buf.clear();
                    }
                    res
                };
            }
        };
        if res.is_err() {
            buf.clear();
        }
        if self.root.record.is_some() {
            let result = res.clone().map(|()| buf.clone());
            self.root.push(Access::Read { path: self.path_of(name), result });
        }
        res
    }

    /// Open `name` beneath this directory (live and directory roots, plain names only).
    fn open_at(&self, name: &str, extra: i32) -> At {
        let plain = !name.split('/').any(|c| matches!(c, "" | "." | ".."));
        match (&self.fd, &self.root.backend) {
            (Some(fd), Backend::Live) if plain => resolve::openat_live(fd, name, extra),
            (Some(fd), Backend::Dir(d)) if plain => d.open_at(fd, name, extra),
            _ => At::Retry,
        }
    }

    /// `name`'s normalized full path, as the backends name it in errors.
    fn full(&self, name: &str) -> String {
        format!("{}/{name}", self.norm)
    }

    /// What reading `name` by its full path answers when nothing is there.
    fn absent(&self, name: &str) -> ReadError {
        ReadError::NotFound { path: self.full(name) }
    }
}

/// Handle on the accesses a recording [`Root`] made.
#[derive(Debug, Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<Access>>>);

impl Recorder {
    /// Every access so far, in order.
    pub fn accesses(&self) -> Vec<Access> {
        match self.0.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
}

impl fmt::Display for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source.node {
            Some(n) => write!(f, "{} (node {n})", self.source.path),
            None => f.write_str(&self.source.path),
        }
    }
}

impl Root {
    /// The live host (`/`).
    pub fn live() -> Self {
        Self {
            backend: Backend::Live,
            source: Source { kind: "live".into(), path: "/".into(), node: None },
            record: None,
        }
    }

    /// The root a user names: a must-gather's node when a must-gather is given, else a
    /// snapshot (directory or `.tgz`), else the live host.
    pub fn choose(
        must_gather: Option<&Path>,
        node: Option<&str>,
        snapshot: Option<&Path>,
    ) -> Result<Self, OpenError> {
        match (must_gather, snapshot) {
            (Some(mg), _) => Self::must_gather(mg, node),
            (None, Some(r)) => Self::open(r),
            (None, None) => Ok(Self::live()),
        }
    }

    /// A directory holding `proc/` and `sys/`, or a `.tgz`/`.tar.gz` snapshot (read in memory).
    pub fn open(path: &Path) -> Result<Self, OpenError> {
        let meta = std::fs::metadata(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                OpenError::Missing { path: path.to_path_buf() }
            } else {
                OpenError::Io { path: path.to_path_buf(), source: e }
            }
        })?;
        if let Some(what) = special_kind(&meta.file_type()) {
            return Err(TgzError::NotRegular { path: path.to_path_buf(), what }.into());
        }
        if meta.is_dir() {
            Ok(Self {
                backend: Backend::Dir(resolve::DirTree::new(path.to_path_buf())),
                source: Source { kind: "dir".into(), path: path.display().to_string(), node: None },
                record: None,
            })
        } else {
            let tree = tgz::TgzTree::open(path)?;
            Ok(Self {
                backend: Backend::Tgz(tree),
                source: Source { kind: "tgz".into(), path: path.display().to_string(), node: None },
                record: None,
            })
        }
    }

    /// A tarball already in memory (gzip-compressed or plain tar).
    pub fn from_tgz_bytes(name: &str, bytes: &[u8]) -> Result<Self, OpenError> {
        let tree = tgz::TgzTree::from_bytes(name, bytes)?;
        Ok(Self {
            backend: Backend::Tgz(tree),
            source: Source { kind: "tgz".into(), path: name.to_string(), node: None },
            record: None,
        })
    }

    /// A must-gather directory: finds `**/nodes/<node>/sysinfo.tgz`. Without a node name it
    /// fails with the list of nodes found.
    pub fn must_gather(dir: &Path, node: Option<&str>) -> Result<Self, OpenError> {
        let tgz_path = must_gather::locate(dir, node)?;
        let tree = tgz::TgzTree::open_nofollow(&tgz_path)?;
        Ok(Self {
            backend: Backend::Tgz(tree),
            source: Source {
                kind: "must-gather".into(),
                path: dir.display().to_string(),
                node: node.map(str::to_string),
            },
            record: None,
        })
    }

    /// Where the data comes from (for the model's `source`).
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Whether this is the running host (live-only fields are read only then).
    pub fn is_live(&self) -> bool {
        matches!(self.backend, Backend::Live)
    }

    /// Whether accesses are being recorded (`lowlat snapshot`): readers then keep the order
    /// of their reads deterministic.
    pub fn is_recording(&self) -> bool {
        self.record.is_some()
    }

    /// Start recording every access; returns the handle to read them back.
    pub fn recording(mut self) -> (Self, Recorder) {
        let rec = Recorder::default();
        self.record = Some(rec.0.clone());
        (self, rec)
    }

    fn push(&self, a: Access) {
        if let Some(r) = &self.record {
            match r.lock() {
                Ok(mut g) => g.push(a),
                Err(p) => p.into_inner().push(a),
            }
        }
    }

    /// What `rel` is (file, directory, symlink with its target) without following a final
    /// link. Not recorded: for `lowlat snapshot` building its tarball.
    pub fn kind(&self, rel: &str) -> Option<Kind> {
        let rel = normalize(rel).ok()?;
        match &self.backend {
            Backend::Live => {
                let r = self.resolve_links(match rel.rsplit_once('/') {
                    Some((d, _)) => d,
                    None => "",
                });
                let dir = r.ok()?.path;
                let name = rel.rsplit('/').next().unwrap_or(&rel);
                let full =
                    if dir.is_empty() { format!("/{name}") } else { format!("/{dir}/{name}") };
                resolve::disk_kind(Path::new(&full))
            }
            Backend::Dir(d) => d.kind(&rel),
            Backend::Tgz(t) => t.kind(&rel),
        }
    }

    /// Resolve every symlink in `rel` inside the tree: the real path and the links crossed.
    /// Not recorded: for `lowlat snapshot`.
    pub fn resolve_links(&self, rel: &str) -> Result<Resolved, ReadError> {
        let rel = normalize(rel)?;
        match &self.backend {
            Backend::Live => resolve::resolve(&rel, resolve::live_link_of),
            Backend::Dir(d) => resolve::resolve(&rel, |p| d.link_of(p)),
            Backend::Tgz(t) => resolve::resolve(&rel, |p| t.link_of(p)),
        }
    }

    /// Read a file's bytes.
    pub fn read_bytes(&self, rel: &str) -> Result<Vec<u8>, ReadError> {
        self.read_bytes_as(rel, false)
    }

    /// Read a file produced in one piece (`/proc/PID/{stat,status,cgroup,cmdline}`): one
    /// `read` usually suffices. Same result as [`Root::read_bytes`], fewer syscalls.
    pub fn read_record(&self, rel: &str) -> Result<Vec<u8>, ReadError> {
        self.read_bytes_as(rel, true)
    }

    /// [`Root::read_record`] as text.
    pub fn read_record_string(&self, rel: &str) -> Result<String, ReadError> {
        let b = self.read_record(rel)?;
        Ok(match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// [`Root::read_record`] into `buf`, replacing its contents (left empty on failure): a
    /// reader of many small files (every task's `stat` and `status`) reuses one buffer
    /// instead of allocating one per file. Recorded like any read.
    pub fn read_record_into(&self, rel: &str, buf: &mut Vec<u8>) -> Result<(), ReadError> {
        let res = self.read_into_inner(rel, true, buf);
        if res.is_err() {
            buf.clear();
        }
        if self.record.is_some() {
            let result = res.clone().map(|()| buf.clone());
            self.push(Access::Read { path: rel.to_string(), result });
        }
        res
    }

    fn read_bytes_as(&self, rel: &str, one_record: bool) -> Result<Vec<u8>, ReadError> {
        let mut buf = Vec::new();
        let res = self.read_into_inner(rel, one_record, &mut buf).map(|()| buf);
        if self.record.is_some() {
            self.push(Access::Read { path: rel.to_string(), result: res.clone() });
        }
        res
    }

    fn read_into_inner(
        &self,
        rel: &str,
        one_record: bool,
        buf: &mut Vec<u8>,
    ) -> Result<(), ReadError> {
        let rel = resolve::normalized(rel)?;
        match &self.backend {
            Backend::Live => {
                let p = format!("/{rel}");
                let f = std::fs::File::open(&p).map_err(|e| ReadError::from_io(&rel, &e))?;
                resolve::read_file_into(f, one_record, buf)
                    .map_err(|e| ReadError::from_io(&rel, &e))
            }
            Backend::Dir(d) => d.read_into(&rel, one_record, buf),
            Backend::Tgz(t) => {
                *buf = t.read(&rel)?;
                Ok(())
            }
        }
    }

    /// Read a file as text (invalid UTF-8 is replaced, never an error).
    pub fn read_string(&self, rel: &str) -> Result<String, ReadError> {
        let b = self.read_bytes(rel)?;
        Ok(match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Read a one-line sysfs/procfs value, trimmed.
    pub fn read_trimmed(&self, rel: &str) -> Result<String, ReadError> {
        Ok(self.read_string(rel)?.trim().to_string())
    }

    /// Names in a directory, sorted (numeric-aware order is the caller's business).
    pub fn list_dir(&self, rel: &str) -> Result<Vec<String>, ReadError> {
        let res = self.list_dir_inner(rel);
        if self.record.is_some() {
            self.push(Access::List { path: rel.to_string(), result: res.clone() });
        }
        res
    }

    fn list_dir_inner(&self, rel: &str) -> Result<Vec<String>, ReadError> {
        let rel = resolve::normalized(rel)?;
        let mut names = match &self.backend {
            Backend::Live => {
                let p = format!("/{rel}");
                let rd = std::fs::read_dir(&p).map_err(|e| ReadError::from_io(&rel, &e))?;
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            }
            Backend::Dir(d) => d.list(&rel)?,
            Backend::Tgz(t) => t.list(&rel)?,
        };
        names.sort();
        Ok(names)
    }

    /// Hold the directory `rel` open so that the files in it are read by name
    /// ([`OpenDir`]). Never fails: a directory that cannot be opened is read by full path,
    /// which reports the error.
    pub fn open_dir(&self, rel: &str) -> OpenDir<'_> {
        let norm = resolve::normalized(rel).map(std::borrow::Cow::into_owned);
        let fd = match (&self.backend, &norm) {
            (_, Err(_)) | (Backend::Tgz(_), _) => None,
            (Backend::Live, Ok(n)) => {
                use std::os::unix::fs::OpenOptionsExt as _;
                std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_DIRECTORY)
                    .open(format!("/{n}"))
                    .ok()
            }
            (Backend::Dir(d), Ok(n)) => d.open_dir(n).and_then(Result::ok),
        };
        OpenDir { root: self, rel: rel.to_string(), norm: norm.unwrap_or_default(), fd }
    }

    /// The target of a symlink, as stored (relative links stay relative).
    pub fn read_link(&self, rel: &str) -> Result<String, ReadError> {
        let res = self.read_link_inner(rel);
        if self.record.is_some() {
            self.push(Access::Link { path: rel.to_string(), result: res.clone() });
        }
        res
    }

    fn read_link_inner(&self, rel: &str) -> Result<String, ReadError> {
        let rel = normalize(rel)?;
        match &self.backend {
            Backend::Live => std::fs::read_link(format!("/{rel}"))
                .map(|p| p.to_string_lossy().into_owned())
                .map_err(|e| ReadError::from_io(&rel, &e)),
            Backend::Dir(d) => d.read_link(&rel),
            Backend::Tgz(t) => t.read_link(&rel),
        }
    }
}

#[cfg(test)]
mod tests;
