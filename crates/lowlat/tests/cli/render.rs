//! CLI tests of `lowlat render`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use crate::support::lowlat;
use predicates::prelude::*;

/// The repository's `testdata/` (public fixtures and CRD schemas; see `testdata/NOTICE.md`).
fn testdata_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
}

fn make_plan(dir: &Path) -> PathBuf {
    let mg = testdata_dir().join("fixtures/must-gather/must-gather.bare-metal");
    let out = dir.join("plan.yaml");
    lowlat()
        .args(["plan", "--must-gather"])
        .arg(mg)
        .args([
            "--node",
            "worker1",
            "--reserved",
            "4",
            "--power",
            "low-latency",
            "--rt-kernel",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    out
}

#[test]
fn cmdline_and_explain() {
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    lowlat().args(["render", "--plan"]).arg(&plan).arg("cmdline").assert().success().stdout(
        predicate::str::starts_with("skew_tick=1 ")
            .and(predicate::str::contains("isolcpus=managed_irq,2-39,42-79")),
    );
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["cmdline", "--explain"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("nohz_full=2-39,42-79")
                .and(predicate::str::contains("stop the scheduler tick")),
        );
}

#[test]
fn bls_entry_patched_in_place_with_backup() {
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    let entry = dir.path().join("boot.conf");
    let original = "title boot\nlinux /vmlinuz\ninitrd /initrd\noptions LABEL=boot isolcpus=2 irqaffinity=0 rcu_nocbs=2 nohz=off nohz_full=2 noht console=ttyS0,115200\n";
    std::fs::write(&entry, original).unwrap();
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["bls", "--input"])
        .arg(&entry)
        .assert()
        .success()
        .stdout(predicate::str::contains("patched"))
        // Seed 003's `isolcpus=2` is domain isolation; the plan's managed_irq drops it: said
        // on stderr and in the entry (issue 21, item 11).
        .stderr(predicate::str::contains("lowlat: warning: ").and(predicate::str::contains(
            "`isolcpus=2` is replaced by the plan's `isolcpus=managed_irq,2-39,42-79`, which drops the `domain` isolation flag",
        )).and(predicate::str::contains("lowlat plan --isolcpus-domain")));
    let patched = std::fs::read_to_string(&entry).unwrap();
    assert!(patched.contains("\n# lowlat: WARNING: "), "{patched}");
    assert!(patched.contains("options LABEL=boot isolcpus=managed_irq,2-39,42-79 irqaffinity=0-1,40-41 rcu_nocbs=2-39,42-79 nohz=on nohz_full=2-39,42-79 noht console=ttyS0,115200 skew_tick=1"), "{patched}");
    assert_eq!(std::fs::read_to_string(dir.path().join("boot.conf.lowlat-bak")).unwrap(), original);
    // A second run patches the patched entry and keeps the first backup: the original.
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["bls", "--input"])
        .arg(&entry)
        .assert()
        .success()
        .stdout(predicate::str::contains("the first one, kept"));
    assert_eq!(std::fs::read_to_string(&entry).unwrap(), patched, "idempotent");
    assert!(
        !patched.lines().any(|l| l.starts_with("options") && l.contains("isolcpus=2 ")),
        "{patched}"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("boot.conf.lowlat-bak")).unwrap(), original);
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .arg("bls")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--input"));
}

