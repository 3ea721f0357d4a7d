//! `lowlat cluster` against a real Kubernetes: the two-kubelet cluster of `ci/k8s/` (API server,
//! scheduler, controller-manager, two kubelets with their own containerd), brought up by CI
//! (`.ci/run`) or by hand:
//!
//! ```sh
//! image/build.sh && ci/k8s/build.sh && ci/k8s/up.sh
//! source ci/k8s/env.sh && cargo test -p cluster --test k8s -- --include-ignored
//! ci/k8s/down.sh
//! ```
//!
//! Every test is `#[ignore]` (it needs the cluster) and fails loudly when the cluster's
//! coordinates (`KUBECONFIG`, `LOWLAT_K8S_NODES`, `LOWLAT_IMAGE`) are missing. The tests run one
//! at a time (they share the cluster, and `clean` deletes every run's objects).

// Test helpers outside #[test] functions (clippy.toml allows unwrap only inside those).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use cluster::model::{Fleet, Status, Verdict};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};

static SERIAL: Mutex<()> = Mutex::new(());

fn env(name: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!("{name} is not set: bring the cluster up (ci/k8s/up.sh) and `source ci/k8s/env.sh` first"),
    }
}

fn conn() -> cluster::Conn {
    cluster::Conn {
        kubeconfig: Some(env("KUBECONFIG").into()),
        context: None,
        namespace: Some("default".into()),
    }
}

fn real_nodes() -> Vec<String> {
    let nodes: Vec<String> =
        env("LOWLAT_K8S_NODES").split_whitespace().map(str::to_string).collect();
    assert!(
        nodes.len() >= 2,
        "the cluster has {} kubelet-backed node(s), the tests want 2",
        nodes.len()
    );
    nodes
}

/// The pods of a test run: the image CI imported on every node.
fn pod(start_timeout: Duration) -> cluster::pod::Pod {
    cluster::pod::Pod {
        image: env("LOWLAT_IMAGE"),
        pull_policy: cluster::pod::PullPolicy::Never,
        start_timeout,
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

async fn client() -> kube::Client {
    conn().session().await.unwrap().client
}

/// Labels the real nodes and creates one Node object with no kubelet; undoes both on drop.
struct Fixture {
    key: String,
    value: String,
    nodes: Vec<String>,
    fake: String,
}

impl Fixture {
    fn new(tag: &str) -> Self {
        Self::with_fake(tag, true)
    }

    /// `fake`: also a Node object with no kubelet.
    fn with_fake(tag: &str, fake: bool) -> Self {
        let value = format!("{tag}-{}", std::process::id());
        let key = "lowlat.test/check".to_string();
        let fake =
            if fake { format!("lowlat-nokubelet-{}", std::process::id()) } else { String::new() };
        let nodes = real_nodes();
        rt().block_on(async {
            let api: Api<Node> = Api::all(client().await);
            for n in &nodes {
                let patch = serde_json::json!({"metadata": {"labels": {key.as_str(): value.as_str()}}});
                api.patch(n, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
            }
            if fake.is_empty() {
                return;
            }
            let now = "2026-01-01T00:00:00Z";
            let node: Node = serde_json::from_value(serde_json::json!({
                "metadata": {"name": fake, "labels": {key.as_str(): value.as_str(), "lowlat.test/fake": "true", "kubernetes.io/hostname": fake}},
                "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                  "conditions": [{"type": "Ready", "status": "True", "reason": "FakeNode", "message": "lowlat test: no kubelet",
                    "lastHeartbeatTime": now, "lastTransitionTime": now}]}
            }))
            .unwrap();
            api.create(&PostParams::default(), &node).await.unwrap();
        });
        Self { key, value, nodes, fake }
    }

    fn selector(&self) -> String {
        format!("{}={}", self.key, self.value)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        rt().block_on(async {
            let api: Api<Node> = Api::all(client().await);
            for n in &self.nodes {
                let patch = serde_json::json!({"metadata": {"labels": {self.key.as_str(): null}}});
                let _ = api.patch(n, &PatchParams::default(), &Patch::Merge(&patch)).await;
            }
            if !self.fake.is_empty() {
                let _ = api.delete(&self.fake, &DeleteParams::default()).await;
            }
        });
    }
}

