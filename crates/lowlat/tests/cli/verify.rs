//! `lowlat verify` as a user runs it: on the 80-thread must-gather worker with the plan its
//! own command line implies (the SMT-sibling finding), JSON / JUnit shapes and exit codes, a
//! plan file, and the live host read-only.

use std::path::PathBuf;
use std::process::Command;

use crate::support::lowlat_std as lowlat;

/// The repository's `testdata/` (public fixtures and CRD schemas; see `testdata/NOTICE.md`).
fn testdata_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
}

fn must_gather() -> PathBuf {
    let base = testdata_dir().join("fixtures/must-gather/must-gather.bare-metal");
    std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("nodes/worker1").is_dir())
        .unwrap_or_else(|| panic!("no must-gather with nodes/worker1 under {}", base.display()))
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{e}"));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn check<'a>(v: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    v["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["id"] == id))
        .unwrap_or_else(|| panic!("no check {id} in {v}"))
}

#[test]
fn fixture_worker_smt_siblings_of_isolated_cpus_are_housekeeping() {
    let junit = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = run(lowlat()
        .arg("verify")
        .arg("--must-gather")
        .arg(must_gather())
        .args(["--node", "worker1", "--json", "--junit"])
        .arg(junit.path()));
    assert_eq!(code, 1, "a failing check exits 1: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let smt = check(&v, "smt-siblings");
    assert_eq!(smt["status"], "fail");
    let ev = smt["evidence"].to_string();
    assert!(ev.contains("SMT siblings 45-50 of isolated CPUs 5-10 are housekeeping"), "{ev}");
    assert!(smt["fix"].as_str().is_some_and(|f| f.contains("lowlat plan")));
    // The implied plan's own arguments are all there, compared as sets.
    assert_eq!(check(&v, "cmdline-args")["status"], "pass");
    // Live-only checks say so.
    assert_eq!(check(&v, "irq-activity")["status"], "n.a.");
    assert!(v["summary"]["fail"].as_u64().is_some_and(|f| f >= 1));
    crate::support::assert_junit_valid(junit.path());
    let xml = std::fs::read_to_string(junit.path()).unwrap_or_default();
    let x = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let smt = x
        .descendants()
        .find(|n| {
            n.attribute("name") == Some("smt-siblings") && n.attribute("classname") == Some("boot")
        })
        .unwrap_or_else(|| panic!("{xml}"));
    assert_eq!(smt.first_element_child().map(|n| n.tag_name().name()), Some("failure"), "{xml}");
    let suite =
        x.descendants().find(|n| n.has_tag_name("testsuite")).unwrap_or_else(|| panic!("{xml}"));
    assert_eq!(suite.attribute("hostname"), Some("worker1"), "{xml}");
}

#[test]
fn fixture_table_is_grouped_with_fix_hints() {
    let (code, out, _) = run(lowlat()
        .arg("verify")
        .arg("--must-gather")
        .arg(must_gather())
        .args(["--node", "worker1"]));
    assert_eq!(code, 1);
    assert!(out.contains("live-only checks are n.a."), "{out}");
    // Readable in 10 s: the verdict right under the header, the commands that fix the
    // failures each once with the checks they fix, the details after.
    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines[1].starts_with("FAIL: 2 of 24 checks fail"), "{out}");
    let (fix_at, details_at) = (out.find("to fix the failures:"), out.find("\ndetails:\n"));
    assert!(fix_at.is_some_and(|f| details_at.is_some_and(|d| f < d)), "{out}");
    assert!(out.contains("      fixes 1: smt-siblings"), "{out}");
    assert!(
        out.contains("→ fix [1]"),
        "a failure points to its fix instead of repeating it: {out}"
    );
    for group in ["\nboot\n", "\nirq\n", "\ntasks\n"] {
        assert!(out.contains(group), "missing group {group:?}: {out}");
    }
    assert!(out.contains("[1] `lowlat plan` keeps siblings together"), "{out}");
}

