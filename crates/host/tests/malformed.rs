//! Garbage and truncation in a host tree become warnings naming the file (and line), or
//! unknowns with the reason — never a panic, never a silently wrong value.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test helpers")]

use std::path::Path;

use host::Root;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn garbage_files_give_warnings_with_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "sys/devices/system/cpu/online", "0-x\n");
    write(r, "sys/devices/system/cpu/cpu0/topology/core_id", "zero\n");
    write(r, "sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0,\u{1F600}\n");
    write(r, "sys/devices/system/cpu/cpu1/topology/core_id", "1\n");
    write(r, "proc/cmdline", "isolcpus=domain,1-q nohz_full=1\n");
    write(r, "proc/cpuinfo", "processor : zero\nflags : hypervisor\n");
    write(r, "proc/interrupts", "           CPU0       CPU1\n  1:  5  x\nLOC: 7\n");
    write(r, "proc/irq/1/smp_affinity_list", "garbage\n");
    write(r, "proc/irq/default_smp_affinity", "zz\n");
    write(r, "proc/meminfo", "nothing useful\n");
    write(r, "sys/kernel/mm/transparent_hugepage/enabled", "always madvise never\n");
    write(r, "proc/5/task/5/stat", "5 (truncated) S 1\n");
    write(r, "proc/5/task/5/status", "Cpus_allowed_list:\tnope\n");
    write(r, "proc/6/task/6/stat", "");
    let h = host::read(&Root::open(r).unwrap());
    let warned = |path: &str| h.warnings.iter().any(|w| w.path == path);
    for p in [
        "sys/devices/system/cpu/online",
        "sys/devices/system/cpu/cpu0/topology/core_id",
        "sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
        "proc/cmdline",
        "proc/cpuinfo",
        "proc/interrupts",
        "proc/irq/1/smp_affinity_list",
        "proc/irq/default_smp_affinity",
        "proc/meminfo",
        "sys/kernel/mm/transparent_hugepage/enabled",
        "proc/5/task/5/stat",
        "proc/6/task/6/stat",
    ] {
        assert!(warned(p), "no warning for {p}: {:#?}", h.warnings);
    }
    assert!(h.warnings.iter().any(|w| w.path == "proc/cpuinfo" && w.line == Some(1)));
    // What could be understood still is.
    assert_eq!(h.topology.cpus.len(), 2);
    assert_eq!(h.kernel.boot.nohz_full.as_ref().map(|s| s.to_list()).as_deref(), Some("1"));
    assert!(h.kernel.boot.isolcpus.is_none());
    assert_eq!(h.memory.thp_enabled, None);
    assert_eq!(h.tasks.as_ref().map(Vec::len), Some(0));
    // Missing areas are unknown, with the file that was tried.
    assert!(h.unknown.iter().any(|u| u.field == "block_devices" && u.path == "sys/block"));
}

#[test]
fn empty_and_truncated_tarballs_are_refused_cleanly() {
    let full = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/firecracker-vm.tgz"),
    )
    .unwrap();
    for cut in [0, 10, full.len() / 3, full.len() - 20] {
        // A cut gzip stream fails to decompress: an error, never a panic or a half-read host.
        let r = Root::from_tgz_bytes("cut.tgz", &full[..cut]);
        assert!(r.is_err(), "cut at {cut} was accepted");
    }
}

#[test]
fn skip_tasks_leaves_tasks_unread() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/firecracker-vm.tgz");
    let h = host::read_with(
        &Root::open(&fixture).unwrap(),
        &host::ReadOptions { skip_tasks: true, ..Default::default() },
    );
    assert!(h.tasks.is_none());
    assert!(!h.topology.cpus.is_empty());
}
