//! Boot loader outputs: a `grubby` command, an `/etc/default/grub` edit, a BLS / systemd-boot
//! entry patched from an input file (with a backup), `rpm-ostree kargs` commands and the
//! RHCOS real-time kernel override (seed 000's procedure).

use plan::Plan;

use crate::cmdline::{line, merge};
use crate::files::BACKUP_SUFFIX;
use crate::{input_error, quote, OutFile, RenderError};

fn header(plan: &Plan, what: &str) -> String {
    format!(
        "# lowlat plan `{}`{}: {what}\n# housekeeping {}, isolated {}{}\n",
        quote::comment(&plan.name),
        plan.host.as_deref().map(|h| format!(" for {}", quote::comment(h))).unwrap_or_default(),
        plan.reserved,
        plan.isolated,
        if plan.offlined.is_empty() {
            String::new()
        } else {
            format!(", offline {}", plan.offlined)
        }
    )
}

/// The plan with every kernel argument's key and value passed through `esc` (the quoting of
/// the file the arguments are merged into).
fn escaped(plan: &Plan, esc: impl Fn(&str) -> String) -> Plan {
    let mut p = plan.clone();
    for a in &mut p.kernel_args {
        a.key = esc(&a.key);
        a.value = a.value.as_deref().map(&esc);
    }
    p
}

/// One line of a loader entry: control characters become spaces.
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// A POSIX shell word (see [`quote::sh`]).
pub(crate) fn sh_quote(s: &str) -> String {
    quote::sh(s)
}

/// `grubby` for every installed kernel (grubby replaces the value of a key that exists).
pub fn grubby(plan: &Plan) -> OutFile {
    let mut s = String::from("#!/bin/sh\n");
    s.push_str(&header(plan, "kernel arguments for every installed kernel via grubby"));
    s.push_str("# grubby replaces an existing argument's value; reboot to apply.\nset -eu\n");
    s.push_str(&format!("grubby --update-kernel=ALL --args={}\n", quote::sh(&line(plan))));
    if plan.kernel_args.iter().any(|a| a.key == "nohz") {
        s.push_str(
            "# a conflicting `nohz=off` from an earlier setup is replaced by nohz=on above\n",
        );
    }
    s.push_str("echo 'lowlat: kernel arguments updated; reboot to apply' >&2\n");
    OutFile::script("grubby.sh", s)
}

