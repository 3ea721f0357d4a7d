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
    // The refusal names the link, whichever way the directory was opened.
    let e = r.list_dir("sys/bus/abs").unwrap_err().to_string();
    assert!(e.contains("sys/bus/abs -> /etc is absolute"), "{e}");
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

/// A tar header claiming `size` bytes for `name`, followed by `data` (possibly much less).
fn lying_header(name: &str, size: u64, data: &[u8]) -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_path(name).unwrap();
    h.set_size(size);
    h.set_mode(0o644);
    h.set_cksum();
    let mut out = h.as_bytes().to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512 + 1024, 0);
    out
}

#[test]
fn tgz_never_believes_a_size_claim() {
    // 1 TiB claimed, a few bytes there: refused, no allocation of the claim.
    let bytes = lying_header("proc/cpuinfo", 1 << 40, b"processor : 0\n");
    let e = Root::from_tgz_bytes("h.tar", &bytes).unwrap_err();
    assert!(e.to_string().contains("not a readable tar"), "{e}");
    assert_eq!(util::exit::Classify::exit_code(&e), util::exit::ExitCode::Usage);
}

#[test]
fn tgz_keeps_only_host_files_and_refuses_big_ones() {
    let big = vec![b'x'; (MAX_FILE_BYTES + 1) as usize];
    let mut b = tar::Builder::new(Vec::new());
    for (p, data) in [
        ("proc/cmdline", &b"quiet\n"[..]),
        ("proc/cpuinfo", &big[..]),
        ("home/user/big.iso", &big[..]),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        b.append_data(&mut h, p, data).unwrap();
    }
    let r = Root::from_tgz_bytes("t.tar", &b.into_inner().unwrap()).unwrap();
    assert_eq!(r.read_string("proc/cmdline").unwrap(), "quiet\n");
    let e = r.read_string("proc/cpuinfo").unwrap_err();
    assert!(matches!(e, ReadError::Refused { .. }) && e.to_string().contains("16 MiB"), "{e}");
    assert!(r.read_string("home/user/big.iso").unwrap_err().is_not_found());
    assert!(r.list_dir("").unwrap().iter().all(|n| n != "home"));
}

#[test]
fn tgz_bounds_the_decompressed_stream_and_what_it_keeps() {
    use std::io::Write as _;
    let limits = tgz::Limits { file: 1 << 10, kept: 64 << 10, stream: 1 << 20 };
    // Zeros compress ~1000:1; a file outside the kept set is skipped but still counted.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&lying_header("junk", 2 << 20, &vec![0; 2 << 20])).unwrap();
    let bytes = gz.finish().unwrap();
    assert!(bytes.len() < 10_000);
    let e = tgz::TgzTree::from_reader_with("z.tgz", &bytes[..], limits).unwrap_err();
    assert!(e.to_string().contains("unpacks to more than 1 MiB"), "{e}");
    // Many small kept files: the total kept is bounded, names and entries included.
    let mut b = tar::Builder::new(Vec::new());
    for i in 0..400 {
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_mode(0o644);
        b.append_data(&mut h, format!("sys/{i:0>100}"), &[][..]).unwrap();
    }
    let bytes = b.into_inner().unwrap();
    let e = tgz::TgzTree::from_reader_with("many.tar", &bytes[..], limits).unwrap_err();
    assert!(e.to_string().contains("keeps more than"), "{e}");
}

#[test]
fn corrupt_archives_never_quote_their_bytes() {
    // A file that is not an archive (a password hash, say) is refused without echoing it.
    let secret = b"root:$6$SECRETSALT$0123456789abcdef:19000:0:99999:7:::\n".repeat(20);
    let e = Root::from_tgz_bytes("shadow", &secret).unwrap_err();
    assert!(!e.to_string().contains("SECRET"), "{e}");
    let mut h = lying_header("proc/x", 5, b"hello");
    h[124..136].copy_from_slice(b"SECRETSECRET"); // the size field: not octal
    let e = Root::from_tgz_bytes("bad.tar", &h).unwrap_err();
    assert!(!e.to_string().contains("SECRET"), "{e}");
    // Names in messages are escaped excerpts.
    let e = Root::from_tgz_bytes("t.tar", &tar_with(&[("sys/\x1b]0;x\x07", "", Some("/etc"))]))
        .unwrap_err();
    assert!(!e.to_string().contains('\x1b'), "{e}");
}

