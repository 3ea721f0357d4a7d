//! OpenShift cluster data from a must-gather: Node and MachineConfigPool YAML, which nodes a
//! pool targets (MCO's primary-pool rule, as PPC applies it), the pool's unique label and
//! its node selector. Parsing is pure (`parse_*` on text); [`load`] walks the directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_norway::Value;

use crate::build::read_host;
use crate::error::PlanError;
use crate::layout::Layout;

/// A label selector: `matchLabels` plus `matchExpressions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    pub match_labels: BTreeMap<String, String>,
    /// (key, operator, values)
    pub match_expressions: Vec<(String, String, Vec<String>)>,
}

impl Selector {
    fn parse(v: Option<&Value>) -> Selector {
        let mut s = Selector::default();
        let Some(v) = v else { return s };
        s.match_labels = string_map(v.get("matchLabels"));
        if let Some(Value::Sequence(exprs)) = v.get("matchExpressions") {
            for e in exprs {
                let key = e.get("key").and_then(Value::as_str).unwrap_or_default().to_string();
                let op = e.get("operator").and_then(Value::as_str).unwrap_or_default().to_string();
                let vals = match e.get("values") {
                    Some(Value::Sequence(v)) => v.iter().filter_map(scalar).collect(),
                    _ => vec![],
                };
                s.match_expressions.push((key, op, vals));
            }
        }
        s
    }

    /// Whether the selector selects nothing (empty selectors match nothing for pools).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// Whether `labels` satisfy the selector.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|(k, op, vals)| match op.as_str() {
                "In" => labels.get(k).is_some_and(|v| vals.contains(v)),
                "NotIn" => labels.get(k).is_none_or(|v| !vals.contains(v)),
                "Exists" => labels.contains_key(k),
                "DoesNotExist" => !labels.contains_key(k),
                _ => false,
            })
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    if let Some(Value::Mapping(map)) = v {
        for (k, v) in map {
            if let (Some(k), Some(v)) = (k.as_str(), scalar(v)) {
                m.insert(k.to_string(), v);
            }
        }
    }
    m
}

/// A Node object, reduced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeMeta {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// (key, value, effect)
    pub taints: Vec<(String, String, String)>,
}

/// A MachineConfigPool object, reduced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolMeta {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub node_selector: Selector,
}

fn parse_value(text: &str, what: &str) -> Result<Value, PlanError> {
    serde_norway::from_str(text)
        .map_err(|e| PlanError::File(format!("{what}: not valid YAML: {e}")))
}

/// Parse a Node YAML.
pub fn parse_node(text: &str, what: &str) -> Result<NodeMeta, PlanError> {
    let v = parse_value(text, what)?;
    let meta = v.get("metadata");
    let name =
        meta.and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default().to_string();
    if name.is_empty() {
        return Err(PlanError::File(format!("{what}: no metadata.name; is this a Node object?")));
    }
    let mut taints = vec![];
    if let Some(Value::Sequence(ts)) = v.get("spec").and_then(|s| s.get("taints")) {
        for t in ts {
            let f = |k: &str| t.get(k).and_then(scalar).unwrap_or_default();
            taints.push((f("key"), f("value"), f("effect")));
        }
    }
    Ok(NodeMeta { name, labels: string_map(meta.and_then(|m| m.get("labels"))), taints })
}

/// Parse a MachineConfigPool YAML.
pub fn parse_pool(text: &str, what: &str) -> Result<PoolMeta, PlanError> {
    let v = parse_value(text, what)?;
    let meta = v.get("metadata");
    let name =
        meta.and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default().to_string();
    if name.is_empty() {
        return Err(PlanError::File(format!(
            "{what}: no metadata.name; is this a MachineConfigPool?"
        )));
    }
    Ok(PoolMeta {
        name,
        labels: string_map(meta.and_then(|m| m.get("labels"))),
        node_selector: Selector::parse(v.get("spec").and_then(|s| s.get("nodeSelector"))),
    })
}

/// The pool a node belongs to (MCO: one custom pool wins over worker; master wins alone).
pub fn primary_pool<'a>(
    node: &NodeMeta,
    pools: &'a [PoolMeta],
) -> Result<Option<&'a PoolMeta>, String> {
    if node.labels.get("kubernetes.io/os").map(String::as_str) == Some("windows") {
        return Ok(None);
    }
    let matching: Vec<&PoolMeta> = pools
        .iter()
        .filter(|p| !p.node_selector.is_empty() && p.node_selector.matches(&node.labels))
        .collect();
    let master = matching.iter().find(|p| p.name == "master");
    let worker = matching.iter().find(|p| p.name == "worker");
    let custom: Vec<&&PoolMeta> =
        matching.iter().filter(|p| p.name != "master" && p.name != "worker").collect();
    if custom.len() > 1 {
        return Err(format!(
            "node {} belongs to {} custom roles, cannot proceed with this Node",
            node.name,
            custom.len()
        ));
    }
    if let Some(c) = custom.first() {
        if master.is_some() {
            return Err(format!(
                "node {} has both master role and custom role {}",
                node.name, c.name
            ));
        }
        return Ok(Some(c));
    }
    Ok(master.or(worker).copied())
}

