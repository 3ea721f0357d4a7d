//! `lowlat cluster apply`: the rendered manifests of a plan, applied server-side with field
//! manager `lowlat`. By default a server-side dry run (the API server validates and defaults
//! everything, nothing is stored) that prints what would change. An object that exists and
//! that lowlat has never managed is refused unless `force` (`--force-conflicts`), and so are
//! fields another manager owns (the API server's 409).

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::discovery::Scope;
use serde::Serialize;

use crate::conn::{Conn, Session};
use crate::{Error, Result};

/// The field manager lowlat applies with.
pub const MANAGER: &str = "lowlat";

/// One object to apply, from a rendered file.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// `file.yaml` or `file.yaml#2` (the document's position).
    pub source: String,
    pub object: serde_json::Value,
}

/// What happened (or would happen) to one object.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Applied {
    pub source: String,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    pub action: Action,
    /// Field paths that differ from the live object (`spec.config.kernelArguments`).
    pub changes: Vec<String>,
    /// Why it was skipped or refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Create,
    Update,
    Unchanged,
    /// Exists and is not lowlat's (no `--force-conflicts`).
    Refused,
    /// Could not be checked in a dry run (its namespace is created by the same apply).
    Skipped,
}

/// The objects of rendered files, in file order: each file's [`render::OutFile::objects`] (the
/// documents its YAML was written from; files that hold none are skipped), every object with
/// an `apiVersion` and a `kind`.
pub fn manifests(files: &[render::OutFile]) -> Result<Vec<Manifest>> {
    let mut out = Vec::new();
    for f in files {
        for (i, o) in f.objects.iter().enumerate() {
            let v = serde_json::to_value(o)
                .map_err(|e| Error::Input(format!("{} object {}: {e}", f.name, i + 1)))?;
            let named = |k: &str| v.get(k).and_then(|a| a.as_str()).is_some();
            if !named("apiVersion") || !named("kind") {
                return Err(Error::Input(format!(
                    "{} object {}: no apiVersion or kind (a renderer bug: report it)",
                    f.name,
                    i + 1
                )));
            }
            let source =
                if f.objects.len() == 1 { f.name.clone() } else { format!("{}#{}", f.name, i + 1) };
            out.push(Manifest { source, object: v });
        }
    }
    Ok(out)
}

fn gvk(obj: &serde_json::Value) -> Result<GroupVersionKind> {
    let av = obj["apiVersion"].as_str().unwrap_or_default();
    let kind = obj["kind"].as_str().unwrap_or_default();
    let (group, version) = match av.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", av),
    };
    Ok(GroupVersionKind::gvk(group, version, kind))
}

/// Leaf paths where two objects differ (metadata the server owns and `status` ignored).
pub fn diff(live: &serde_json::Value, want: &serde_json::Value) -> Vec<String> {
    fn walk(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
        use serde_json::Value::Object;
        match (a, b) {
            (Object(x), Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    if IGNORED.contains(&p.as_str()) {
                        continue;
                    }
                    let null = serde_json::Value::Null;
                    walk(&p, x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null), out);
                }
            }
            _ if a != b => out.push(path.to_string()),
            _ => {}
        }
    }
    const IGNORED: [&str; 8] = [
        "status",
        "metadata.managedFields",
        "metadata.resourceVersion",
        "metadata.generation",
        "metadata.creationTimestamp",
        "metadata.uid",
        "metadata.annotations.deployment.kubernetes.io/revision",
        "metadata.selfLink",
    ];
    let mut out = Vec::new();
    walk("", live, want, &mut out);
    out
}

fn managers(obj: &DynamicObject) -> Vec<String> {
    let mut m: Vec<String> =
        obj.metadata.managed_fields.iter().flatten().filter_map(|f| f.manager.clone()).collect();
    m.sort();
    m.dedup();
    m
}

