//! A closed stdout (`lowlat … | head -1`) ends the command quietly with status 0.

#![allow(clippy::unwrap_used, reason = "test")]

use std::process::{Command, Stdio};

const MG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/fixtures/must-gather/must-gather.bare-metal"
);

/// Run with stdout a pipe whose read end is already closed: the first write meets EPIPE.
fn run_with_closed_stdout(args: &[&str]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lowlat"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
}

#[test]
fn closed_stdout_is_quiet_success() {
    run_with_closed_stdout(&["inspect", "--json", "--must-gather", MG, "--node", "worker1"]);
    run_with_closed_stdout(&["inspect", "--must-gather", MG, "--node", "worker1"]);
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.yaml");
    let st = Command::new(env!("CARGO_BIN_EXE_lowlat"))
        .args(["plan", "--must-gather", MG, "--node", "worker1", "-o"])
        .arg(&plan)
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    run_with_closed_stdout(&["render", "--plan", plan.to_str().unwrap(), "openshift"]);
}
