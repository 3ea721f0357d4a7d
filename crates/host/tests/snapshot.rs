//! `lowlat snapshot` round trip: the model read while recording equals the model read back
//! from the tarball (live-only fields aside), on the live host and on the committed fixture
//! (a snapshot of the 2-vCPU Firecracker VM the project is built on).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test helpers")]

use std::path::Path;

use host::{snapshot, Host, ReadOptions, Root};

/// Clear what legitimately differs between a live read and a read of its snapshot.
fn comparable(mut h: Host) -> Host {
    h.source = Default::default();
    h.kernel.boot_id = None;
    for p in &mut h.power.cpus {
        p.cur_khz = None;
    }
    h
}

fn round_trip(root: Root, opts: &ReadOptions) -> (Host, Host) {
    let snap = snapshot::capture(root, opts).unwrap();
    let back = host::read(&Root::from_tgz_bytes("snap.tgz", &snap.tgz).unwrap());
    (comparable(snap.host), comparable(back))
}

#[test]
fn live_snapshot_reads_back_to_the_same_model() {
    let (live, back) =
        round_trip(Root::live(), &ReadOptions { max_processes: Some(30), ..Default::default() });
    assert!(live.tasks.as_ref().is_some_and(|t| !t.is_empty()));
    assert!(!live.topology.cpus.is_empty());
    // Compare section by section first for a readable failure, then everything.
    assert_eq!(live.topology, back.topology);
    assert_eq!(live.kernel, back.kernel);
    assert_eq!(live.irqs, back.irqs);
    assert_eq!(live.tasks, back.tasks);
    assert_eq!(live.unknown, back.unknown);
    assert_eq!(live.warnings, back.warnings);
    assert_eq!(live, back);
}

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/firecracker-vm.tgz")
}

#[test]
fn committed_vm_fixture_reads() {
    let h = host::read(&Root::open(&fixture()).unwrap());
    assert_eq!(h.source.kind, "tgz");
    assert_eq!(h.online_cpus().to_list(), "0-1");
    assert_eq!(h.virtualization.as_deref(), Some("kvm"));
    assert_eq!(h.kernel.realtime, Some(false));
    assert!(h.tasks.as_ref().is_some_and(|t| t
        .iter()
        .any(|t| t.comm == "migration/0" && t.per_cpu_kthread && t.policy == "FF")));
    assert!(h.interrupts.as_ref().is_some_and(|t| t.rows.iter().any(|r| r.id == "LOC")));
    assert!(h.findings.iter().any(|f| f.id == "hypervisor"));
    assert_eq!(h.kernel.boot_id, None, "boot id is live-only");
}

#[test]
fn snapshot_of_a_snapshot_is_the_same() {
    let (a, b) = round_trip(Root::open(&fixture()).unwrap(), &ReadOptions::default());
    assert_eq!(a, b);
    let direct = comparable(host::read(&Root::open(&fixture()).unwrap()));
    assert_eq!(a, direct);
}

#[test]
fn must_gather_snapshot_round_trips() {
    // Snapshots work from any root, keeping in-tree symlinks (pci devices, node cpus).
    let testdata = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"));
    let mg = testdata.join("fixtures/must-gather/must-gather.bare-metal");
    let (a, b) =
        round_trip(Root::must_gather(&mg, Some("worker2")).unwrap(), &ReadOptions::default());
    assert_eq!(a, b);
    assert!(!b.pci_devices.is_empty());
}
