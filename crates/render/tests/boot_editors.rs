//! The boot loader outputs against hostile and unusual inputs (issue 21, item 11): the
//! rpm-ostree script passes kernel arguments through byte for byte (no pathname expansion),
//! and the `/etc/default/grub` and BLS editors edit what the shell / loader really reads.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use cpuset::CpuSet;
use plan::{KernelArg, Plan, PlanOptions};
use render::boot;

fn plan(args: &[(&str, Option<&str>)]) -> Plan {
    Plan {
        schema_version: 1,
        name: "t".into(),
        host: None,
        reserved: CpuSet::parse_list("0").unwrap(),
        isolated: CpuSet::parse_list("1-3").unwrap(),
        offlined: CpuSet::new(),
        options: PlanOptions::default(),
        kernel_args: args
            .iter()
            .map(|(k, v)| KernelArg {
                key: (*k).into(),
                value: v.map(str::to_string),
                reason: "r".into(),
            })
            .collect(),
        runtime: vec![],
        rationale: vec![],
        smt_disabled: CpuSet::new(),
    }
}

/// Run `script` with `sh` in a directory full of files a glob would match, a fake
/// `rpm-ostree` first on PATH that prints `current` for `kargs` and logs every call (each
/// argument after \x02, so a space or newline inside one stays visible).
fn run_rpm_ostree(script: &str, current: &str) -> Vec<Vec<String>> {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    // Files `foo=*`, `a=[x]`, `?`, `*` and `[ab]` would expand to.
    for f in ["foo=bar", "foo=baz", "a=x", "x", "b", "zz", "quiet"] {
        std::fs::write(work.join(f), "").unwrap();
    }
    let log = tmp.path().join("log");
    std::fs::write(&log, "").unwrap();
    std::fs::write(tmp.path().join("current"), current).unwrap();
    let stub = "#!/bin/sh\nprintf '\\001' >> \"$LOG\"\nfor a in \"$@\"; do printf '\\002%s' \"$a\" >> \"$LOG\"; done\nif [ \"$1\" = kargs ] && [ $# -eq 1 ]; then cat \"$CURRENT\"; fi\n";
    let p = bin.join("rpm-ostree");
    std::fs::write(&p, stub).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    for tool in ["cat", "printf"] {
        if let Some(real) =
            ["/usr/bin", "/bin"].iter().map(|d| Path::new(d).join(tool)).find(|p| p.exists())
        {
            std::os::unix::fs::symlink(real, bin.join(tool)).unwrap();
        }
    }
    let script_path = tmp.path().join("rpm-ostree.sh");
    std::fs::write(&script_path, script).unwrap();
    let n = Command::new("/bin/sh").arg("-n").arg(&script_path).output().unwrap();
    assert!(n.status.success(), "sh -n: {}", String::from_utf8_lossy(&n.stderr));
    let out = Command::new("/bin/sh")
        .arg(&script_path)
        .current_dir(&work)
        .env_clear()
        .env("PATH", &bin)
        .env("LOG", &log)
        .env("CURRENT", tmp.path().join("current"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(&log)
        .unwrap()
        .split('\x01')
        .filter(|r| !r.is_empty())
        .map(|r| r.split('\x02').skip(1).map(str::to_string).collect())
        .collect()
}

#[test]
fn rpm_ostree_script_passes_glob_characters_through_byte_for_byte() {
    let p = plan(&[("foo", Some("*")), ("a", Some("[x]")), ("q", Some("?")), ("nohz", Some("on"))]);
    let script = boot::rpm_ostree(&p, &[]).contents;
    // The node's current line holds glob characters too: `*`, `[ab]`, `foo=b*`.
    let log = run_rpm_ostree(&script, "quiet * [ab] foo=b* a=x nohz=off\n");
    assert_eq!(log[0], ["kargs"]);
    assert_eq!(
        log[1],
        [
            "kargs",
            "--delete=foo=b*",
            "--delete=a=x",
            "--delete=nohz=off",
            "--append=foo=*",
            "--append=a=[x]",
            "--append=q=?",
            "--append=nohz=on",
        ],
        "{log:?}"
    );
    assert_eq!(log.len(), 2, "{log:?}");
    // Already in place: nothing more than the query.
    let log = run_rpm_ostree(&script, "* foo=* a=[x] q=? nohz=on\n");
    assert_eq!(log, [["kargs"]]);
}

#[test]
fn rpm_ostree_script_turns_pathname_expansion_off_before_any_split() {
    let s = boot::rpm_ostree(&plan(&[("nohz", Some("on"))]), &[]).contents;
    let f = s.find("set -euf").expect("set -f");
    assert!(f < s.find("$current").unwrap() && f < s.find("$want").unwrap(), "{s}");
}
