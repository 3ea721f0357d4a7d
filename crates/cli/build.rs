//! Build script: put the git revision into `--version` (`0.1.0 (git 1a2b3c4d5e6f)`). Outside a
//! git checkout (a release tarball) or without git, the version is the crate version alone.
//!
//! It tells cargo to rerun it only on paths that exist: cargo treats a watched path that is
//! missing as changed on every build, which re-ran this script and re-linked the whole binary on
//! each no-op `cargo build` in a checkout without `packed-refs` (issue 23). Where the branch's
//! loose ref does not exist yet (refs packed, or a branch with no commit), the directory that
//! will hold it is watched instead: cargo scans a watched directory's files, so the ref's
//! creation is still seen. `LOWLAT_GIT_REV` set to a revision skips git altogether.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// Watch `path` if it exists; otherwise its nearest existing ancestor directory, so that the
/// path's creation still triggers a rerun. Never names a missing path.
fn watch(path: &Path) {
    let mut p: PathBuf = path.to_path_buf();
    loop {
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
            return;
        }
        if !p.pop() || p.as_os_str().is_empty() {
            return;
        }
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=LOWLAT_GIT_REV");
    let rev = std::env::var("LOWLAT_GIT_REV").ok().filter(|s| !s.is_empty()).or_else(|| {
        // Rebuild when HEAD moves: HEAD itself and the branch ref it names.
        if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
            watch(&Path::new(&dir).join("HEAD"));
            if let (Some(common), Some(r)) =
                (git(&["rev-parse", "--git-common-dir"]), git(&["symbolic-ref", "-q", "HEAD"]))
            {
                let common = Path::new(&common);
                watch(&common.join(&r));
                let packed = common.join("packed-refs");
                if packed.exists() {
                    watch(&packed);
                }
            }
        }
        git(&["rev-parse", "--short=12", "HEAD"])
    });
    let suffix = rev.map(|r| format!(" (git {r})")).unwrap_or_default();
    println!("cargo:rustc-env=LOWLAT_VERSION_SUFFIX={suffix}");
}