/// The `GRUB_CMDLINE_LINUX=` edit: merged into an input `/etc/default/grub`, or a drop-in.
pub fn grub(plan: &Plan, input: Option<&(String, String)>) -> Result<OutFile, RenderError> {
    let Some((name, text)) = input else {
        let mut s =
            header(plan, "/etc/default/grub.d/50-lowlat.cfg (Debian/Ubuntu read grub.d drop-ins)");
        s.push_str(
            "# then: update-grub (Debian) or grub2-mkconfig -o /boot/grub2/grub.cfg (EL); reboot\n",
        );
        s.push_str(&format!(
            "GRUB_CMDLINE_LINUX=\"${{GRUB_CMDLINE_LINUX}} {}\"\n",
            quote::sh_double_inner(&line(plan))
        ));
        return Ok(OutFile::new("50-lowlat.cfg", s));
    };
    let mut out = String::new();
    let mut found = false;
    for l in text.lines() {
        let trimmed = l.trim_start();
        if !found && trimmed.starts_with("GRUB_CMDLINE_LINUX=") {
            let value = trimmed["GRUB_CMDLINE_LINUX=".len()..].trim();
            // Written back in the quotes it had: the existing text stays as the admin wrote
            // it, the plan's arguments are escaped for those quotes.
            if value.starts_with('\'') {
                let inner = value.trim_matches('\'');
                let (merged, _) = merge(inner, &escaped(plan, |s| one_line(&s.replace('\'', ""))));
                out.push_str(&format!("GRUB_CMDLINE_LINUX='{merged}'\n"));
            } else {
                let inner = value.trim_matches('"');
                let (merged, _) = merge(inner, &escaped(plan, quote::sh_double_inner));
                out.push_str(&format!("GRUB_CMDLINE_LINUX=\"{merged}\"\n"));
            }
            found = true;
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    if !found {
        out.push_str(&format!("GRUB_CMDLINE_LINUX=\"{}\"\n", quote::sh_double_inner(&line(plan))));
    }
    let _ = name;
    Ok(OutFile::new("grub", out))
}

/// A BLS (`/boot/loader/entries/*.conf`) or systemd-boot entry with its `options` line
/// patched; the original is returned as `<name>.lowlat-bak`.
pub fn bls(plan: &Plan, input: Option<&(String, String)>) -> Result<Vec<OutFile>, RenderError> {
    let Some((name, text)) = input else {
        return Err(input_error(
            "the bls target patches an existing entry and needs it as input",
            "pass --input /boot/loader/entries/<entry>.conf (or loader/entries/boot.conf on systemd-boot)",
        ));
    };
    if !text
        .lines()
        .any(|l| l.starts_with("linux") || l.starts_with("title") || l.starts_with("options"))
    {
        return Err(input_error(
            format!("{name}: no `title`, `linux` or `options` line; this does not look like a boot loader entry"),
            "pass a BLS / systemd-boot entry file",
        ));
    }
    let base = name.rsplit('/').next().unwrap_or(name).to_string();
    let mut out = String::new();
    let mut found = false;
    for l in text.lines() {
        if !found && (l.starts_with("options ") || l.starts_with("options\t") || l == "options") {
            let (merged, _) = merge(&l["options".len()..], &escaped(plan, one_line));
            out.push_str(&format!("options {merged}\n"));
            found = true;
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    if !found {
        out.push_str(&format!("options {}\n", one_line(&line(plan))));
    }
    Ok(vec![
        OutFile::new(base.clone(), out),
        OutFile::new(format!("{base}{BACKUP_SUFFIX}"), text.clone()),
    ])
}

/// `rpm-ostree kargs` commands (idempotent: deletes conflicting values, appends missing
/// arguments) and, for a real-time plan, the RHCOS RT kernel override.
pub fn rpm_ostree(plan: &Plan, rt_packages: &[String]) -> OutFile {
    let want = line(plan);
    let mut s = String::from("#!/bin/sh\n");
    s.push_str(&header(
        plan,
        "rpm-ostree kernel arguments (RHCOS / Fedora CoreOS / other ostree hosts)",
    ));
    s.push_str("# On OpenShift prefer `lowlat render openshift` (MachineConfig kernelArguments / kernelType).\n");
    // The current and wanted lines are split into words unquoted (`for have in $current`):
    // `-f` turns pathname expansion off, so an argument like `foo=*` or `a=[x]` stays itself
    // instead of matching files in the current directory; IFS is the default, set explicitly.
    s.push_str("set -euf\nIFS=' \t\n'\n");
    s.push_str(&format!("want={}\n", quote::sh(&want)));
    s.push_str(
        "current=$(rpm-ostree kargs)\nset --\nfor have in $current; do\n  key=${have%%=*}\n  for w in $want; do\n    if [ \"${w%%=*}\" = \"$key\" ]; then\n      case \" $want \" in *\" $have \"*) ;; *) set -- \"$@\" \"--delete=$have\" ;; esac\n      break\n    fi\n  done\ndone\nfor w in $want; do\n  case \" $current \" in *\" $w \"*) ;; *) set -- \"$@\" \"--append=$w\" ;; esac\ndone\nif [ $# -gt 0 ]; then\n  rpm-ostree kargs \"$@\"\nelse\n  echo 'lowlat: kernel arguments already in place' >&2\nfi\n",
    );
    if plan.options.rt_kernel {
        let pkgs: Vec<String> = if rt_packages.is_empty() {
            ["core", "modules", "modules-extra"]
                .iter()
                .map(|p| format!("./kernel-rt-{p}-VERSION.rpm"))
                .collect()
        } else {
            rt_packages.to_vec()
        };
        let installs: Vec<String> =
            pkgs.iter().map(|p| format!("--install {}", quote::sh(p))).collect();
        s.push_str("\n# Real-time kernel (the RHCOS-RT override procedure): swap the stock kernel packages for\n");
        s.push_str("# kernel-rt in one transaction. Pass the RPMs with `lowlat render rpm-ostree --rt-package FILE`.\n");
        s.push_str("if rpm-ostree status -b | grep -q 'kernel-rt-core'; then\n");
        s.push_str("  # already on an RT kernel: replace the overlay with the given build in one transaction\n");
        s.push_str(&format!(
            "  rpm-ostree uninstall kernel-rt-core kernel-rt-modules kernel-rt-modules-extra {}\n",
            installs.join(" ")
        ));
        s.push_str("else\n");
        s.push_str(&format!(
            "  rpm-ostree override remove kernel kernel-core kernel-modules kernel-modules-extra {}\n",
            installs.join(" ")
        ));
        s.push_str("fi\n");
    }
    s.push_str("echo 'lowlat: staged; run `systemctl reboot` to apply' >&2\n");
    OutFile::script("rpm-ostree.sh", s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::{KernelArg, PlanOptions};

    fn plan(rt: bool) -> Plan {
        Plan {
            schema_version: 1,
            name: "t".into(),
            host: Some("n1".into()),
            reserved: cpuset::CpuSet::parse_list("0").unwrap(),
            isolated: cpuset::CpuSet::parse_list("1-3").unwrap(),
            offlined: cpuset::CpuSet::new(),
            options: PlanOptions { rt_kernel: rt, ..Default::default() },
            kernel_args: vec![KernelArg {
                key: "nohz_full".into(),
                value: Some("1-3".into()),
                reason: "r".into(),
            }],
            runtime: vec![],
            rationale: vec![],
            smt_disabled: cpuset::CpuSet::new(),
        }
    }

    #[test]
    fn grub_without_input_is_a_drop_in_and_with_input_an_edit() {
        let f = grub(&plan(false), None).unwrap();
        assert!(f
            .contents
            .ends_with("GRUB_CMDLINE_LINUX=\"${GRUB_CMDLINE_LINUX} nohz_full=1-3\"\n"));
        let input =
            ("g".to_string(), "A=1\nGRUB_CMDLINE_LINUX='quiet nohz_full=5'\nB=2\n".to_string());
        let f = grub(&plan(false), Some(&input)).unwrap();
        // Written back in its own quotes (single quotes keep `$` literal, as the admin wrote).
        assert_eq!(f.contents, "A=1\nGRUB_CMDLINE_LINUX='quiet nohz_full=1-3'\nB=2\n");
        let input = ("g".to_string(), "GRUB_CMDLINE_LINUX=\"quiet\"\n".to_string());
        let f = grub(&plan(false), Some(&input)).unwrap();
        assert_eq!(f.contents, "GRUB_CMDLINE_LINUX=\"quiet nohz_full=1-3\"\n");
        let input = ("g".to_string(), "A=1\n".to_string());
        assert!(grub(&plan(false), Some(&input))
            .unwrap()
            .contents
            .ends_with("GRUB_CMDLINE_LINUX=\"nohz_full=1-3\"\n"));
    }

    #[test]
    fn bls_refuses_non_entries_and_adds_missing_options() {
        let junk = ("x.conf".to_string(), "hello\n".to_string());
        assert!(bls(&plan(false), Some(&junk))
            .unwrap_err()
            .to_string()
            .contains("does not look like a boot loader entry"));
        let entry =
            ("/boot/loader/entries/a.conf".to_string(), "title a\nlinux /vmlinuz\n".to_string());
        let out = bls(&plan(false), Some(&entry)).unwrap();
        assert_eq!(out[0].name, "a.conf");
        assert_eq!(out[0].contents, "title a\nlinux /vmlinuz\noptions nohz_full=1-3\n");
        assert_eq!(out[1].name, "a.conf.lowlat-bak");
        assert_eq!(out[1].contents, entry.1);
    }

    #[test]
    fn rpm_ostree_adds_rt_override_only_for_rt_plans() {
        assert!(!rpm_ostree(&plan(false), &[]).contents.contains("override remove"));
        let s = rpm_ostree(&plan(true), &["k.rpm".to_string()]).contents;
        assert!(s.contains("rpm-ostree override remove kernel kernel-core kernel-modules kernel-modules-extra --install 'k.rpm'"), "{s}");
        assert!(grubby(&plan(false))
            .contents
            .contains("grubby --update-kernel=ALL --args='nohz_full=1-3'"));
    }
}