#[test]
fn live_verify_is_read_only_and_answers() {
    // Runs as any user; the implied plan of an unisolated host has nothing to fail on
    // except what the host really gets wrong, so only the shape is asserted.
    let (code, out, err) = run(lowlat().args(["verify", "--json", "--window", "200ms"]));
    assert!(code == 0 || code == 1, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    assert!(v["checks"].as_array().is_some_and(|a| !a.is_empty()));
}

#[test]
fn bad_window_is_a_usage_error() {
    let (code, _, err) = run(lowlat().args(["verify", "--window", "soon"]));
    assert_eq!(code, 2, "{err}");
}

#[test]
fn json_to_a_file_keeps_the_table_on_stdout() {
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = work.path().join("verify.json");
    let (code, out, err) = run(lowlat()
        .arg("verify")
        .arg("--must-gather")
        .arg(must_gather())
        .args(["--node", "worker1", "--json"])
        .arg(&file));
    assert_eq!(code, 1, "a failing check exits 1: {err}");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(check(&v, "smt-siblings")["status"], "fail");
    assert!(out.contains("live-only checks are n.a.") && out.contains("\nboot\n"), "{out}");
    assert!(!out.contains("\"checks\""), "the JSON went to the file, not stdout: {out}");
}

#[test]
fn a_zero_window_skips_the_live_sampling() {
    let (code, out, err) = run(lowlat().args(["verify", "--json", "--window", "0"]));
    assert!(code == 0 || code == 1, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let activity = check(&v, "irq-activity");
    assert_eq!(activity["status"], "n.a.", "{activity}");
    assert!(activity["evidence"].to_string().contains("window"), "{activity}");
}

/// A plan naming CPUs the host lacks is refused, not passed vacuously (issue 11).
#[test]
fn a_plan_for_another_host_is_refused() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = dir.path().join("plan.yaml");
    std::fs::write(
        &plan,
        "schema_version: 1\nname: big\nhost: null\nreserved: 0-1\nisolated: 2-4095\nofflined: ''\n\
options:\n  style: lowlat\n  power: default\n  rt_kernel: false\n  no_smt: false\n  \
split_reserved_across_numa: false\n  topology_policy: null\n  per_pod_power_management: false\n  \
hugepages: []\n  near_device: null\nruntime: []\nrationale: []\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = run(lowlat()
        .arg("verify")
        .arg("--plan")
        .arg(&plan)
        .arg("--must-gather")
        .arg(must_gather())
        .args(["--node", "worker1", "--window", "0"]));
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("plan isolated names CPUs 80-4095 that the host worker1 does not have"),
        "{err}"
    );
}

/// The NTO fixture set's bare-metal must-gather: `worker1.internal` was configured by NTO
/// (`isolcpus=managed_irq,0-4,11-79 nohz_full=0-4,11-79`, no `irqaffinity`/`kthread_cpus`),
/// `worker2.internal` is untuned.
fn nto_must_gather() -> PathBuf {
    testdata_dir().join("fixtures/nto/must-gather/must-gather.bare-metal")
}

fn verify_json(plan: &std::path::Path, node: &str) -> (i32, serde_json::Value) {
    let (code, out, err) = run(lowlat()
        .args(["verify", "--plan"])
        .arg(plan)
        .arg("--must-gather")
        .arg(nto_must_gather())
        .args(["--node", node, "--json"]));
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, v)
}