#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn nodes_shows_both_kubelets_with_their_configuration() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rows = cluster::nodes::list(&conn(), None).unwrap();
    for n in real_nodes() {
        let row = rows
            .iter()
            .find(|r| r.name == n)
            .unwrap_or_else(|| panic!("node {n} missing from {rows:#?}"));
        assert_eq!(row.ready, "Ready=True", "{row:#?}");
        let k = row.kubelet.as_ref().unwrap_or_else(|| {
            panic!("{n}: kubelet configuration not read: {:?}", row.kubelet_error)
        });
        assert!(k.cpu_manager_policy.is_some(), "{n}: no cpuManagerPolicy in configz: {k:?}");
        assert!(
            k.topology_manager_policy.is_some(),
            "{n}: no topologyManagerPolicy in configz: {k:?}"
        );
        assert!(!row.kernel.is_empty(), "{n}: no kernel in nodeInfo");
        assert!(row.cpu_capacity.is_some() && row.cpu_allocatable.is_some(), "{row:#?}");
    }
    // the two kubelets have their own cgroup roots: proof the configuration is each kubelet's own
    let roots: std::collections::BTreeSet<_> = rows
        .iter()
        .filter_map(|r| r.kubelet.as_ref().map(|k| k.cgroup_root.clone().unwrap_or_default()))
        .collect();
    assert!(roots.len() >= 2, "both kubelets report the same cgroupRoot: {roots:?}");
    let table = cluster::nodes::table(&rows, false);
    assert!(table.starts_with("NAME"), "{table}");
}

#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn check_runs_on_both_kubelets_and_reports_the_node_without_one() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fx = Fixture::new("check");
    let out = tempfile::tempdir().unwrap();
    let cfg = cluster::check::Config {
        selector: fx.selector(),
        out: out.path().to_path_buf(),
        pod: pod(Duration::from_secs(25)),
        schedule: check::Schedule::new(Duration::from_secs(3)),
        threshold: Duration::from_millis(10),
        rt_budget_us: 100_000,
        guaranteed_cpus: None,
        generator: "lowlat k8s test".into(),
    };
    let mut lines = Vec::new();
    let progress = cluster::view::Progress::default();
    let fleet = cluster::check::run(&conn(), &cfg, &mut |e| {
        let l = progress.line(e);
        print!("{l}");
        lines.push(l);
    })
    .unwrap();
    assert_eq!(fleet.nodes.len(), 3, "{fleet:#?}");
    for n in &fx.nodes {
        let row = fleet.nodes.iter().find(|r| &r.node == n).unwrap();
        assert_eq!(row.status, Status::Completed, "{n}: {row:#?}");
        assert_ne!(row.verdict, Verdict::NotRun, "{n}: {row:#?}");
        assert!(row.files.iter().any(|f| f == "timer.json"), "{n}: files {:?}", row.files);
        let dir = out.path().join(row.dir.as_ref().unwrap());
        assert!(
            dir.join("timer.json").is_file() && dir.join("lowlat-report.html").is_file(),
            "{}",
            dir.display()
        );
        assert_eq!(
            row.realtime,
            Some(true),
            "{n}: the timer did not run real-time: {:#?}",
            row.rt_budget
        );
        let b = row.rt_budget.as_ref().unwrap();
        assert!(
            b.levels.iter().all(|l| l.granted.is_none() || l.restored.is_some()),
            "{n}: budget not given back: {b:#?}"
        );
        let samples: u64 = row.timer_histogram.iter().map(|b| b.count).sum();
        assert!(samples > 100, "{n}: the timer histogram holds {samples} samples");
        assert!(row.timer.as_ref().is_some_and(|t| t.max_ns > 0));
    }
    let fake = fleet.nodes.iter().find(|r| r.node == fx.fake).unwrap();
    assert_eq!(fake.status, Status::NeverStarted, "{fake:#?}");
    assert_eq!(fake.verdict, Verdict::NotRun);
    let reason = fake.reason.as_deref().unwrap_or("");
    assert!(reason.contains("not started after 25s") && reason.contains("Pending"), "{reason}");
    assert_eq!(fleet.verdict, Verdict::NotRun);
    assert_eq!(fleet.exit_code(), util::exit::ExitCode::CheckFailed);
    // what was written
    let back: Fleet =
        serde_json::from_slice(&std::fs::read(out.path().join("fleet.json")).unwrap()).unwrap();
    assert_eq!(back.schema_version, cluster::model::SCHEMA_VERSION);
    assert_eq!(back, fleet);
    let html = std::fs::read_to_string(out.path().join("fleet-report.html")).unwrap();
    let fig = &html[html.find("id=\"chart-fleet-timer\"").expect("the distributions chart")..];
    let fig = &fig[..fig.find("</figure>").unwrap()];
    for n in &fx.nodes {
        assert!(fig.contains(&format!("\n{n}\n</text>")), "{n}'s distribution is not drawn");
    }
    assert!(html.contains("Nodes that did not run") && html.contains(&fx.fake));
    // everything labelled is gone
    assert!(fleet.cleanup.leftover.is_empty(), "{:?}", fleet.cleanup);
    assert_eq!(cluster::clean::leftovers(&conn()).unwrap(), Vec::<String>::new());
    assert!(lines.iter().any(|l| l.contains("nothing labelled left")), "{lines:?}");
}

