//! Fuzz the tarball root (issue 11): arbitrary bytes, gzip-compressed or not, given as a
//! `--root` archive. Never a panic, an abort or an allocation the archive merely claims; when
//! the archive opens, reading the whole host model from it ends and keeps every read bounded,
//! and nothing outside the kept directories is visible.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // A gzip stream as it is (seeds are real snapshots); otherwise the first byte says
    // whether to compress the rest, so the tar layer is reached either way.
    let bytes = match data {
        [0x1f, 0x8b, ..] => data.to_vec(),
        [flag, rest @ ..] if flag & 1 == 1 => {
            use std::io::Write as _;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(rest).expect("in memory");
            e.finish().expect("in memory")
        }
        [_, rest @ ..] => rest.to_vec(),
        [] => Vec::new(),
    };
    let Ok(root) = host::Root::from_tgz_bytes("fuzz.tgz", &bytes) else { return };
    for p in ["proc/cpuinfo", "proc/cmdline", "sys/devices/system/cpu/online", "home/x"] {
        if let Ok(b) = root.read_bytes(p) {
            assert!(b.len() as u64 <= host::root::MAX_FILE_BYTES);
        }
    }
    if let Ok(names) = root.list_dir("") {
        for n in names {
            assert!(
                ["proc", "sys", "etc", "boot", "lowlat-snapshot.json"].contains(&n.as_str()),
                "{n:?} kept"
            );
        }
    }
    let h = host::read(&root);
    let _ = h.for_terminal();
});