/// Nodes of a pool, skipping nodes tainted NoSchedule by the pool's own role.
pub fn nodes_for_pool<'a>(
    pool: &PoolMeta,
    pools: &[PoolMeta],
    nodes: &'a [NodeMeta],
) -> Vec<&'a NodeMeta> {
    nodes
        .iter()
        .filter(|n| matches!(primary_pool(n, pools), Ok(Some(p)) if p.name == pool.name))
        .filter(|n| {
            !n.taints.iter().any(|(k, v, e)| {
                e == "NoSchedule"
                    && pool.node_selector.matches(&BTreeMap::from([(k.clone(), v.clone())]))
            })
        })
        .collect()
}

/// A label unique to `pool` among `pools` (preferring a key ending with the pool's name, then
/// the first in key order, so the answer is deterministic).
pub fn pool_selector(pool: &PoolMeta, pools: &[PoolMeta]) -> Result<(String, String), PlanError> {
    let unique: Vec<(&String, &String)> = pool
        .labels
        .iter()
        .filter(|(k, v)| !pools.iter().any(|p| p.name != pool.name && p.labels.get(*k) == Some(*v)))
        .collect();
    let pick = unique.iter().find(|(k, _)| k.ends_with(&pool.name)).or_else(|| unique.first());
    match pick {
        Some((k, v)) => Ok(((*k).clone(), (*v).clone())),
        None => Err(PlanError::invalid(
            format!("can't find a unique label for '{}' MCP", pool.name),
            format!(
                "label the pool: oc label mcp {} machineconfiguration.openshift.io/role={}",
                pool.name, pool.name
            ),
        )),
    }
}

/// The pool's node selector as the single label a PerformanceProfile takes.
pub fn node_selector(pool: &PoolMeta) -> Option<(String, String)> {
    pool.node_selector.match_labels.iter().next().map(|(k, v)| (k.clone(), v.clone()))
}

/// The label a hosted control plane (HyperShift) puts on its nodes: their NodePool.
pub const NODE_POOL_LABEL: &str = "hypershift.openshift.io/nodePool";

/// A must-gather's cluster-scoped data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cluster {
    /// The directory holding `cluster-scoped-resources` and `nodes`.
    pub base: PathBuf,
    pub nodes: Vec<NodeMeta>,
    pub pools: Vec<PoolMeta>,
    /// A hosted control plane's cluster (HyperShift): the Infrastructure object's
    /// `status.controlPlaneTopology` is `External`, PPC's test. Its nodes belong to NodePools
    /// (the [`NODE_POOL_LABEL`] label), not MachineConfigPools.
    pub hosted: bool,
}

impl Cluster {
    pub fn pool(&self, name: &str) -> Result<&PoolMeta, PlanError> {
        self.pools.iter().find(|p| p.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.pools.iter().map(|p| p.name.as_str()).collect();
            PlanError::invalid(
                format!(
                    "failed to find the MCP {name} under must-gather path: {}",
                    self.base.display()
                ),
                format!("use one of the pools: {}", names.join(", ")),
            )
        })
    }
}

