//! `lowlat cluster nodes`: what each node is, from the Node objects (roles, kernel, CPUs,
//! Ready), OpenShift MachineConfigPools when the API has them, and each kubelet's live
//! configuration read through the API server's node proxy (`/api/v1/nodes/NAME/proxy/configz`).

use std::collections::BTreeMap;

use futures::stream::StreamExt as _;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde::{Deserialize, Serialize};

use crate::conn::{Conn, Session};
use crate::{Error, Result};

/// One node's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeInfo {
    pub name: String,
    /// `node-role.kubernetes.io/<role>` labels.
    pub roles: Vec<String>,
    /// The MachineConfigPool whose node selector matches (OpenShift), else `None`.
    pub pool: Option<String>,
    pub ready: String,
    /// `nodeInfo.kernelVersion` (`uname -r`).
    pub kernel: String,
    /// The kernel release names a PREEMPT_RT build (`…rt…`); `nodeInfo` has no `uname -v`.
    pub preempt_rt: bool,
    pub os_image: String,
    pub kubelet_version: String,
    pub cpu_capacity: Option<String>,
    pub cpu_allocatable: Option<String>,
    /// The kubelet's configuration (configz), when it could be read.
    pub kubelet: Option<KubeletConfig>,
    /// Why it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_error: Option<String>,
}

/// The kubelet settings that matter for CPU isolation, from configz.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeletConfig {
    #[serde(default)]
    pub cpu_manager_policy: Option<String>,
    #[serde(default, rename = "reservedSystemCPUs")]
    pub reserved_system_cpus: Option<String>,
    #[serde(default)]
    pub topology_manager_policy: Option<String>,
    #[serde(default)]
    pub topology_manager_scope: Option<String>,
    #[serde(default)]
    pub memory_manager_policy: Option<String>,
    #[serde(default)]
    pub cgroup_driver: Option<String>,
    #[serde(default)]
    pub cgroup_root: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Configz {
    kubeletconfig: KubeletConfig,
}

/// Does this kernel release name a PREEMPT_RT kernel (`5.14.0-284.rt14.284.el9_2.x86_64`,
/// `6.1.0-18-rt-amd64`, `6.6.15-rt22`)?
pub fn is_rt_release(release: &str) -> bool {
    release.split(['.', '-', '_', '+']).any(|part| {
        part == "rt"
            || (part.starts_with("rt")
                && part.len() > 2
                && part[2..].chars().all(|c| c.is_ascii_digit()))
    })
}

/// The roles from the node's labels.
pub fn roles(labels: &BTreeMap<String, String>) -> Vec<String> {
    let mut r: Vec<String> = labels
        .keys()
        .filter_map(|k| k.strip_prefix("node-role.kubernetes.io/"))
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect();
    r.sort();
    r
}

/// A pool's node selector, as `matchLabels` and `matchExpressions` (In, NotIn, Exists,
/// DoesNotExist).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default)]
    pub match_labels: BTreeMap<String, String>,
    #[serde(default)]
    pub match_expressions: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    #[serde(default)]
    pub values: Vec<String>,
}

impl LabelSelector {
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| {
                let got = labels.get(&r.key);
                match r.operator.as_str() {
                    "In" => got.is_some_and(|v| r.values.contains(v)),
                    "NotIn" => got.is_none_or(|v| !r.values.contains(v)),
                    "Exists" => got.is_some(),
                    "DoesNotExist" => got.is_none(),
                    _ => false,
                }
            })
    }
}

/// The pool a node belongs to: of the pools whose selector matches, a custom pool wins over
/// `worker` (a custom pool's nodes also carry the worker role, as in OpenShift).
pub fn pool_for(
    pools: &[(String, LabelSelector)],
    labels: &BTreeMap<String, String>,
) -> Option<String> {
    let mut hits: Vec<&str> =
        pools.iter().filter(|(_, s)| s.matches(labels)).map(|(n, _)| n.as_str()).collect();
    hits.sort_by_key(|n| (*n == "worker", *n));
    hits.first().map(|n| n.to_string())
}

