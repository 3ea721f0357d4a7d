//! Path hygiene and symlink resolution inside a tree: root-relative paths only, no `..`
//! escaping the root, symlinks followed lexically from their own directory, absolute link
//! targets refused (they would point at the machine reading the tree, not the one captured).
//! Also the directory backend, which resolves links itself so a tree can never leak the
//! reader's own `/proc` or `/sys`.

use std::collections::{HashSet, VecDeque};
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;
use std::sync::Mutex;

use super::ReadError;

const MAX_HOPS: usize = 40;

/// Check and canonicalize a root-relative path: strips a leading `/` and `./`, drops empty
/// and `.` components, refuses `..`.
pub fn normalize(rel: &str) -> Result<String, ReadError> {
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

/// An unpacked tree on disk, read with links resolved inside it.
#[derive(Debug)]
pub struct DirTree {
    base: PathBuf,
    /// Prefixes known to be real directories (not links): saves an `lstat` per component.
    plain: Mutex<HashSet<String>>,
}

impl DirTree {
    pub fn new(base: PathBuf) -> Self {
        Self { base, plain: Mutex::new(HashSet::new()) }
    }

    pub(super) fn link_of(&self, p: &str) -> Result<Option<String>, ReadError> {
        if let Ok(g) = self.plain.lock() {
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
                    if let Ok(mut g) = self.plain.lock() {
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

    pub fn read(&self, rel: &str) -> Result<Vec<u8>, ReadError> {
        let p = self.resolve_parent(rel)?;
        let open = |p: &str| {
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
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
        let mut buf = Vec::new();
        let mut file = file;
        file.read_to_end(&mut buf).map_err(|e| ReadError::from_io(rel, &e))?;
        Ok(buf)
    }

    pub fn list(&self, rel: &str) -> Result<Vec<String>, ReadError> {
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
