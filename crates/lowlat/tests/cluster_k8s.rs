//! `lowlat cluster snapshot` and `lowlat cluster apply` from the command line, against the real
//! two-kubelet cluster of `ci/k8s/` (brought up by CI's k8s part or by hand):
//!
//! ```sh
//! image/build.sh && ci/k8s/build.sh && ci/k8s/up.sh
//! source ci/k8s/env.sh && cargo test -p lowlat --test cluster_k8s -- --include-ignored
//! ci/k8s/down.sh
//! ```
//!
//! The target has `test = false` (the workspace run happens before the cluster is up); every
//! test is `#[ignore]` too and fails loudly when the cluster's coordinates are missing. `kubectl`
//! (on `PATH` after `source ci/k8s/env.sh`) is the independent observer: it labels nodes, plays
//! the foreign field manager, and reads back what lowlat stored.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test helpers")]

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use assert_cmd::Command;

/// The CLI tests' shared helpers (this target uses the JUnit check).
#[path = "cli/support.rs"]
#[allow(dead_code, reason = "this target uses one helper of the CLI tests' set")]
mod support;

static SERIAL: Mutex<()> = Mutex::new(());

fn env(name: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!(
            "{name} is not set: bring the cluster up (ci/k8s/up.sh) and `source ci/k8s/env.sh` first"
        ),
    }
}

fn real_nodes() -> Vec<String> {
    let nodes: Vec<String> =
        env("LOWLAT_K8S_NODES").split_whitespace().map(str::to_string).collect();
    assert!(nodes.len() >= 2, "the cluster has {} kubelet-backed node(s), want 2", nodes.len());
    nodes
}

fn lowlat() -> Command {
    let mut c = Command::cargo_bin("lowlat").unwrap();
    c.env("NO_COLOR", "1").env("COLUMNS", "120").env("KUBECONFIG", env("KUBECONFIG"));
    c
}