#[test]
fn special_files_are_refused_not_read() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir_all(p.join("proc")).unwrap();
    let fifo = p.join("proc/cpuinfo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let r = Root::open(p).unwrap();
    let e = r.read_string("proc/cpuinfo").unwrap_err();
    assert!(e.to_string().contains("FIFO"), "{e}");
    // A FIFO given as the root itself.
    let e = Root::open(&fifo).unwrap_err();
    assert!(e.to_string().contains("FIFO"), "{e}");
    assert_eq!(util::exit::Classify::exit_code(&e), util::exit::ExitCode::Usage);
    // A file over the cap in a directory root.
    std::fs::write(p.join("proc/cmdline"), vec![b'a'; (MAX_FILE_BYTES + 10) as usize]).unwrap();
    let e = r.read_string("proc/cmdline").unwrap_err();
    assert!(e.to_string().contains("16 MiB"), "{e}");
}

#[test]
fn must_gather_refuses_symlinks_and_duplicates_and_names_the_depth() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let tgz = tar_with(&[("proc/cmdline", "quiet\n", None)]);
    for (gather, node) in [("a", "n1"), ("b", "n1"), ("a", "n2")] {
        std::fs::create_dir_all(p.join(gather).join("nodes").join(node)).unwrap();
        std::fs::write(p.join(gather).join("nodes").join(node).join("sysinfo.tgz"), &tgz).unwrap();
    }
    let e = Root::must_gather(p, Some("n1")).unwrap_err().to_string();
    assert!(e.contains("a/nodes/n1") && e.contains("b/nodes/n1"), "{e}");
    assert!(Root::must_gather(p, Some("n2")).is_ok());
    std::fs::write(p.join("secret"), b"root:$6$SECRET\n").unwrap();
    std::fs::create_dir_all(p.join("a/nodes/n3")).unwrap();
    std::os::unix::fs::symlink(p.join("secret"), p.join("a/nodes/n3/sysinfo.tgz")).unwrap();
    let e = Root::must_gather(p, Some("n3")).unwrap_err().to_string();
    assert!(e.contains("symlink") && !e.contains("SECRET"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let e = Root::must_gather(empty.path(), None).unwrap_err().to_string();
    assert!(e.contains("within 8 directory levels"), "{e}");
}

#[test]
fn tgz_answers_root_links_from_the_manifest_only_when_plain() {
    let long = format!("/{}", "a".repeat(manifest::MAX_ROOT_LINK));
    let m = serde_json::json!({
        "schema_version": 1, "tool": "t", "source": "s", "hostname": null, "taken_at": 0,
        "files": 0, "dirs": 0, "symlinks": 0, "max_processes": null, "failures": [],
        "root_links": {
            "proc/310/root": "/var/lib/portables/app",
            "proc/1/root": "/",
            "proc/5/root": "/x\u{1b}[2J",
            "proc/6/root": "relative",
            "proc/7/root": long,
            "proc/7/cwd": "/tmp",
            "sys/evil": "/etc",
        }
    })
    .to_string();
    let bytes = tar_with(&[
        (manifest::MANIFEST, m.as_str(), None),
        ("proc/310/ns/pid", "", Some("pid:[4026531836]")),
        // An entry in the archive wins over the manifest.
        ("proc/1/root", "", Some("1")),
    ]);
    let r = Root::from_tgz_bytes("t.tar", &bytes).unwrap();
    assert_eq!(r.read_link("proc/310/root").unwrap(), "/var/lib/portables/app");
    assert_eq!(r.read_link("proc/1/root").unwrap(), "1");
    for p in ["proc/5/root", "proc/6/root", "proc/7/root", "proc/7/cwd", "sys/evil"] {
        assert!(r.read_link(p).unwrap_err().is_not_found(), "{p}");
    }
    // A manifest of an older snapshot (no root_links) reads as before.
    let old = tar_with(&[(
        manifest::MANIFEST,
        r#"{"schema_version":1,"tool":"t","source":"s","hostname":null,"taken_at":0,"files":0,"dirs":0,"symlinks":0,"max_processes":null,"failures":[]}"#,
        None,
    )]);
    let r = Root::from_tgz_bytes("t.tar", &old).unwrap();
    assert!(r.read_link("proc/310/root").unwrap_err().is_not_found());
}

#[test]
fn open_dir_reads_and_lists_as_the_full_path_does() {
    // Every case the by-name path must hand back to the full path: a link leaving the open
    // directory (in the tree, or absolute), a FIFO, a missing file, `..` and `/` in names.
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    for (rel, text) in [
        ("proc/1/task/1/stat", "1 (a) S\n"),
        ("proc/1/task/1/status", "Name:\ta\n"),
        ("proc/3/task/3/stat", "3 (c) R\n"),
        ("proc/1/cgroup", "0::/\n"),
    ] {
        std::fs::create_dir_all(p.join(rel).parent().unwrap()).unwrap();
        std::fs::write(p.join(rel), text).unwrap();
    }
    std::os::unix::fs::symlink("../../3/task/3", p.join("proc/1/task/2")).unwrap();
    std::os::unix::fs::symlink("/etc", p.join("proc/1/task/4")).unwrap();
    std::fs::create_dir_all(p.join("proc/1/task/5")).unwrap();
    let fifo = std::ffi::CString::new(p.join("proc/1/task/5/stat").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let names = [
        "1/stat",
        "1/status",
        "2/stat",
        "4/passwd",
        "5/stat",
        "9/stat",
        "1/../1/stat",
        "/1/stat",
        "1//stat",
        "",
    ];
    let fresh = |live: bool| if live { Root::live() } else { Root::open(p).unwrap() };
    for (live, dir) in [(false, "proc/1/task"), (false, "proc/9"), (true, "proc/self")] {
        let (by_name, rec_a) = fresh(live).recording();
        let (by_path, rec_b) = fresh(live).recording();
        let open = by_name.open_dir(dir);
        assert_eq!(open.list(), by_path.list_dir(dir), "{dir}");
        for name in names.iter().chain(&["cmdline", "cgroup"]) {
            let (mut a, mut b) = (vec![1u8; 3], vec![2u8; 5]);
            let ra = open.read_record_into(name, &mut a);
            let rb = by_path.read_record_into(&open.path_of(name), &mut b);
            assert_eq!(ra, rb, "{dir} {name}");
            assert_eq!(a, b, "{dir} {name}");
            let full = open.path_of(name);
            assert_eq!(open.read_string(name), by_path.read_string(&full), "{dir} {name}");
        }
        for name in ["1", "2", "4", "5", "9", "1/stat", "1/../1", "/1", "", "fd"] {
            assert_eq!(open.list_dir(name), by_path.list_dir(&open.path_of(name)), "{dir} {name}");
        }
        assert_eq!(rec_a.accesses(), rec_b.accesses(), "{dir}");
    }
    let dir_root = Root::open(p).unwrap();
    // The in-tree link and the refusals, spelled out.
    let open = dir_root.open_dir("proc/1/task");
    let mut buf = Vec::new();
    open.read_record_into("2/stat", &mut buf).unwrap();
    assert_eq!(buf, b"3 (c) R\n");
    assert!(matches!(open.read_record_into("4/passwd", &mut buf), Err(ReadError::Refused { .. })));
    let e = open.read_record_into("5/stat", &mut buf).unwrap_err();
    assert!(e.to_string().contains("FIFO") && e.to_string().contains("proc/1/task/5/stat"), "{e}");
    assert!(buf.is_empty());
    assert_eq!(open.list().unwrap(), ["1", "2", "4", "5"]);
    // A tarball root reads by path, with the same answers.
    let t = tar_with(&[("proc/1/task/1/stat", "1 (a) S\n", None)]);
    let r = Root::from_tgz_bytes("t.tar", &t).unwrap();
    let open = r.open_dir("proc/1/task");
    open.read_record_into("1/stat", &mut buf).unwrap();
    assert_eq!(buf, b"1 (a) S\n");
    assert_eq!(open.list().unwrap(), ["1"]);
    assert!(open.read_record_into("2/stat", &mut buf).unwrap_err().is_not_found());
}
