//! `cluster-rbac`: what `lowlat cluster` needs from the API, for a service account `lowlat` in
//! the Jobs' namespace (a controller running in the cluster) — or bind the same roles to a user.
//! The OpenShift part lets the namespace's service accounts run privileged pods (SCC).

use crate::{OutFile, RenderOptions};

/// A YAML double-quoted scalar: whatever the value, it stays one string.
fn quoted(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20
                || c as u32 == 0x7f
                || ('\u{80}'..='\u{9f}').contains(&c)
                || c == '\u{2028}'
                || c == '\u{2029}'
                || c == '\u{feff}' =>
            {
                o.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// `cluster-rbac.yaml` and `openshift-scc.yaml`.
pub fn render(opts: &RenderOptions) -> Vec<OutFile> {
    let ns = &quoted(&opts.namespace);
    let rbac = format!(
        r#"# lowlat cluster: nodes, check, snapshot, apply, clean
apiVersion: v1
kind: ServiceAccount
metadata:
  name: lowlat
  namespace: {ns}
---
# cluster-wide reads (nodes, kubelet configz through the node proxy, pools) and apply's kinds
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: lowlat-cluster
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [nodes/proxy]
  verbs: [get]
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, patch]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [list]
- apiGroups: [""]
  resources: [pods]
  verbs: [list]
- apiGroups: [machineconfiguration.openshift.io]
  resources: [machineconfigpools, machineconfigs, kubeletconfigs]
  verbs: [get, list, patch]
- apiGroups: [performance.openshift.io]
  resources: [performanceprofiles]
  verbs: [get, patch]
- apiGroups: [tuned.openshift.io]
  resources: [tuneds]
  verbs: [get, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: lowlat-cluster
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: lowlat-cluster
subjects:
- kind: ServiceAccount
  name: lowlat
  namespace: {ns}
---
# the Jobs of check and snapshot, their pods and logs, in the Jobs' namespace
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: lowlat-jobs
  namespace: {ns}
rules:
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create, get, list, watch, delete, deletecollection, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, delete, deletecollection]
- apiGroups: [""]
  resources: [pods/log]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: lowlat-jobs
  namespace: {ns}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: lowlat-jobs
subjects:
- kind: ServiceAccount
  name: lowlat
  namespace: {ns}
"#
    );
    let scc = format!(
        r#"# OpenShift: the Jobs' pods are privileged, hostPID, hostNetwork: let the namespace's
# service accounts use the privileged SecurityContextConstraints
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: lowlat-scc-privileged
rules:
- apiGroups: [security.openshift.io]
  resources: [securitycontextconstraints]
  resourceNames: [privileged]
  verbs: [use]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: lowlat-scc-privileged
  namespace: {ns}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: lowlat-scc-privileged
subjects:
- kind: ServiceAccount
  name: default
  namespace: {ns}
- kind: ServiceAccount
  name: lowlat
  namespace: {ns}
"#
    );
    vec![OutFile::new("cluster-rbac.yaml", rbac), OutFile::new("openshift-scc.yaml", scc)]
}
