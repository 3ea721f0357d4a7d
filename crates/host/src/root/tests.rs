//! Root backends: directory, tarball hygiene, must-gather lookup.

use super::*;

fn tar_with(entries: &[(&str, &str, Option<&str>)]) -> Vec<u8> {
    // (path, content, symlink target)
    let mut b = tar::Builder::new(Vec::new());
    for (p, c, link) in entries {
        let mut h = tar::Header::new_gnu();
        match link {
            Some(t) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                h.set_mode(0o777);
                // set_path/set_link_name refuse `..`-free checks we want to bypass: write raw.
                let name = h.as_old_mut();
                name.name[..p.len()].copy_from_slice(p.as_bytes());
                name.linkname[..t.len()].copy_from_slice(t.as_bytes());
                h.set_cksum();
                b.append(&h, std::io::empty()).unwrap();
            }
            None => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_size(c.len() as u64);
                h.set_mode(0o644);
                let name = h.as_old_mut();
                name.name[..p.len()].copy_from_slice(p.as_bytes());
                h.set_cksum();
                b.append(&h, c.as_bytes()).unwrap();
            }
        }
    }
    b.into_inner().unwrap()
}

#[test]
fn tgz_reads_files_lists_and_follows_in_tree_links() {
    let bytes = tar_with(&[
        ("proc/cmdline", "quiet\n", None),
        ("sys/devices/pci0000:00/0000:00:01.0/numa_node", "1\n", None),
        ("sys/bus/pci/devices/0000:00:01.0", "", Some("../../../devices/pci0000:00/0000:00:01.0")),
        ("sys/devices/system/cpu/cpu0/topology/core_id", "0\n", None),
        ("sys/devices/system/node/node0/cpu0", "", Some("../../cpu/cpu0")),
    ]);
    let r = Root::from_tgz_bytes("t.tar", &bytes).unwrap();
    assert_eq!(r.read_string("proc/cmdline").unwrap(), "quiet\n");
    assert_eq!(r.read_trimmed("sys/bus/pci/devices/0000:00:01.0/numa_node").unwrap(), "1");
    assert_eq!(r.read_trimmed("sys/devices/system/node/node0/cpu0/topology/core_id").unwrap(), "0");
    assert_eq!(r.list_dir("sys/bus/pci/devices").unwrap(), vec!["0000:00:01.0"]);
    assert_eq!(r.list_dir("sys/bus/pci/devices/0000:00:01.0").unwrap(), vec!["numa_node"]);
    assert_eq!(r.read_link("sys/devices/system/node/node0/cpu0").unwrap(), "../../cpu/cpu0");
    assert!(r.read_string("proc/missing").unwrap_err().is_not_found());
    assert!(r.read_string("../etc/passwd").is_err());
}

#[test]
fn tgz_refuses_traversal_absolute_and_escaping_links() {
    for bad in [
        tar_with(&[("../evil", "x", None)]),
        tar_with(&[("proc/../../evil", "x", None)]),
        tar_with(&[("/etc/passwd", "x", None)]),
        tar_with(&[("sys/x", "", Some("../../etc"))]),
        tar_with(&[("sys/x", "", Some("/etc"))]),
    ] {
        let e = Root::from_tgz_bytes("bad.tgz", &bad).unwrap_err();
        assert!(e.to_string().contains("refusing"), "{e}");
    }
    let e = Root::from_tgz_bytes("junk.tgz", b"not a tarball at all").unwrap_err();
    assert!(e.to_string().contains("not a readable tar"), "{e}");
    let e = Root::from_tgz_bytes("junk.tgz", &[0x1f, 0x8b, 1, 2, 3]).unwrap_err();
    assert!(e.to_string().contains("not a readable tar"), "{e}");
}

#[test]
fn dir_root_resolves_links_inside_and_refuses_escapes() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir_all(p.join("sys/devices/x")).unwrap();
    std::fs::write(p.join("sys/devices/x/val"), "7\n").unwrap();
    std::fs::create_dir_all(p.join("sys/bus")).unwrap();
    std::os::unix::fs::symlink("../devices/x", p.join("sys/bus/x")).unwrap();
    std::os::unix::fs::symlink("/etc", p.join("sys/bus/abs")).unwrap();
    std::os::unix::fs::symlink("../../../..", p.join("sys/bus/up")).unwrap();
    std::os::unix::fs::symlink("val", p.join("sys/devices/x/alias")).unwrap();
    let r = Root::open(p).unwrap();
    assert_eq!(r.read_trimmed("sys/bus/x/val").unwrap(), "7");
    assert_eq!(r.read_trimmed("sys/bus/x/alias").unwrap(), "7");
    assert!(matches!(r.read_string("sys/bus/abs/passwd"), Err(ReadError::Refused { .. })));
    assert!(matches!(r.read_string("sys/bus/up/etc/passwd"), Err(ReadError::Refused { .. })));
    assert!(matches!(r.list_dir("sys/bus/abs"), Err(ReadError::Refused { .. })));
    assert!(Root::open(&p.join("nope")).unwrap_err().to_string().contains("does not exist"));
}

#[test]
fn recording_keeps_every_access() {
    let bytes = tar_with(&[("proc/cmdline", "quiet\n", None)]);
    let (r, rec) = Root::from_tgz_bytes("t.tar", &bytes).unwrap().recording();
    let _ = r.read_string("proc/cmdline");
    let _ = r.read_string("proc/nope");
    let _ = r.list_dir("proc");
    let acc = rec.accesses();
    assert_eq!(acc.len(), 3);
    assert!(matches!(&acc[1], Access::Read { result: Err(_), .. }));
}
