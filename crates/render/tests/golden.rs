//! Golden files: every target rendered for every fixture plan, compared byte for byte with
//! `tests/golden/<case>/<target>/` (and `openshift --beyond-nto` in
//! `tests/golden/<case>/openshift-beyond-nto/`). Regenerate with
//! `UPDATE_GOLDEN=1 cargo test -p render`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use render::{render, RenderOptions, Target};

fn options(target: Target) -> RenderOptions {
    let mut o = RenderOptions::default();
    match target {
        Target::Bls => {
            o.input = Some(("loader/entries/boot.conf".into(), common::BOOT_CONF.into()))
        }
        Target::Grub => o.input = Some(("/etc/default/grub".into(), common::DEFAULT_GRUB.into())),
        _ => {}
    }
    o
}

#[test]
fn every_target_matches_its_golden_files() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut failures = vec![];
    for (case, plan) in common::cases() {
        let variants = Target::ALL.into_iter().map(|(name, t)| (name, t, options(t))).chain([(
            "openshift-beyond-nto",
            Target::Openshift,
            RenderOptions { beyond_nto: true, ..RenderOptions::default() },
        )]);
        for (name, target, opts) in variants {
            let mut runs = vec![];
            for _ in 0..2 {
                runs.push(render(&plan, target, &opts).unwrap());
            }
            assert_eq!(runs[0], runs[1], "{case}/{name}: rendering twice differs");
            let mut files = runs.remove(0);
            if target == Target::Cmdline {
                let mut o = options(target);
                o.explain = true;
                files.extend(render(&plan, target, &o).unwrap());
            }
            let dir = root.join(case).join(name);
            let mut expected: BTreeSet<String> = std::fs::read_dir(&dir)
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            for f in &files {
                let flat = f.name.replace('/', "__");
                let path = dir.join(&flat);
                expected.remove(&flat);
                if update {
                    std::fs::create_dir_all(&dir).unwrap();
                    std::fs::write(&path, &f.contents).unwrap();
                    continue;
                }
                match std::fs::read_to_string(&path) {
                    Ok(want) if want == f.contents => {}
                    Ok(_) => failures.push(format!("{}: differs", path.display())),
                    Err(_) => failures.push(format!("{}: missing", path.display())),
                }
            }
            if !update && !expected.is_empty() {
                failures.push(format!("{}: stale golden files {expected:?}", dir.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatches (UPDATE_GOLDEN=1 to accept):\n{}",
        failures.join("\n")
    );
}