#[test]
fn output_directory_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    for target in ["openshift", "tuned", "k8s-latency-test", "rpm-ostree"] {
        let a = dir.path().join(format!("a-{target}"));
        let b = dir.path().join(format!("b-{target}"));
        for d in [&a, &b] {
            lowlat()
                .args(["render", "--plan"])
                .arg(&plan)
                .arg(target)
                .arg("-o")
                .arg(d)
                .assert()
                .success();
        }
        let list = |d: &Path| -> Vec<(String, Vec<u8>)> {
            let mut v = vec![];
            for e in walk(d) {
                v.push((
                    e.strip_prefix(d).unwrap().display().to_string(),
                    std::fs::read(&e).unwrap(),
                ));
            }
            v.sort();
            v
        };
        assert_eq!(list(&a), list(&b), "{target}");
        assert!(!list(&a).is_empty());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.path().join("a-openshift/apply.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111);
    }
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn latency_test_duration_and_threshold_from_env() {
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .arg("k8s-latency-test")
        .env("LATENCY_TEST_RUNTIME", "12h")
        .env("MAXIMUM_LATENCY", "15")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("value: 12h")
                .and(predicate::str::contains("value: '15'"))
                .and(predicate::str::contains("irq-load-balancing.crio.io: disable")),
        );
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["k8s-latency-test", "--duration", "soon"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--duration soon"));
}

#[test]
fn bad_plans_and_targets() {
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    lowlat().args(["render", "--plan"]).arg(&plan).arg("lilo").assert().code(2).stderr(
        predicate::str::contains("unknown render target `lilo`")
            .and(predicate::str::contains("performance-profile")),
    );
    let newer = dir.path().join("newer.yaml");
    let text = std::fs::read_to_string(&plan).unwrap().replacen(
        "schema_version: 1",
        "schema_version: 7",
        1,
    );
    std::fs::write(&newer, text).unwrap();
    lowlat()
        .args(["render", "--plan"])
        .arg(&newer)
        .arg("cmdline")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("schema_version 7 is newer"));
    let junk = dir.path().join("junk.yaml");
    std::fs::write(&junk, "hello: [").unwrap();
    lowlat()
        .args(["render", "--plan"])
        .arg(&junk)
        .arg("cmdline")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("junk.yaml"));
    lowlat()
        .args(["render", "--plan", "/nonexistent/plan.yaml", "cmdline"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("lowlat plan -o plan.yaml"));
    lowlat().args(["render", "--plan"]).arg(&plan).args(["tuned", "--explain"]).assert().code(2);
}