#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn clean_deletes_what_a_crashed_run_left() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fx = Fixture::new("clean");
    // What a killed controller leaves: a labelled Job whose pod sits on a node with no kubelet.
    let spec = cluster::job::Spec {
        name: "lowlat-check-deadbeef-crash-0".into(),
        namespace: "default".into(),
        node: fx.fake.clone(),
        labels: cluster::labels::for_node("deadbeef", "check", 0),
        image: env("LOWLAT_IMAGE"),
        pull_policy: cluster::pod::PullPolicy::Never,
        command: vec!["lowlat".into(), "inspect".into()],
        guaranteed_cpus: None,
        deadline_s: 600,
    };
    rt().block_on(async {
        let jobs: Api<Job> = Api::namespaced(client().await, "default");
        jobs.create(&PostParams::default(), &cluster::job::build(&spec)).await.unwrap();
        // wait until the Job controller made its pod
        let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client().await, "default");
        for _ in 0..100 {
            let l = pods
                .list(&kube::api::ListParams::default().labels("lowlat.io/run=deadbeef"))
                .await
                .unwrap();
            if !l.items.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    assert!(!cluster::clean::leftovers(&conn()).unwrap().is_empty());
    let mut seen = BTreeMap::new();
    let done = cluster::clean::clean(&conn(), None, &mut |e| {
        if let cluster::fleet::Event::Cleaned { jobs, pods, .. } = e {
            seen.insert("jobs", *jobs);
            seen.insert("pods", *pods);
        }
    })
    .unwrap();
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(seen.get("jobs"), Some(&1), "{seen:?}");
    assert_eq!(cluster::clean::leftovers(&conn()).unwrap(), Vec::<String>::new());
}

/// Install the CRDs an OpenShift render needs, from the repository's copies
/// (`testdata/schemas`, see `testdata/NOTICE.md`), and wait until they are served.
async fn install_crds(client: &kube::Client) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/schemas");
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut names = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        let crd: CustomResourceDefinition = serde_norway::from_str(&text).unwrap();
        let name = crd.metadata.name.clone().unwrap();
        let pp = PatchParams::apply("lowlat-test").force();
        api.patch(&name, &pp, &Patch::Apply(&crd)).await.unwrap();
        names.push(name);
    }
    for name in names {
        let established = kube::runtime::wait::conditions::is_crd_established();
        tokio::time::timeout(
            Duration::from_secs(30),
            kube::runtime::wait::await_condition(api.clone(), &name, established),
        )
        .await
        .unwrap_or_else(|_| panic!("CRD {name} not established in 30 s"))
        .unwrap();
    }
}

fn plan() -> plan::Plan {
    plan::Plan::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/plan.yaml"
    )))
    .unwrap()
}