async fn apply_one(
    s: &Session,
    m: &Manifest,
    dry_run: bool,
    force: bool,
    new_namespaces: &[String],
) -> Result<Applied> {
    let gvk = gvk(&m.object)?;
    let (ar, caps): (ApiResource, _) =
        kube::discovery::pinned_kind(&s.client, &gvk).await.map_err(|e| {
            Error::api(
                format!(
                    "{}: finding {}/{} in the API (is its CRD installed?)",
                    m.source, gvk.group, gvk.kind
                ),
                e,
            )
        })?;
    let name = m.object["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let namespaced = caps.scope == Scope::Namespaced;
    let namespace = namespaced.then(|| {
        m.object["metadata"]["namespace"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| s.namespace.clone())
    });
    let api: Api<DynamicObject> = match &namespace {
        Some(ns) => Api::namespaced_with(s.client.clone(), ns, &ar),
        None => Api::all_with(s.client.clone(), &ar),
    };
    let mut row = Applied {
        source: m.source.clone(),
        api_version: m.object["apiVersion"].as_str().unwrap_or_default().to_string(),
        kind: gvk.kind.clone(),
        name: name.clone(),
        namespace: namespace.clone(),
        action: Action::Create,
        changes: vec![],
        note: None,
    };
    let what = format!(
        "{} {}{}",
        gvk.kind,
        namespace.as_deref().map(|n| format!("{n}/")).unwrap_or_default(),
        name
    );
    let live = api.get_opt(&name).await.map_err(|e| Error::api(format!("reading {what}"), e))?;
    if live.is_none() && dry_run {
        if let Some(ns) = &namespace {
            if new_namespaces.contains(ns) {
                row.action = Action::Skipped;
                row.note = Some(format!(
                    "namespace {ns} is created by this apply: not validated in a dry run"
                ));
                return Ok(row);
            }
        }
    }
    if let Some(l) = &live {
        let owners = managers(l);
        if !owners.iter().any(|o| o == MANAGER) && !force {
            row.action = Action::Refused;
            row.note = Some(format!(
                "exists and is managed by {} (not lowlat): refusing to take it over",
                if owners.is_empty() { "nobody on record".to_string() } else { owners.join(", ") }
            ));
            return Ok(row);
        }
    }
    let mut pp = PatchParams::apply(MANAGER);
    pp.dry_run = dry_run;
    pp.force = force;
    let mut obj = m.object.clone();
    if let Some(ns) = &namespace {
        obj["metadata"]["namespace"] = serde_json::Value::String(ns.clone());
    }
    let result = api
        .patch(&name, &pp, &Patch::Apply(&obj))
        .await
        .map_err(|e| Error::api(format!("applying {what}"), e))?;
    match &live {
        None => row.action = Action::Create,
        Some(l) => {
            let before = serde_json::to_value(l).unwrap_or_default();
            let after = serde_json::to_value(&result).unwrap_or_default();
            row.changes = diff(&before, &after);
            row.action = if row.changes.is_empty() { Action::Unchanged } else { Action::Update };
        }
    }
    Ok(row)
}

/// Apply (or dry-run) every manifest, in order. A refusal of one object does not stop the rest;
/// an API error does.
pub fn apply(
    conn: &Conn,
    manifests: &[Manifest],
    dry_run: bool,
    force: bool,
) -> Result<Vec<Applied>> {
    crate::runtime()?.block_on(async {
        let s = conn.session().await?;
        let new_namespaces: Vec<String> = {
            let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(s.client.clone());
            let mut v = Vec::new();
            for m in manifests
                .iter()
                .filter(|m| m.object["kind"] == "Namespace" && m.object["apiVersion"] == "v1")
            {
                let n = m.object["metadata"]["name"].as_str().unwrap_or_default();
                if api
                    .get_opt(n)
                    .await
                    .map_err(|e| Error::api(format!("reading namespace {n}"), e))?
                    .is_none()
                {
                    v.push(n.to_string());
                }
            }
            v
        };
        let mut out = Vec::new();
        for m in manifests {
            out.push(apply_one(&s, m, dry_run, force, &new_namespaces).await?);
        }
        Ok(out)
    })
}

/// Where an apply stops (kubectl's `--dry-run` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DryRun {
    /// Validated and defaulted by the API server, nothing stored.
    Server,
    /// The objects that would be sent, with no cluster contacted.
    Client,
    /// Apply for real.
    None,
}

impl DryRun {
    /// kubectl's names.
    pub const NAMES: [&str; 3] = ["server", "client", "none"];
}

impl std::str::FromStr for DryRun {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "server" => Self::Server,
            "client" => Self::Client,
            "none" => Self::None,
            _ => return Err(Error::Input(format!("unknown dry-run mode {s:?}"))),
        })
    }
}

