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

/// `nohz=on nohz_full=1-3`: a plan with no isolcpus (the flag warnings have their own test).
fn nohz_plan() -> Plan {
    plan(&[("nohz", Some("on")), ("nohz_full", Some("1-3"))])
}

fn grub(p: &Plan, text: &str) -> Result<(String, Vec<String>), String> {
    let input = ("/etc/default/grub".to_string(), text.to_string());
    boot::grub_with_warnings(p, Some(&input))
        .map(|(f, w)| (f.contents, w))
        .map_err(|e| e.to_string())
}

fn bls(p: &Plan, text: &str) -> (String, Vec<String>) {
    let input = ("/boot/loader/entries/a.conf".to_string(), text.to_string());
    let (f, w) = boot::bls_with_warnings(p, Some(&input)).unwrap();
    (f[0].contents.clone(), w)
}

/// `GRUB_CMDLINE_LINUX` as `sh` reads the file (what grub-mkconfig does).
fn sourced(text: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("grub"), text).unwrap();
    let out = Command::new("/bin/sh")
        .args(["-c", ". ./grub; printf %s \"$GRUB_CMDLINE_LINUX\""])
        .current_dir(tmp.path())
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The edit, checked against the shell: what `sh` reads from the input is what the editor
/// read, and what it reads from the output is the expected line.
fn grub_edit(p: &Plan, text: &str, want_line: &str) -> (String, Vec<String>) {
    assert_eq!(
        boot::grub_cmdline("g", text).unwrap().unwrap_or_default(),
        sourced(text),
        "the editor reads the input as sh does"
    );
    let (out, w) = grub(p, text).unwrap();
    assert_eq!(sourced(&out), want_line, "{out}");
    assert_eq!(boot::grub_cmdline("g", &out).unwrap().as_deref(), Some(want_line));
    // A second run changes nothing.
    assert_eq!(grub(p, &out).unwrap().0, out, "idempotent");
    (out, w)
}

#[test]
fn grub_value_on_continuation_lines_is_edited_whole() {
    let text = "A=1\nGRUB_CMDLINE_LINUX=\"quiet \\\n  nohz=off \\\n  splash\"\nB=2\n";
    let (out, w) = grub_edit(&nohz_plan(), text, "quiet nohz=on splash nohz_full=1-3");
    assert_eq!(
        out,
        "A=1\n# lowlat: replaced nohz=off with the plan's values\nGRUB_CMDLINE_LINUX=\"quiet nohz=on splash nohz_full=1-3\"\nB=2\n"
    );
    assert!(w.is_empty(), "{w:?}");
    // An unquoted continuation, and a single-quoted value spanning two lines.
    let text = "GRUB_CMDLINE_LINUX=quiet\\\n\\ splash\nX=1\n";
    let (out, _) = grub_edit(&nohz_plan(), text, "quiet splash nohz=on nohz_full=1-3");
    assert_eq!(out, "GRUB_CMDLINE_LINUX=\"quiet splash nohz=on nohz_full=1-3\"\nX=1\n");
    let text = "GRUB_CMDLINE_LINUX='quiet\nsplash'\n";
    let (out, _) = grub_edit(&nohz_plan(), text, "quiet splash nohz=on nohz_full=1-3");
    assert_eq!(out, "GRUB_CMDLINE_LINUX='quiet splash nohz=on nohz_full=1-3'\n");
}

#[test]
fn grub_with_two_assignments_edits_the_last_one_the_shell_keeps() {
    let text = "GRUB_CMDLINE_LINUX=\"old\"\nGRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX=\"rhgb nohz=off\"\n";
    let (out, w) = grub_edit(&nohz_plan(), text, "rhgb nohz=on nohz_full=1-3");
    assert!(out.starts_with("GRUB_CMDLINE_LINUX=\"old\"\nGRUB_TIMEOUT=5\n# lowlat: "), "{out}");
    assert!(out.ends_with("GRUB_CMDLINE_LINUX=\"rhgb nohz=on nohz_full=1-3\"\n"), "{out}");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("on line 1 and again on line 3") && w[0].contains("line 3 was edited"),
        "{w:?}"
    );
}

