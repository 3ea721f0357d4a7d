//! Fuzz must-gather lookup (issue 11): the input describes a directory tree (directories,
//! `sysinfo.tgz` files, symlinks, node names with any bytes) built in a temporary directory
//! next to a secret file; then the nodes are looked up with and without `--node`. Never a
//! panic or a hang; an error never quotes the secret (a symlinked `sysinfo.tgz` is refused
//! unread); a node found twice is an error naming both copies; a node that opens came from a
//! regular file inside the tree.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use libfuzzer_sys::fuzz_target;

const SECRET: &str = "root:$6$FUZZSECRET$hash:19000:0:99999:7:::";

static N: AtomicU64 = AtomicU64::new(0);

/// A path component from fuzz bytes: short, no `/` or NUL, never `.` or `..`.
fn name(b: &[u8]) -> String {
    let words = ["nodes", "sysinfo.tgz", "a", "n1", "n2", "mg", "\u{1b}]0;x\u{7}"];
    match b.first() {
        Some(&k) if (k as usize) < words.len() * 16 => words[k as usize % words.len()].to_string(),
        _ => {
            let s: String = String::from_utf8_lossy(b)
                .chars()
                .filter(|c| *c != '/' && *c != '\0')
                .take(12)
                .collect();
            if s.is_empty() || s == "." || s == ".." { "x".into() } else { s }
        }
    }
}

fn build(base: &Path, data: &[u8]) {
    let tgz = small_tgz();
    // Records: op byte, depth byte, then up to 4 name bytes per level.
    for rec in data.chunks(12) {
        let (op, rest) = match rec.split_first() { Some(x) => x, None => continue };
        let mut p = base.to_path_buf();
        for part in rest.chunks(3).take(4) {
            p.push(name(part));
        }
        let _ = std::fs::create_dir_all(p.parent().unwrap_or(base));
        let _ = match op % 4 {
            0 => std::fs::create_dir_all(&p),
            1 => std::fs::write(&p, &tgz),
            2 => std::os::unix::fs::symlink(base.join("secret"), &p),
            _ => std::os::unix::fs::symlink("..", &p),
        };
    }
}

fn small_tgz() -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(6);
    h.set_mode(0o644);
    b.append_data(&mut h, "proc/cmdline", &b"quiet\n"[..]).expect("in memory");
    b.into_inner().expect("in memory")
}

fuzz_target!(|data: &[u8]| {
    let base: PathBuf = std::env::temp_dir().join(format!(
        "lowlat-fuzz-mg-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("temp dir");
    std::fs::write(base.join("secret"), SECRET).expect("temp file");
    let mg = base.join("mg");
    let _ = std::fs::create_dir_all(&mg);
    build(&mg, data);
    let nodes = host::root::find_nodes(&mg);
    for want in nodes.iter().map(|(n, _)| Some(n.as_str())).chain([None, Some("nope")]) {
        match host::Root::must_gather(&mg, want) {
            Ok(r) => {
                let src = r.source();
                assert_eq!(src.node.as_deref(), want);
                assert_eq!(nodes.iter().filter(|(n, _)| Some(n.as_str()) == want).count(), 1);
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.contains("FUZZSECRET"), "{msg}");
                if nodes.iter().filter(|(n, _)| Some(n.as_str()) == want).count() > 1 {
                    assert!(msg.contains("appears twice"), "{msg}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&base);
});