/// Find the directory under `dir` that holds `cluster-scoped-resources` (the must-gather's
/// image directory), looking at most three levels down and never inside `namespaces`.
pub fn find_base(dir: &Path) -> Option<PathBuf> {
    fn walk(d: &Path, depth: usize) -> Option<PathBuf> {
        if d.join("cluster-scoped-resources").is_dir() {
            return Some(d.to_path_buf());
        }
        if depth == 0 {
            return None;
        }
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(d).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        entries
            .into_iter()
            .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n != "namespaces"))
            .find_map(|p| walk(&p, depth - 1))
    }
    walk(dir, 3)
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Read the nodes and pools of a must-gather directory.
pub fn load(dir: &Path) -> Result<Cluster, PlanError> {
    let base = find_base(dir).ok_or_else(|| {
        PlanError::invalid(
            format!("{}: no cluster-scoped-resources directory found (is this an OpenShift must-gather?)", dir.display()),
            "point --must-gather at the directory `oc adm must-gather` wrote",
        )
    })?;
    let csr = base.join("cluster-scoped-resources");
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| PlanError::File(format!("{}: {e}", p.display())))
    };
    let mut nodes = vec![];
    for p in yaml_files(&csr.join("core/nodes")) {
        nodes.push(parse_node(&read(&p)?, &p.display().to_string())?);
    }
    let mut pools = vec![];
    for p in yaml_files(&csr.join("machineconfiguration.openshift.io/machineconfigpools")) {
        pools.push(parse_pool(&read(&p)?, &p.display().to_string())?);
    }
    // PAO-era must-gathers have no Infrastructure object: not hosted
    let infra = csr.join("config.openshift.io/infrastructures/cluster.yaml");
    let hosted = if infra.is_file() {
        let v = parse_value(&read(&infra)?, &infra.display().to_string())?;
        v.get("status").and_then(|s| s.get("controlPlaneTopology")).and_then(Value::as_str)
            == Some("External")
    } else {
        false
    };
    Ok(Cluster { base, nodes, pools, hosted })
}

/// A must-gather node to plan for.
#[derive(Debug)]
pub struct Target {
    /// The node's host model.
    pub host: host::Host,
    /// The node's name.
    pub node: String,
    /// The node's pool and every pool of the cluster (the pool's unique label is computed
    /// among them), when the node belongs to one.
    pub pool: Option<(PoolMeta, Vec<PoolMeta>)>,
    /// On a hosted control plane's must-gather: the NodePool planned for.
    pub node_pool: Option<String>,
}

/// Read the first of `nodes` and check that the others share its topology (PPC's
/// "targeted nodes differ").
fn one_topology(
    dir: &Path,
    nodes: &[&str],
    pool_name: &str,
) -> Result<(host::Host, String), PlanError> {
    let read_node = |n: &str| -> Result<host::Host, PlanError> {
        read_host(&host::Root::must_gather(dir, Some(n))?)
    };
    let Some((first, rest)) = nodes.split_first() else {
        return Err(PlanError::invalid(
            format!("pool {pool_name} has no schedulable nodes in {}", dir.display()),
            "pick another pool",
        ));
    };
    let host = read_node(first)?;
    let layout = Layout::from_host(&host);
    for n in rest {
        let other = Layout::from_host(&read_node(n)?);
        if !layout.same_topology(&other) {
            return Err(PlanError::invalid(
                format!(
                    "targeted nodes differ: nodes {first} and {n} have different topology ({} vs {})",
                    layout.describe(),
                    other.describe()
                ),
                "plan them separately with --node",
            ));
        }
    }
    Ok((host, first.to_string()))
}