#[test]
fn grub_assignment_followed_by_a_comment_or_a_command_keeps_them() {
    let text = "GRUB_CMDLINE_LINUX=\"quiet\" # keep me\n";
    let (out, _) = grub_edit(&nohz_plan(), text, "quiet nohz=on nohz_full=1-3");
    assert_eq!(out, "GRUB_CMDLINE_LINUX=\"quiet nohz=on nohz_full=1-3\" # keep me\n");
    let text = "  export GRUB_CMDLINE_LINUX='quiet';   export X\n";
    let (out, _) = grub_edit(&nohz_plan(), text, "quiet nohz=on nohz_full=1-3");
    assert_eq!(out, "  export GRUB_CMDLINE_LINUX='quiet nohz=on nohz_full=1-3';   export X\n");
    // No newline at the end of the file, and values with shell-special text.
    let text = "GRUB_CMDLINE_LINUX=\"a=\\\"x y\\\" b=\\$z c=*\"";
    let (out, _) = grub_edit(&nohz_plan(), text, "a=\"x y\" b=$z c=* nohz=on nohz_full=1-3");
    assert_eq!(out, "GRUB_CMDLINE_LINUX=\"a=\\\"x y\\\" b=\\$z c=* nohz=on nohz_full=1-3\"\n");
}

#[test]
fn grub_lines_the_editor_cannot_read_safely_are_refused_with_their_line() {
    for (text, line, why) in [
        ("A=1\nGRUB_CMDLINE_LINUX=\"quiet\" true\n", 2, "for that command only"),
        ("GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX quiet\"\n", 1, "uses `$`"),
        ("GRUB_CMDLINE_LINUX=`cat x`\n", 1, "uses `$` or a backquote"),
        ("#\n[ -e /x ] && GRUB_CMDLINE_LINUX=quiet\n", 2, "inside another command"),
        ("GRUB_CMDLINE_LINUX+=\" quiet\"\n", 1, "`+=`"),
        ("GRUB_CMDLINE_LINUX=quiet && true\n", 1, "joined to a command by `&&`"),
        // Found by the fuzz target: a multi-byte character right after the operator.
        ("GRUB_CMDLINE_LINUX=x&\u{10fc0f}\n", 1, "joined to a command by `&`"),
        ("GRUB_CMDLINE_LINUX=a; GRUB_CMDLINE_LINUX=b\n", 1, "set twice in one statement"),
        ("A=1\n\nB='unclosed\nGRUB_CMDLINE_LINUX=x\n", 3, "never closed"),
        ("GRUB_CMDLINE_LINUX='a=\"b c'\n", 1, "double quote open"),
    ] {
        let e = grub(&nohz_plan(), text).unwrap_err();
        assert!(e.contains(&format!("/etc/default/grub line {line}: ")), "{text:?}: {e}");
        assert!(e.contains(why), "{text:?}: {e}");
        assert!(e.contains("simplify that line by hand"), "{e}");
    }
}

#[test]
fn grub_without_an_assignment_appends_one_even_after_a_continuation() {
    let (out, _) = grub(&nohz_plan(), "A=\"x\" \\\n").unwrap();
    assert_eq!(sourced(&out), "nohz=on nohz_full=1-3");
    assert_eq!(out, "A=\"x\" \\\n\nGRUB_CMDLINE_LINUX=\"nohz=on nohz_full=1-3\"\n");
    let (out, _) = grub(&nohz_plan(), "A=1").unwrap();
    assert_eq!(out, "A=1\nGRUB_CMDLINE_LINUX=\"nohz=on nohz_full=1-3\"\n");
}

#[test]
fn bls_with_two_options_lines_edits_the_line_the_loader_joins() {
    let text =
        "title t\noptions root=/dev/sda1 nohz=off\nlinux /vmlinuz\noptions quiet nohz_full=5\n";
    let (out, w) = bls(&nohz_plan(), text);
    assert_eq!(
        out,
        "title t\n# lowlat: replaced nohz=off nohz_full=5 with the plan's values\noptions root=/dev/sda1 nohz=on\nlinux /vmlinuz\noptions quiet nohz_full=1-3\n"
    );
    assert!(w.is_empty());
    assert_eq!(boot::bls_cmdline(&out), "root=/dev/sda1 nohz=on quiet nohz_full=1-3");
    // New arguments go at the end of the last line; a line left with only duplicates goes.
    let text = "options a nohz=on\noptions nohz=off nohz=on\noptions b\n";
    let (out, _) = bls(&nohz_plan(), text);
    assert_eq!(
        out,
        "# lowlat: replaced nohz=off with the plan's values\noptions a nohz=on\noptions b nohz_full=1-3\n"
    );
    assert_eq!(bls(&nohz_plan(), &out).0, out, "idempotent");
    // Found by the fuzz target: a lone `\r` at the end stays, a second run changes nothing.
    let (out, _) = bls(&nohz_plan(), "titleA\r");
    assert_eq!(out, "titleA\r\noptions nohz=on nohz_full=1-3\n");
    assert_eq!(bls(&nohz_plan(), &out).0, out, "idempotent");
    let (out, _) = bls(&nohz_plan(), "title a\r\noptions q\r\n");
    assert_eq!(out, "title a\r\noptions q nohz=on nohz_full=1-3\n");
}