/// kubectl with the cluster's kubeconfig; panics with its stderr unless it succeeds.
fn kubectl(args: &[&str], stdin: Option<&str>) -> String {
    let mut c = std::process::Command::new("kubectl");
    c.args(args).env("KUBECONFIG", env("KUBECONFIG"));
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().expect("kubectl not on PATH: `source ci/k8s/env.sh`");
    {
        use std::io::Write as _;
        let mut w = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            w.write_all(s.as_bytes()).unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Labels the real nodes for one test; takes the label off on drop.
struct Labelled {
    key: String,
    nodes: Vec<String>,
}

impl Labelled {
    fn new(tag: &str) -> (Self, String) {
        let key = "lowlat.test/cli".to_string();
        let value = format!("{tag}-{}", std::process::id());
        let nodes = real_nodes();
        for n in &nodes {
            kubectl(&["label", "--overwrite", "node", n, &format!("{key}={value}")], None);
        }
        (Self { key: key.clone(), nodes }, format!("{key}={value}"))
    }
}

impl Drop for Labelled {
    fn drop(&mut self) {
        for n in &self.nodes {
            let _ = std::process::Command::new("kubectl")
                .args(["label", "node", n, &format!("{}-", self.key)])
                .env("KUBECONFIG", env("KUBECONFIG"))
                .output();
        }
    }
}

fn labelled_leftovers() -> String {
    kubectl(&["get", "jobs,pods", "-A", "-l", "lowlat.io/run", "-o", "name"], None)
}

#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn nodes_prints_kubectls_output_formats() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (fx, selector) = Labelled::new("nodes-o");
    let run = |o: &[&str]| {
        let a = lowlat().args(["cluster", "nodes", "-l", &selector]).args(o).assert().success();
        String::from_utf8_lossy(&a.get_output().stdout).into_owned()
    };
    let table = run(&[]);
    let wide = run(&["-o", "wide"]);
    assert!(table.starts_with("NAME ") && !table.contains("OS-IMAGE"), "{table}");
    assert!(wide.contains("CGROUP-DRIVER") && wide.contains("OS-IMAGE"), "{wide}");
    let names = run(&["-o", "name"]);
    let yaml = run(&["-o", "yaml"]);
    let json: serde_json::Value = serde_json::from_str(&run(&["-o", "json"])).unwrap();
    assert_eq!(json.as_array().map(Vec::len), Some(fx.nodes.len()), "{json}");
    for n in &fx.nodes {
        assert!(names.contains(&format!("node/{n}\n")), "{names}");
        assert!(yaml.contains(&format!("name: {n}")), "{yaml}");
        assert!(wide.contains(n.as_str()), "{wide}");
    }
}

#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn snapshot_of_both_nodes_reads_back_as_a_must_gather() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (fx, selector) = Labelled::new("snapshot");
    let dir = tempfile::tempdir().unwrap();
    let mg = dir.path().join("must-gather");
    let out = lowlat()
        .args(["cluster", "snapshot", "-l", &selector, "--start-timeout", "60s", "--image"])
        .arg(env("LOWLAT_IMAGE"))
        .arg("-o")
        .arg(&mg)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(&format!("{} of {} node(s) captured", fx.nodes.len(), fx.nodes.len())),
        "{out}"
    );
    for n in &fx.nodes {
        let tgz = mg.join("nodes").join(n).join("sysinfo.tgz");
        assert!(tgz.is_file(), "{} missing; stdout: {out}", tgz.display());
    }
    // Without --node, inspect names the nodes the must-gather holds: both of them.
    let err = lowlat().args(["inspect", "--must-gather"]).arg(&mg).assert().code(2);
    let err = String::from_utf8_lossy(&err.get_output().stderr).into_owned();
    for n in &fx.nodes {
        assert!(err.contains(n.as_str()), "node {n} not listed: {err}");
    }
    // Every node reads back: the cluster's nodes are this machine, so what each snapshot holds
    // is this machine's CPUs and hostname.
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    for n in &fx.nodes {
        let json = lowlat()
            .args(["inspect", "--json", "--node", n, "--must-gather"])
            .arg(&mg)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["source"]["kind"], "must-gather", "{n}: {}", v["source"]);
        assert_eq!(v["source"]["node"], n.as_str(), "{n}: {}", v["source"]);
        assert_eq!(v["cpus"]["online"], online.trim(), "{n}: cpus {}", v["cpus"]);
        assert_eq!(v["hostname"], hostname.trim(), "{n}");
        assert!(
            v["tasks"].as_array().is_some_and(|t| t.len() > 10),
            "{n}: the snapshot holds no task list (hostPID?)"
        );
    }
    // The plain snapshot file reads with --root as well.
    let tgz = mg.join("nodes").join(&fx.nodes[0]).join("sysinfo.tgz");
    let json = lowlat()
        .args(["inspect", "--json", "--root"])
        .arg(&tgz)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["cpus"]["online"], online.trim());
    assert_eq!(labelled_leftovers(), "", "the snapshot Jobs were not cleaned up");
}

/// The repository's copy of the PerformanceProfile CRD (see `testdata/NOTICE.md`).
fn install_performance_profile_crd() {
    let crd = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/schemas/20-performance-profile.crd.yaml");
    kubectl(
        &["apply", "--server-side", "--force-conflicts", "--field-manager=lowlat-test", "-f", "-"],
        Some(&std::fs::read_to_string(crd).unwrap()),
    );
    kubectl(
        &[
            "wait",
            "--for",
            "condition=established",
            "--timeout=30s",
            "crd/performanceprofiles.performance.openshift.io",
        ],
        None,
    );
}

