//! The second-Ctrl-C undo path restores every registered host write. Its own test binary:
//! it undoes everything registered in the process.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use storage::restore::{undo_all_from_signal, DirGuard, SysfsGuard};

#[test]
fn signal_path_undo_writes_back_and_removes_dirs() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("knob");
    std::fs::write(&p, "orig").unwrap();
    let g = SysfsGuard::write(&p, "orig", "changed").unwrap();
    let dg = DirGuard::create(&d.path().join("cg")).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "changed");
    undo_all_from_signal();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "orig");
    assert!(!d.path().join("cg").exists());
    std::mem::forget(g);
    std::mem::forget(dg);
}
