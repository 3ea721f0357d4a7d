//! Fuzz the cluster bundle reader (a node's pod log → its result files, issue 21): arbitrary
//! logs never panic; whatever a payload holds, only single-component names other than
//! `pod.log` are written, all inside the node directory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let log = String::from_utf8_lossy(data);
    let Ok(bytes) = cluster::bundle::extract(&log) else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let node = dir.path().join("node");
    if let Ok(names) = cluster::bundle::unpack(&bytes, &node) {
        for n in &names {
            assert!(n != cluster::bundle::POD_LOG && !n.contains('/'), "{n}");
            assert!(node.join(n).is_file(), "{n}");
        }
    }
    let outside: Vec<_> = std::fs::read_dir(dir.path()).expect("read").collect();
    assert!(outside.len() <= 1, "written beside the node directory");
});
