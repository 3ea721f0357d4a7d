//! CLI tests of `lowlat generate` and `--version`.

#![allow(clippy::expect_used)]

use crate::support::lowlat;
use predicates::prelude::*;

#[test]
fn completions_cover_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        lowlat()
            .args(["generate", "completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains("check"))
            .stdout(predicate::str::contains("report"))
            .stdout(predicate::str::contains("compare"));
    }
    lowlat().args(["generate", "completions", "tcsh"]).assert().code(2);
}

#[test]
fn man_page_is_roff_from_the_cli_definition() {
    lowlat()
        .args(["generate", "man"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(".ie"))
        .stdout(predicate::str::contains(".TH lowlat 1"))
        .stdout(predicate::str::contains("lowlat\\-check"));
    let dir = tempfile::tempdir().expect("tempdir");
    lowlat().args(["generate", "man", "--dir"]).arg(dir.path()).assert().success();
    let page = std::fs::read_to_string(dir.path().join("lowlat-report.1")).expect("report page");
    assert!(page.contains("\\-\\-compare"), "{page}");
}

#[test]
fn version_names_the_git_revision_when_built_from_git() {
    let out = lowlat().arg("--version").assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).expect("utf8");
    assert!(text.starts_with(&format!("lowlat {}", env!("CARGO_PKG_VERSION"))), "{text}");
    let in_git = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success());
    if let Some(o) = in_git {
        let rev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        if std::env::var("LOWLAT_GIT_REV").is_err() {
            assert!(text.contains(&format!("(git {rev})")) || text.contains("(git "), "{text}");
        }
    } else {
        assert!(!text.contains("(git"), "{text}");
    }
}
