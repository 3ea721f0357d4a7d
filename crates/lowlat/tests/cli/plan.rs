//! CLI tests of `lowlat plan` on the fixture must-gathers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use crate::support::lowlat;
use predicates::prelude::*;

/// The repository's `testdata/` (public fixtures and CRD schemas; see `testdata/NOTICE.md`).
fn testdata_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
}

fn mg(name: &str) -> String {
    testdata_dir().join("fixtures/must-gather").join(name).display().to_string()
}

#[test]
fn lowlat_style_rounds_odd_counts_to_whole_cores_and_explains() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plan.yaml");
    lowlat()
        .args([
            "plan",
            "--must-gather",
            &mg("must-gather.bare-metal"),
            "--node",
            "worker1",
            "--reserved",
            "5",
            "--power",
            "low-latency",
            "--rt-kernel",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("rounded up to 3 whole cores"))
        .stdout(predicate::str::contains("housekeeping 0-2,40-42 (6 CPUs)"))
        .stdout(predicate::str::contains("H 0,40"))
        .stdout(predicate::str::contains("\x1b[").not());
    let yaml = std::fs::read_to_string(&out).unwrap();
    assert!(yaml.starts_with("schema_version: 1\n"), "{yaml}");
    assert!(yaml.contains("isolated: 3-39,43-79"), "{yaml}");
}