#[test]
fn nto_node_is_judged_by_the_effects_of_irqaffinity_and_kthread_cpus() {
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // A plan from the must-gather is for NTO's configuration (what `render openshift` and
    // `render performance-profile` give the node); its isolated CPUs lie within the node's
    // (a lowlat plan keeps CPU 0 for housekeeping, the node isolates it).
    let plan = work.path().join("nto.yaml");
    let (code, _, err) = run(lowlat()
        .args(["plan", "--must-gather"])
        .arg(nto_must_gather())
        .args(["--node", "worker1.internal", "--reserved-cpus", "0,5-10,40,45-50"])
        .args(["--rt-kernel", "--power", "ultra-low-latency", "--no-per-node-housekeeping"])
        .arg("-o")
        .arg(&plan));
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&plan).unwrap_or_default();
    assert!(text.contains("render_flavour: nto"), "{text}");
    assert!(text.contains("key: irqaffinity") && text.contains("key: kthread_cpus"), "{text}");
    let (_, v) = verify_json(&plan, "worker1.internal");
    let args = check(&v, "cmdline-args");
    let ev = args["evidence"].to_string();
    assert!(!ev.contains("irqaffinity=") && !ev.contains("kthread_cpus="), "{ev}");
    assert!(ev.contains("render_flavour: nto"), "{ev}");
    // managed IRQs kept off by isolcpus=managed_irq, the rest per pod by CRI-O: no verdict
    // from where IRQs sit in a snapshot, and no failure
    let irq = check(&v, "irqaffinity-effect");
    assert_eq!(irq["status"], "n.a.", "{irq}");
    assert!(irq["evidence"].to_string().contains("isolcpus=managed_irq covers"), "{irq}");
    // nohz_full= over the isolated CPUs keeps unbound kthreads on housekeeping
    let kt = check(&v, "kthread-cpus-effect");
    assert_eq!(kt["status"], "pass", "{kt}");
    assert!(kt["evidence"].to_string().contains("nohz_full= covers"), "{kt}");
    // IRQs balanced over the isolated CPUs are NTO's per-pod model, not a fault of the node:
    // a warning naming the annotation, never a failure (513 of 554 IRQs sit there)
    for id in ["irq-effective-affinity", "irq-default-affinity"] {
        let c = check(&v, id);
        assert_eq!(c["status"], "warn", "{c}");
        assert!(c["evidence"].to_string().contains("irq-load-balancing.crio.io"), "{c}");
        assert!(c["fix"].to_string().contains("--beyond-nto"), "{c}");
    }

    // The same plan as a file from before render_flavour (lowlat's renders): every planned
    // argument is demanded, as before, and no effect check replaces them.
    let old = work.path().join("old.yaml");
    std::fs::write(&old, text.replace("  render_flavour: nto\n", ""))
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, v) = verify_json(&old, "worker1.internal");
    let ev = check(&v, "cmdline-args")["evidence"].to_string();
    assert!(ev.contains("irqaffinity=") && ev.contains("kthread_cpus="), "{ev}");
    assert!(v["checks"]
        .as_array()
        .is_some_and(|a| !a.iter().any(|c| c["id"] == "irqaffinity-effect")));

    // The untuned node fails on both effects, each named.
    let bare = work.path().join("bare.yaml");
    let (code, _, err) = run(lowlat()
        .args(["plan", "--must-gather"])
        .arg(nto_must_gather())
        .args(["--node", "worker2.internal", "--reserved", "4", "--power", "low-latency", "-o"])
        .arg(&bare));
    assert_eq!(code, 0, "{err}");
    let (code, v) = verify_json(&bare, "worker2.internal");
    assert_eq!(code, 1);
    // without isolcpus=managed_irq NTO's model is not in place: IRQs there fail as before
    assert_eq!(check(&v, "irq-effective-affinity")["status"], "fail");
    let irq = check(&v, "irqaffinity-effect");
    assert_eq!(irq["status"], "fail", "{irq}");
    assert!(
        irq["evidence"].to_string().contains("IRQs are not kept off the isolated CPUs"),
        "{irq}"
    );
    let kt = check(&v, "kthread-cpus-effect");
    assert_eq!(kt["status"], "fail", "{kt}");
    assert!(
        kt["evidence"].to_string().contains("unbound kthreads may run on the isolated CPUs"),
        "{kt}"
    );
}
