//! A closed stdout (`lowlat … | head -1`) ends the command quietly with status 0.

#![allow(clippy::unwrap_used, reason = "test")]

use std::process::{Command, Stdio};

const PLAN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../cluster/tests/fixtures/plan.yaml");

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

/// `-` as an output, on every command that writes one (the README's generated `-o, --output`
/// row names them, checked against the CLI, plus the `--out DIR` of check): stdout where the
/// artifact can go there, a refusal naming why where it cannot, and never a file or directory
/// named `-`.
#[test]
fn dash_as_an_output_is_stdout_or_refused_never_a_file_named_dash() {
    let on = crate::support::readme_commands_taking("`-o, --output PATH`");
    let result = concat!(env!("CARGO_MANIFEST_DIR"), "/../report/tests/fixtures/timer.json");
    let cyclictest =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../results/tests/fixtures/cyclictest-2.4-h40.txt");
    // (command, argv, Ok(what stdout starts with) | Err(what the refusal says))
    type Case<'a> = (&'a str, Vec<&'a str>, Result<&'a [u8], &'a str>);
    let cases: Vec<Case<'_>> = vec![
        (
            "`plan`",
            vec!["plan", "--must-gather", MG, "--node", "worker1", "-o", "-"],
            Ok(b"schema_version"),
        ),
        ("`render`", vec!["render", "cmdline", "--plan", PLAN, "-o", "-"], Ok(b"")),
        ("`import`", vec!["import", "cyclictest", cyclictest, "-o", "-"], Ok(b"{")),
        (
            "`snapshot`",
            vec!["snapshot", "--must-gather", MG, "--node", "worker1", "-o", "-"],
            Ok(b"\x1f\x8b"),
        ),
        ("`report`", vec!["report", result, "-o", "-"], Ok(b"<!DOCTYPE html>")),
        (
            "`watch storage`",
            vec!["watch", "storage", "--count", "1", "-o", "-"],
            Err("stdout carries the live lines"),
        ),
        (
            "`watch cmd`",
            vec!["watch", "cmd", "--count", "1", "-o", "-", "--", "true"],
            Err("stdout carries the live lines"),
        ),
        (
            "`cluster snapshot`",
            vec!["cluster", "snapshot", "-l", "x=y", "-o", "-"],
            Err("`-` (stdout) cannot hold it"),
        ),
        ("--out of check", vec!["check", "--out", "-"], Err("`-` (stdout) cannot hold it")),
    ];
    for cmd in &on {
        if *cmd == "`cluster nodes`" {
            continue; // kubectl's -o FORMAT (wide, json, yaml, name), not a path
        }
        assert!(cases.iter().any(|(c, _, _)| c == cmd), "{cmd} takes -o: add it here");
    }
    for (cmd, argv, want) in &cases {
        if cmd.starts_with("`cluster") && !cfg!(feature = "cluster") {
            continue; // built without the cluster feature: `lowlat cluster` is a stub
        }
        let cwd = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_lowlat"))
            .args(argv)
            .current_dir(cwd.path())
            .env("NO_COLOR", "1")
            .env("LOWLAT_CPU_LOCK_DIR", crate::support::lock_dir())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match want {
            Ok(head) => {
                assert!(out.status.success(), "{cmd}: {stderr}");
                assert!(out.stdout.starts_with(head) && !out.stdout.is_empty(), "{cmd} on stdout");
            }
            Err(why) => {
                assert_eq!(out.status.code(), Some(2), "{cmd} refused: {stderr}");
                assert!(stderr.contains(why), "{cmd}: {stderr}");
            }
        }
        assert!(!cwd.path().join("-").exists(), "{cmd} wrote a file named -");
    }
}
