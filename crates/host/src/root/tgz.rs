//! A `.tgz` (or plain `.tar`) tree held in memory: entries indexed by normalized path,
//! directories implied by their files, symlinks kept and resolved inside the tree, hard links
//! copied. Entries with `..`, absolute paths, or links pointing outside the tree make the
//! whole archive refused: a snapshot is input from elsewhere and is not trusted.
//!
//! Nothing the archive claims is believed: the archive is streamed (never read whole), the
//! decompressed stream is bounded ([`MAX_STREAM_BYTES`]), only the files a host model reads are
//! kept (under `proc/`, `sys/`, `etc/`, `boot/` and the snapshot manifest), each up to
//! [`MAX_FILE_BYTES`] (a bigger one reads as refused), and everything kept, names included, is
//! bounded by [`MAX_KEPT_BYTES`]. Long names and pax headers are read by this module with
//! their own small caps (the `tar` crate would read them whole). Error messages quote names
//! as short escaped excerpts and never quote the archive's bytes.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::resolve::{lexical_target, resolve, Kind};
use super::{special_kind, ReadError, MAX_FILE_BYTES, MAX_KEPT_BYTES, MAX_STREAM_BYTES};

/// The longest entry name or link target (PATH_MAX).
const MAX_NAME_BYTES: u64 = 4096;
/// The largest pax extended header.
const MAX_PAX_BYTES: u64 = 64 << 10;
/// What one entry costs beyond its name and data (map slot, node, parent's name set).
const ENTRY_COST: u64 = 256;
/// The top-level directories a host model reads; everything else in an archive is skipped.
const KEPT_TOP: &[&str] = &["proc", "sys", "etc", "boot"];

/// The bounds an archive is read within (tests use small ones).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub file: u64,
    pub kept: u64,
    pub stream: u64,
}

/// The bounds every archive is read within.
pub(crate) const LIMITS: Limits =
    Limits { file: MAX_FILE_BYTES, kept: MAX_KEPT_BYTES, stream: MAX_STREAM_BYTES };

fn mib(n: u64) -> u64 {
    n >> 20
}

/// Why a tarball was refused.
#[derive(Debug, thiserror::Error)]
pub enum TgzError {
    #[error("{path}: cannot read: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: is {what}, not a regular file; give a directory, a .tgz made by `lowlat snapshot`, or a must-gather sysinfo.tgz")]
    NotRegular { path: PathBuf, what: &'static str },
    #[error("{path}: not a readable tar/tar.gz archive ({message}); give a directory, a .tgz made by `lowlat snapshot`, or a must-gather sysinfo.tgz")]
    Corrupt { path: PathBuf, message: String },
    #[error("{path}: entry \"{entry}\" {message}; refusing the archive")]
    Unsafe { path: PathBuf, entry: String, message: String },
    #[error("{path}: {message}; refusing the archive (a host snapshot is a few MiB)")]
    TooLarge { path: PathBuf, message: String },
}

impl util::exit::Classify for TgzError {
    fn exit_code(&self) -> util::exit::ExitCode {
        match self {
            // The file could not be read: the machine's problem, not the input's.
            TgzError::Io { .. } => util::exit::ExitCode::Runtime,
            _ => util::exit::ExitCode::Usage,
        }
    }
}

#[derive(Debug, Clone)]
enum Node {
    File(Vec<u8>),
    /// A file over [`MAX_FILE_BYTES`]: listed, but reading it is refused.
    TooBig,
    Dir(BTreeSet<String>),
    Link(String),
}

/// The archive's contents.
#[derive(Debug)]
pub struct TgzTree {
    nodes: HashMap<String, Node>,
    /// Read failures recorded by `lowlat snapshot` (its manifest), replayed on read so a
    /// snapshot reads exactly like the host it was taken from.
    failed: HashMap<String, ReadError>,
    /// The processes' root links kept in the manifest (`proc/<pid>/root`, absolute, so not
    /// in the archive as symlinks), checked by [`super::manifest::root_link_kept`].
    root_links: HashMap<String, String>,
    /// The per-file bound it was read with (for messages).
    file_limit: u64,
}

/// Counts what the tar reader pulls from the (decompressed) stream and stops it past a limit;
/// remembers the first error of the stream below (gzip), whose message is a fixed string.
struct Bounded<R> {
    inner: R,
    count: Rc<Cell<u64>>,
    limit: u64,
    failure: Rc<RefCell<Option<String>>>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let used = self.count.get();
        if used > self.limit {
            return Err(std::io::Error::other("stream limit"));
        }
        let room = usize::try_from(self.limit + 1 - used).unwrap_or(usize::MAX).min(buf.len());
        match self.inner.read(&mut buf[..room]) {
            Ok(n) => {
                self.count.set(used + n as u64);
                if used + n as u64 > self.limit {
                    return Err(std::io::Error::other("stream limit"));
                }
                Ok(n)
            }
            Err(e) => {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    self.failure.borrow_mut().get_or_insert_with(|| e.to_string());
                }
                Err(e)
            }
        }
    }
}

