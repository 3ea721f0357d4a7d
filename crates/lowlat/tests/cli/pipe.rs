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

/// Run `argv` in an empty directory with `stdin` on its standard input; (status, stdout,
/// stderr). Never leaves a file named `-` behind.
fn run_in_tempdir(argv: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    use std::io::Write as _;
    let cwd = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lowlat"))
        .args(argv)
        .current_dir(cwd.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(!cwd.path().join("-").exists(), "{argv:?} wrote a file named -");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `-` for the documents written beside a command's main output (`--junit`, `--prometheus`):
/// stdout, with people's view moved to stderr, and never two documents on one stream; `-` as
/// an input (`report -`, `export FORMAT -`) is standard input.
#[test]
fn dash_for_junit_prometheus_and_inputs() {
    let verify = ["verify", "--must-gather", MG, "--node", "worker1"];
    let with =
        |extra: &[&'static str]| -> Vec<&str> { verify.iter().chain(extra).copied().collect() };
    let (code, out, err) = run_in_tempdir(&with(&["--junit", "-"]), b"");
    assert!(matches!(code, Some(0 | 1)), "{err}");
    assert!(out.starts_with("<?xml") && out.contains("<testsuite"), "JUnit on stdout: {out}");
    assert!(!out.contains("checks fail") && !out.contains("checks pass"), "no view on stdout");
    let (code, out, err) = run_in_tempdir(&with(&["--prometheus", "-"]), b"");
    assert!(matches!(code, Some(0 | 1)), "{err}");
    assert!(out.starts_with("# HELP lowlat_"), "Prometheus text on stdout: {out}");
    let (code, _, err) = run_in_tempdir(&with(&["--json", "--junit", "-"]), b"");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--json and --junit would all write to stdout"), "{err}");

    let timer =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../report/tests/fixtures/timer.json"))
            .unwrap();
    let html = tempfile::tempdir().unwrap();
    let html = html.path().join("r.html");
    let html = html.to_str().unwrap();
    let (code, out, err) = run_in_tempdir(&["report", "-", "-o", html, "--junit", "-"], &timer);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("<?xml"), "{out}");
    assert!(err.contains("wrote") && !out.contains("wrote"), "the summary on stderr: {err}");
    assert!(std::fs::read_to_string(html).unwrap().contains("<!DOCTYPE html>"));
    let (code, _, err) = run_in_tempdir(&["report", "-", "-", "-o", html], &timer);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("standard input can be read only once"), "{err}");
    let (code, _, err) = run_in_tempdir(&["report", "-", "-o", "-", "--junit", "-"], &timer);
    assert_eq!(code, Some(2), "{err}");
    let (code, out, err) = run_in_tempdir(&["export", "cyclictest", "-", "-H", "10"], &timer);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("# Max Latencies"), "{out}");

    // Every other command taking either option (the README's generated rows): two documents
    // on stdout are refused before anything runs; `watch` refuses `-` (stdout is its live view).
    let refused: Vec<(&str, Vec<&str>, &str)> = vec![
        ("`check`", vec!["check", "--json", "--junit", "-"], "would all write to stdout"),
        ("`measure timer`", vec!["measure", "timer", "--json", "--prometheus", "-"], "stdout"),
        ("`measure noise`", vec!["measure", "noise", "--json", "--prometheus", "-"], "stdout"),
        ("`measure hwlat`", vec!["measure", "hwlat", "--json", "--prometheus", "-"], "stdout"),
        ("`measure ticks`", vec!["measure", "ticks", "--json", "--prometheus", "-"], "stdout"),
        ("`measure fsync`", vec!["measure", "fsync", "--json", "--prometheus", "-"], "stdout"),
        (
            "`measure etcd`",
            vec![
                "measure",
                "etcd",
                "--endpoint",
                "http://127.0.0.1:1",
                "--json",
                "--prometheus",
                "-",
            ],
            "stdout",
        ),
        (
            "`cluster check`",
            vec!["cluster", "check", "-l", "a=b", "--json", "--junit", "-"],
            "stdout",
        ),
        ("`watch storage`", vec!["watch", "storage", "--prometheus", "-"], "live lines"),
        ("`watch cmd`", vec!["watch", "cmd", "--prometheus", "-", "--", "true"], "live lines"),
    ];
    let tested = ["`verify`", "`report`"];
    for row in ["`--junit FILE`", "`--prometheus FILE`"] {
        for cmd in crate::support::readme_commands_taking(row) {
            let here = tested.contains(&cmd.as_str()) || refused.iter().any(|(c, _, _)| *c == cmd);
            assert!(here, "{cmd} takes {row}: test its `-` here");
        }
    }
    for (cmd, argv, why) in &refused {
        if cmd.starts_with("`cluster") && !cfg!(feature = "cluster") {
            continue; // built without the cluster feature: `lowlat cluster` is a stub
        }
        let (code, _, err) = run_in_tempdir(argv, b"");
        assert_eq!(code, Some(2), "{cmd}: {err}");
        assert!(err.contains(why), "{cmd}: {err}");
    }
}