/// A plan named `name` (the PerformanceProfile is named after the plan), in `dir`.
fn plan_named(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cluster/tests/fixtures/plan.yaml");
    let text = std::fs::read_to_string(src).unwrap();
    assert!(text.contains("\nname: lowlat\n"), "the fixture plan changed");
    let p = dir.join("plan.yaml");
    std::fs::write(&p, text.replacen("\nname: lowlat\n", &format!("\nname: {name}\n"), 1)).unwrap();
    p
}

/// Deletes the PerformanceProfile on drop.
struct Profile(String);

impl Drop for Profile {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kubectl")
            .args(["delete", "--ignore-not-found", "performanceprofile", &self.0])
            .env("KUBECONFIG", env("KUBECONFIG"))
            .output();
    }
}

fn apply(plan: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    lowlat()
        .args(["cluster", "apply", "--target", "performance-profile", "--json", "--plan"])
        .arg(plan)
        .args(extra)
        .assert()
}

fn rows(a: &assert_cmd::assert::Assert) -> Vec<serde_json::Value> {
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

fn live(name: &str) -> serde_json::Value {
    serde_json::from_str(&kubectl(
        &["get", "performanceprofile", name, "-o", "json", "--show-managed-fields"],
        None,
    ))
    .unwrap()
}

/// Who owns `spec.cpu.reserved` (the managers whose fieldsV1 name it).
fn owners_of_reserved(obj: &serde_json::Value) -> Vec<String> {
    obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["fieldsV1"]["f:spec"]["f:cpu"].get("f:reserved").is_some())
        .map(|m| m["manager"].as_str().unwrap().to_string())
        .collect()
}

#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn apply_is_a_dry_run_by_default_then_creates_is_idempotent_and_respects_other_managers() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    install_performance_profile_crd();
    let dir = tempfile::tempdir().unwrap();
    let name = format!("lowlat-cli-{}", std::process::id());
    let plan = plan_named(dir.path(), &name);
    let _cleanup = Profile(name.clone());

    // 1. the default: a server-side dry run that stores nothing
    let a = apply(&plan, &[]).success();
    let r = rows(&a);
    assert_eq!(r.len(), 1, "{r:#?}");
    assert_eq!(
        (r[0]["kind"].as_str(), r[0]["name"].as_str()),
        (Some("PerformanceProfile"), Some(name.as_str()))
    );
    assert_eq!(r[0]["action"], "create");
    let absent =
        kubectl(&["get", "performanceprofile", "--ignore-not-found", "-o", "name", &name], None);
    assert_eq!(absent, "", "a dry run stored the object");

    // 2. for real: created, with field manager lowlat (server-side apply)
    let r = rows(&apply(&plan, &["--dry-run", "none"]).success());
    assert_eq!(r[0]["action"], "create", "{r:#?}");
    let obj = live(&name);
    let managers: Vec<(&str, &str)> = obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["manager"].as_str().unwrap(), m["operation"].as_str().unwrap()))
        .collect();
    assert_eq!(managers, [("lowlat", "Apply")], "{managers:?}");
    let version = obj["metadata"]["resourceVersion"].clone();

    // 3. again: nothing to do, nothing written
    let r = rows(&apply(&plan, &["--dry-run", "none"]).success());
    assert_eq!(r[0]["action"], "unchanged", "{r:#?}");
    assert_eq!(live(&name)["metadata"]["resourceVersion"], version, "a no-op apply wrote");

    // 4. another manager takes spec.cpu.reserved over
    let theirs = serde_json::json!({
        "apiVersion": obj["apiVersion"], "kind": "PerformanceProfile",
        "metadata": {"name": name}, "spec": {"cpu": {"reserved": "0-1"}}
    });
    assert_ne!(obj["spec"]["cpu"]["reserved"], "0-1", "pick another value for the test");
    kubectl(
        &["apply", "--server-side", "--force-conflicts", "--field-manager=someone-else", "-f", "-"],
        Some(&theirs.to_string()),
    );
    assert_eq!(owners_of_reserved(&live(&name)), ["someone-else"]);
    let version = live(&name)["metadata"]["resourceVersion"].clone();
    // without --force-conflicts: the API server's conflict, exit 3, nothing changed
    let a = apply(&plan, &["--dry-run", "none"]).code(3);
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(err.contains("conflict") && err.contains("--force-conflicts"), "{err}");
    assert!(err.contains("someone-else"), "the message should name the other manager: {err}");
    let now = live(&name);
    assert_eq!(now["metadata"]["resourceVersion"], version);
    assert_eq!(now["spec"]["cpu"]["reserved"], "0-1");
    // with it: lowlat's value is back and the field is lowlat's again
    let r = rows(&apply(&plan, &["--dry-run", "none", "--force-conflicts"]).success());
    assert_eq!(r[0]["action"], "update", "{r:#?}");
    assert!(r[0]["changes"].as_array().unwrap().iter().any(|c| c == "spec.cpu.reserved"), "{r:#?}");
    let now = live(&name);
    assert_eq!(now["spec"]["cpu"]["reserved"], obj["spec"]["cpu"]["reserved"]);
    assert_eq!(owners_of_reserved(&now), ["lowlat"]);
}