/// Read at most `cap` bytes of `r`; `None` when there is more.
fn read_capped(r: &mut impl Read, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut data = Vec::new();
    r.take(cap + 1).read_to_end(&mut data)?;
    Ok((data.len() as u64 <= cap).then_some(data))
}

/// A name as stored in a GNU long-name entry: NUL-terminated.
fn trim_nul(mut b: Vec<u8>) -> Vec<u8> {
    if let Some(i) = b.iter().position(|&c| c == 0) {
        b.truncate(i);
    }
    b
}

/// Whether a normalized path is one the host model may read.
fn kept(rel: &str) -> bool {
    rel == super::manifest::MANIFEST
        || KEPT_TOP.contains(&rel.split('/').next().unwrap_or_default())
}

fn components(raw: &str) -> String {
    raw.split('/').filter(|c| !c.is_empty() && *c != ".").collect::<Vec<_>>().join("/")
}

impl TgzTree {
    /// Open and read a tarball file. Only a regular file is read (opened without blocking, so
    /// a FIFO cannot hang the reader); it is streamed, never read whole.
    pub fn open(path: &Path) -> Result<Self, TgzError> {
        Self::open_with(path, 0)
    }

    /// [`TgzTree::open`], refusing a final symlink (`O_NOFOLLOW`): for files found inside
    /// input from elsewhere (a must-gather), which must not point at this machine's files.
    pub fn open_nofollow(path: &Path) -> Result<Self, TgzError> {
        Self::open_with(path, libc::O_NOFOLLOW)
    }