/// Hostile or careless plan files are refused when read, naming the field (issue 11).
#[test]
fn a_plan_file_is_checked_before_anything_is_rendered() {
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    let text = std::fs::read_to_string(&plan).unwrap();
    let out = dir.path().join("a/b/out");
    let cases = [
        ("name: lowlat", "name: x/../../ESCAPED", "name: `x/../../ESCAPED` holds `/`"),
        ("  isolcpus_domain: false", "  isolcpus_domian: false", "did you mean `isolcpus_domain`?"),
        ("isolated: 2-39,42-79", "isolated: ''", "no isolated CPUs"),
        ("host: worker1", "host: 'n1;touch PWNED;#'", "holds `;`"),
        ("schema_version: 1", "schema_version: 0", "schema_version"),
    ];
    for (from, to, want) in cases {
        assert!(text.contains(from), "{from}");
        let bad = dir.path().join("bad.yaml");
        std::fs::write(&bad, text.replacen(from, to, 1)).unwrap();
        for target in ["tuned", "openshift", "cmdline"] {
            lowlat()
                .args(["render", "--plan"])
                .arg(&bad)
                .arg(target)
                .arg("-o")
                .arg(&out)
                .assert()
                .code(2)
                .stderr(predicate::str::contains(want).and(predicate::str::contains("bad.yaml")));
        }
    }
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["openshift", "--role", "x;touch PWNED", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`x;touch PWNED` holds `;`"));
    assert!(
        !out.exists()
            && !dir.path().join("ESCAPED").exists()
            && !dir.path().join("a/ESCAPED").exists()
    );
    // A deeply nested file is refused (at once: plan's timing-lane test holds the clock).
    let deep = dir.path().join("deep.yaml");
    std::fs::write(
        &deep,
        format!("schema_version: 1\nname: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .unwrap();
    lowlat()
        .args(["render", "--plan"])
        .arg(&deep)
        .arg("cmdline")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nested deeper than"));
    // The stored kernel arguments are not trusted: they come from the sets.
    let lying = dir.path().join("lying.yaml");
    std::fs::write(&lying, text.replace("value: 2-39,42-79", "value: '1'")).unwrap();
    lowlat().args(["render", "--plan"]).arg(&lying).arg("cmdline").assert().success().stdout(
        predicate::str::contains("nohz_full=2-39,42-79")
            .and(predicate::str::contains("nohz_full=1 ").not()),
    );
}

#[test]
fn latency_test_image_pool_and_runtime_class_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    let name = format!(
        "image: {}:{}",
        include_str!("../../../render/image-name").trim(),
        env!("CARGO_PKG_VERSION")
    );
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .arg("k8s-latency-test")
        .assert()
        .success()
        .stdout(
            predicate::str::contains(name)
                .and(predicate::str::contains("runtimeClassName: performance-lowlat"))
                .and(predicate::str::contains("serviceAccountName: lowlat-latency-test"))
                .and(predicate::str::contains("kubernetes.io/hostname: worker1")),
        );
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["k8s-latency-test", "--runtime-class", "", "--image", "reg.example/lowlat:1"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("runtimeClassName")
                .not()
                .and(predicate::str::contains("image: reg.example/lowlat:1")),
        );
    // One default pool: the openshift target and the PerformanceProfile agree on worker-cnf.
    for target in ["openshift", "performance-profile"] {
        lowlat()
            .args(["render", "--plan"])
            .arg(&plan)
            .arg(target)
            .assert()
            .success()
            .stdout(predicate::str::contains("machineconfiguration.openshift.io/role: worker-cnf"));
    }
}

/// `cluster apply --dry-run client` (kubectl's value): the objects as YAML, no cluster needed —
/// no kubeconfig at all here.
#[cfg(feature = "cluster")]
#[test]
fn cluster_apply_client_dry_run_prints_the_objects_without_a_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("p.yaml");
    lowlat().args(["plan", "-o"]).arg(&plan).assert().success();
    let a = lowlat()
        .args(["cluster", "apply", "--target", "k8s-latency-test", "--dry-run", "client", "--plan"])
        .arg(&plan)
        .env("KUBECONFIG", dir.path().join("none"))
        .env_remove("KUBERNETES_SERVICE_HOST")
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    let docs = out.matches("---\n").count();
    assert!(docs >= 4, "{out}");
    for kind in ["kind: Namespace", "kind: ServiceAccount", "kind: Job", "kind: Deployment"] {
        assert!(out.contains(kind), "{kind}: {out}");
    }
    let json = lowlat()
        .args([
            "cluster",
            "apply",
            "--target",
            "k8s-latency-test",
            "--dry-run",
            "client",
            "--json",
            "--plan",
        ])
        .arg(&plan)
        .env("KUBECONFIG", dir.path().join("none"))
        .assert()
        .success();
    let objects: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    assert_eq!(objects.as_array().map(Vec::len), Some(docs));
}

/// A plan made from a must-gather for the pool `worker-cnf` (its selectors come from the pool).
fn make_pool_plan(dir: &Path) -> PathBuf {
    let mg = testdata_dir().join("fixtures/nto/must-gather/must-gather.bare-metal");
    let out = dir.join("pool-plan.yaml");
    lowlat()
        .args(["plan", "--must-gather"])
        .arg(mg)
        .args(["--mcp-name", "worker-cnf", "--style", "ppc", "--reserved-cpu-count=4"])
        .args(["--rt-kernel=true", "--power-consumption-mode=low-latency", "-o"])
        .arg(&out)
        .assert()
        .success();
    out
}

#[test]
fn role_renames_the_pool_selectors_everywhere() {
    // issue 20 item 9: `--role worker-rt` on a plan for the pool worker-cnf must not keep
    // worker-cnf's node selector (RuntimeClass, apply.sh label, PerformanceProfile).
    let dir = tempfile::tempdir().unwrap();
    let plan = make_pool_plan(dir.path());
    let out = dir.path().join("os");
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["openshift", "--role", "worker-rt", "-o"])
        .arg(&out)
        .assert()
        .success();
    let mut all = String::new();
    for f in walk(&out) {
        all.push_str(&std::fs::read_to_string(f).unwrap());
    }
    assert!(!all.contains("worker-cnf"), "{all}");
    assert!(all.contains("node-role.kubernetes.io/worker-rt: ''"), "{all}");
    assert!(all.contains("'node-role.kubernetes.io/worker-rt='"), "{all}");
    let pp = lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["performance-profile", "--role", "worker-rt"])
        .assert()
        .success();
    let pp = String::from_utf8(pp.get_output().stdout.clone()).unwrap();
    assert!(!pp.contains("worker-cnf"), "{pp}");
    assert!(pp.contains("machineconfiguration.openshift.io/role: worker-rt"), "{pp}");
    assert!(pp.contains("node-role.kubernetes.io/worker-rt: ''"), "{pp}");
    // Without --role the plan's pool keeps its own selectors.
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .arg("performance-profile")
        .assert()
        .success()
        .stdout(predicate::str::contains("node-role.kubernetes.io/worker-cnf: ''"));
}