fn base_info(n: &Node, pools: &[(String, LabelSelector)]) -> NodeInfo {
    let labels = n.metadata.labels.clone().unwrap_or_default();
    let st = n.status.clone().unwrap_or_default();
    let info = st.node_info.clone().unwrap_or_default();
    NodeInfo {
        name: n.metadata.name.clone().unwrap_or_default(),
        roles: roles(&labels),
        pool: pool_for(pools, &labels),
        ready: crate::fleet::ready_text(n),
        preempt_rt: is_rt_release(&info.kernel_version),
        kernel: info.kernel_version,
        os_image: info.os_image,
        kubelet_version: info.kubelet_version,
        cpu_capacity: crate::cpus::cpu_quantity(st.capacity.as_ref()),
        cpu_allocatable: crate::cpus::cpu_quantity(st.allocatable.as_ref()),
        kubelet: None,
        kubelet_error: None,
    }
}

fn has_kubelet(n: &Node) -> bool {
    n.status
        .as_ref()
        .and_then(|s| s.daemon_endpoints.as_ref())
        .and_then(|d| d.kubelet_endpoint.as_ref())
        .is_some_and(|e| e.port > 0)
}

async fn pools(s: &Session) -> Result<Vec<(String, LabelSelector)>> {
    let gvk = GroupVersionKind::gvk("machineconfiguration.openshift.io", "v1", "MachineConfigPool");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "machineconfigpools");
    let api: Api<DynamicObject> = Api::all_with(s.client.clone(), &ar);
    match api.list(&ListParams::default()).await {
        Ok(list) => Ok(list
            .items
            .into_iter()
            .filter_map(|o| {
                let sel = o.data.get("spec")?.get("nodeSelector")?.clone();
                Some((o.metadata.name.clone()?, serde_json::from_value(sel).ok()?))
            })
            .collect()),
        // Not OpenShift (no such resource), or not allowed to see pools: no pool column.
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 403 => Ok(vec![]),
        Err(e) => Err(Error::api("listing MachineConfigPools", e)),
    }
}

/// The kubelet's live configuration through the API server's node proxy, or why not.
pub(crate) async fn configz(s: &Session, node: &str) -> Result<KubeletConfig, String> {
    let path = format!("/api/v1/nodes/{node}/proxy/configz");
    let req = http::Request::get(&path).body(Vec::new()).map_err(|e| e.to_string())?;
    match s.client.request::<Configz>(req).await {
        Ok(c) => Ok(c.kubeletconfig),
        Err(kube::Error::Api(st)) if st.code == 403 => {
            Err(format!("permission missing: get nodes/proxy ({})", st.message))
        }
        Err(kube::Error::Api(st)) if st.message == "address not allowed" => Err(format!(
            "the API server refuses to proxy to this node's address (loopback or link-local: \
             \"{}\", {}): kubelet configz cannot be read through the API",
            st.message, st.code
        )),
        Err(kube::Error::Api(st)) => {
            Err(format!("configz through the node proxy: {} ({})", st.message, st.code))
        }
        Err(e) => Err(format!("configz through the node proxy: {e}")),
    }
}