#[test]
fn bls_isolcpus_domain_isolation_dropped_by_the_plan_is_said_loudly() {
    // Seed 003: `isolcpus=2` (no flags: domain isolation); the plan asks managed_irq only.
    let p = plan(&[("isolcpus", Some("managed_irq,1-3")), ("nohz", Some("on"))]);
    let text = "title t\noptions root=/dev/sda1 isolcpus=2\n";
    let (out, w) = bls(&p, text);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("/boot/loader/entries/a.conf line 2: `isolcpus=2` is replaced by the plan's `isolcpus=managed_irq,1-3`, which drops the `domain` isolation flag (no flag means `domain`)"), "{w:?}");
    assert!(w[0].contains("lowlat plan --isolcpus-domain"), "{w:?}");
    let said = w[0].split_once(": ").unwrap().1;
    assert!(out.contains(&format!("\n# lowlat: WARNING: {said}\n")), "{out}");
    assert!(out.ends_with("options root=/dev/sda1 isolcpus=managed_irq,1-3 nohz=on\n"), "{out}");
    // A second run: the warning is in the file once, the line unchanged.
    let (again, w) = bls(&p, &out);
    assert_eq!(again, out);
    assert!(w.is_empty());
    // Flags the plan keeps: nothing to say.
    for old in ["isolcpus=managed_irq,2", "isolcpus=1-3"] {
        let p = plan(&[(
            "isolcpus",
            Some(if old == "isolcpus=1-3" { "domain,managed_irq,1-3" } else { "managed_irq,1-3" }),
        )]);
        let (_, w) = bls(&p, &format!("options {old}\n"));
        assert!(w.is_empty(), "{old}: {w:?}");
    }
    // The same rule in /etc/default/grub.
    let (out, w) = grub(&p, "GRUB_CMDLINE_LINUX=\"isolcpus=nohz,domain,2\"\n").unwrap();
    assert!(w[0].contains("drops the `domain`, `nohz` isolation flags"), "{w:?}");
    assert!(w[0].starts_with("/etc/default/grub line 1: "), "{w:?}");
    assert!(out.starts_with("# lowlat: WARNING: `isolcpus=nohz,domain,2` is replaced"), "{out}");
}

mod props {
    //! The editors' invariants on generated files (the fuzz target `boot_editors` checks the
    //! same on arbitrary bytes): no panic; a refusal names its line; an edit re-parses, holds
    //! each of the plan's arguments exactly once (no other value of its key), keeps every
    //! other argument in order, and a second edit changes nothing.
    use super::*;
    use proptest::prelude::*;
    use render::cmdline::tokens;

    fn key(t: &str) -> &str {
        t.split_once('=').map_or(t, |(k, _)| k)
    }

    fn the_plan() -> Plan {
        plan(&[
            ("nohz", Some("on")),
            ("nohz_full", Some("1-3")),
            ("isolcpus", Some("managed_irq,1-3")),
            ("nosmt", None),
        ])
    }

    fn planned_key(k: &str) -> bool {
        ["nohz", "nohz_full", "isolcpus", "nosmt", "noht"].contains(&k)
    }

    fn check_line(p: &Plan, before: &str, after: &str) -> Result<(), TestCaseError> {
        let got = tokens(after);
        for a in &p.kernel_args {
            let t = a.token();
            prop_assert_eq!(got.iter().filter(|g| **g == t).count(), 1, "{} in {:?}", t, after);
        }
        let others: Vec<&String> = got.iter().filter(|g| !planned_key(key(g))).collect();
        // The editors read control characters as the kernel does: spaces.
        let before: String = before.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        let kept: Vec<String> =
            tokens(&before).into_iter().filter(|g| !planned_key(key(g))).collect();
        prop_assert_eq!(others.len(), got.len() - p.kernel_args.len(), "{:?}", after);
        prop_assert_eq!(others, kept.iter().collect::<Vec<_>>());
        Ok(())
    }