#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn apply_dry_run_validates_the_rendered_manifests() {
    use cluster::apply::{self, Action};
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let plan = plan();
    // OpenShift: MachineConfigPool, MachineConfig, KubeletConfig, Tuned; PerformanceProfile
    // and the namespace the Tuned object lives in on OpenShift
    let nto = "openshift-cluster-node-tuning-operator";
    rt().block_on(async {
        install_crds(&client().await).await;
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client().await);
        let obj =
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": nto}});
        api.patch(nto, &PatchParams::apply("lowlat-test"), &Patch::Apply(&obj)).await.unwrap();
    });
    for target in [render::Target::Openshift, render::Target::PerformanceProfile] {
        let files = render::render(&plan, target, &render::RenderOptions::default()).unwrap();
        let m = apply::manifests(&files).unwrap();
        assert!(!m.is_empty(), "{target}: no objects");
        let rows =
            apply::apply(&conn(), &m, true, false).unwrap_or_else(|e| panic!("{target}: {e}"));
        for r in &rows {
            assert_eq!(r.action, Action::Create, "{target}: {r:?}");
        }
    }
    // Kubernetes: the latency test (Namespace, Job, Deployment) in a namespace lowlat owns
    let ns = format!("lowlat-apply-{}", std::process::id());
    rt().block_on(async {
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client().await);
        // a field of its own, so that lowlat is on record as a manager (a name alone is not a field)
        let obj = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"lowlat.test/apply": "true"}}});
        api.patch(&ns, &PatchParams::apply(apply::MANAGER), &Patch::Apply(&obj)).await.unwrap();
    });
    let opts = render::RenderOptions {
        namespace: ns.clone(),
        image: env("LOWLAT_IMAGE"),
        ..Default::default()
    };
    let files = render::render(&plan, render::Target::K8sLatencyTest, &opts).unwrap();
    let rows = apply::apply(&conn(), &apply::manifests(&files).unwrap(), true, false).unwrap();
    assert!(rows.iter().any(|r| r.kind == "Job" && r.action == Action::Create), "{rows:#?}");
    // the Namespace: the render does not carry the label lowlat applied before, so it would go
    let nsrow = rows.iter().find(|r| r.kind == "Namespace").unwrap();
    assert_eq!(nsrow.action, Action::Update, "{nsrow:?}");
    assert!(nsrow.changes.iter().any(|c| c == "metadata.labels.lowlat.test/apply"), "{nsrow:?}");
    assert!(rows.iter().all(|r| matches!(r.action, Action::Create | Action::Update)), "{rows:#?}");
    // the RBAC objects, in the same namespace
    let rbac = render::rbac::render(&opts);
    let rows = apply::apply(&conn(), &apply::manifests(&rbac).unwrap(), true, false).unwrap();
    assert!(rows.iter().any(|r| r.kind == "ClusterRole"), "{rows:#?}");
    // an object lowlat does not manage is refused without --force-conflicts
    let foreign = render::RenderOptions { namespace: "default".into(), ..Default::default() };
    let files = render::render(&plan, render::Target::K8sLatencyTest, &foreign).unwrap();
    let rows = apply::apply(&conn(), &apply::manifests(&files).unwrap(), true, false).unwrap();
    let nsrow = rows.iter().find(|r| r.kind == "Namespace").unwrap();
    assert_eq!(nsrow.action, Action::Refused, "{nsrow:?}");
    assert!(nsrow.note.as_deref().unwrap_or("").contains("not lowlat"), "{nsrow:?}");
    rt().block_on(async {
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client().await);
        let _ = api.delete(&ns, &DeleteParams::default()).await;
        let _ = api.delete(nto, &DeleteParams::default()).await;
    });
}

/// The host's v1 `cpu` hierarchy: the cluster's nodes are this machine, so the test reads the
/// cgroup files the pods' agents wrote, independently of the agents.
const CPU: &str = "/sys/fs/cgroup/cpu";

fn host_budget(level: &str) -> i64 {
    let p = format!("{CPU}{level}/{}", cluster::rt::RUNTIME);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}")).trim().parse().unwrap()
}

/// Agents of this test (their `--out` names the test), with their `cpu` cgroup path.
fn agents(marker: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let args: Vec<String> =
            cmd.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        let is_agent = args.len() > 3 && args[1] == "cluster" && args[2] == "agent";
        if !is_agent || !args.iter().any(|a| a == marker) {
            continue;
        }
        let Ok(cg) = std::fs::read_to_string(format!("/proc/{pid}/cgroup")) else { continue };
        if let Some(c) = cluster::rt::parse_proc_cgroup(&cg) {
            out.push((pid, c.path));
        }
    }
    out
}

