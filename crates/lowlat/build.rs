//! Build script: put the git revision into `--version` (`0.1.0 (git 1a2b3c4d5e6f)`). Outside a
//! git checkout (a release tarball) or without git, the version is the crate version alone.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=LOWLAT_GIT_REV");
    let rev = std::env::var("LOWLAT_GIT_REV").ok().filter(|s| !s.is_empty()).or_else(|| {
        // Rebuild when HEAD moves: HEAD itself and the branch ref it names.
        if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
            println!("cargo:rerun-if-changed={}", Path::new(&dir).join("HEAD").display());
            if let (Some(common), Some(r)) =
                (git(&["rev-parse", "--git-common-dir"]), git(&["symbolic-ref", "-q", "HEAD"]))
            {
                println!("cargo:rerun-if-changed={}", Path::new(&common).join(r).display());
                println!(
                    "cargo:rerun-if-changed={}",
                    Path::new(&common).join("packed-refs").display()
                );
            }
        }
        git(&["rev-parse", "--short=12", "HEAD"])
    });
    let suffix = rev.map(|r| format!(" (git {r})")).unwrap_or_default();
    println!("cargo:rustc-env=LOWLAT_VERSION_SUFFIX={suffix}");
}