/// The nodes the selector picks (`None`: all), sorted by name, with their kubelet configuration.
pub async fn list_in(s: &Session, selector: Option<&str>) -> Result<Vec<NodeInfo>> {
    let api: Api<Node> = Api::all(s.client.clone());
    let lp = match selector {
        Some(sel) => ListParams::default().labels(sel),
        None => ListParams::default(),
    };
    let doing = match selector {
        Some(sel) => format!("listing nodes with selector '{sel}'"),
        None => "listing nodes".to_string(),
    };
    let list = api.list(&lp).await.map_err(|e| Error::api(doing, e))?;
    let pools = pools(s).await?;
    let mut rows: Vec<(NodeInfo, bool)> =
        list.items.iter().map(|n| (base_info(n, &pools), has_kubelet(n))).collect();
    let fetched: Vec<(usize, Result<KubeletConfig, String>)> =
        futures::stream::iter(rows.iter().enumerate().map(|(i, (row, kubelet))| {
            let name = row.name.clone();
            let kubelet = *kubelet;
            async move {
                if !kubelet {
                    return (
                        i,
                        Err(
                            "no kubelet endpoint on the Node object (no kubelet has registered it)"
                                .to_string(),
                        ),
                    );
                }
                (i, configz(s, &name).await)
            }
        }))
        .buffer_unordered(16)
        .collect()
        .await;
    for (i, k) in fetched {
        match k {
            Ok(k) => rows[i].0.kubelet = Some(k),
            Err(e) => rows[i].0.kubelet_error = Some(e),
        }
    }
    let mut out: Vec<NodeInfo> = rows.into_iter().map(|(r, _)| r).collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// `lowlat cluster nodes`.
pub fn list(conn: &Conn, selector: Option<&str>) -> Result<Vec<NodeInfo>> {
    crate::runtime()?.block_on(async {
        let s = conn.session().await?;
        list_in(&s, selector).await
    })
}

/// How `lowlat cluster nodes` shows the rows (kubectl's `-o`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// The table.
    #[default]
    Table,
    /// The table with the kubelet's more columns, its version and the OS image.
    Wide,
    Json,
    Yaml,
    /// `node/<name>` per line.
    Name,
}

impl Format {
    /// kubectl's names.
    pub const NAMES: [&str; 4] = ["wide", "json", "yaml", "name"];
}

impl std::str::FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "wide" => Self::Wide,
            "json" => Self::Json,
            "yaml" => Self::Yaml,
            "name" => Self::Name,
            "table" => Self::Table,
            _ => return Err(Error::Input(format!("unknown output format {s:?}"))),
        })
    }
}

/// The rows as `format` shows them.
pub fn view(rows: &[NodeInfo], format: Format) -> Result<String> {
    Ok(match format {
        Format::Json => {
            let json = serde_json::to_string_pretty(rows)
                .map_err(|e| Error::Input(format!("nodes as JSON: {e}")))?;
            format!("{json}\n")
        }
        Format::Yaml => yaml(rows)?,
        Format::Name => rows.iter().map(|r| format!("node/{}\n", r.name)).collect(),
        Format::Wide => table(rows, true),
        Format::Table => table(rows, false),
    })
}

/// The rows as YAML (`-o yaml`).
pub fn yaml(rows: &[NodeInfo]) -> crate::Result<String> {
    serde_norway::to_string(rows).map_err(|e| crate::Error::Input(format!("nodes as YAML: {e}")))
}

