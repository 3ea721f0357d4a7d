//! PPC's `info` mode: the cluster's pools, their nodes and each node's NUMA cells and CPUs,
//! read from a must-gather (reference: NTO's `profilecreator/cmd/info.go`, whose JSON shape
//! and text layout this reproduces; its expected outputs are test fixtures here).

use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};

use crate::build::read_host;
use crate::cluster;
use crate::error::PlanError;
use crate::layout::Layout;

/// One NUMA cell of a node: its index and its logical CPUs, ascending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NumaCell {
    pub id: usize,
    /// PPC calls the logical CPUs `cores`.
    pub cores: Vec<usize>,
}

/// One node of a pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeInfo {
    pub name: String,
    pub smt_enabled: bool,
    pub cpus_count: usize,
    /// (Older PPC fixtures also carry `numa_cells_count`; current PPC does not print it, and
    /// it is read past here.)
    pub numa_cells: Vec<NumaCell>,
}

/// One MachineConfigPool and the nodes it targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PoolInfo {
    pub name: String,
    /// PPC writes `null` for a pool without nodes (a nil Go slice): read as empty, written
    /// as `null`.
    #[serde(default, deserialize_with = "null_as_empty", serialize_with = "empty_as_null")]
    #[schemars(with = "Option<Vec<NodeInfo>>")]
    pub nodes: Vec<NodeInfo>,
}

fn empty_as_null<S: serde::Serializer>(nodes: &[NodeInfo], s: S) -> Result<S::Ok, S::Error> {
    if nodes.is_empty() {
        s.serialize_none()
    } else {
        nodes.serialize(s)
    }
}

fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<NodeInfo>, D::Error> {
    Ok(Option::<Vec<NodeInfo>>::deserialize(d)?.unwrap_or_default())
}

/// The node's summary from its host model.
pub fn node_info(name: &str, layout: &Layout) -> NodeInfo {
    let numa_cells: Vec<NumaCell> = layout
        .nodes
        .iter()
        .enumerate()
        .map(|(id, n)| {
            let mut cores: Vec<usize> =
                n.cores.iter().flat_map(|c| c.cpus.iter().copied()).collect();
            cores.sort_unstable();
            NumaCell { id, cores }
        })
        .collect();
    NodeInfo {
        name: name.to_string(),
        smt_enabled: layout.smt(),
        cpus_count: numa_cells.iter().map(|c| c.cores.len()).sum(),
        numa_cells,
    }
}

/// Every pool of the must-gather `dir` (sorted by name) with its nodes (MCO's membership
/// rule, as PPC applies it). On a hosted control plane's must-gather the pools are its
/// NodePools, each with the nodes that carry its label, as PPC groups them there.
pub fn cluster_info(dir: &Path) -> Result<Vec<PoolInfo>, PlanError> {
    let cl = cluster::load(dir)?;
    let mut pools = vec![];
    let info = |name: &str| -> Result<NodeInfo, PlanError> {
        let host = read_host(&host::Root::must_gather(dir, Some(name))?)?;
        Ok(node_info(name, &Layout::from_host(&host)))
    };
    if cl.hosted {
        let mut by_pool: std::collections::BTreeMap<&str, Vec<NodeInfo>> = Default::default();
        for n in &cl.nodes {
            if let Some(np) = n.labels.get(cluster::NODE_POOL_LABEL) {
                by_pool.entry(np.as_str()).or_default().push(info(&n.name)?);
            }
        }
        return Ok(by_pool
            .into_iter()
            .map(|(name, nodes)| PoolInfo { name: name.to_string(), nodes })
            .collect());
    }
    for pool in &cl.pools {
        let mut nodes = vec![];
        for n in cluster::nodes_for_pool(pool, &cl.pools, &cl.nodes) {
            let host = read_host(&host::Root::must_gather(dir, Some(&n.name))?)?;
            nodes.push(node_info(&n.name, &Layout::from_host(&host)));
        }
        pools.push(PoolInfo { name: pool.name.clone(), nodes });
    }
    pools.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(pools)
}

/// PPC's text layout (`MCP 'worker-cnf' nodes:` …, `---` after each pool).
pub fn text(pools: &[PoolInfo]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for p in pools {
        let _ = writeln!(s, "MCP '{}' nodes:", p.name);
        for n in &p.nodes {
            let _ = writeln!(
                s,
                "Node: {} (NUMA cells: {}, HT: {})",
                n.name,
                n.numa_cells.len(),
                n.smt_enabled
            );
            for c in &n.numa_cells {
                let cpus: Vec<String> = c.cores.iter().map(usize::to_string).collect();
                let _ = writeln!(s, "NUMA cell {} : [{}]", c.id, cpus.join(" "));
            }
            let _ = writeln!(s, "CPU(s): {}", n.cpus_count);
        }
        s.push_str("---\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_layout_and_null_nodes() {
        let pools: Vec<PoolInfo> = serde_json::from_str(
            r#"[{"name":"master","nodes":[{"name":"sno","smt_enabled":false,"numa_cells_count":1,"cpus_count":2,"numa_cells":[{"id":0,"cores":[0,1]}]}]},{"name":"worker","nodes":null}]"#,
        )
        .unwrap();
        assert!(pools[1].nodes.is_empty());
        assert_eq!(
            text(&pools),
            "MCP 'master' nodes:\nNode: sno (NUMA cells: 1, HT: false)\nNUMA cell 0 : [0 1]\nCPU(s): 2\n---\nMCP 'worker' nodes:\n---\n"
        );
    }
}
