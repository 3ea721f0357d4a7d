//! The manifest at the root of a snapshot (`lowlat-snapshot.json`): what was captured and
//! every access that failed, so reading the snapshot back replays the same errors. It sits
//! under `root` because the tarball reader replays it; `snapshot` writes it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ReadError;

/// Name of the manifest at the root of a snapshot.
pub const MANIFEST: &str = "lowlat-snapshot.json";

/// The operation that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    List,
    Readlink,
    /// A symlink left out of the tarball.
    Link,
    Resolve,
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::List => "list",
            Op::Readlink => "readlink",
            Op::Link => "link",
            Op::Resolve => "resolve",
        })
    }
}

/// How it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    NotFound,
    PermissionDenied,
    Refused,
    Other,
}

impl FailureKind {
    /// The kind of a read error.
    pub fn of(e: &ReadError) -> Self {
        match e {
            ReadError::NotFound { .. } => Self::NotFound,
            ReadError::PermissionDenied { .. } => Self::PermissionDenied,
            ReadError::Refused { .. } => Self::Refused,
            ReadError::Other { .. } => Self::Other,
        }
    }
}

/// One access that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    pub path: String,
    pub op: Op,
    pub kind: FailureKind,
    pub reason: String,
}

/// The snapshot's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Manifest {
    pub schema_version: u32,
    pub tool: String,
    /// Where the snapshot was taken from (`live /`, a tarball, …).
    pub source: String,
    pub hostname: Option<String>,
    /// Seconds since the epoch when taken.
    pub taken_at: u64,
    pub files: usize,
    pub dirs: usize,
    pub symlinks: usize,
    /// `--max-processes` when given.
    pub max_processes: Option<usize>,
    /// Whether every process's command line (`proc/PID/cmdline`) is inside: they can hold
    /// secrets given as arguments (`lowlat snapshot --no-cmdline` leaves them out). Absent in
    /// snapshots made before this field: those hold them.
    #[serde(default = "yes")]
    pub process_cmdlines: bool,
    /// Everything that could not be read (a missing optional file is normal).
    pub failures: Vec<Failure>,
    /// The processes' root links that were read (`proc/<pid>/root` → `/`, or the directory a
    /// container or chroot runs in): absolute, so not storable as symlinks in the tarball,
    /// yet they tell a container (own mount namespace, another root) from a sandboxed
    /// service (own mount namespace, root `/`). Read back only when [`root_link_kept`]
    /// allows. Absent in snapshots made before this field (their root links were dropped).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub root_links: BTreeMap<String, String>,
}

/// The longest root link target kept (a container runtime's rootfs path is ~100 bytes).
pub const MAX_ROOT_LINK: usize = 1024;
/// The most root links kept (one per process read).
pub const MAX_ROOT_LINKS: usize = 65_536;

/// Pure: whether a root link is one a snapshot keeps and reads back: `path` is exactly
/// `proc/<pid>/root`, and `target` an absolute path of at most [`MAX_ROOT_LINK`] bytes
/// without control characters (it is shown on a terminal and in JSON).
pub fn root_link_kept(path: &str, target: &str) -> bool {
    let pid = path.strip_prefix("proc/").and_then(|r| r.strip_suffix("/root"));
    pid.is_some_and(|p| !p.is_empty() && p.len() <= 10 && p.bytes().all(|b| b.is_ascii_digit()))
        && target.starts_with('/')
        && target.len() <= MAX_ROOT_LINK
        && !target.chars().any(char::is_control)
}

fn yes() -> bool {
    true
}

/// What a snapshot's manifest makes a reader answer, from one parse (nothing from a manifest
/// that does not parse).
#[derive(Debug, Default)]
pub(crate) struct Replay {
    /// The failures as errors to replay (missing files need no replay).
    pub errors: std::collections::HashMap<String, ReadError>,
    /// The root links to answer `read_link` with: those [`root_link_kept`] allows, at most
    /// [`MAX_ROOT_LINKS`] (the manifest is untrusted input).
    pub root_links: std::collections::HashMap<String, String>,
}

pub(crate) fn replay(manifest: &[u8]) -> Replay {
    let Ok(m) = serde_json::from_slice::<Manifest>(manifest) else { return Replay::default() };
    let errors = m
        .failures
        .into_iter()
        .filter(|f| matches!(f.op, Op::Read | Op::List))
        .filter_map(|f| {
            let path = f.path.clone();
            let e = match f.kind {
                FailureKind::PermissionDenied => ReadError::PermissionDenied { path: f.path },
                FailureKind::Refused => ReadError::Refused { path: f.path, message: f.reason },
                FailureKind::Other => ReadError::Other { path: f.path, message: f.reason },
                FailureKind::NotFound => return None,
            };
            Some((path, e))
        })
        .collect();
    let root_links = m
        .root_links
        .into_iter()
        .filter(|(p, t)| root_link_kept(p, t))
        .take(MAX_ROOT_LINKS)
        .collect();
    Replay { errors, root_links }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_root_links_are_kept() {
        assert!(root_link_kept("proc/310/root", "/var/lib/portables/app"));
        assert!(root_link_kept("proc/1/root", "/"));
        assert!(root_link_kept("proc/9/root", "/srv/c (deleted)"));
        for (p, t) in [
            ("proc/self/root", "/"),
            ("proc/1/cwd", "/"),
            ("proc//root", "/"),
            ("proc/1/root/x", "/"),
            ("sys/1/root", "/"),
            ("proc/12345678901/root", "/"),
            ("proc/1/root", "relative"),
            ("proc/1/root", ""),
            ("proc/1/root", "/a\x1b[2Jb"),
            ("proc/1/root", "/a\nb"),
            ("proc/1/root", "/a\u{9b}b"),
        ] {
            assert!(!root_link_kept(p, t), "{p} -> {t:?}");
        }
        assert!(root_link_kept("proc/1/root", &format!("/{}", "a".repeat(MAX_ROOT_LINK - 1))));
        assert!(!root_link_kept("proc/1/root", &format!("/{}", "a".repeat(MAX_ROOT_LINK))));
    }
}