/// The table; `wide` adds the kubelet's topology scope, memory manager and cgroup driver, its
/// version and the OS image.
pub fn table(rows: &[NodeInfo], wide: bool) -> String {
    let dash = |s: Option<&str>| s.filter(|s| !s.is_empty()).unwrap_or("-").to_string();
    let mut headers = vec![
        "NAME",
        "READY",
        "ROLES",
        "POOL",
        "KERNEL",
        "RT",
        "CPUS(CAP/ALLOC)",
        "CPU-MANAGER",
        "RESERVED",
        "TOPOLOGY",
    ];
    if wide {
        headers.extend(["SCOPE", "MEMORY-MANAGER", "CGROUP-DRIVER", "KUBELET", "OS-IMAGE"]);
    }
    let mut t = report::term::Table::new(&headers);
    for r in rows {
        let (cm, reserved, topo) = match &r.kubelet {
            Some(k) => (
                dash(k.cpu_manager_policy.as_deref()),
                dash(k.reserved_system_cpus.as_deref()),
                dash(k.topology_manager_policy.as_deref()),
            ),
            None => ("?".into(), "?".into(), "?".into()),
        };
        let mut row = vec![
            r.name.clone(),
            r.ready.split(' ').next().unwrap_or("").trim_start_matches("Ready=").to_string(),
            if r.roles.is_empty() { "-".into() } else { r.roles.join(",") },
            dash(r.pool.as_deref()),
            dash(Some(&r.kernel)),
            if r.preempt_rt { "yes".into() } else { "no".into() },
            format!("{}/{}", dash(r.cpu_capacity.as_deref()), dash(r.cpu_allocatable.as_deref())),
            cm,
            reserved,
            topo,
        ];
        if wide {
            let k = |f: fn(&KubeletConfig) -> Option<&str>| {
                r.kubelet.as_ref().map_or("?".into(), |k| dash(f(k)))
            };
            row.extend([
                k(|k| k.topology_manager_scope.as_deref()),
                k(|k| k.memory_manager_policy.as_deref()),
                k(|k| k.cgroup_driver.as_deref()),
                dash(Some(&r.kubelet_version)),
                dash(Some(&r.os_image)),
            ]);
        }
        t.row(row.into_iter().map(|c| util::term::sanitize(&c, false).into_owned()).collect());
    }
    // Every column whole (kubectl does not cut a node's row): a width nothing reaches.
    let mut out = t.render(&report::term::Style::plain(usize::MAX / 4), 0);
    let unread: Vec<String> = rows
        .iter()
        .filter_map(|r| r.kubelet_error.as_ref().map(|e| format!("  {}: {e}", r.name)))
        .collect();
    if !unread.is_empty() {
        out.push_str("kubelet configuration not read (?):\n");
        for u in unread {
            out.push_str(&util::term::sanitize(&u, false));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_kernels_by_release() {
        for r in [
            "5.14.0-284.rt14.284.el9_2.x86_64",
            "6.1.0-18-rt-amd64",
            "6.6.15-rt22",
            "4.18.0-305.rt7.72.el8.x86_64",
        ] {
            assert!(is_rt_release(r), "{r}");
        }
        for r in ["6.18.0", "5.14.0-284.30.1.el9_2.x86_64", "6.1.0-18-amd64", "6.8.0-rtx"] {
            assert!(!is_rt_release(r), "{r}");
        }
    }

    #[test]
    fn custom_pools_win_over_worker() {
        let sel = |k: &str| LabelSelector {
            match_labels: BTreeMap::from([(format!("node-role.kubernetes.io/{k}"), String::new())]),
            match_expressions: vec![],
        };
        let pools = vec![
            ("worker".to_string(), sel("worker")),
            ("worker-rt".to_string(), sel("worker-rt")),
        ];
        let labels = BTreeMap::from([
            ("node-role.kubernetes.io/worker".to_string(), String::new()),
            ("node-role.kubernetes.io/worker-rt".to_string(), String::new()),
        ]);
        assert_eq!(pool_for(&pools, &labels).as_deref(), Some("worker-rt"));
        assert_eq!(roles(&labels), ["worker", "worker-rt"]);
        let plain = BTreeMap::from([("node-role.kubernetes.io/worker".to_string(), String::new())]);
        assert_eq!(pool_for(&pools, &plain).as_deref(), Some("worker"));
        assert_eq!(pool_for(&pools, &BTreeMap::new()), None);
    }

    #[test]
    fn selector_expressions() {
        let s: LabelSelector = serde_json::from_value(serde_json::json!({"matchExpressions": [
            {"key": "a", "operator": "In", "values": ["1", "2"]}, {"key": "b", "operator": "DoesNotExist"}]}))
        .unwrap();
        assert!(s.matches(&BTreeMap::from([("a".into(), "2".into())])));
        assert!(!s.matches(&BTreeMap::from([("a".into(), "2".into()), ("b".into(), "x".into())])));
        assert!(!s.matches(&BTreeMap::new()));
    }

    #[test]
    fn configz_reads() {
        let c: Configz = serde_json::from_str(
            r#"{"kubeletconfig":{"cpuManagerPolicy":"static","reservedSystemCPUs":"0-1","topologyManagerPolicy":"single-numa-node","enableServer":true}}"#,
        )
        .unwrap();
        assert_eq!(c.kubeletconfig.cpu_manager_policy.as_deref(), Some("static"));
        assert_eq!(c.kubeletconfig.reserved_system_cpus.as_deref(), Some("0-1"));
    }
}
