//! A `.tgz` (or plain `.tar`) tree held in memory: entries indexed by normalized path,
//! directories implied by their files, symlinks kept and resolved inside the tree, hard links
//! copied. Entries with `..`, absolute paths, or links pointing outside the tree make the
//! whole archive refused: a snapshot is input from elsewhere and is not trusted.

use std::collections::{BTreeSet, HashMap};
use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::resolve::{lexical_target, resolve, Kind};
use super::ReadError;

/// Why a tarball was refused.
#[derive(Debug, thiserror::Error)]
pub enum TgzError {
    #[error("{path}: cannot read: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a readable tar/tar.gz archive ({message}); give a directory, a .tgz made by `lowlat snapshot`, or a must-gather sysinfo.tgz")]
    Corrupt { path: PathBuf, message: String },
    #[error("{path}: entry {entry:?} {message}; refusing the archive")]
    Unsafe { path: PathBuf, entry: String, message: String },
}

#[derive(Debug, Clone)]
enum Node {
    File(Vec<u8>),
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
}

fn is_gzip(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] == 0x1f && b[1] == 0x8b
}

impl TgzTree {
    pub fn open(path: &Path) -> Result<Self, TgzError> {
        let bytes = std::fs::read(path)
            .map_err(|e| TgzError::Io { path: path.to_path_buf(), source: e })?;
        Self::from_bytes(&path.display().to_string(), &bytes)
    }

    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Self, TgzError> {
        let path = PathBuf::from(name);
        let corrupt = |m: String| TgzError::Corrupt { path: path.clone(), message: m };
        let tar_bytes = if is_gzip(bytes) {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(bytes)
                .read_to_end(&mut out)
                .map_err(|e| corrupt(format!("gzip: {e}")))?;
            out
        } else {
            bytes.to_vec()
        };
        if tar_bytes.len() < 512 {
            return Err(corrupt("too short to be a tar archive".into()));
        }
        let mut ar = tar::Archive::new(tar_bytes.as_slice());
        let mut tree = TgzTree { nodes: HashMap::new(), failed: HashMap::new() };
        tree.nodes.insert(String::new(), Node::Dir(BTreeSet::new()));
        let mut hardlinks = Vec::new();
        let entries = ar.entries().map_err(|e| corrupt(e.to_string()))?;
        for entry in entries {
            let mut entry = entry.map_err(|e| corrupt(e.to_string()))?;
            let raw = entry.path_bytes().into_owned();
            let raw = String::from_utf8_lossy(&raw).into_owned();
            let unsafe_entry = |m: &str| TgzError::Unsafe {
                path: path.clone(),
                entry: raw.clone(),
                message: m.to_string(),
            };
            if raw.starts_with('/') {
                return Err(unsafe_entry("is an absolute path"));
            }
            if raw.split('/').any(|c| c == "..") {
                return Err(unsafe_entry("contains `..`"));
            }
            let rel: String =
                raw.split('/').filter(|c| !c.is_empty() && *c != ".").collect::<Vec<_>>().join("/");
            let kind = entry.header().entry_type();
            let node = if kind.is_dir() {
                Node::Dir(BTreeSet::new())
            } else if kind.is_symlink() || kind.is_hard_link() {
                let target = entry
                    .link_name_bytes()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .ok_or_else(|| unsafe_entry("is a link without a target"))?;
                if kind.is_hard_link() {
                    if target.starts_with('/') || target.split('/').any(|c| c == "..") {
                        return Err(unsafe_entry("is a hard link outside the tree"));
                    }
                    hardlinks.push((rel.clone(), target));
                    continue;
                }
                if lexical_target(&rel, &target).is_none() {
                    return Err(unsafe_entry(&format!(
                        "is a symlink to {target:?}, outside the tree"
                    )));
                }
                Node::Link(target)
            } else if kind.is_file()
                || kind == tar::EntryType::Continuous
                || kind == tar::EntryType::GNUSparse
            {
                let mut data = Vec::with_capacity(entry.size() as usize);
                entry.read_to_end(&mut data).map_err(|e| corrupt(format!("{raw}: {e}")))?;
                Node::File(data)
            } else {
                // Devices, fifos, pax headers: nothing a host model reads.
                continue;
            };
            tree.insert(rel, node);
        }
        for (rel, target) in hardlinks {
            let t: String = target
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .collect::<Vec<_>>()
                .join("/");
            if let Some(Node::File(d)) = tree.nodes.get(&t).cloned() {
                tree.insert(rel, Node::File(d));
            }
        }
        if let Some(Node::File(m)) = tree.nodes.get(super::manifest::MANIFEST) {
            tree.failed = super::manifest::replayed_errors(m);
        }
        Ok(tree)
    }

    fn insert(&mut self, rel: String, node: Node) {
        if rel.is_empty() {
            return;
        }
        // Register the name in each parent, creating parents as needed.
        let mut child = rel.clone();
        loop {
            let (parent, name) = match child.rsplit_once('/') {
                Some((p, n)) => (p.to_string(), n.to_string()),
                None => (String::new(), child.clone()),
            };
            let entry =
                self.nodes.entry(parent.clone()).or_insert_with(|| Node::Dir(BTreeSet::new()));
            let existed = match entry {
                Node::Dir(names) => !names.insert(name),
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
            Node::File(_) => Kind::File,
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
            None => Err(ReadError::NotFound { path: rel.to_string() }),
        }
    }
}
