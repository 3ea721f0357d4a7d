//! Seed 001's knobs in the renders: busy polling in TuneD's `[sysctl]` (host profile and the
//! OpenShift Tuned), a chosen idle limit as TuneD's `force_latency` and as a systemd unit that
//! holds PM QoS (run for real as root: the kernel's request reads back as the limit).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use plan::partition::{CpuRequest, PartitionRequest};
use plan::{Plan, PlanOptions, PlanRequest, Power};
use render::{render, RenderOptions, Target};

fn seed001(idle: Option<u64>) -> Plan {
    let w1 = common::host("must-gather.bare-metal", "worker1");
    plan::make_plan(
        &w1,
        &PlanRequest {
            name: "seed001".into(),
            options: PlanOptions {
                power: Power::LowLatency,
                busy_poll_us: Some(50),
                idle_limit_us: idle,
                ..Default::default()
            },
            partition: PartitionRequest {
                reserved: Some(CpuRequest::Count(4)),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .unwrap()
}

fn file(plan: &Plan, target: Target, name: &str) -> String {
    let files = render(plan, target, &RenderOptions::default()).unwrap();
    files
        .iter()
        .find(|f| f.name.ends_with(name))
        .unwrap_or_else(|| {
            panic!("no {name} in {:?}", files.iter().map(|f| &f.name).collect::<Vec<_>>())
        })
        .contents
        .clone()
}

#[test]
fn busy_poll_and_the_idle_limit_reach_tuned_and_openshift() {
    let plan = seed001(Some(80));
    let conf = file(&plan, Target::Tuned, "tuned.conf");
    assert!(conf.contains("net.core.busy_read=50\nnet.core.busy_poll=50\n"), "{conf}");
    assert!(conf.contains("[cpu]\n") && conf.contains("force_latency=80\n"), "{conf}");
    assert!(!conf.contains("cstate.id_no_zero"), "the chosen limit replaces the mode's: {conf}");
    let os = file(&plan, Target::Openshift, "tuned.yaml");
    assert!(os.contains("net.core.busy_read=50"), "{os}");
    assert!(os.contains("force_latency=80"), "{os}");
    // Without a chosen limit, the low-latency mode's C1 limit as before, and no unit.
    let plain = seed001(None);
    let conf = file(&plain, Target::Tuned, "tuned.conf");
    assert!(conf.contains("force_latency=cstate.id_no_zero:1|3"), "{conf}");
    let files = render(&plain, Target::Systemd, &RenderOptions::default()).unwrap();
    assert_eq!(files.len(), 1);
}

#[test]
fn the_idle_limit_unit_holds_pm_qos() {
    let unit = file(&seed001(Some(80)), Target::Systemd, "lowlat-idle-limit.service");
    assert!(
        unit.contains(
            "ExecStart=/bin/sh -c 'exec 3>/dev/cpu_dma_latency && printf %%08x 80 >&3 && exec sleep infinity'\n"
        ),
        "{unit}"
    );
    assert!(unit.contains("[Install]\nWantedBy=sysinit.target\n"), "{unit}");
    assert_eq!(render::misc::chosen_idle_limit(&seed001(Some(0))), Some(0));
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        == Some("0")
}

/// The global PM QoS target now in force (`/dev/cpu_dma_latency` reads 4 bytes, native s32).
fn cpu_dma_latency() -> i32 {
    let b = std::fs::read("/dev/cpu_dma_latency").unwrap_or_else(|e| panic!("{e}"));
    i32::from_ne_bytes(b[..4].try_into().unwrap())
}

#[test]
#[ignore = "needs root and /dev/cpu_dma_latency: run with --include-ignored as root (.ci/run does)"]
fn the_unit_command_holds_the_limit_while_it_runs() {
    assert!(is_root(), "needs root (opens /dev/cpu_dma_latency)");
    let before = cpu_dma_latency();
    // The smallest request wins: ask for less than what is in force so the effect shows.
    let us = u64::try_from(before.clamp(1, 80) - 1).unwrap();
    let mut child = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(render::misc::pm_qos_hold_command(us))
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut seen = before;
    while std::time::Instant::now() < deadline {
        seen = cpu_dma_latency();
        if i64::from(seen) == us as i64 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(i64::from(seen), us as i64, "held {us} µs, the kernel reports {seen}");
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(cpu_dma_latency(), before, "the request ends with the holder");
}

/// The PerformanceProfile CRD has no field for sysctls nor for an idle limit: the
/// `performance-profile` target adds a Tuned CR that includes the operator's generated profile,
/// for the same pool at a higher priority, and validates against the Tuned CRD.
#[test]
fn performance_profile_target_carries_busy_poll_and_the_idle_limit_in_a_patch_tuned() {
    let plan = seed001(Some(80));
    let files = render(&plan, Target::PerformanceProfile, &RenderOptions::default()).unwrap();
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["performance-profile.yaml", "performance-patch-tuned.yaml"]);
    let pp = &files[0].contents;
    assert!(!pp.contains("busy") && !pp.contains("force_latency"), "{pp}");
    let patch = &files[1].contents;
    assert!(
        patch.starts_with("# lowlat plan `seed001`: busy polling and the idle limit"),
        "{patch}"
    );
    let docs = common::yaml_docs(patch);
    assert_eq!(docs.len(), 1);
    let tuned: serde_json::Value = serde_json::to_value(&docs[0]).unwrap();
    assert_eq!(tuned["kind"], "Tuned");
    assert_eq!(tuned["metadata"]["namespace"], "openshift-cluster-node-tuning-operator");
    let data = tuned["spec"]["profile"][0]["data"].as_str().unwrap();
    assert!(data.contains("include=openshift-node-performance-seed001\n"), "{data}");
    assert!(data.contains("[sysctl]\nnet.core.busy_read=50\nnet.core.busy_poll=50\n"), "{data}");
    assert!(data.contains("[cpu]\nforce_latency=80\n"), "{data}");
    let rec = &tuned["spec"]["recommend"][0];
    assert_eq!(rec["priority"], 19, "must win over the operator's profile (priority 20)");
    assert_eq!(rec["profile"], tuned["spec"]["profile"][0]["name"]);
    assert_eq!(rec["machineConfigLabels"]["machineconfiguration.openshift.io/role"], "worker-cnf");
    // busy polling alone: no [cpu] section
    let files =
        render(&seed001(None), Target::PerformanceProfile, &RenderOptions::default()).unwrap();
    let patch = &files[1].contents;
    assert!(patch.contains("net.core.busy_poll=50") && !patch.contains("force_latency"), "{patch}");
    // neither: the PerformanceProfile alone, as PPC writes it
    for (case, plan) in common::cases() {
        let files = render(&plan, Target::PerformanceProfile, &RenderOptions::default()).unwrap();
        assert_eq!(files.len(), 1, "{case}");
    }
}