/// Each kubelet's live CPU manager settings (configz through the API server, read by kubectl):
/// (node, policy, reservedSystemCPUs).
fn cpu_managers(nodes: &[String]) -> Vec<(String, String, String)> {
    nodes
        .iter()
        .map(|n| {
            let raw = kubectl(&["get", "--raw", &format!("/api/v1/nodes/{n}/proxy/configz")], None);
            let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
            let k = &v["kubeletconfig"];
            let s = |f: &str| k[f].as_str().unwrap_or("").to_string();
            (n.clone(), s("cpuManagerPolicy"), s("reservedSystemCPUs"))
        })
        .collect()
}

/// The static kubelet's checkpoint (`cpu_manager_state` in its root dir, ci/k8s layout: node 1
/// in $LOWLAT_K8S_STATE/kubelet, node I in $LOWLAT_K8S_STATE/nI/kubelet): the CPUs it assigned
/// to the container `lowlat` of pod `uid`.
fn checkpointed_cpus(node: &str, uid: &str) -> Option<String> {
    let i = real_nodes().iter().position(|n| n == node).unwrap();
    let state = PathBuf::from(env("LOWLAT_K8S_STATE"));
    let dir = if i == 0 { state } else { state.join(format!("n{}", i + 1)) };
    let text = std::fs::read_to_string(dir.join("kubelet/cpu_manager_state")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["entries"][uid]["lowlat"].as_str().map(str::to_string)
}

fn cpu_set(list: &str) -> std::collections::BTreeSet<u32> {
    let mut out = std::collections::BTreeSet::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        out.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap());
    }
    out
}