#[test]
fn output_dash_is_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    lowlat()
        .current_dir(dir.path())
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["openshift", "-o", "-"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("# ==> 02-machineconfig.yaml <==")
                .and(predicate::str::contains("wrote").not()),
        );
    assert!(!dir.path().join("-").exists(), "a directory named `-` was created");
}

#[test]
fn busy_poll_on_an_rt_plan_is_refused() {
    let mg = testdata_dir().join("fixtures/must-gather/must-gather.bare-metal");
    lowlat()
        .args(["plan", "--must-gather"])
        .arg(mg)
        .args(["--node", "worker1", "--reserved", "4", "--power", "low-latency", "--rt-kernel"])
        .args(["--busy-poll", "50us"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("busy_read"));
}

#[test]
fn built_in_pools_are_not_redefined() {
    // issue 20 item 7: --mcp-name/--role master|worker gets no MachineConfigPool.
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    for role in ["worker", "master"] {
        let out = dir.path().join(role);
        lowlat()
            .args(["render", "--plan"])
            .arg(&plan)
            .args(["openshift", "--role", role, "-o"])
            .arg(&out)
            .assert()
            .success();
        assert!(!out.join("01-machineconfigpool.yaml").exists(), "{role}");
        let apply = std::fs::read_to_string(out.join("apply.sh")).unwrap();
        assert!(!apply.contains("01-machineconfigpool.yaml"), "{apply}");
        assert!(out.join("02-machineconfig.yaml").exists());
    }
    let out = dir.path().join("custom");
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["openshift", "--role", "worker-rt", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("01-machineconfigpool.yaml").exists());
}

#[test]
fn grub_input_the_editor_cannot_read_safely_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let plan = make_plan(dir.path());
    let grub = dir.path().join("grub");
    let original = "GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX=\"quiet\" true\n";
    std::fs::write(&grub, original).unwrap();
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["grub", "--input"])
        .arg(&grub)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(format!("{} line 2: ", grub.display()))
                .and(predicate::str::contains("for that command only")),
        );
    assert_eq!(std::fs::read_to_string(&grub).unwrap(), original);
    // Two assignments: the last, the one the shell keeps, is edited, with a warning.
    std::fs::write(&grub, "GRUB_CMDLINE_LINUX=\"a\"\nGRUB_CMDLINE_LINUX=\"b\" # c\n").unwrap();
    lowlat()
        .args(["render", "--plan"])
        .arg(&plan)
        .args(["grub", "--input"])
        .arg(&grub)
        .assert()
        .success()
        .stderr(predicate::str::contains("line 2 was edited"))
        .stdout(
            predicate::str::starts_with("GRUB_CMDLINE_LINUX=\"a\"\n")
                .and(predicate::str::contains("GRUB_CMDLINE_LINUX=\"b skew_tick=1 "))
                .and(predicate::str::ends_with("\" # c\n")),
        );
}
