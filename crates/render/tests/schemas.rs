//! Every OpenShift manifest lowlat renders validates against the real CRDs'
//! `openAPIV3Schema` (`testdata/schemas/`), and a broken manifest does not.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use render::{render, RenderOptions, Target};
use serde_json::Value as Json;

fn crd_schema(file: &str, version: &str) -> Json {
    let path = common::testdata_dir().join("schemas").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let crd: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let crd: Json = serde_json::to_value(crd).unwrap();
    let versions = crd["spec"]["versions"].as_array().unwrap();
    let v = versions
        .iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("{file}: no version {version}"));
    v["schema"]["openAPIV3Schema"].clone()
}

fn schema_for(kind: &str) -> Json {
    match kind {
        "MachineConfig" => crd_schema("0000_80_machine-config_01_machineconfigs.crd.yaml", "v1"),
        "MachineConfigPool" => {
            crd_schema("0000_80_machine-config_01_machineconfigpools.crd.yaml", "v1")
        }
        "KubeletConfig" => {
            crd_schema("0000_80_machine-config_01_kubeletconfigs-Default.crd.yaml", "v1")
        }
        "Tuned" => crd_schema("20-tuned.crd.yaml", "v1"),
        "PerformanceProfile" => crd_schema("20-performance-profile.crd.yaml", "v2"),
        other => panic!("no CRD for kind {other}"),
    }
}

fn errors(doc: &Json) -> Vec<String> {
    let kind = doc["kind"].as_str().unwrap_or_default().to_string();
    let schema = schema_for(&kind);
    let v = jsonschema::validator_for(&schema).unwrap();
    v.iter_errors(doc).map(|e| format!("{kind}: {e} at {}", e.instance_path())).collect()
}

#[test]
fn openshift_manifests_validate_against_the_crds() {
    let mut kinds = std::collections::BTreeSet::new();
    for (case, plan) in common::cases() {
        for target in [Target::Openshift, Target::PerformanceProfile] {
            for f in render(&plan, target, &RenderOptions::default()).unwrap() {
                if !f.name.ends_with(".yaml") {
                    continue;
                }
                for doc in common::yaml_docs(&f.contents) {
                    let json: Json = serde_json::to_value(doc).unwrap();
                    let kind = json["kind"].as_str().unwrap_or_default().to_string();
                    kinds.insert(kind.clone());
                    if kind == "RuntimeClass" {
                        // A built-in kind (node.k8s.io/v1), no CRD: its required fields.
                        assert_eq!(json["apiVersion"], "node.k8s.io/v1", "{case}");
                        assert_eq!(json["handler"], "high-performance", "{case}");
                        assert!(json["metadata"]["name"].is_string(), "{case}");
                        continue;
                    }
                    let errs = errors(&json);
                    assert!(errs.is_empty(), "{case}/{}: {errs:?}", f.name);
                }
            }
        }
    }
    let want: std::collections::BTreeSet<String> = [
        "KubeletConfig",
        "MachineConfig",
        "MachineConfigPool",
        "PerformanceProfile",
        "RuntimeClass",
        "Tuned",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(kinds, want);
}

#[test]
fn a_broken_manifest_is_caught() {
    let (_, plan) = common::cases().remove(0);
    let files = render(&plan, Target::Openshift, &RenderOptions::default()).unwrap();
    let mcp = files.iter().find(|f| f.name == "01-machineconfigpool.yaml").unwrap();
    let mut doc: Json = serde_json::to_value(common::yaml_docs(&mcp.contents).remove(0)).unwrap();
    doc["spec"]["paused"] = Json::String("yes".into());
    assert!(!errors(&doc).is_empty());
    let pp = render(&plan, Target::PerformanceProfile, &RenderOptions::default()).unwrap();
    let mut doc: Json = serde_json::to_value(common::yaml_docs(&pp[0].contents).remove(0)).unwrap();
    doc["spec"]["realTimeKernel"]["enabled"] = Json::String("yes".into());
    assert!(!errors(&doc).is_empty(), "a string where the CRD wants a boolean must fail");
}

#[test]
fn the_latency_test_fits_beside_its_load_on_both_paths() {
    for (case, plan) in common::cases() {
        let opts = RenderOptions::default();
        let files = render(&plan, Target::K8sLatencyTest, &opts).unwrap();
        let docs = |name: &str| -> Vec<Json> {
            let f = files.iter().find(|f| f.name == name).unwrap();
            common::yaml_docs(&f.contents)
                .into_iter()
                .map(|d| serde_json::to_value(d).unwrap())
                .collect()
        };
        let job = docs("latency-test.yaml").remove(0);
        let load = docs("load.yaml").remove(0);
        let pod = &job["spec"]["template"]["spec"];
        let test_cpus: usize =
            pod["containers"][0]["resources"]["requests"]["cpu"].as_str().unwrap().parse().unwrap();
        let replicas = load["spec"]["replicas"].as_u64().unwrap() as usize;
        // Every exclusive CPU comes out of the isolated (allocatable) ones, with headroom.
        assert!(
            test_cpus + replicas < plan.isolated.len().max(test_cpus + 1),
            "{case}: {test_cpus} + {replicas} of {}",
            plan.isolated.len()
        );
        // Both on the test's node.
        assert_eq!(pod["nodeSelector"], load["spec"]["template"]["spec"]["nodeSelector"], "{case}");
        // The RuntimeClass the Job names is the one both OpenShift paths create.
        let rc = pod["runtimeClassName"].as_str().unwrap();
        let mc_files = render(&plan, Target::Openshift, &opts).unwrap();
        let rc_file = mc_files.iter().find(|f| f.name == "05-runtimeclass.yaml").unwrap();
        let rc_doc: Json =
            serde_json::to_value(common::yaml_docs(&rc_file.contents).remove(0)).unwrap();
        assert_eq!(rc_doc["metadata"]["name"], rc, "{case}");
        // Access: the ServiceAccount the pod runs as is bound to the privileged SCC, and the
        // namespace admits privileged pods.
        let access = docs("namespace.yaml");
        assert_eq!(
            access[0]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
            "privileged"
        );
        assert_eq!(access[1]["metadata"]["name"], pod["serviceAccountName"], "{case}");
        assert_eq!(access[2]["roleRef"]["name"], "system:openshift:scc:privileged");
        // The cyclictest text sits next to the JSON.
        let script = pod["containers"][0]["command"][2].as_str().unwrap();
        assert!(script.contains("--cyclictest --json \"$base.json\" > \"$base.out\""), "{script}");
    }
}

#[test]
fn the_performance_patch_tuned_validates() {
    use plan::partition::{CpuRequest, PartitionRequest};
    let w1 = common::host("must-gather.bare-metal", "worker1");
    let plan = plan::make_plan(
        &w1,
        &plan::PlanRequest {
            name: "knobs".into(),
            options: plan::PlanOptions {
                power: plan::Power::LowLatency,
                busy_poll_us: Some(50),
                idle_limit_us: Some(80),
                ..Default::default()
            },
            partition: PartitionRequest {
                reserved: Some(CpuRequest::Count(4)),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .unwrap();
    let files = render(&plan, Target::PerformanceProfile, &RenderOptions::default()).unwrap();
    assert_eq!(files.len(), 2);
    for f in &files {
        for doc in common::yaml_docs(&f.contents) {
            let json: Json = serde_json::to_value(doc).unwrap();
            let errs = errors(&json);
            assert!(errs.is_empty(), "{}: {errs:?}", f.name);
        }
    }
}