#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn guaranteed_check_measures_on_the_exclusive_cpu_and_says_shared_where_it_is_not() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (fx, selector) = Labelled::new("guaranteed");
    let managers = cpu_managers(&fx.nodes);
    let (stat, reserved) = match managers.iter().find(|m| m.1 == "static") {
        Some(m) => (m.0.clone(), m.2.clone()),
        None => panic!("no kubelet runs the static CPU manager ({managers:?}): ci/k8s/up.sh gives the first node one"),
    };
    let shared = managers
        .iter()
        .find(|m| m.1 == "none")
        .unwrap_or_else(|| panic!("no kubelet with CPU manager policy none: {managers:?}"))
        .0
        .clone();
    // the static node's exclusive pool: online minus reserved (this machine's CPUs: both
    // kubelets run here). On the 2-vCPU CI machine with reservedSystemCPUs 0: CPU 1.
    let online = cpu_set(&std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap());
    let pool: std::collections::BTreeSet<u32> =
        online.difference(&cpu_set(&reserved)).copied().collect();
    assert!(
        !pool.is_empty(),
        "no CPU left for exclusive use: online {online:?}, reserved {reserved}"
    );

    let out = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lowlat"))
        .args(["cluster", "check", "-l", &selector, "--guaranteed-cpus", "1", "--duration", "3s"])
        .args(["--threshold", "10ms", "--start-timeout", "60s", "--image", &env("LOWLAT_IMAGE")])
        .arg("--out")
        .arg(out.path())
        .arg("--junit")
        .arg(out.path().join("fleet.junit.xml"))
        .env("KUBECONFIG", env("KUBECONFIG"))
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The independent observer, while the pod on the static node runs: its QoS class in the
    // API, and the CPU the kubelet's checkpoint assigned to its container.
    let mut seen: Option<(String, String)> = None; // (qosClass, checkpointed CPUs)
    let t0 = std::time::Instant::now();
    while seen.is_none() && t0.elapsed() < std::time::Duration::from_secs(90) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        let pods: serde_json::Value = serde_json::from_str(&kubectl(
            &["get", "pods", "-l", "lowlat.io/run", "-o", "json"],
            None,
        ))
        .unwrap();
        for p in pods["items"].as_array().unwrap() {
            if p["spec"]["nodeName"] != stat.as_str() || p["status"]["phase"] != "Running" {
                continue;
            }
            let uid = p["metadata"]["uid"].as_str().unwrap();
            if let Some(cpus) = checkpointed_cpus(&stat, uid) {
                let qos = p["status"]["qosClass"].as_str().unwrap_or("").to_string();
                seen = Some((qos, cpus));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let (qos, checkpointed) = seen.unwrap_or_else(|| {
        panic!("never saw the static node's pod Running with a CPU in its kubelet's checkpoint:\n{stdout}")
    });
    assert_eq!(qos, "Guaranteed");
    let checkpointed = cpu_set(&checkpointed);
    assert_eq!(checkpointed.len(), 1, "{checkpointed:?}");
    assert!(checkpointed.is_subset(&pool), "{checkpointed:?} not in the exclusive pool {pool:?}");
    // exit 0 or 1 (the shared node is WARN, the timer under a 10 ms threshold passes): never a
    // usage or API error
    assert!(matches!(output.status.code(), Some(0 | 1)), "{:?}\n{stdout}", output.status);

    let fleet: cluster::model::Fleet =
        serde_json::from_slice(&std::fs::read(out.path().join("fleet.json")).unwrap()).unwrap();
    let row = |n: &str| fleet.nodes.iter().find(|r| r.node == n).unwrap().clone();

    // the static node: Guaranteed, exactly the checkpointed CPU, measured there, exclusive
    let r = row(&stat);
    assert_eq!(r.status, cluster::model::Status::Completed, "{r:#?}");
    let c = r.cpus.as_ref().unwrap_or_else(|| panic!("{stat}: no cpus in its row: {r:#?}"));
    assert_eq!(c.qos_class.as_deref(), Some("Guaranteed"), "{c:#?}");
    assert_eq!(c.requested, Some(1));
    assert_eq!(c.cpu_manager_policy.as_deref(), Some("static"));
    let allowed = c.allowed.as_ref().unwrap();
    assert_eq!(cpu_set(&allowed.to_list()), checkpointed, "the pod's own cpuset vs the checkpoint");
    let measured = c.measured.as_ref().unwrap();
    assert!(
        !measured.is_empty() && measured.is_subset(allowed),
        "measured {measured} in {allowed}"
    );
    assert_eq!(c.placement, cluster::cpus::Placement::Exclusive, "{c:#?}");
    assert_eq!(r.realtime, Some(true), "{:#?}", r.rt_budget);
    let want = format!(
        "PASS: measured on CPU {allowed}, exclusive: CPU {allowed} given to this container alone"
    );
    assert!(r.headlines.iter().any(|h| h.starts_with(&want)), "{:?}", r.headlines);
    assert!(stdout.contains(&format!("CPUs {allowed}: exclusive")), "{stdout}");

    // the node with policy none: Guaranteed too, but on every CPU: said, and not a PASS
    let r = row(&shared);
    assert_eq!(r.status, cluster::model::Status::Completed, "{r:#?}");
    let c = r.cpus.as_ref().unwrap();
    assert_eq!(c.qos_class.as_deref(), Some("Guaranteed"), "{c:#?}");
    assert_eq!(c.placement, cluster::cpus::Placement::Shared, "{c:#?}");
    let all = c.allowed.as_ref().unwrap();
    assert_eq!(cpu_set(&all.to_list()), online, "{c:#?}");
    assert!(c.detail.contains("CPU manager policy is 'none'"), "{}", c.detail);
    assert_ne!(r.verdict, cluster::model::Verdict::Pass, "{r:#?}");
    assert!(
        r.headlines.iter().any(|h| h.starts_with("WARN: CPUs NOT EXCLUSIVE")),
        "{:?}",
        r.headlines
    );
    assert!(stdout.contains(&format!("CPUs {all}: NOT EXCLUSIVE")), "{stdout}");
    let html = std::fs::read_to_string(out.path().join("fleet-report.html")).unwrap();
    assert!(
        html.contains(" NOT EXCLUSIVE</td>") && html.contains(" exclusive</td>"),
        "fleet report"
    );
    // JUnit for CI: a suite per node, named by its host.
    support::assert_junit_valid(&out.path().join("fleet.junit.xml"));
    let junit = std::fs::read_to_string(out.path().join("fleet.junit.xml")).unwrap();
    for n in &fx.nodes {
        assert!(junit.contains(&format!("hostname=\"{n}\"")), "{n}: {junit}");
    }
    assert_eq!(labelled_leftovers(), "");
}

#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn guaranteed_cpus_beyond_a_nodes_allocatable_are_refused_with_the_numbers() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (fx, selector) = Labelled::new("too-many-cpus");
    let alloc: Vec<(String, String)> = fx
        .nodes
        .iter()
        .map(|n| {
            let a = kubectl(&["get", "node", n, "-o", "jsonpath={.status.allocatable.cpu}"], None);
            (n.clone(), a)
        })
        .collect();
    let small = alloc
        .iter()
        .find(|(_, a)| a == "1")
        .unwrap_or_else(|| {
            panic!("no node with 1 allocatable CPU (the static node should have it): {alloc:?}")
        })
        .0
        .clone();
    let out = tempfile::tempdir().unwrap();
    let t0 = std::time::Instant::now();
    let a = lowlat()
        .args(["cluster", "check", "-l", &selector, "--guaranteed-cpus", "4", "--quick"])
        .args(["--start-timeout", "2m", "--image", &env("LOWLAT_IMAGE")])
        .arg("--out")
        .arg(out.path())
        .assert()
        .code(1);
    // at once, not after the start timeout
    assert!(t0.elapsed() < std::time::Duration::from_secs(60), "took {:?}", t0.elapsed());
    let stdout = String::from_utf8(a.get_output().stdout.clone()).unwrap();
    let want = format!(
        "a Guaranteed pod asking 4 whole CPU(s) does not fit on node {small}, which has 1 allocatable CPU(s)"
    );
    assert!(stdout.contains(&want), "{stdout}");
    let fleet: cluster::model::Fleet =
        serde_json::from_slice(&std::fs::read(out.path().join("fleet.json")).unwrap()).unwrap();
    let r = fleet.nodes.iter().find(|r| r.node == small).unwrap();
    assert_eq!(r.status, cluster::model::Status::NeverStarted);
    assert!(r.reason.as_deref().unwrap().contains(&want), "{r:#?}");
    // no node holds 4 CPUs here: no Job was ever created
    assert_eq!(fleet.cleanup.jobs, 0, "{:?}", fleet.cleanup);
    assert_eq!(labelled_leftovers(), "");
}
