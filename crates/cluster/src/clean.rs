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