/// The node of the must-gather `dir` to plan for: the nodes of `pool` (all of them must have
/// one topology; `node` narrows the pool to one of its nodes), or `node` with its primary pool.
pub fn target(dir: &Path, pool: Option<&str>, node: Option<&str>) -> Result<Target, PlanError> {
    let cl = load(dir)?;
    let read_node = |n: &str| -> Result<host::Host, PlanError> {
        read_host(&host::Root::must_gather(dir, Some(n))?)
    };
    match (pool, node) {
        // a hosted control plane: the pool is a NodePool, its nodes carry its label (PPC's
        // `--node-pool-name`, for which `--mcp-name` is an alias there)
        (Some(pool_name), node) if cl.hosted => {
            let mut nodes: Vec<&str> = cl
                .nodes
                .iter()
                .filter(|n| n.labels.get(NODE_POOL_LABEL).map(String::as_str) == Some(pool_name))
                .map(|n| n.name.as_str())
                .collect();
            if let Some(n) = node {
                if !nodes.contains(&n) {
                    return Err(PlanError::invalid(
                        format!(
                            "node {n} is not in NodePool {pool_name} (its nodes: {})",
                            nodes.join(", ")
                        ),
                        "pick one of its nodes, or plan for the whole NodePool",
                    ));
                }
                nodes = vec![n];
            }
            let (host, first) = one_topology(dir, &nodes, pool_name)?;
            Ok(Target { host, node: first, pool: None, node_pool: Some(pool_name.to_string()) })
        }
        (Some(pool_name), node) => {
            let pool = cl.pool(pool_name)?.clone();
            let mut nodes: Vec<&str> = nodes_for_pool(&pool, &cl.pools, &cl.nodes)
                .iter()
                .map(|n| n.name.as_str())
                .collect();
            if let Some(n) = node {
                if !nodes.contains(&n) {
                    return Err(PlanError::invalid(
                        format!(
                            "node {n} is not in pool {pool_name} (its nodes: {})",
                            nodes.join(", ")
                        ),
                        "pick one of its nodes, or plan for the whole pool",
                    ));
                }
                nodes = vec![n];
            }
            let (host, first) = one_topology(dir, &nodes, pool_name)?;
            Ok(Target { host, node: first, pool: Some((pool, cl.pools.clone())), node_pool: None })
        }
        (None, Some(n)) => {
            let host = read_node(n)?;
            let pool = cl
                .nodes
                .iter()
                .find(|x| x.name == n)
                .and_then(|meta| primary_pool(meta, &cl.pools).ok().flatten())
                .map(|p| (p.clone(), cl.pools.clone()));
            Ok(Target { host, node: n.to_string(), pool, node_pool: None })
        }
        (None, None) => {
            let names: Vec<&str> = cl.nodes.iter().map(|n| n.name.as_str()).collect();
            Err(PlanError::invalid(
                format!("{}: say which node to plan for", dir.display()),
                format!("--node NAME (nodes: {}) or --mcp-name POOL", names.join(", ")),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKER_CNF: &str = "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfigPool\nmetadata:\n  name: worker-cnf\n  labels:\n    machineconfiguration.openshift.io/role: worker-cnf\nspec:\n  nodeSelector:\n    matchLabels:\n      node-role.kubernetes.io/worker-cnf: \"\"\n";
    const WORKER: &str = "metadata:\n  name: worker\n  labels:\n    machineconfiguration.openshift.io/mco-built-in: \"\"\n    pools.operator.machineconfiguration.openshift.io/worker: \"\"\nspec:\n  nodeSelector:\n    matchLabels:\n      node-role.kubernetes.io/worker: \"\"\n";
    const MASTER: &str = "metadata:\n  name: master\n  labels:\n    machineconfiguration.openshift.io/mco-built-in: \"\"\n    operator.machineconfiguration.openshift.io/required-for-upgrade: \"\"\n    pools.operator.machineconfiguration.openshift.io/master: \"\"\nspec:\n  nodeSelector:\n    matchLabels:\n      node-role.kubernetes.io/master: \"\"\n";

    fn pools() -> Vec<PoolMeta> {
        vec![
            parse_pool(MASTER, "m").unwrap(),
            parse_pool(WORKER, "w").unwrap(),
            parse_pool(WORKER_CNF, "c").unwrap(),
        ]
    }

    fn node(name: &str, roles: &[&str], taint: Option<&str>) -> NodeMeta {
        let mut labels = BTreeMap::new();
        for r in roles {
            labels.insert(format!("node-role.kubernetes.io/{r}"), String::new());
        }
        let taints = taint
            .map(|t| vec![(t.to_string(), String::new(), "NoSchedule".to_string())])
            .unwrap_or_default();
        NodeMeta { name: name.into(), labels, taints }
    }

    #[test]
    fn pool_membership_follows_mco() {
        let p = pools();
        let nodes = vec![
            node("worker1", &["worker", "worker-cnf"], None),
            node("worker2", &["worker"], None),
            node("master1", &["master"], Some("node-role.kubernetes.io/master")),
            node("sno", &["master", "worker"], None),
        ];
        let names = |pool: &str| -> Vec<String> {
            let pl = p.iter().find(|x| x.name == pool).unwrap();
            nodes_for_pool(pl, &p, &nodes).iter().map(|n| n.name.clone()).collect()
        };
        assert_eq!(names("worker-cnf"), vec!["worker1"]);
        assert_eq!(names("worker"), vec!["worker2"]);
        assert_eq!(names("master"), vec!["sno"]);
    }

    #[test]
    fn unique_labels() {
        let p = pools();
        assert_eq!(
            pool_selector(&p[2], &p).unwrap(),
            ("machineconfiguration.openshift.io/role".into(), "worker-cnf".into())
        );
        assert_eq!(
            pool_selector(&p[0], &p).unwrap(),
            ("pools.operator.machineconfiguration.openshift.io/master".into(), String::new())
        );
        assert_eq!(node_selector(&p[2]).unwrap().0, "node-role.kubernetes.io/worker-cnf");
    }

    #[test]
    fn expressions_and_bad_yaml() {
        let s = Selector {
            match_labels: BTreeMap::new(),
            match_expressions: vec![("role".into(), "In".into(), vec!["a".into(), "b".into()])],
        };
        assert!(s.matches(&BTreeMap::from([("role".into(), "b".into())])));
        assert!(!s.matches(&BTreeMap::new()));
        assert!(parse_node("[unclosed", "n.yaml").is_err());
        assert!(parse_pool("kind: X\n", "p.yaml")
            .unwrap_err()
            .to_string()
            .contains("no metadata.name"));
    }
}