    pub(crate) fn check_grub(p: &Plan, text: &str) -> Result<(), TestCaseError> {
        let input = ("g".to_string(), text.to_string());
        match boot::grub_with_warnings(p, Some(&input)) {
            Err(e) => {
                let e = e.to_string();
                prop_assert!(e.starts_with("g line "), "{}", e);
                prop_assert!(boot::grub_cmdline("g", text).is_err(), "refused but readable");
            }
            Ok((f, _)) => {
                let before = boot::grub_cmdline("g", text).unwrap().unwrap_or_default();
                let after = boot::grub_cmdline("g", &f.contents);
                prop_assert!(after.is_ok(), "{:?} does not re-parse: {:?}", f.contents, after);
                let after = after.unwrap().unwrap_or_default();
                check_line(p, &before, &after)?;
                let again = boot::grub(p, Some(&("g".to_string(), f.contents.clone())));
                prop_assert_eq!(again.unwrap().contents, f.contents);
            }
        }
        Ok(())
    }

    pub(crate) fn check_bls(p: &Plan, text: &str) -> Result<(), TestCaseError> {
        let input = ("e.conf".to_string(), text.to_string());
        match boot::bls_with_warnings(p, Some(&input)) {
            Err(e) => {
                let e = e.to_string();
                prop_assert!(
                    e.contains("does not look like a boot loader entry")
                        || e.contains("e.conf line "),
                    "{}",
                    e
                );
            }
            Ok((f, _)) => {
                let after = boot::bls_cmdline(&f[0].contents);
                check_line(p, &boot::bls_cmdline(text), &after)?;
                let again = boot::bls(p, Some(&("e.conf".to_string(), f[0].contents.clone())));
                prop_assert_eq!(&again.unwrap()[0].contents, &f[0].contents);
                prop_assert_eq!(&f[1].contents, text);
            }
        }
        Ok(())
    }

    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("quiet".to_string()),
            Just("isolcpus=2".to_string()),
            Just("isolcpus=domain,5".to_string()),
            Just("nohz=off".to_string()),
            Just("nohz=on".to_string()),
            Just("nohz_full=5".to_string()),
            Just("noht".to_string()),
            Just("nosmt".to_string()),
            Just("foo=*".to_string()),
            Just("a=[x]".to_string()),
            Just("b=\"x y\"".to_string()),
            "[a-z_]{1,6}(=[a-z0-9,*?]{0,4})?",
        ]
    }

    fn grub_line() -> impl Strategy<Value = String> {
        (0..12usize, prop::collection::vec(token(), 0..6)).prop_map(|(kind, toks)| {
            let line = toks.join(" ");
            let dq = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"").replace('$', "\\$");
            let half = toks.len() / 2;
            match kind {
                0 => format!("GRUB_CMDLINE_LINUX=\"{}\"", dq(&line)),
                1 => format!("GRUB_CMDLINE_LINUX='{line}'"),
                2 => format!(
                    "GRUB_CMDLINE_LINUX=\"{} \\\n  {}\"",
                    dq(&toks[..half].join(" ")),
                    dq(&toks[half..].join(" "))
                ),
                3 => format!("export GRUB_CMDLINE_LINUX=\"{}\"; export X", dq(&line)),
                4 => format!("GRUB_CMDLINE_LINUX=\"{}\" # c {line}", dq(&line)),
                5 => format!("# GRUB_CMDLINE_LINUX=\"{line}\""),
                6 => "GRUB_TIMEOUT=5".to_string(),
                7 => String::new(),
                8 => format!("X=\"multi\n{}\"", dq(&line)),
                9 => format!(
                    "GRUB_CMDLINE_LINUX={}",
                    toks.iter()
                        .map(|t| t.chars().map(|c| format!("\\{c}")).collect::<String>())
                        .collect::<Vec<_>>()
                        .join("\\ ")
                ),
                10 => format!("GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX {}\"", dq(&line)),
                _ => format!("GRUB_CMDLINE_LINUX='{line}' \\\n  ; true"),
            }
        })
    }

    fn bls_line() -> impl Strategy<Value = String> {
        (0..5usize, prop::collection::vec(token(), 0..6)).prop_map(|(kind, toks)| {
            let line = toks.join(" ");
            match kind {
                0 | 1 => format!("options {line}"),
                2 => "title x".to_string(),
                3 => "linux /vmlinuz".to_string(),
                _ => format!("# options {line}"),
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        #[test]
        fn grub_edits_keep_the_invariants(lines in prop::collection::vec(grub_line(), 0..6)) {
            check_grub(&the_plan(), &lines.join("\n"))?;
            check_grub(&the_plan(), &(lines.join("\n") + "\n"))?;
        }

        #[test]
        fn bls_edits_keep_the_invariants(lines in prop::collection::vec(bls_line(), 0..6)) {
            check_bls(&the_plan(), &lines.join("\n"))?;
        }

        #[test]
        fn arbitrary_text_never_breaks_the_editors(text in "(?s).{0,300}") {
            check_grub(&the_plan(), &text)?;
            check_bls(&the_plan(), &text)?;
        }
    }
}
