//! Every Performance Profile Creator case of NTO's fixture set
//! (`testdata/fixtures/nto/ppc-expected-profiles/profileN.{json,yaml}`) reproduced from the
//! fixture must-gathers and compared whole, the way NTO's own regression test does
//! (`ppc.go`, "performance profile creator regression tests"): both profiles are unmarshalled
//! into one typed model (field names matched case-insensitively, as Go's JSON decoding does;
//! label keys exactly) and compared as a whole, so a field PPC writes and lowlat leaves out
//! (or the other way round) fails the case.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_norway::Value;

/// A CPU set as the profile spells it; PPC prints `reserved: 0` unquoted, the CRD types it
/// as a string.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(untagged)]
enum CpuSetText {
    Text(String),
    Number(u64),
}

impl CpuSetText {
    fn text(&self) -> String {
        match self {
            CpuSetText::Text(s) => s.clone(),
            CpuSetText::Number(n) => n.to_string(),
        }
    }
}

fn cpus<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<CpuSetText>::deserialize(d)?.map(|c| c.text()))
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Profile {
    apiversion: String,
    kind: String,
    metadata: Metadata,
    spec: Spec,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    name: String,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    additionalkernelargs: Option<Vec<String>>,
    cpu: Option<Cpu>,
    hugepages: Option<Value>,
    machineconfiglabel: Option<BTreeMap<String, String>>,
    machineconfigpoolselector: Option<BTreeMap<String, String>>,
    net: Option<Net>,
    nodeselector: Option<BTreeMap<String, String>>,
    numa: Option<Numa>,
    realtimekernel: Option<RealTimeKernel>,
    workloadhints: Option<WorkloadHints>,
    globallydisableirqloadbalancing: Option<bool>,
    hardwaretuning: Option<Value>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Cpu {
    #[serde(default, deserialize_with = "cpus")]
    isolated: Option<String>,
    #[serde(default, deserialize_with = "cpus")]
    reserved: Option<String>,
    #[serde(default, deserialize_with = "cpus")]
    offlined: Option<String>,
    #[serde(default, deserialize_with = "cpus")]
    shared: Option<String>,
    balanceisolated: Option<bool>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Net {
    userlevelnetworking: Option<bool>,
    devices: Option<Value>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Numa {
    topologypolicy: Option<String>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RealTimeKernel {
    enabled: Option<bool>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadHints {
    highpowerconsumption: Option<bool>,
    realtime: Option<bool>,
    perpodpowermanagement: Option<bool>,
    mixedcpus: Option<bool>,
}

/// Maps whose keys are data (labels), not field names: matched exactly.
const LABEL_MAPS: [&str; 3] = ["nodeselector", "machineconfigpoolselector", "machineconfiglabel"];

/// Field names folded to lower case (Go's `encoding/json` matches them case-insensitively),
/// label keys left as they are.
fn fold_field_names(v: Value) -> Value {
    match v {
        Value::Mapping(m) => Value::Mapping(
            m.into_iter()
                .map(|(k, v)| {
                    let key = k.as_str().map(str::to_lowercase);
                    let v = if key.as_deref().is_some_and(|k| LABEL_MAPS.contains(&k)) {
                        v
                    } else {
                        fold_field_names(v)
                    };
                    (key.map_or(k, Value::String), v)
                })
                .collect(),
        ),
        Value::Sequence(s) => Value::Sequence(s.into_iter().map(fold_field_names).collect()),
        other => other,
    }
}

fn typed(text: &str, what: &Path) -> Profile {
    let docs = common::yaml_docs(text);
    assert_eq!(docs.len(), 1, "{}: expected one YAML document", what.display());
    let doc = docs.into_iter().next().unwrap();
    serde_norway::from_value(fold_field_names(doc))
        .unwrap_or_else(|e| panic!("{}: not a PerformanceProfile: {e}", what.display()))
}

/// The cases: every `profile*.json` with its `.yaml`.
fn cases() -> Vec<std::path::PathBuf> {
    let dir = common::testdata_dir().join("fixtures/nto/ppc-expected-profiles");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("profile"))
                && p.extension().is_some_and(|e| e == "json")
        })
        .collect();
    cases.sort();
    cases
}

#[test]
fn every_nto_ppc_case_is_reproduced_whole() {
    let cases = cases();
    assert_eq!(cases.len(), 19, "NTO's fixture set has 19 PPC cases");
    let mut failed = vec![];
    for json in &cases {
        let planned =
            plan::Request { ppc_args: Some(json.clone()), ..Default::default() }.plan().unwrap();
        let got_text = render::openshift::performance_profile_file(&planned.plan, None).contents;
        let got = typed(&got_text, json);
        let want_path = json.with_extension("yaml");
        let want = typed(&std::fs::read_to_string(&want_path).unwrap(), &want_path);
        if got != want {
            failed.push(format!(
                "{}:\n  got  {got:?}\n  want {want:?}",
                json.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} PPC cases differ:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
}

#[test]
fn the_comparison_catches_a_missing_field() {
    // The check has teeth: dropping `net` (what lowlat did before) fails it.
    let json = common::testdata_dir().join("fixtures/nto/ppc-expected-profiles/profile1.json");
    let mut planned =
        plan::Request { ppc_args: Some(json.clone()), ..Default::default() }.plan().unwrap();
    planned.plan.options.user_level_networking = None;
    let got =
        typed(&render::openshift::performance_profile_file(&planned.plan, None).contents, &json);
    let want_path = json.with_extension("yaml");
    let want = typed(&std::fs::read_to_string(&want_path).unwrap(), &want_path);
    assert_ne!(got, want);
    // Field names are matched case-insensitively (`perPodpowerManagement` in the fixture).
    assert_eq!(want.spec.workloadhints.unwrap().perpodpowermanagement, Some(false));
}

#[test]
fn flag_combinations_outside_the_fixtures() {
    // PPC's `makePerformanceProfileFrom`: ultra-low-latency sets both hints, the flags' own
    // values land in `net` and `numa`, `--disable-ht` adds `nosmt`.
    let dir = common::testdata_dir().join("fixtures/nto/must-gather/must-gather.bare-metal");
    let req = plan::Request {
        source: plan::Source::MustGather { dir, node: None },
        pool: Some("worker-cnf".into()),
        style: Some(plan::Style::Ppc),
        reserved: Some(4),
        rt_kernel: Some(true),
        no_smt: Some(true),
        power: Some(plan::Power::UltraLowLatency),
        topology_policy: Some(plan::TopologyPolicy::SingleNumaNode),
        user_level_networking: Some(true),
        name: Some("ull".into()),
        ..Default::default()
    };
    let planned = req.plan().unwrap();
    let text = render::openshift::performance_profile_file(&planned.plan, None).contents;
    let p = typed(&text, Path::new("ull"));
    assert_eq!(p.metadata.name, "ull");
    assert_eq!(p.spec.additionalkernelargs, Some(vec!["nosmt".to_string()]));
    let hints = p.spec.workloadhints.unwrap();
    assert_eq!(
        (hints.highpowerconsumption, hints.realtime, hints.perpodpowermanagement),
        (Some(true), Some(true), Some(false))
    );
    assert_eq!(p.spec.net.unwrap().userlevelnetworking, Some(true));
    assert_eq!(p.spec.numa.unwrap().topologypolicy.as_deref(), Some("single-numa-node"));
    assert_eq!(p.spec.realtimekernel.unwrap().enabled, Some(true));
}
