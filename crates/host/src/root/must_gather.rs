//! OpenShift must-gathers: a directory tree holding `…/nodes/<NAME>/sysinfo.tgz` per node
//! (the performance-addon-operator gather). Finds the nodes and picks one.
//!
//! A must-gather comes from elsewhere: symlinks are never followed (a `sysinfo.tgz` that is a
//! link is refused without reading it), two nodes of the same name are an error naming both
//! paths, and the search stops [`MAX_DEPTH`] directories down, which a "no nodes" error says.

use std::path::{Path, PathBuf};

/// How many directory levels below the must-gather the `nodes/` directories are looked for.
pub const MAX_DEPTH: usize = 8;

/// Why a must-gather node could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum MustGatherError {
    #[error("{dir}: does not exist")]
    Missing { dir: PathBuf },
    #[error("{dir}: no nodes/<NAME>/sysinfo.tgz found within {depth} directory levels; is this a performance-addon must-gather?", depth = MAX_DEPTH)]
    NoNodes { dir: PathBuf },
    #[error("{dir}: choose a node with --node NAME; nodes found: {}", .nodes.join(", "))]
    NeedNode { dir: PathBuf, nodes: Vec<String> },
    #[error("{dir}: no node {node:?}; nodes found: {}", .nodes.join(", "))]
    UnknownNode { dir: PathBuf, node: String, nodes: Vec<String> },
    #[error("{dir}: node {node:?} appears twice, {} and {}; remove one copy or point at one gather", .first.display(), .second.display())]
    Duplicate { dir: PathBuf, node: String, first: PathBuf, second: PathBuf },
    #[error("{path}: is a symlink; a must-gather's sysinfo.tgz must be a regular file (symlinks are not followed)")]
    Symlink { path: PathBuf },
}

impl util::exit::Classify for MustGatherError {
    fn exit_code(&self) -> util::exit::ExitCode {
        util::exit::ExitCode::Usage
    }
}

/// Every `(node name, sysinfo.tgz path)` under `dir`, sorted by name (then path). A name may
/// appear twice; [`locate`] refuses that.
pub fn find_nodes(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    walk(dir, 0, &mut out);
    out.sort();
    out
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        // `DirEntry::file_type` does not follow symlinks: linked directories are not entered.
        let Ok(ft) = e.file_type() else { continue };
        if !ft.is_dir() {
            continue;
        }
        let p = e.path();
        if e.file_name() == "nodes" {
            let Ok(nodes) = std::fs::read_dir(&p) else { continue };
            for n in nodes.flatten() {
                if !n.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let tgz = n.path().join("sysinfo.tgz");
                // lstat: a symlinked sysinfo.tgz is listed, and refused when chosen.
                let Ok(m) = std::fs::symlink_metadata(&tgz) else { continue };
                if m.is_file() || m.file_type().is_symlink() {
                    out.push((n.file_name().to_string_lossy().into_owned(), tgz));
                }
            }
        } else {
            walk(&p, depth + 1, out);
        }
    }
}

/// The `sysinfo.tgz` of `node` under `dir`.
pub fn locate(dir: &Path, node: Option<&str>) -> Result<PathBuf, MustGatherError> {
    if !dir.is_dir() {
        return Err(MustGatherError::Missing { dir: dir.to_path_buf() });
    }
    let nodes = find_nodes(dir);
    if nodes.is_empty() {
        return Err(MustGatherError::NoNodes { dir: dir.to_path_buf() });
    }
    let mut names: Vec<String> = nodes.iter().map(|(n, _)| n.clone()).collect();
    names.dedup();
    let Some(want) = node else {
        return Err(MustGatherError::NeedNode { dir: dir.to_path_buf(), nodes: names });
    };
    let mut found = nodes.into_iter().filter(|(n, _)| n == want).map(|(_, p)| p);
    let Some(path) = found.next() else {
        return Err(MustGatherError::UnknownNode {
            dir: dir.to_path_buf(),
            node: want.to_string(),
            nodes: names,
        });
    };
    if let Some(second) = found.next() {
        return Err(MustGatherError::Duplicate {
            dir: dir.to_path_buf(),
            node: want.to_string(),
            first: path,
            second,
        });
    }
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(MustGatherError::Symlink { path });
    }
    Ok(path)
}
