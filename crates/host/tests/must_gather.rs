//! The three must-gather nodes in `testdata/fixtures/must-gather/` read through `Root`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test helpers")]

use std::path::PathBuf;

use host::{Root, Severity};

/// The repository's `testdata/` (public fixtures and CRD schemas; see `testdata/NOTICE.md`).
fn testdata_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
}

fn mg(name: &str) -> PathBuf {
    testdata_dir().join("fixtures/must-gather").join(name)
}

#[test]
fn must_gather_without_node_lists_nodes() {
    let e = Root::must_gather(&mg("must-gather.bare-metal"), None).unwrap_err().to_string();
    assert!(e.contains("--node"), "{e}");
    assert!(e.contains("worker1") && e.contains("worker2"), "{e}");
    let e = Root::must_gather(&mg("must-gather.bare-metal"), Some("nope")).unwrap_err().to_string();
    assert!(e.contains("no node \"nope\""), "{e}");
}

#[test]
fn worker1_80_threads_rt_isolated_5_10() {
    let root = Root::must_gather(&mg("must-gather.bare-metal"), Some("worker1")).unwrap();
    let h = host::read(&root);
    assert_eq!(h.source.kind, "must-gather");
    assert_eq!(h.topology.cpus.len(), 80);
    assert_eq!(h.online_cpus().len(), 80);
    assert_eq!(h.numa_nodes.len(), 2);
    let even: cpuset::CpuSet = (0..80).step_by(2).collect();
    let odd: cpuset::CpuSet = (1..80).step_by(2).collect();
    assert_eq!(h.numa_nodes[0].cpus, even);
    assert_eq!(h.numa_nodes[1].cpus, odd);
    assert_eq!(h.numa_nodes[0].distances, vec![10, 21]);
    let cores: std::collections::BTreeSet<_> =
        h.topology.cpus.iter().map(|c| (c.package, c.core)).collect();
    assert_eq!(cores.len(), 40);
    assert_eq!(h.topology.threads_per_core, 2);
    for c in &h.topology.cpus {
        let sib = if c.cpu < 40 { c.cpu + 40 } else { c.cpu - 40 };
        assert_eq!(c.siblings, cpuset::CpuSet::from_cpus([c.cpu, sib]), "cpu {}", c.cpu);
        assert_eq!(c.numa_node, Some(c.cpu % 2));
    }
    assert_eq!(h.kernel.realtime, Some(true), "{:?}", h.kernel.realtime_evidence);
    assert_eq!(h.kernel.release.as_deref(), Some("4.18.0-193.28.1.rt13.77.el8_2.x86_64"));
    let iso = h.kernel.boot.isolcpus.as_ref().unwrap();
    assert_eq!(iso.cpus.to_list(), "5-10");
    assert_eq!(iso.flags, vec!["managed_irq"]);
    assert_eq!(h.isolated_cpus().to_list(), "5-10");
    assert_eq!(h.kernel.boot.rcu_nocbs.as_ref().unwrap().to_list(), "5-10");
    assert_eq!(h.virtualization, None, "{:?}", h.virtualization_evidence);
    assert_eq!(h.virtualization_unknown, None, "cpuinfo was read: bare metal is known");
    let f =
        h.findings.iter().find(|f| f.id == "smt-sibling-not-isolated").expect("sibling finding");
    assert!(f.message.contains("45-50"), "{}", f.message);
    assert!(f.severity >= Severity::Warn);
}

#[test]
fn worker2_is_a_24_vcpu_vm() {
    let root = Root::must_gather(&mg("must-gather.bare-metal"), Some("worker2")).unwrap();
    let h = host::read(&root);
    assert_eq!(h.topology.cpus.len(), 24);
    assert_eq!(h.kernel.realtime, Some(false));
    assert_eq!(h.virtualization.as_deref(), Some("kvm"), "{:?}", h.virtualization_evidence);
    assert!(h.findings.iter().any(|f| f.id == "hypervisor"));
    assert!(h.kernel.boot.isolcpus.is_none());
}

#[test]
fn sno_node_reads() {
    let root =
        Root::must_gather(&mg("must-gather.sno"), Some("ocp47sno-master-0.demo.lab")).unwrap();
    let h = host::read(&root);
    assert_eq!(h.topology.cpus.len(), 12);
    assert!(h.kernel.cmdline.is_some());
    assert!(h.virtualization.is_some());
    assert!(!h.numa_nodes.is_empty());
}

/// Issue 21, item 8: a snapshot whose /proc/cpuinfo cannot be read is not bare metal: there
/// was no `hypervisor` flag to look for, and the views say "unknown".
#[test]
fn an_unreadable_cpuinfo_leaves_virtualization_unknown_not_bare_metal() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("proc")).unwrap();
    std::fs::create_dir_all(d.path().join("sys/devices/system/cpu")).unwrap();
    std::fs::write(d.path().join("proc/cmdline"), "BOOT_IMAGE=/vmlinuz ro\n").unwrap();
    std::fs::write(d.path().join("sys/devices/system/cpu/online"), "0-1\n").unwrap();
    let h = host::read(&Root::open(d.path()).unwrap());
    assert_eq!(h.virtualization, None);
    let why = h.virtualization_unknown.clone().expect("unknown");
    assert!(why.contains("/proc/cpuinfo"), "{why}");
    std::fs::write(
        d.path().join("proc/cpuinfo"),
        "processor\t: 0\nflags\t\t: fpu tsc\n\nprocessor\t: 1\nflags\t\t: fpu tsc\n",
    )
    .unwrap();
    let h = host::read(&Root::open(d.path()).unwrap());
    assert_eq!((h.virtualization, h.virtualization_unknown), (None, None), "bare metal, known");
}
