//! The diagnosis on fixture trees (seed 001's v1 Docker chain, a non-root v2 cgroup with RT
//! group scheduling) and on hand-built evidence for the order of the causes.

use super::*;
use std::path::Path;

fn fixture(name: &str) -> Root {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    Root::open(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

#[test]
fn v1_docker_chain_names_the_zero_level_below_a_budgeted_parent() {
    let ev = gather(&fixture("rt-v1-docker"), "self");
    assert_eq!(ev.cap_sys_nice, Some(true));
    assert_eq!(ev.rlimit_rtprio, Some(0));
    assert_eq!(ev.rt_group_sched, Some(true));
    let Some(CgroupPlace::V1 { path, chain, .. }) = &ev.cgroup else { panic!("{:?}", ev.cgroup) };
    assert_eq!(path, "/system.slice/docker-4f1e2d.scope");
    let values: Vec<_> = chain.iter().map(|l| l.rt_runtime_us).collect();
    assert_eq!(values, [Some(950_000), Some(950_000), Some(0)]);
    let c = diagnose(&ev, 95, true).expect("a cause");
    assert_eq!(c.kind, CauseKind::CgroupV1NoBudget);
    let leaf = "/sys/fs/cgroup/cpu,cpuacct/system.slice/docker-4f1e2d.scope/cpu.rt_runtime_us";
    assert!(c.message.contains(leaf), "{}", c.message);
    assert!(c.fix.contains(&format!("echo 100000 > {leaf}")), "{}", c.fix);
    assert!(c
        .evidence
        .iter()
        .any(|e| e == "/sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.rt_runtime_us = 950000"));
}

#[test]
fn v2_non_root_cgroup_with_rt_group_sched_is_the_cause() {
    let ev = gather(&fixture("rt-v2-nonroot"), "self");
    assert_eq!(ev.rt_group_sched, Some(true), "{:?}", ev.rt_group_sched_evidence);
    assert!(ev.rt_group_sched_evidence.as_deref().unwrap_or("").contains("/proc/config.gz"));
    assert_eq!(
        ev.cgroup,
        Some(CgroupPlace::V2 {
            mount: "/sys/fs/cgroup".into(),
            path: "/process_api/61bd41210c3a".into(),
            cpu_path: "/process_api/61bd41210c3a".into(),
        })
    );
    let c = diagnose(&ev, 95, true).expect("a cause");
    assert_eq!(c.kind, CauseKind::CgroupV2NonRoot);
    assert!(c.message.contains("/process_api/61bd41210c3a"), "{}", c.message);
    assert!(c.fix.contains("echo $$ > /sys/fs/cgroup/cgroup.procs"), "{}", c.fix);
    assert!(c.fix.contains("--rt-cgroup root"), "{}", c.fix);
}

fn v2(cpu_path: &str) -> Evidence {
    Evidence {
        cap_sys_nice: Some(true),
        rlimit_rtprio: Some(0),
        sched_rt_runtime_us: Some(950_000),
        rt_group_sched: Some(true),
        rt_group_sched_evidence: Some("CONFIG_RT_GROUP_SCHED=y".into()),
        cgroup: Some(CgroupPlace::V2 {
            mount: "/sys/fs/cgroup".into(),
            path: "/a/b".into(),
            cpu_path: cpu_path.into(),
        }),
    }
}

#[test]
fn causes_come_in_order_and_only_from_evidence() {
    // Root cgroup for cpu: nothing refuses; refused anyway → unknown, with the evidence.
    assert_eq!(diagnose(&v2("/"), 95, false), None);
    assert_eq!(diagnose(&v2("/"), 95, true).map(|c| c.kind), Some(CauseKind::Unknown));
    // Missing capability comes first, unless RLIMIT_RTPRIO covers the priority.
    let mut e = v2("/a");
    e.cap_sys_nice = Some(false);
    assert_eq!(diagnose(&e, 95, true).map(|c| c.kind), Some(CauseKind::NoCapSysNice));
    e.rlimit_rtprio = Some(95);
    assert_eq!(diagnose(&e, 95, true).map(|c| c.kind), Some(CauseKind::CgroupV2NonRoot));
    // RT bandwidth off (-1): the kernel skips the group check.
    e.sched_rt_runtime_us = Some(-1);
    assert_eq!(diagnose(&e, 95, false), None);
    // RT group scheduling off: the cgroup does not matter.
    let mut e = v2("/a");
    e.rt_group_sched = Some(false);
    assert_eq!(diagnose(&e, 95, false), None);
    e.sched_rt_runtime_us = Some(0);
    assert_eq!(diagnose(&e, 95, false).map(|c| c.kind), Some(CauseKind::GlobalRuntimeZero));
}

#[test]
fn v1_budget_everywhere_passes() {
    let e = Evidence {
        cap_sys_nice: Some(true),
        cgroup: Some(CgroupPlace::V1 {
            mount: "/sys/fs/cgroup/cpu".into(),
            path: "/x".into(),
            chain: vec![
                ChainLevel {
                    file: "/sys/fs/cgroup/cpu/cpu.rt_runtime_us".into(),
                    rt_runtime_us: Some(950_000),
                },
                ChainLevel {
                    file: "/sys/fs/cgroup/cpu/x/cpu.rt_runtime_us".into(),
                    rt_runtime_us: Some(10_000),
                },
            ],
        }),
        ..Evidence::default()
    };
    assert_eq!(diagnose(&e, 95, false), None);
}

#[test]
fn parsers() {
    assert_eq!(cpu_cgroup_line("4:memory:/x\n1:cpu:/\n0::/\n"), Some((true, "/".to_string())));
    assert_eq!(cpu_cgroup_line("0::/process_api/1\n"), Some((false, "/process_api/1".to_string())));
    assert_eq!(cpu_cgroup_line("garbage"), None);
    let m = "cgroup /sys/fs/cgroup/cpuacct cgroup rw,cpuacct 0 0\ncgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
    assert_eq!(
        cgroup_mounts(m),
        (Some("/sys/fs/cgroup/cpu".into()), Some("/sys/fs/cgroup/unified".into()))
    );
    assert_eq!(
        parse_rtprio_limit("Max realtime priority     unlimited  unlimited\n"),
        Some(u64::MAX)
    );
    assert_eq!(parse_rtprio_limit("Max realtime priority     50  99\n"), Some(50));
    let cfg = "CONFIG_RT_GROUP_SCHED=y\nCONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED=y\n";
    assert!(!rt_group_sched_from(cfg, "quiet").0);
    assert!(rt_group_sched_from(cfg, "quiet rt_group_sched=1").0);
    assert!(!rt_group_sched_from("CONFIG_RT_GROUP_SCHED=y\n", "rt_group_sched=0").0);
    assert!(!rt_group_sched_from("# CONFIG_RT_GROUP_SCHED is not set\n", "").0);
    assert_eq!(levels("/a/b"), ["", "/a", "/a/b"]);
    assert_eq!(levels("/"), [""]);
}

#[test]
fn v1_containers_each_with_their_whole_chain() {
    let c = containers(&fixture("rt-v1-docker"));
    assert!(c.budgets_enforced());
    let Tree::V1 { containers, .. } = &c.tree else { panic!("{:?}", c.tree) };
    let paths: Vec<&str> = containers.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/kubepods/burstable/pod1234/0a1b2c3d4e5f6a7b", "/system.slice/docker-4f1e2d.scope"]
    );
    assert_eq!(containers[0].first_zero(), None);
    assert_eq!(
        containers[1].first_zero().map(|l| l.file.as_str()),
        Some("/sys/fs/cgroup/cpu,cpuacct/system.slice/docker-4f1e2d.scope/cpu.rt_runtime_us")
    );
}

#[test]
fn v2_containers_and_rt_group_sched() {
    let c = containers(&fixture("rt-v2-nonroot"));
    assert_eq!(c.rt_group_sched, Some(true));
    assert_eq!(
        c.tree,
        Tree::V2 {
            mount: "/sys/fs/cgroup".into(),
            containers: vec![
                "/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab12.scope".into(),
                "/system.slice/docker-77aa.scope".into(),
            ]
        }
    );
}

#[test]
fn container_names() {
    assert!(is_container("/system.slice", "docker-4f1e.scope"));
    assert!(is_container("/machine.slice", "libpod-abc.scope"));
    assert!(!is_container("/machine.slice", "libpod-conmon-abc.scope"));
    assert!(is_container("/docker", "4f1e2d3c4b5a69788"));
    assert!(is_container("/kubepods/burstable/pod12", "abc"));
    assert!(is_container("/kubepods.slice/kubepods-pod1.slice", "cri-containerd-ab.scope"));
    assert!(!is_container("/kubepods.slice", "kubepods-burstable.slice"));
    assert!(!is_container("/", "user.slice"));
}

#[test]
fn cause_ids_are_their_serialized_form() {
    for k in [
        CauseKind::NoCapSysNice,
        CauseKind::CgroupV1NoBudget,
        CauseKind::CgroupV2NonRoot,
        CauseKind::GlobalRuntimeZero,
        CauseKind::Unknown,
    ] {
        assert_eq!(serde_json::to_value(k).unwrap_or_default(), k.as_str());
    }
}

#[test]
fn inspect_finds_the_same_on_both_trees() {
    for (name, needle) in [
        ("rt-v1-docker", "/system.slice/docker-4f1e2d.scope: /sys/fs/cgroup/cpu,cpuacct/system.slice/docker-4f1e2d.scope/cpu.rt_runtime_us = 0"),
        ("rt-v2-nonroot", "CONFIG_RT_GROUP_SCHED=y (/proc/config.gz)"),
    ] {
        let h = crate::read(&fixture(name));
        let f = h.findings.iter().find(|f| f.id == "container-rt-budget");
        let f = f.unwrap_or_else(|| panic!("{name}: {:?}", h.findings));
        assert!(f.evidence.iter().any(|e| e == needle), "{name}: {:?}", f.evidence);
    }
}

#[test]
fn namespaces_recognise_containers_of_any_name_and_names_stay_for_snapshots() {
    let root = fixture("containers-ns-v2");
    let c = containers(&root);
    let Tree::V2 { containers: found, .. } = &c.tree else { panic!("{:?}", c.tree) };
    assert_eq!(
        found,
        &[
            "/lxc.payload.c1",
            "/machine.slice/machine-web.scope",
            "/system.slice/app.service",
            "/system.slice/docker-77aa.scope",
        ],
        "logind (own mount namespace, root /) and the session (PID 1's namespaces) are not containers"
    );
    // By name first, even with namespace evidence available.
    assert_eq!(c.recognised("/system.slice/docker-77aa.scope"), Recognised::NamePattern);
    assert_eq!(
        c.recognised("/machine.slice/machine-web.scope"),
        Recognised::Namespaces(NsEvidence {
            pid: 4242,
            differ: vec![Namespace::Pid, Namespace::Mnt],
            root: None
        })
    );
    assert_eq!(
        c.recognised("/system.slice/app.service"),
        Recognised::Namespaces(NsEvidence {
            pid: 310,
            differ: vec![Namespace::Mnt],
            root: Some("/var/lib/portables/app".into())
        })
    );
    let json = serde_json::to_value(c.recognised("/lxc.payload.c1")).unwrap_or_default();
    assert_eq!(
        json,
        serde_json::json!({"by": "namespaces", "pid": 5000, "differ": ["pid", "mnt"]})
    );
    assert_eq!(
        serde_json::to_value(Recognised::NamePattern).unwrap_or_default(),
        serde_json::json!({"by": "name-pattern"})
    );
    // Without process information (a snapshot, a must-gather), only names count.
    let snap = containers(&fixture("rt-v2-nonroot"));
    assert!(snap.namespaced.is_empty());
}

#[test]
fn namespace_parsers_and_verdict() {
    assert_eq!(parse_ns_link("pid:[4026531836]", Namespace::Pid), Some(4_026_531_836));
    assert_eq!(parse_ns_link("mnt:[4026531836]", Namespace::Pid), None);
    assert_eq!(parse_ns_link("pid:[x]", Namespace::Pid), None);
    assert_eq!(sample_pids("1\n2\nx\n3\n"), [1, 2, 3]);
    assert_eq!(sample_pids(&"7\n".repeat(100)).len(), MAX_SAMPLED);
    let host = HostNs { pid: 1, mnt: 2 };
    let never = || -> Option<String> { panic!("root read only for a mount namespace alone") };
    assert_eq!(ns_verdict(host, 9, Some(1), Some(2), never), None);
    assert_eq!(ns_verdict(host, 9, None, None, never), None);
    assert_eq!(
        ns_verdict(host, 9, Some(5), Some(2), never).map(|e| e.differ),
        Some(vec![Namespace::Pid])
    );
    assert_eq!(ns_verdict(host, 9, Some(1), Some(3), || Some("/".into())), None);
    assert_eq!(
        ns_verdict(host, 9, Some(1), Some(3), || Some("/srv/c".into())).and_then(|e| e.root),
        Some("/srv/c".into())
    );
}

/// The container cgroups a walk lists, with how each was recognised (`name`, or `ns <pid>`)
/// and how many containers each holds.
fn listed(c: &Containers) -> Vec<String> {
    let paths: Vec<String> = match &c.tree {
        Tree::V1 { containers, .. } => containers.iter().map(|c| c.path.clone()).collect(),
        Tree::V2 { containers, .. } => containers.clone(),
        Tree::Unknown => Vec::new(),
    };
    paths
        .into_iter()
        .map(|p| {
            let by = match c.recognised(&p) {
                Recognised::NamePattern => "name".to_string(),
                Recognised::Namespaces(ev) => format!("ns {}", ev.pid),
            };
            format!("{p} {by} +{}", c.nested(&p))
        })
        .collect()
}

#[test]
fn nested_containers_are_listed_once_at_their_top_cgroup_v2() {
    let c = containers(&fixture("containers-nested-v2"));
    assert_eq!(
        listed(&c),
        [
            // docker-in-docker under --cgroup-parent: the outer container begins where its
            // dockerd (moved to init/) runs in another PID namespace; one inner container.
            "/ci/0123456789abcdef ns 7000 +1",
            // LXC running systemd: its cgroup is empty, systemd is in init.scope; the Docker
            // container inside is counted, its journald and dockerd are the container's own.
            "/lxc.payload.c1 ns 5000 +1",
            // systemd-nspawn's payload/ and supervisor/ (PID 1's namespaces) are one machine.
            "/machine.slice/machine-web.scope ns 4242 +0",
            // docker-in-docker by name: two inner containers.
            "/system.slice/docker-d1d1.scope name +2",
        ],
        "lxc.monitor, the user's systemd (init.scope in PID 1's namespaces) and the root's \
         init.scope are not containers; no descendant of a container is listed"
    );
}

#[test]
fn nested_containers_are_listed_once_at_their_top_cgroup_v1() {
    let c = containers(&fixture("containers-nested-v1"));
    assert_eq!(
        listed(&c),
        ["/docker/0a0b0c0d0e0f1a1b name +1", "/lxc.payload.c1 ns 5000 +0", "/lxc/c2 ns 5500 +0"]
    );
    // The chain is the container's own, from the root down to its top cgroup.
    let Tree::V1 { containers, .. } = &c.tree else { panic!("{:?}", c.tree) };
    let c2 = containers.iter().find(|c| c.path == "/lxc/c2").map(|c| &c.chain);
    let values: Vec<_> = c2.into_iter().flatten().map(|l| l.rt_runtime_us).collect();
    assert_eq!(values, [Some(950_000), Some(100_000), Some(50_000)]);
}

#[test]
fn without_process_information_only_names_count_and_nesting_by_name() {
    // The nested v2 tree with its /proc taken away (a must-gather): names only.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/containers-nested-v2");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(src.join("sys"))
        .arg(dir.path())
        .status()
        .map(|s| s.success());
    assert_eq!(status.ok(), Some(true));
    std::fs::create_dir(dir.path().join("proc")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(src.join("proc/mounts"), dir.path().join("proc/mounts"))
        .unwrap_or_else(|e| panic!("{e}"));
    let c = containers(&Root::open(dir.path()).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(
        listed(&c),
        [
            "/ci/0123456789abcdef/docker/fedcba9876543210 name +0",
            "/lxc.payload.c1/system.slice/docker-c1d0.scope name +0",
            "/system.slice/docker-d1d1.scope name +2",
        ]
    );
}

#[test]
fn only_a_unit_may_begin_a_container() {
    assert!(may_begin_container("/lxc.payload.c1"));
    assert!(may_begin_container("/machine.slice/machine-web.scope"));
    assert!(!may_begin_container(""));
    assert!(!may_begin_container("/machine.slice"));
}

#[test]
fn a_snapshot_of_a_tree_gives_the_same_containers_and_verdicts() {
    for name in ["containers-ns-v2", "containers-nested-v2", "containers-nested-v1"] {
        let tree = containers(&fixture(name));
        let snap = crate::snapshot::capture(fixture(name), &crate::ReadOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let back = Root::from_tgz_bytes("s.tgz", &snap.tgz).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(containers(&back), tree, "{name}");
    }
    // The mount-namespace-plus-root verdict needs the root link, kept in the manifest.
    let snap =
        crate::snapshot::capture(fixture("containers-ns-v2"), &crate::ReadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        snap.manifest.root_links.get("proc/310/root").map(String::as_str),
        Some("/var/lib/portables/app")
    );
    let back = Root::from_tgz_bytes("s.tgz", &snap.tgz).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        containers(&back).recognised("/system.slice/app.service"),
        Recognised::Namespaces(NsEvidence {
            pid: 310,
            differ: vec![Namespace::Mnt],
            root: Some("/var/lib/portables/app".into())
        })
    );
}
