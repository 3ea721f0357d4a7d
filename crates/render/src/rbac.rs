//! Access objects, built in one place: namespaces, ServiceAccounts, (Cluster)Roles and their
//! bindings, as ordered YAML values. Used by `k8s-latency-test` (its namespace, ServiceAccount
//! and binding to OpenShift's privileged SCC) and by `cluster-rbac`, rendered here: what
//! `lowlat cluster` needs from the API, for a service account `lowlat` in the Jobs' namespace
//! (a controller running in the cluster) — or bind the same roles to a user. The OpenShift part
//! lets the namespace's service accounts run privileged pods (SCC).

use serde_norway::Value;

use crate::yaml::{map, s, seq};
use crate::{OutFile, RenderOptions};

const RBAC_API: &str = "rbac.authorization.k8s.io";
const RBAC_V1: &str = "rbac.authorization.k8s.io/v1";

/// One rule of a Role or ClusterRole.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub api_groups: &'static [&'static str],
    pub resources: &'static [&'static str],
    /// Only these objects (`resourceNames`); empty: all.
    pub names: &'static [&'static str],
    pub verbs: &'static [&'static str],
}

impl Rule {
    const fn new(
        api_groups: &'static [&'static str],
        resources: &'static [&'static str],
        verbs: &'static [&'static str],
    ) -> Self {
        Rule { api_groups, resources, names: &[], verbs }
    }

    fn value(&self) -> Value {
        let list = |items: &[&str]| seq(items.iter().map(|i| s(*i)).collect());
        let mut pairs =
            vec![("apiGroups", list(self.api_groups)), ("resources", list(self.resources))];
        if !self.names.is_empty() {
            pairs.push(("resourceNames", list(self.names)));
        }
        pairs.push(("verbs", list(self.verbs)));
        map(pairs)
    }
}

/// The scope of a role: namespaced (`Role`, `RoleBinding`) or cluster-wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    Namespace(&'a str),
    Cluster,
}

fn metadata(name: &str, scope: Scope<'_>) -> Value {
    match scope {
        Scope::Namespace(ns) => map(vec![("name", s(name)), ("namespace", s(ns))]),
        Scope::Cluster => map(vec![("name", s(name))]),
    }
}

/// A Namespace with these labels.
pub fn namespace(name: &str, labels: &[(&str, &str)]) -> Value {
    let labels = map(labels.iter().map(|(k, v)| (*k, s(*v))).collect());
    map(vec![
        ("apiVersion", s("v1")),
        ("kind", s("Namespace")),
        ("metadata", map(vec![("name", s(name)), ("labels", labels)])),
    ])
}

/// A namespace whose pods may be privileged (PodSecurity admission `privileged`, and OpenShift
/// told not to sync the labels back down).
pub fn privileged_namespace(name: &str) -> Value {
    namespace(
        name,
        &[
            ("pod-security.kubernetes.io/enforce", "privileged"),
            ("pod-security.kubernetes.io/audit", "privileged"),
            ("pod-security.kubernetes.io/warn", "privileged"),
            ("security.openshift.io/scc.podSecurityLabelSync", "false"),
        ],
    )
}

/// A ServiceAccount.
pub fn service_account(name: &str, ns: &str) -> Value {
    map(vec![
        ("apiVersion", s("v1")),
        ("kind", s("ServiceAccount")),
        ("metadata", metadata(name, Scope::Namespace(ns))),
    ])
}

/// A `Role` (namespaced) or `ClusterRole` with these rules.
pub fn role(name: &str, scope: Scope<'_>, rules: &[Rule]) -> Value {
    let kind = if scope == Scope::Cluster { "ClusterRole" } else { "Role" };
    map(vec![
        ("apiVersion", s(RBAC_V1)),
        ("kind", s(kind)),
        ("metadata", metadata(name, scope)),
        ("rules", seq(rules.iter().map(Rule::value).collect())),
    ])
}

/// A `RoleBinding` (namespaced) or `ClusterRoleBinding` of the role `role_ref`
/// (`(kind, name)`, kind `Role` or `ClusterRole`) to ServiceAccounts `(name, namespace)`.
pub fn binding(
    name: &str,
    scope: Scope<'_>,
    role_ref: (&str, &str),
    accounts: &[(&str, &str)],
) -> Value {
    let kind = if scope == Scope::Cluster { "ClusterRoleBinding" } else { "RoleBinding" };
    let subjects = accounts
        .iter()
        .map(|(sa, ns)| {
            map(vec![("kind", s("ServiceAccount")), ("name", s(*sa)), ("namespace", s(*ns))])
        })
        .collect();
    map(vec![
        ("apiVersion", s(RBAC_V1)),
        ("kind", s(kind)),
        ("metadata", metadata(name, scope)),
        (
            "roleRef",
            map(vec![("apiGroup", s(RBAC_API)), ("kind", s(role_ref.0)), ("name", s(role_ref.1))]),
        ),
        ("subjects", seq(subjects)),
    ])
}

/// The ServiceAccount `lowlat cluster` runs as in a cluster.
pub const CLUSTER_ACCOUNT: &str = "lowlat";