    fn open_with(path: &Path, flags: i32) -> Result<Self, TgzError> {
        let io = |e| TgzError::Io { path: path.to_path_buf(), source: e };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY | flags)
            .open(path)
            .map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if let Some(what) = special_kind(&meta.file_type()) {
            return Err(TgzError::NotRegular { path: path.to_path_buf(), what });
        }
        if meta.is_dir() {
            return Err(TgzError::NotRegular { path: path.to_path_buf(), what: "a directory" });
        }
        Self::from_reader(&path.display().to_string(), std::io::BufReader::new(file))
    }

    /// Read a tarball already in memory.
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Self, TgzError> {
        Self::from_reader(name, bytes)
    }

    /// Read a tarball (gzip-compressed or plain tar) from a stream, within the limits above.
    pub fn from_reader(name: &str, src: impl std::io::BufRead) -> Result<Self, TgzError> {
        Self::from_reader_with(name, src, LIMITS)
    }

    pub(crate) fn from_reader_with(
        name: &str,
        mut src: impl std::io::BufRead,
        limits: Limits,
    ) -> Result<Self, TgzError> {
        let path = PathBuf::from(name);
        let corrupt = |m: String| TgzError::Corrupt { path: path.clone(), message: m };
        let too_large = |m: String| TgzError::TooLarge { path: path.clone(), message: m };
        let head = src.fill_buf().map_err(|e| TgzError::Io { path: path.clone(), source: e })?;
        let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
        let inner: Box<dyn Read + '_> =
            if gzip { Box::new(flate2::read::MultiGzDecoder::new(src)) } else { Box::new(src) };
        let count = Rc::new(Cell::new(0u64));
        let failure = Rc::new(RefCell::new(None::<String>));
        let stream =
            Bounded { inner, count: count.clone(), limit: limits.stream, failure: failure.clone() };
        // Why the stream stopped, in words of ours (the tar crate's messages may quote the
        // archive's bytes: never shown).
        let stopped = |entries: usize, what: &str| -> TgzError {
            if count.get() > limits.stream {
                return too_large(format!("unpacks to more than {} MiB", mib(limits.stream)));
            }
            if let Some(f) = failure.borrow().as_deref() {
                let layer = if gzip { "gzip" } else { "read" };
                return corrupt(format!("{layer}: {}", util::term::excerpt(f, 80)));
            }
            if count.get() < 512 {
                return corrupt("too short to be a tar archive".into());
            }
            corrupt(format!("{what} after {entries} entries"))
        };

        let mut ar = tar::Archive::new(stream);
        let entries = ar.entries().map_err(|_| stopped(0, "no tar header"))?.raw(true);
        let mut tree = TgzTree {
            nodes: HashMap::new(),
            failed: HashMap::new(),
            root_links: HashMap::new(),
            file_limit: limits.file,
        };
        tree.nodes.insert(String::new(), Node::Dir(BTreeSet::new()));
        let mut kept_bytes = 0u64;
        let mut hardlinks = Vec::new();
        let (mut long_name, mut long_link) = (None::<Vec<u8>>, None::<Vec<u8>>);
        let (mut pax_path, mut pax_link) = (None::<Vec<u8>>, None::<Vec<u8>>);
        let mut seen = 0usize;
        for entry in entries {
            let mut entry = entry.map_err(|_| stopped(seen, "an invalid tar header"))?;
            seen += 1;
            let kind = entry.header().entry_type();
            let name_of = |b: &[u8]| util::term::excerpt(&String::from_utf8_lossy(b), 80);
            match kind {
                tar::EntryType::GNULongName | tar::EntryType::GNULongLink => {
                    let data = read_capped(&mut entry, MAX_NAME_BYTES)
                        .map_err(|_| stopped(seen, "a long name cut short"))?
                        .ok_or_else(|| TgzError::Unsafe {
                            path: path.clone(),
                            entry: format!("#{seen}"),
                            message: format!("has a name longer than {MAX_NAME_BYTES} bytes"),
                        })?;
                    if kind == tar::EntryType::GNULongName {
                        long_name = Some(trim_nul(data));
                    } else {
                        long_link = Some(trim_nul(data));
                    }
                    continue;
                }
                tar::EntryType::XHeader => {
                    let data = read_capped(&mut entry, MAX_PAX_BYTES)
                        .map_err(|_| stopped(seen, "a pax header cut short"))?
                        .ok_or_else(|| TgzError::Unsafe {
                            path: path.clone(),
                            entry: format!("#{seen}"),
                            message: format!("has a pax header over {} KiB", MAX_PAX_BYTES >> 10),
                        })?;
                    for ext in tar::PaxExtensions::new(&data).flatten() {
                        match ext.key_bytes() {
                            b"path" => pax_path = Some(ext.value_bytes().to_vec()),
                            b"linkpath" => pax_link = Some(ext.value_bytes().to_vec()),
                            _ => {}
                        }
                    }
                    continue;
                }
                tar::EntryType::XGlobalHeader => continue,
                _ => {}
            }
            let raw_bytes = pax_path
                .take()
                .or(long_name.take())
                .unwrap_or_else(|| entry.path_bytes().into_owned());
            let link_bytes = pax_link
                .take()
                .or(long_link.take())
                .or_else(|| entry.link_name_bytes().map(|b| b.into_owned()));
            let unsafe_entry = |m: String| TgzError::Unsafe {
                path: path.clone(),
                entry: name_of(&raw_bytes),
                message: m,
            };
            if raw_bytes.len() as u64 > MAX_NAME_BYTES {
                return Err(unsafe_entry(format!("is longer than {MAX_NAME_BYTES} bytes")));
            }
            let raw = String::from_utf8_lossy(&raw_bytes).into_owned();
            if raw.starts_with('/') {
                return Err(unsafe_entry("is an absolute path".into()));
            }
            if raw.split('/').any(|c| c == "..") {
                return Err(unsafe_entry("contains `..`".into()));
            }
            let rel = components(&raw);
            let node = if kind.is_dir() {
                Node::Dir(BTreeSet::new())
            } else if kind.is_symlink() || kind.is_hard_link() {
                let target = link_bytes
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .ok_or_else(|| unsafe_entry("is a link without a target".into()))?;
                if target.len() as u64 > MAX_NAME_BYTES {
                    return Err(unsafe_entry(format!(
                        "is a link to a target longer than {MAX_NAME_BYTES} bytes"
                    )));
                }
                if kind.is_hard_link() {
                    if target.starts_with('/') || target.split('/').any(|c| c == "..") {
                        return Err(unsafe_entry("is a hard link outside the tree".into()));
                    }
                    if kept(&rel) {
                        hardlinks.push((rel, target));
                    }
                    continue;
                }
                if lexical_target(&rel, &target).is_none() {
                    return Err(unsafe_entry(format!(
                        "is a symlink to \"{}\", outside the tree",
                        util::term::excerpt(&target, 80)
                    )));
                }
                Node::Link(target)
            } else if kind.is_file()
                || kind == tar::EntryType::Continuous
                || kind == tar::EntryType::GNUSparse
            {
                if !kept(&rel) {
                    // Skipped unread; the stream bound still counts it.
                    continue;
                }
                // Never trust the header's size: read at most the cap.
                match read_capped(&mut entry, limits.file) {
                    Ok(Some(data)) => {
                        kept_bytes += data.len() as u64;
                        Node::File(data)
                    }
                    Ok(None) => Node::TooBig,
                    Err(_) => {
                        return Err(stopped(
                            seen,
                            &format!("entry \"{}\" cut short", name_of(&raw_bytes)),
                        ))
                    }
                }
            } else {
                // Devices, fifos: nothing a host model reads.
                continue;
            };
            if !kept(&rel) {
                continue;
            }
            kept_bytes += tree.insert(rel, node);
            if kept_bytes > limits.kept {
                return Err(too_large(format!(
                    "keeps more than {} MiB of host files",
                    mib(limits.kept)
                )));
            }
        }
        // Read to the end: a gzip stream cut after the tar's end marker is still corrupt, and
        // a member appended after it still counts towards the bound.
        let mut rest = ar.into_inner();
        if std::io::copy(&mut rest, &mut std::io::sink()).is_err() || count.get() < 512 {
            return Err(stopped(seen, "data after the end of the archive"));
        }
        for (rel, target) in hardlinks {
            let t = components(&target);
            if let Some(node @ (Node::File(_) | Node::TooBig)) = tree.nodes.get(&t).cloned() {
                if let Node::File(d) = &node {
                    kept_bytes += d.len() as u64;
                }
                kept_bytes += tree.insert(rel, node);
                if kept_bytes > limits.kept {
                    return Err(too_large(format!(
                        "keeps more than {} MiB of host files",
                        mib(limits.kept)
                    )));
                }
            }
        }
        if let Some(Node::File(m)) = tree.nodes.get(super::manifest::MANIFEST) {
            let replay = super::manifest::replay(m);
            (tree.failed, tree.root_links) = (replay.errors, replay.root_links);
        }
        Ok(tree)
    }

    /// Add a node and its missing parents; returns the memory it took (names and entry costs).
    fn insert(&mut self, rel: String, node: Node) -> u64 {
        if rel.is_empty() {
            return 0;
        }
        let mut cost = ENTRY_COST + rel.len() as u64;
        // Register the name in each parent, creating parents as needed.
        let mut child = rel.clone();
        loop {
            let (parent, name) = match child.rsplit_once('/') {
                Some((p, n)) => (p.to_string(), n.to_string()),
                None => (String::new(), child.clone()),
            };
            let entry = self.nodes.entry(parent.clone()).or_insert_with(|| {
                cost += ENTRY_COST + parent.len() as u64;
                Node::Dir(BTreeSet::new())
            });
            let existed = match entry {
                Node::Dir(names) => {
                    let n = name.len() as u64;
                    let new = names.insert(name);
                    if new {
                        cost += n;
                    }
                    !new
                }
                _ => true,
            };
            if existed || parent.is_empty() {
                break;
            }
            child = parent;
        }
        match (self.nodes.get_mut(&rel), node) {
            // A directory entry after files inside it were seen keeps their names.
            (Some(Node::Dir(_)), Node::Dir(_)) => {}
            (_, node) => {
                self.nodes.insert(rel, node);
            }
        }
        cost
    }

    pub(super) fn link_of(&self, p: &str) -> Result<Option<String>, ReadError> {
        Ok(match self.nodes.get(p) {
            Some(Node::Link(t)) => Some(t.clone()),
            _ => None,
        })
    }

    fn resolved(&self, rel: &str) -> Result<String, ReadError> {
        Ok(resolve(rel, |p| self.link_of(p))?.path)
    }

    pub fn kind(&self, rel: &str) -> Option<Kind> {
        let p = match rel.rsplit_once('/') {
            Some((dir, name)) => {
                let d = self.resolved(dir).ok()?;
                if d.is_empty() {
                    name.to_string()
                } else {
                    format!("{d}/{name}")
                }
            }
            None => rel.to_string(),
        };
        Some(match self.nodes.get(&p)? {
            Node::File(_) | Node::TooBig => Kind::File,
            Node::Dir(_) => Kind::Dir,
            Node::Link(t) => Kind::Link(t.clone()),
        })
    }

    pub fn read(&self, rel: &str) -> Result<Vec<u8>, ReadError> {
        if let Some(e) = self.failed.get(rel) {
            return Err(e.clone());
        }
        let p = self.resolved(rel)?;
        match self.nodes.get(&p) {
            Some(Node::File(d)) => Ok(d.clone()),
            Some(Node::TooBig) => Err(ReadError::Refused {
                path: rel.to_string(),
                message: format!(
                    "larger than {} MiB in the archive; not read",
                    mib(self.file_limit)
                ),
            }),
            Some(_) => {
                Err(ReadError::Other { path: rel.to_string(), message: "is a directory".into() })
            }
            None => Err(ReadError::NotFound { path: rel.to_string() }),
        }
    }

    pub fn list(&self, rel: &str) -> Result<Vec<String>, ReadError> {
        if let Some(e) = self.failed.get(rel) {
            return Err(e.clone());
        }
        let p = self.resolved(rel)?;
        match self.nodes.get(&p) {
            Some(Node::Dir(names)) => Ok(names.iter().cloned().collect()),
            Some(_) => {
                Err(ReadError::Other { path: rel.to_string(), message: "not a directory".into() })
            }
            None => Err(ReadError::NotFound { path: rel.to_string() }),
        }
    }

    pub fn read_link(&self, rel: &str) -> Result<String, ReadError> {
        let p = match rel.rsplit_once('/') {
            Some((dir, name)) => {
                let d = self.resolved(dir)?;
                if d.is_empty() {
                    name.to_string()
                } else {
                    format!("{d}/{name}")
                }
            }
            None => rel.to_string(),
        };
        match self.nodes.get(&p) {
            Some(Node::Link(t)) => Ok(t.clone()),
            Some(_) => {
                Err(ReadError::Other { path: rel.to_string(), message: "not a symlink".into() })
            }
            None => match self.root_links.get(&p) {
                Some(t) => Ok(t.clone()),
                None => Err(ReadError::NotFound { path: rel.to_string() }),
            },
        }
    }
}
