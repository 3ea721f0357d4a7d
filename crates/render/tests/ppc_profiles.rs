//! Every Performance Profile Creator case in `testdata/fixtures/ppc-expected/profileN.{json,yaml}`
//! reproduced from the fixture must-gathers, compared with PPC's output as parsed YAML.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use plan::cluster;
use plan::ppc::PpcInput;
use plan::{PlanOptions, PlanRequest, Power, Style, TopologyPolicy};
use serde_norway::Value;

fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a Value> {
    args.get(key)
}

#[test]
fn every_ppc_fixture_profile_is_reproduced() {
    let dir = common::testdata_dir().join("fixtures/ppc-expected");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("profile"))
                && p.extension().is_some_and(|e| e == "json")
        })
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "expected the five PPC fixture cases, found {}", cases.len());
    for json in cases {
        let args: Value = serde_norway::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let mg = common::must_gather(
            arg(&args, "must-gather-dir-path").and_then(Value::as_str).unwrap(),
        );
        let pool_name = arg(&args, "mcp-name").and_then(Value::as_str).unwrap();
        let cl = cluster::load(&mg).unwrap();
        let pool = cl.pool(pool_name).unwrap().clone();
        let nodes = cluster::nodes_for_pool(&pool, &cl.pools, &cl.nodes);
        assert!(!nodes.is_empty(), "{}: pool {pool_name} has no nodes", json.display());
        let host = common::host(mg.file_name().unwrap().to_str().unwrap(), &nodes[0].name);
        let b = |k: &str| arg(&args, k).and_then(Value::as_bool).unwrap_or(false);
        let options = PlanOptions {
            style: Style::Ppc,
            power: Power::Default,
            rt_kernel: b("rt-kernel"),
            no_smt: b("disable-ht"),
            split_reserved_across_numa: b("split-reserved-cpus-across-numa"),
            topology_policy: Some(TopologyPolicy::Restricted),
            mcp_name: Some(pool.name.clone()),
            node_selector: cluster::node_selector(&pool),
            mcp_selector: Some(cluster::pool_selector(&pool, &cl.pools).unwrap()),
            user_level_networking: arg(&args, "user-level-networking").and_then(Value::as_bool),
            ..Default::default()
        };
        let req = PlanRequest {
            name: "performance".into(),
            host_name: Some(nodes[0].name.clone()),
            options,
            ppc: PpcInput {
                reserved_cpu_count: arg(&args, "reserved-cpu-count")
                    .and_then(Value::as_i64)
                    .unwrap(),
                split_reserved_cpus_across_numa: b("split-reserved-cpus-across-numa"),
                disable_ht: b("disable-ht"),
                ..Default::default()
            },
            ..Default::default()
        };
        let plan = plan::make_plan(&host, &req).unwrap();
        let got = render::openshift::performance_profile(&plan, None);
        let want_text = std::fs::read_to_string(json.with_extension("yaml")).unwrap();
        let mut want = common::yaml_docs(&want_text).remove(0);
        // PPC prints `reserved: 0` unquoted; the CRD types CPU sets as strings.
        if let Some(Value::Mapping(cpu)) = want.get_mut("spec").and_then(|s| s.get_mut("cpu")) {
            for (_, v) in cpu.iter_mut() {
                if let Value::Number(n) = v {
                    *v = Value::String(n.to_string());
                }
            }
        }
        assert_eq!(got, want, "{}: rendered PerformanceProfile differs from PPC's", json.display());
    }
}