/// Cluster-wide reads (nodes, kubelet configz through the node proxy, pools) and apply's kinds.
const CLUSTER_RULES: &[Rule] = &[
    Rule::new(&[""], &["nodes"], &["get", "list", "watch"]),
    Rule::new(&[""], &["nodes/proxy"], &["get"]),
    Rule::new(&[""], &["namespaces"], &["get", "patch"]),
    Rule::new(&["batch"], &["jobs"], &["list"]),
    Rule::new(&[""], &["pods"], &["list"]),
    Rule::new(
        &["machineconfiguration.openshift.io"],
        &["machineconfigpools", "machineconfigs", "kubeletconfigs"],
        &["get", "list", "patch"],
    ),
    Rule::new(&["performance.openshift.io"], &["performanceprofiles"], &["get", "patch"]),
    Rule::new(&["tuned.openshift.io"], &["tuneds"], &["get", "patch"]),
];

/// The Jobs of check and snapshot, their pods and logs, in the Jobs' namespace.
const JOB_RULES: &[Rule] = &[
    Rule::new(
        &["batch"],
        &["jobs"],
        &["create", "get", "list", "watch", "delete", "deletecollection", "patch"],
    ),
    Rule::new(&[""], &["pods"], &["get", "list", "watch", "delete", "deletecollection"]),
    Rule::new(&[""], &["pods/log"], &["get"]),
];

/// `use` of OpenShift's privileged SecurityContextConstraints.
const SCC_RULES: &[Rule] = &[Rule {
    api_groups: &["security.openshift.io"],
    resources: &["securitycontextconstraints"],
    names: &["privileged"],
    verbs: &["use"],
}];

/// Documents, each after its own comment lines (quoted as comments), separated by `---`.
fn commented(items: &[(&str, Value)]) -> String {
    let mut out = String::new();
    for (i, (comment, v)) in items.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        for line in comment.lines() {
            out.push_str("# ");
            out.push_str(&crate::quote::comment(line));
            out.push('\n');
        }
        out.push_str(&crate::yaml::doc(v));
    }
    out
}

/// `cluster-rbac.yaml` and `openshift-scc.yaml`.
pub fn render(opts: &RenderOptions) -> Vec<OutFile> {
    let ns = opts.namespace.as_str();
    let account = [(CLUSTER_ACCOUNT, ns)];
    let rbac = [
        (
            "lowlat cluster: nodes, check, snapshot, apply, clean",
            service_account(CLUSTER_ACCOUNT, ns),
        ),
        (
            "cluster-wide reads (nodes, kubelet configz through the node proxy, pools) and apply's kinds",
            role("lowlat-cluster", Scope::Cluster, CLUSTER_RULES),
        ),
        (
            "",
            binding("lowlat-cluster", Scope::Cluster, ("ClusterRole", "lowlat-cluster"), &account),
        ),
        (
            "the Jobs of check and snapshot, their pods and logs, in the Jobs' namespace",
            role("lowlat-jobs", Scope::Namespace(ns), JOB_RULES),
        ),
        ("", binding("lowlat-jobs", Scope::Namespace(ns), ("Role", "lowlat-jobs"), &account)),
    ];
    let scc = [
        (
            "OpenShift: the Jobs' pods are privileged, hostPID, hostNetwork: let the namespace's\nservice accounts use the privileged SecurityContextConstraints",
            role("lowlat-scc-privileged", Scope::Cluster, SCC_RULES),
        ),
        (
            "",
            binding(
                "lowlat-scc-privileged",
                Scope::Namespace(ns),
                ("ClusterRole", "lowlat-scc-privileged"),
                &[("default", ns), (CLUSTER_ACCOUNT, ns)],
            ),
        ),
    ];
    let file = |name: &str, items: &[(&str, Value)]| {
        let objects: Vec<Value> = items.iter().map(|(_, v)| v.clone()).collect();
        OutFile::manifest(name, commented(items), &objects)
    };
    vec![file("cluster-rbac.yaml", &rbac), file("openshift-scc.yaml", &scc)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn objects(text: &str) -> Vec<(String, String, Option<String>)> {
        use serde::Deserialize as _;
        serde_norway::Deserializer::from_str(text)
            .map(|d| {
                let v = Value::deserialize(d).unwrap_or_else(|e| panic!("{e}\n{text}"));
                let m = &v["metadata"];
                let text = |v: &Value| v.as_str().map(str::to_string);
                (
                    text(&v["kind"]).unwrap_or_default(),
                    text(&m["name"]).unwrap_or_default(),
                    text(&m["namespace"]),
                )
            })
            .collect()
    }

    #[test]
    fn cluster_rbac_objects_and_a_hostile_namespace_stays_one_string() {
        let ns = "x\"\n  name: evil\u{85}";
        let opts = RenderOptions { namespace: ns.into(), ..Default::default() };
        let files = render(&opts);
        let got: Vec<_> = files.iter().flat_map(|f| objects(&f.contents)).collect();
        let n = || Some(ns.to_string());
        let want = [
            ("ServiceAccount", "lowlat", n()),
            ("ClusterRole", "lowlat-cluster", None),
            ("ClusterRoleBinding", "lowlat-cluster", None),
            ("Role", "lowlat-jobs", n()),
            ("RoleBinding", "lowlat-jobs", n()),
            ("ClusterRole", "lowlat-scc-privileged", None),
            ("RoleBinding", "lowlat-scc-privileged", n()),
        ]
        .map(|(k, name, ns)| (k.to_string(), name.to_string(), ns));
        assert_eq!(got, want);
    }
}