#[test]
fn mcp_name_picks_the_pools_node() {
    lowlat()
        .args([
            "plan",
            "--must-gather",
            &mg("must-gather.bare-metal"),
            "--mcp-name",
            "worker-cnf",
            "--yaml",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("host: worker1"))
        .stdout(predicate::str::contains("mcp_name: worker-cnf"));
    lowlat()
        .args(["plan", "--must-gather", &mg("must-gather.bare-metal"), "--mcp-name", "nosuch"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("failed to find the MCP nosuch")
                .and(predicate::str::contains("worker-cnf")),
        );
}

fn normalize(yaml: &str) -> Vec<String> {
    yaml.lines()
        .filter(|l| l.trim() != "---" && !l.trim().is_empty())
        .map(|l| l.replace(['\'', '"'], "").to_lowercase())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[test]
fn ppc_args_files_reproduce_ppcs_profiles() {
    // NTO's fixture set (the PPC lowlat follows); the render crate compares all 19 whole.
    let exp = testdata_dir().join("fixtures/nto/ppc-expected-profiles");
    for n in ["1", "1b", "2a", "3c", "4", "5", "6"] {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("plan.yaml");
        lowlat()
            .args(["plan", "--ppc-args"])
            .arg(exp.join(format!("profile{n}.json")))
            .arg("-o")
            .arg(&plan)
            .assert()
            .success();
        let out = lowlat()
            .args(["render", "--plan"])
            .arg(&plan)
            .arg("performance-profile")
            .assert()
            .success();
        let got = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let want = std::fs::read_to_string(exp.join(format!("profile{n}.yaml"))).unwrap();
        // Line sets, case folded: PPC orders and spells a few keys differently
        // (`perPodpowerManagement`); the render crate compares the typed specs whole.
        assert_eq!(normalize(&got), normalize(&want), "profile{n}");
    }
}

#[test]
fn ppc_flag_names_and_errors() {
    let bm = mg("must-gather.bare-metal");
    lowlat()
        .args([
            "plan",
            "--style",
            "ppc",
            "--must-gather-dir-path",
            &bm,
            "--mcp-name",
            "worker-cnf",
            "--reserved-cpu-count=4",
            "--rt-kernel=true",
            "--power-consumption-mode=low-latency",
            "--split-reserved-cpus-across-numa=true",
            "--yaml",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("reserved: 0-1,40-41"));
    lowlat()
        .args(["plan", "--style", "ppc", "--must-gather", &bm, "--mcp-name", "worker-cnf", "--reserved-cpu-count=3", "--rt-kernel=true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("failed to compute the reserved and isolated CPUs: can't allocate odd number of CPUs from a NUMA Node"));
    lowlat()
        .args(["plan", "--style", "ppc", "--must-gather", &bm, "--mcp-name", "worker-cnf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "missing required flags: --reserved-cpu-count, --rt-kernel",
        ));
    lowlat()
        .args([
            "plan",
            "--style",
            "ppc",
            "--must-gather",
            &bm,
            "--mcp-name",
            "worker-cnf",
            "--reserved-cpu-count=4",
            "--rt-kernel=true",
            "--power-consumption-mode=default",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "default power consumption mode is not available with real-time kernel",
        ));
    lowlat()
        .args([
            "plan",
            "--must-gather",
            &bm,
            "--node",
            "worker1",
            "--split-reserved-across-numa",
            "--topology-policy",
            "single-numa-node",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not appropriate to split reserved CPUs"));
}

#[test]
fn bad_input_names_the_problem_and_a_fix() {
    let bm = mg("must-gather.bare-metal");
    let node = ["--must-gather", bm.as_str(), "--node", "worker1"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--reserved-cpus", "0-1,200"], "CPUs 200 are not usable"),
        (vec!["--reserved-cpus", "0"], "core 0,40 is split"),
        (vec!["--isolated", "0-79"], "boot CPU 0"),
        (vec!["--reserved", "80"], "leaving nothing to isolate"),
        (
            vec!["--power", "fast"],
            "Valid values come from the set [default low-latency ultra-low-latency]",
        ),
        (vec!["--hugepages", "1G"], "write SIZE:COUNT[:NODE]"),
        (vec!["--near-device", "eth9"], "--near-device eth9"),
        (vec!["--offline", "0-1"], "boot CPU 0, which cannot be taken offline"),
    ];
    for (extra, msg) in cases {
        lowlat()
            .arg("plan")
            .args(node)
            .args(&extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg));
    }
    // Contradictory options are refused by the parser.
    lowlat()
        .arg("plan")
        .args(node)
        .args(["--reserved", "2", "--reserved-cpus", "0,40"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
    // A must-gather without the node.
    lowlat()
        .args(["plan", "--must-gather", &bm])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--node NAME").and(predicate::str::contains("worker1")));
    lowlat()
        .args(["plan", "--must-gather", &bm, "--node", "nosuch"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nosuch"));
}

/// A synthetic must-gather whose pool `worker-cnf` holds nodes `a` (worker1's snapshot) and
/// `b` (the snapshot of `b_from`).
fn pool_must_gather(dir: &std::path::Path, b_from: &str) -> PathBuf {
    let bm = PathBuf::from(mg("must-gather.bare-metal"));
    let find = |node: &str| -> PathBuf {
        let base = std::fs::read_dir(&bm).unwrap().next().unwrap().unwrap().path();
        base.join("nodes").join(node).join("sysinfo.tgz")
    };
    let root = dir.join("mg");
    let csr = root.join("cluster-scoped-resources");
    std::fs::create_dir_all(csr.join("core/nodes")).unwrap();
    std::fs::create_dir_all(csr.join("machineconfiguration.openshift.io/machineconfigpools"))
        .unwrap();
    for (n, from) in [("a", "worker1"), ("b", b_from)] {
        std::fs::write(
            csr.join(format!("core/nodes/{n}.yaml")),
            format!("metadata:\n  name: {n}\n  labels:\n    node-role.kubernetes.io/worker: \"\"\n    node-role.kubernetes.io/worker-cnf: \"\"\n"),
        )
        .unwrap();
        std::fs::create_dir_all(root.join("nodes").join(n)).unwrap();
        std::fs::copy(find(from), root.join("nodes").join(n).join("sysinfo.tgz")).unwrap();
    }
    std::fs::write(
        csr.join("machineconfiguration.openshift.io/machineconfigpools/worker-cnf.yaml"),
        "metadata:\n  name: worker-cnf\n  labels:\n    machineconfiguration.openshift.io/role: worker-cnf\nspec:\n  nodeSelector:\n    matchLabels:\n      node-role.kubernetes.io/worker-cnf: \"\"\n",
    )
    .unwrap();
    std::fs::write(
        csr.join("machineconfiguration.openshift.io/machineconfigpools/worker.yaml"),
        "metadata:\n  name: worker\n  labels:\n    pools.operator.machineconfiguration.openshift.io/worker: \"\"\nspec:\n  nodeSelector:\n    matchLabels:\n      node-role.kubernetes.io/worker: \"\"\n",
    )
    .unwrap();
    root
}

#[test]
fn pool_nodes_must_share_one_topology() {
    let dir = tempfile::tempdir().unwrap();
    let same = pool_must_gather(&dir.path().join("same"), "worker1");
    lowlat()
        .args(["plan", "--must-gather"])
        .arg(&same)
        .args(["--mcp-name", "worker-cnf", "--yaml"])
        .assert()
        .success()
        .stdout(predicate::str::contains("host: a"));
    let differ = pool_must_gather(&dir.path().join("differ"), "worker2");
    lowlat()
        .args(["plan", "--must-gather"])
        .arg(&differ)
        .args(["--mcp-name", "worker-cnf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "targeted nodes differ: nodes a and b have different topology",
        ));
}

#[test]
fn info_summarizes_the_cluster_like_ppc() {
    let sno = testdata_dir().join("fixtures/nto/must-gather/must-gather.sno");
    lowlat()
        .args(["plan", "--info", "--must-gather"])
        .arg(&sno)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "MCP 'master' nodes:\nNode: sno (NUMA cells: 1, HT: false)\nNUMA cell 0 : [0 1 2 3 4 5 6 7 8 9 10 11]\nCPU(s): 12\n---\nMCP 'worker' nodes:\n---\n",
        ));
    let out =
        lowlat().args(["plan", "--info", "--json", "--must-gather"]).arg(&sno).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v[0]["nodes"][0]["cpus_count"], 12);
    lowlat()
        .args(["plan", "--info"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--must-gather"));
}

/// tuna's habit: `lowlat plan … -o - | lowlat apply --plan -` — a plan read from stdin.
#[test]
fn a_plan_reads_from_stdin_with_dash() {
    let a = lowlat().args(["plan", "-o", "-"]).assert().success();
    let plan = a.get_output().stdout.clone();
    lowlat()
        .args(["apply", "--plan", "-", "--dry-run"])
        .write_stdin(plan.clone())
        .assert()
        .success()
        .stdout(predicates::str::contains("dry run: nothing is written"));
    lowlat()
        .args(["render", "--plan", "-", "cmdline"])
        .write_stdin(plan)
        .assert()
        .success()
        .stdout(predicates::str::contains("nohz_full="));
    lowlat()
        .args(["apply", "--plan", "-", "--dry-run"])
        .write_stdin("not: a plan\n")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("-:"));
}

/// `--plan -` on every command that takes a plan (the README's generated `--plan FILE` row
/// names them, checked against the CLI): the plan is read from stdin, never from a file
/// named `-`.
#[test]
fn every_command_that_takes_a_plan_reads_it_from_stdin_with_dash() {
    let on = crate::support::readme_commands_taking("`--plan FILE`");
    let plan = lowlat().args(["plan", "-o", "-"]).assert().success().get_output().stdout.clone();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("`check`", vec!["check", "--skip", "timer,noise,fsync,ticks", "--duration", "1s"]),
        ("`render`", vec!["render", "cmdline"]),
        ("`apply`", vec!["apply", "--dry-run"]),
        ("`verify`", vec!["verify"]),
        ("`status`", vec!["status"]),
        ("`cluster apply`", vec!["cluster", "apply", "--dry-run=client"]),
    ];
    for cmd in &on {
        assert!(cases.iter().any(|(c, _)| c == cmd), "{cmd} takes --plan: add it here");
    }
    // without the cluster feature `lowlat cluster` is a stub that says how to get it
    let built = |c: &str| cfg!(feature = "cluster") || !c.starts_with("`cluster");
    for (cmd, argv) in cases.iter().filter(|(c, _)| on.iter().any(|o| o == c) && built(c)) {
        let cwd = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let a = lowlat()
            .args(argv)
            .args(["--plan", "-"])
            .current_dir(cwd.path())
            .write_stdin(plan.clone())
            .timeout(std::time::Duration::from_secs(120))
            .assert();
        let out = a.get_output();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{cmd} --plan -: {stderr}");
        assert!(!stderr.contains("No such file"), "{cmd} looked for a file named -: {stderr}");
    }
}
