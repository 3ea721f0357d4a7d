//! The label every object lowlat creates carries, run ids, and object names. Pure.

use std::collections::BTreeMap;

/// The label key on every object `lowlat cluster` creates; its value is the run id.
/// `lowlat cluster clean` deletes everything that has it.
pub const RUN: &str = "lowlat.io/run";
/// What the run does (`check`, `snapshot`).
pub const VERB: &str = "lowlat.io/verb";
/// The index of the node in the run (names can be longer than a label value may be).
pub const NODE_INDEX: &str = "lowlat.io/node-index";
/// Annotation with the node's full name.
pub const NODE_ANNOTATION: &str = "lowlat.io/node";
/// `app.kubernetes.io/name` value, for humans reading `kubectl get pods --show-labels`.
pub const APP: &str = "lowlat";

/// Selector for everything of one run.
pub fn run_selector(run: &str) -> String {
    format!("{RUN}={run}")
}

/// Selector for everything lowlat ever created (any run).
pub fn any_run_selector() -> String {
    RUN.to_string()
}

/// A run id: 8 lower-case hex digits from the clock and the process id (unique enough for
/// concurrent runs against one cluster, and a valid label value and name part).
pub fn new_run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mixed = (nanos as u64) ^ (u64::from(std::process::id()) << 40) ^ (nanos >> 64) as u64;
    // splitmix64 finaliser: spreads the bits so ids of close runs differ everywhere.
    let mut z = mixed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    format!("{:08x}", (z ^ (z >> 31)) as u32)
}

/// The labels of one node's objects in a run.
pub fn for_node(run: &str, verb: &str, index: usize) -> BTreeMap<String, String> {
    BTreeMap::from([
        (RUN.to_string(), run.to_string()),
        (VERB.to_string(), verb.to_string()),
        (NODE_INDEX.to_string(), index.to_string()),
        ("app.kubernetes.io/name".to_string(), APP.to_string()),
    ])
}

/// A Job name for `node`: `lowlat-<verb>-<run>-<node part>-<index>`, a valid DNS label of at
/// most 63 characters whatever the node is called (the node part keeps `[a-z0-9-]`, is cut
/// to fit, and the index keeps names unique).
pub fn job_name(verb: &str, run: &str, node: &str, index: usize) -> String {
    let head = format!("lowlat-{verb}-{run}-");
    let tail = format!("-{index}");
    let room = 63usize.saturating_sub(head.len() + tail.len());
    let mut part: String = node
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(room)
        .collect();
    while part.ends_with('-') {
        part.pop();
    }
    let part = part.trim_start_matches('-');
    if part.is_empty() {
        format!("lowlat-{verb}-{run}{tail}")
    } else {
        format!("{head}{part}{tail}")
    }
}

/// A node name as a directory name: the name itself when it is a safe path component
/// (node names are DNS subdomains: `[a-z0-9.-]`), else a sanitized form with the index.
pub fn node_dir(node: &str, index: usize) -> String {
    let safe = !node.is_empty()
        && node.len() <= 253
        && !node.starts_with('.')
        && node.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_');
    if safe {
        node.to_string()
    } else {
        let s: String =
            node.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(60).collect();
        format!("node-{index}-{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dns_label(s: &str) -> bool {
        !s.is_empty()
            && s.len() <= 63
            && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !s.starts_with('-')
            && !s.ends_with('-')
    }

    #[test]
    fn job_names_are_dns_labels() {
        assert_eq!(job_name("check", "0a1b2c3d", "vm", 0), "lowlat-check-0a1b2c3d-vm-0");
        let long = "worker-rt-0.very-long-cluster-domain.example.com.and-then-some-more";
        let n = job_name("check", "0a1b2c3d", long, 12);
        assert!(dns_label(&n), "{n}");
        assert!(n.ends_with("-12"));
        for node in ["UPPER.case", "-.-", "", "a_b", "ü"] {
            let n = job_name("snapshot", "ffffffff", node, 499);
            assert!(dns_label(&n), "{node:?} -> {n}");
        }
    }

    #[test]
    fn run_ids_are_label_values() {
        let id = new_run_id();
        assert_eq!(id.len(), 8);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(run_selector(&id), format!("lowlat.io/run={id}"));
        let l = for_node(&id, "check", 3);
        assert_eq!(l[NODE_INDEX], "3");
    }

    #[test]
    fn node_dirs_never_escape() {
        assert_eq!(node_dir("vm", 0), "vm");
        assert_eq!(node_dir("worker-1.example.com", 0), "worker-1.example.com");
        assert_eq!(node_dir("..", 2), "node-2-");
        assert_eq!(node_dir("a/../b", 1), "node-1-ab");
    }
}