/// A pod killed mid-run (SIGKILL to everything in its container: no chance to give the RT
/// budget back) leaves the shared cgroup levels granted; `cluster clean`'s pass on the nodes
/// gives them back from the record the agent wrote on the node before granting.
#[test]
#[ignore = "needs the ci/k8s cluster (CI runs it with --include-ignored)"]
fn clean_gives_back_the_rt_budget_of_a_killed_pod() {
    use cluster::rt::{self, Recovery};
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fx = Fixture::with_fake("rtkill", false);
    let run = format!("{:08x}", std::process::id());
    let marker = format!("/tmp/lowlat-rtkill-{run}");
    // What the agent runs: light and long (no measurement), SIGKILLed long before its end.
    let command: Vec<String> = [
        "lowlat",
        "cluster",
        "agent",
        "--rt-budget-us",
        "100000",
        "--out",
        &marker,
        "--",
        "watch",
        "cmd",
        "--interval",
        "1s",
        "--duration",
        "5m",
        "--",
        "sh",
        "-c",
        ":",
    ]
    .map(String::from)
    .to_vec();
    rt().block_on(async {
        let jobs: Api<Job> = Api::namespaced(client().await, "default");
        for (i, n) in fx.nodes.iter().enumerate() {
            let spec = cluster::job::Spec {
                name: format!("lowlat-check-{run}-rtkill-{i}"),
                namespace: "default".into(),
                node: n.clone(),
                labels: cluster::labels::for_node(&run, "check", i),
                image: env("LOWLAT_IMAGE"),
                pull_policy: cluster::pod::PullPolicy::Never,
                command: command.clone(),
                guaranteed_cpus: None,
                deadline_s: 600,
            };
            jobs.create(&PostParams::default(), &cluster::job::build(&spec)).await.unwrap();
        }
    });
    // Both agents granted, and their grants are on record on the node.
    let ledger = std::path::Path::new(rt::LEDGER_DIR);
    let mut found = Vec::new();
    for _ in 0..600 {
        found = agents(&marker);
        let granted = found.len() == fx.nodes.len()
            && found.iter().all(|(_, cg)| {
                ledger.join(rt::record_file(cg)).is_file()
                    && host_budget(&rt::levels(cg)[0]) >= 100000
                    && host_budget(cg) == 100000
            });
        if granted {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(found.len(), fx.nodes.len(), "agents running: {found:?}");
    let mut records = Vec::new();
    for (_, cg) in &found {
        let path = ledger.join(rt::record_file(cg));
        let rec: rt::Record = serde_json::from_slice(&std::fs::read(&path).unwrap_or_else(|e| {
            panic!("{}: {e} (the agent did not put its grant on record)", path.display())
        }))
        .unwrap();
        assert_eq!(&rec.cgroup, cg);
        // the shared levels: every level but the pod's and the container's own
        let levels = rt::levels(cg);
        let shared = &levels[..levels.len() - 2];
        assert!(
            rec.levels.iter().any(|r| shared.contains(&r.path)),
            "no shared level was granted (already had budget before the test?): {rec:#?}"
        );
        for l in shared {
            assert_eq!(host_budget(l), 100000, "{l} not granted: {rec:#?}");
        }
        records.push((cg.clone(), rec, shared.to_vec()));
    }
    // Kill everything in both containers: no SIGTERM, no restore.
    for (cg, _, _) in &records {
        let procs = std::fs::read_to_string(format!("{CPU}{cg}/cgroup.procs")).unwrap();
        for pid in procs.split_whitespace() {
            let _ = std::process::Command::new("kill").args(["-KILL", pid]).status();
        }
    }
    for _ in 0..300 {
        if agents(&marker).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(agents(&marker).is_empty(), "the agents survived SIGKILL");
    // The leak this is about: the shared levels keep the killed pods' budget.
    for (_, rec, shared) in &records {
        for l in shared {
            let granted = rec.levels.iter().any(|r| &r.path == l);
            if granted {
                assert_eq!(host_budget(l), 100000, "{l}: given back without anyone restoring?");
            }
        }
    }
    // `lowlat cluster clean`: the objects first (the killed pods go, their cgroups with them) …
    cluster::clean::clean(&conn(), None, &mut |_| {}).unwrap();
    assert_eq!(cluster::clean::leftovers(&conn()).unwrap(), Vec::<String>::new());
    for (cg, _, _) in &records {
        for _ in 0..300 {
            if !std::path::Path::new(&format!("{CPU}{cg}")).exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    // … then the pass on the nodes.
    let cfg = cluster::clean::RecoverConfig {
        selector: fx.selector(),
        pod: pod(Duration::from_secs(60)),
    };
    let nodes = cluster::clean::recover_rt(&conn(), &cfg, &mut |_| {}).unwrap();
    println!("{}", cluster::view::recovery(&nodes));
    assert_eq!(nodes.len(), fx.nodes.len(), "{nodes:#?}");
    assert!(nodes.iter().all(cluster::clean::NodeRecovery::ok), "{nodes:#?}");
    for (cg, rec, shared) in &records {
        let name = rt::record_file(cg);
        let restored = nodes
            .iter()
            .flat_map(|n| &n.recovered)
            .any(|r| r.record == name && r.outcome == Recovery::Restored);
        assert!(restored, "{name} not given back: {nodes:#?}");
        assert!(!ledger.join(&name).exists(), "{name} still on record");
        for l in shared {
            let before = rec.levels.iter().find(|r| &r.path == l).map(|r| r.before);
            if let Some(before) = before {
                assert_eq!(host_budget(l), before, "{l} not back to {before}");
            }
        }
    }
    assert_eq!(cluster::clean::leftovers(&conn()).unwrap(), Vec::<String>::new());
}
