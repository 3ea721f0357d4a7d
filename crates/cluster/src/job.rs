//! The Job that runs lowlat on one node. Pure: a spec in, a `batch/v1` Job out.
//!
//! Pinned to the node by node affinity on `metadata.name` (what DaemonSets use: the scheduler
//! still decides, so an unschedulable node gets the scheduler's reason), tolerating every
//! taint, privileged (RT budget, `/proc/interrupts`, MSRs), `hostPID` and `hostNetwork` (lowlat
//! sees the node's tasks and IRQs), `dnsPolicy: None` (nothing resolves names), no
//! service-account token, `backoffLimit: 0`, a deadline and a TTL as safety nets should the
//! controller die.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Affinity, Container, HostPathVolumeSource, NodeAffinity, NodeSelector, NodeSelectorRequirement,
    NodeSelectorTerm, PodDNSConfig, PodSpec, PodTemplateSpec, ResourceRequirements,
    SecurityContext, Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::labels;

/// The container's name.
pub const CONTAINER: &str = "lowlat";
/// The volume holding the node's RT grant records ([`crate::rt::LEDGER_DIR`], same path on the
/// node and in the pod).
pub const LEDGER_VOLUME: &str = "rt-grants";

/// One node's Job.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: String,
    pub namespace: String,
    pub node: String,
    pub labels: BTreeMap<String, String>,
    pub image: String,
    pub pull_policy: crate::pod::PullPolicy,
    /// The container's command line.
    pub command: Vec<String>,
    /// Whole CPUs for a Guaranteed pod (requests = limits); `None`: Burstable (100m requested).
    pub guaranteed_cpus: Option<u32>,
    /// The Job's `activeDeadlineSeconds`.
    pub deadline_s: i64,
}

/// The Job object.
pub fn build(s: &Spec) -> Job {
    let mut annotations = BTreeMap::new();
    annotations.insert(labels::NODE_ANNOTATION.to_string(), s.node.clone());
    let meta = ObjectMeta {
        name: Some(s.name.clone()),
        namespace: Some(s.namespace.clone()),
        labels: Some(s.labels.clone()),
        annotations: Some(annotations.clone()),
        ..Default::default()
    };
    let q = |v: &str| Quantity(v.to_string());
    let resources = match s.guaranteed_cpus {
        Some(n) => {
            let r = BTreeMap::from([
                ("cpu".to_string(), q(&n.to_string())),
                ("memory".to_string(), q("256Mi")),
            ]);
            ResourceRequirements {
                requests: Some(r.clone()),
                limits: Some(r),
                ..Default::default()
            }
        }
        None => ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_string(), q("100m")),
                ("memory".to_string(), q("64Mi")),
            ])),
            ..Default::default()
        },
    };
    let container = Container {
        name: CONTAINER.to_string(),
        image: Some(s.image.clone()),
        image_pull_policy: Some(s.pull_policy.to_string()),
        command: Some(s.command.clone()),
        security_context: Some(SecurityContext { privileged: Some(true), ..Default::default() }),
        resources: Some(resources),
        working_dir: Some("/tmp".into()),
        volume_mounts: Some(vec![VolumeMount {
            name: LEDGER_VOLUME.into(),
            mount_path: crate::rt::LEDGER_DIR.into(),
            ..Default::default()
        }]),
        ..Default::default()
    };
    let affinity = Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_fields: Some(vec![NodeSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "In".into(),
                        values: Some(vec![s.node.clone()]),
                    }]),
                    ..Default::default()
                }],
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let pod = PodSpec {
        affinity: Some(affinity),
        tolerations: Some(vec![Toleration {
            operator: Some("Exists".into()),
            ..Default::default()
        }]),
        host_pid: Some(true),
        host_network: Some(true),
        dns_policy: Some("None".into()),
        dns_config: Some(PodDNSConfig {
            nameservers: Some(vec!["127.0.0.1".into()]),
            ..Default::default()
        }),
        automount_service_account_token: Some(false),
        enable_service_links: Some(false),
        restart_policy: Some("Never".into()),
        termination_grace_period_seconds: Some(30),
        containers: vec![container],
        volumes: Some(vec![Volume {
            name: LEDGER_VOLUME.into(),
            host_path: Some(HostPathVolumeSource {
                path: crate::rt::LEDGER_DIR.into(),
                type_: Some("DirectoryOrCreate".into()),
            }),
            ..Default::default()
        }]),
        ..Default::default()
    };
    Job {
        metadata: meta,
        spec: Some(JobSpec {
            backoff_limit: Some(0),
            active_deadline_seconds: Some(s.deadline_s),
            ttl_seconds_after_finished: Some(3600),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(s.labels.clone()),
                    annotations: Some(annotations),
                    ..Default::default()
                }),
                spec: Some(pod),
            },
            ..Default::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_privileged_and_labelled() {
        let spec = Spec {
            name: "lowlat-check-0a1b2c3d-vm-0".into(),
            namespace: "default".into(),
            node: "vm".into(),
            labels: labels::for_node("0a1b2c3d", "check", 0),
            image: "localhost/lowlat:0.1.0".into(),
            pull_policy: crate::pod::PullPolicy::Never,
            command: vec!["lowlat".into(), "cluster".into(), "agent".into()],
            guaranteed_cpus: None,
            deadline_s: 120,
        };
        let v = serde_json::to_value(build(&spec)).unwrap();
        let pod = &v["spec"]["template"]["spec"];
        assert_eq!(pod["hostPID"], true);
        assert_eq!(pod["hostNetwork"], true);
        assert_eq!(pod["containers"][0]["securityContext"]["privileged"], true);
        assert_eq!(pod["containers"][0]["imagePullPolicy"], "Never");
        let term = &pod["affinity"]["nodeAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
            ["matchFields"][0];
        assert_eq!(term["key"], "metadata.name");
        assert_eq!(term["values"][0], "vm");
        assert_eq!(v["spec"]["template"]["metadata"]["labels"][labels::RUN], "0a1b2c3d");
        assert_eq!(v["metadata"]["labels"][labels::RUN], "0a1b2c3d");
        assert_eq!(v["spec"]["backoffLimit"], 0);
        // the RT grant records outlive the pod: a hostPath at the same path
        assert_eq!(pod["volumes"][0]["hostPath"]["path"], crate::rt::LEDGER_DIR);
        assert_eq!(pod["volumes"][0]["hostPath"]["type"], "DirectoryOrCreate");
        assert_eq!(pod["containers"][0]["volumeMounts"][0]["mountPath"], crate::rt::LEDGER_DIR);
        let g = build(&Spec { guaranteed_cpus: Some(2), ..spec });
        let c = &g.spec.unwrap().template.spec.unwrap().containers[0];
        let r = c.resources.as_ref().unwrap();
        assert_eq!(r.requests, r.limits, "Guaranteed: requests = limits");
    }
}
