//! OpenShift must-gathers: a directory tree holding `…/nodes/<NAME>/sysinfo.tgz` per node
//! (the performance-addon-operator gather). Finds the nodes and picks one.

use std::path::{Path, PathBuf};

/// Why a must-gather node could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum MustGatherError {
    #[error("{dir}: does not exist")]
    Missing { dir: PathBuf },
    #[error("{dir}: no nodes/<NAME>/sysinfo.tgz found; is this a performance-addon must-gather?")]
    NoNodes { dir: PathBuf },
    #[error("{dir}: choose a node with --node NAME; nodes found: {}", .nodes.join(", "))]
    NeedNode { dir: PathBuf, nodes: Vec<String> },
    #[error("{dir}: no node {node:?}; nodes found: {}", .nodes.join(", "))]
    UnknownNode { dir: PathBuf, node: String, nodes: Vec<String> },
}

/// Every `(node name, sysinfo.tgz path)` under `dir`, sorted by name.
pub fn find_nodes(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    walk(dir, 0, &mut out);
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    if depth > 8 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if !ft.is_dir() {
            continue;
        }
        let p = e.path();
        if e.file_name() == "nodes" {
            if let Ok(nodes) = std::fs::read_dir(&p) {
                for n in nodes.flatten() {
                    let tgz = n.path().join("sysinfo.tgz");
                    if tgz.is_file() {
                        out.push((n.file_name().to_string_lossy().into_owned(), tgz));
                    }
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
    let names: Vec<String> = nodes.iter().map(|(n, _)| n.clone()).collect();
    match node {
        None => Err(MustGatherError::NeedNode { dir: dir.to_path_buf(), nodes: names }),
        Some(want) => nodes.into_iter().find(|(n, _)| n == want).map(|(_, p)| p).ok_or_else(|| {
            MustGatherError::UnknownNode {
                dir: dir.to_path_buf(),
                node: want.to_string(),
                nodes: names,
            }
        }),
    }
}
