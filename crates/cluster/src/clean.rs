//! `lowlat cluster clean`: delete every object any `lowlat cluster` run left behind (a crash, a
//! killed controller), in every namespace: whatever carries the `lowlat.io/run` label.

use std::collections::BTreeSet;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

use crate::conn::Conn;
use crate::fleet::{self, Event};
use crate::model::Cleanup;
use crate::{labels, Error, Result};

/// Namespaces that hold labelled Jobs or pods (all namespaces, or just `only`).
async fn namespaces(s: &crate::conn::Session, only: Option<&str>) -> Result<BTreeSet<String>> {
    let lp = ListParams::default().labels(&labels::any_run_selector());
    let mut set = BTreeSet::new();
    if let Some(ns) = only {
        set.insert(ns.to_string());
        return Ok(set);
    }
    let jobs: Api<Job> = Api::all(s.client.clone());
    for j in jobs
        .list_metadata(&lp)
        .await
        .map_err(|e| Error::api("listing labelled Jobs in all namespaces", e))?
        .items
    {
        set.extend(j.metadata.namespace);
    }
    let pods: Api<Pod> = Api::all(s.client.clone());
    for p in pods
        .list_metadata(&lp)
        .await
        .map_err(|e| Error::api("listing labelled pods in all namespaces", e))?
        .items
    {
        set.extend(p.metadata.namespace);
    }
    Ok(set)
}

/// Delete everything labelled; `namespace`: only there (else every namespace). Returns what
/// was deleted, per namespace.
pub fn clean(
    conn: &Conn,
    namespace: Option<&str>,
    on: &mut (dyn FnMut(&Event<'_>) + Send),
) -> Result<Vec<(String, Cleanup)>> {
    crate::runtime()?.block_on(async {
        let s = conn.session().await?;
        let mut out = Vec::new();
        for ns in namespaces(&s, namespace).await? {
            let c = fleet::delete_labelled(&s, &ns, &labels::any_run_selector(), on).await?;
            out.push((ns, c));
        }
        Ok(out)
    })
}

/// Names of labelled objects left anywhere (for tests and `clean`'s final word).
pub fn leftovers(conn: &Conn) -> Result<Vec<String>> {
    crate::runtime()?.block_on(async {
        let s = conn.session().await?;
        let lp = ListParams::default().labels(&labels::any_run_selector());
        let mut out = Vec::new();
        let jobs: Api<Job> = Api::all(s.client.clone());
        for j in
            jobs.list_metadata(&lp).await.map_err(|e| Error::api("listing labelled Jobs", e))?.items
        {
            out.push(format!(
                "job/{}/{}",
                j.metadata.namespace.unwrap_or_default(),
                j.metadata.name.unwrap_or_default()
            ));
        }
        let pods: Api<Pod> = Api::all(s.client.clone());
        for p in
            pods.list_metadata(&lp).await.map_err(|e| Error::api("listing labelled pods", e))?.items
        {
            out.push(format!(
                "pod/{}/{}",
                p.metadata.namespace.unwrap_or_default(),
                p.metadata.name.unwrap_or_default()
            ));
        }
        Ok(out)
    })
}

/// `cluster clean`'s pass on the nodes: one short Job per node running the agent with
/// `--recover-only`, which gives back the RT budget killed runs left on the node's record
/// ([`crate::rt::recover`]).
#[derive(Debug, Clone)]
pub struct RecoverConfig {
    /// Label selector of the nodes (empty: every node).
    pub selector: String,
    pub pod: crate::pod::Pod,
}

/// One node's pass.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct NodeRecovery {
    pub node: String,
    pub status: crate::model::Status,
    /// Why the pass did not run or failed there.
    pub reason: Option<String>,
    /// The agent's own account (mount, ledger).
    pub detail: Option<String>,
    pub recovered: Vec<crate::rt::Recovered>,
}

impl NodeRecovery {
    /// The pass ran and every record it found is restored or still in use.
    pub fn ok(&self) -> bool {
        self.status == crate::model::Status::Completed
            && self.recovered.iter().all(|r| r.outcome != crate::rt::Recovery::Failed)
    }
}

/// Run the pass on every selected node; the per-node outcomes.
pub fn recover_rt(
    conn: &Conn,
    cfg: &RecoverConfig,
    on: &mut (dyn FnMut(&Event<'_>) + Send),
) -> Result<Vec<NodeRecovery>> {
    let tmp = util::fs::create_unique_dir(&std::env::temp_dir(), "lowlat-clean-")
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let r = crate::runtime()?.block_on(async {
        let s = conn.session().await?;
        let nodes = fleet::select_nodes(&s, &cfg.selector).await?;
        let spec = fleet::RunSpec {
            pod: cfg.pod.clone(),
            task: crate::pod::Task::RecoverRt,
            guaranteed_cpus: None,
            out: tmp.clone(),
        };
        fleet::run(&s, &nodes, &spec, on).await
    });
    let out = r.map(|o| {
        o.nodes
            .into_iter()
            .map(|g| {
                let report: Option<crate::rt::Report> = g.dir.as_ref().and_then(|d| {
                    let p = tmp.join(d).join(crate::agent::RT_FILE);
                    util::fs::read_private(&p, 1 << 20)
                        .ok()
                        .and_then(|b| serde_json::from_slice(&b).ok())
                });
                NodeRecovery {
                    node: g.node,
                    status: g.status,
                    reason: g.reason,
                    detail: report.as_ref().map(|r| r.detail.clone()),
                    recovered: report.map(|r| r.recovered).unwrap_or_default(),
                }
            })
            .collect()
    });
    let _ = std::fs::remove_dir_all(&tmp);
    out
}