/// The objects as they would be sent, as one pretty JSON array (`--dry-run=client` as JSON).
pub fn client_json(manifests: &[Manifest]) -> Result<String> {
    let objects: Vec<&serde_json::Value> = manifests.iter().map(|m| &m.object).collect();
    serde_json::to_string_pretty(&objects)
        .map_err(|e| Error::Input(format!("objects as JSON: {e}")))
}

/// How many objects were refused (they exist and lowlat does not manage them).
pub fn refused(rows: &[Applied]) -> usize {
    rows.iter().filter(|r| r.action == Action::Refused).count()
}

/// `--dry-run=client`: the objects as they would be sent, one YAML document each, with no
/// cluster contacted (kubectl's `apply --dry-run=client -o yaml`).
pub fn client_yaml(manifests: &[Manifest]) -> Result<String> {
    let mut out = String::new();
    for m in manifests {
        let doc = serde_norway::to_string(&m.object)
            .map_err(|e| Error::Input(format!("{}: {e}", m.source)))?;
        out.push_str(&format!("---\n# {}\n{doc}", m.source));
    }
    Ok(out)
}

/// One line per object.
pub fn view(rows: &[Applied], dry_run: bool) -> String {
    let mut s = String::new();
    for r in rows {
        let verb = match (r.action, dry_run) {
            (Action::Create, true) => "would create",
            (Action::Create, false) => "created",
            (Action::Update, true) => "would update",
            (Action::Update, false) => "updated",
            (Action::Unchanged, _) => "unchanged",
            (Action::Refused, _) => "REFUSED",
            (Action::Skipped, _) => "skipped",
        };
        let ns = r.namespace.as_deref().map(|n| format!(" -n {n}")).unwrap_or_default();
        s.push_str(&format!("{verb:<13} {}/{}{ns}  ({})", r.kind, r.name, r.source));
        if !r.changes.is_empty() {
            let shown: Vec<&str> = r.changes.iter().take(6).map(String::as_str).collect();
            s.push_str(&format!(
                ": {}{}",
                shown.join(", "),
                if r.changes.len() > 6 { ", …" } else { "" }
            ));
        }
        if let Some(n) = &r.note {
            s.push_str(&format!(": {n}"));
        }
        s.push('\n');
    }
    util::term::sanitize(&s, true).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_come_from_the_rendered_documents_not_their_text() {
        let plan = plan::Plan::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/plan.yaml"
        )))
        .unwrap();
        let files =
            render::render(&plan, render::Target::K8sLatencyTest, &Default::default()).unwrap();
        let m = manifests(&files).unwrap();
        let sources: Vec<&str> = m.iter().map(|m| m.source.as_str()).collect();
        assert!(sources.contains(&"latency-test.yaml"), "{sources:?}");
        assert!(sources.iter().any(|s| s.starts_with("namespace.yaml#")), "{sources:?}");
        assert!(!sources.iter().any(|s| s.starts_with("apply.sh")), "{sources:?}");
        let job = m.iter().find(|m| m.source == "latency-test.yaml").unwrap();
        assert_eq!(gvk(&job.object).unwrap(), GroupVersionKind::gvk("batch", "v1", "Job"));
        // the objects are the ones the text holds
        let file = files.iter().find(|f| f.name == "latency-test.yaml").unwrap();
        let text: serde_json::Value = serde_norway::from_str(
            file.contents.trim_start_matches(|c| c != '\n').trim_start_matches("\n---\n"),
        )
        .unwrap();
        assert_eq!(text, job.object);
        // a file with no objects (a script, a README) contributes none, whatever its text
        let other = render::OutFile::new("x.yaml", "apiVersion: v1\nkind: Namespace\n");
        assert!(manifests(&[other]).unwrap().is_empty());
    }

    #[test]
    fn diff_ignores_server_fields() {
        let a = serde_json::json!({"metadata": {"name": "x", "resourceVersion": "1", "labels": {"a": "1"}}, "spec": {"k": [1, 2]}, "status": {"x": 1}});
        let b = serde_json::json!({"metadata": {"name": "x", "resourceVersion": "2", "labels": {"a": "2"}}, "spec": {"k": [1, 3]}, "status": {"x": 2}});
        assert_eq!(diff(&a, &b), ["metadata.labels.a", "spec.k"]);
        assert!(diff(&a, &a).is_empty());
    }
}
