//! The manifest at the root of a snapshot (`lowlat-snapshot.json`): what was captured and
//! every access that failed, so reading the snapshot back replays the same errors. It sits
//! under `root` because the tarball reader replays it; `snapshot` writes it.

use serde::{Deserialize, Serialize};

use super::ReadError;

/// Name of the manifest at the root of a snapshot.
pub const MANIFEST: &str = "lowlat-snapshot.json";

/// The operation that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub path: String,
    pub op: Op,
    pub kind: FailureKind,
    pub reason: String,
}

/// The snapshot's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

fn yes() -> bool {
    true
}

/// The failures of a manifest as errors to replay (missing files need no replay).
pub(crate) fn replayed_errors(manifest: &[u8]) -> std::collections::HashMap<String, ReadError> {
    let Ok(m) = serde_json::from_slice::<Manifest>(manifest) else { return Default::default() };
    m.failures
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
        .collect()
}
