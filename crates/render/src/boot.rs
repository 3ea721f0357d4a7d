//! Boot loader outputs: a `grubby` command, an `/etc/default/grub` edit, a BLS / systemd-boot
//! entry patched from an input file (with a backup), `rpm-ostree kargs` commands and the
//! RHCOS real-time kernel override (seed 000's procedure).

use plan::Plan;

use crate::cmdline::{self, line, merge};
use crate::files::BACKUP_SUFFIX;
use crate::{input_error, quote, shfile, OutFile, RenderError};

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

/// The variable the `/etc/default/grub` edit sets.
const GRUB_VAR: &str = "GRUB_CMDLINE_LINUX";

/// An input file the editor will not guess about: which line, why, and what to do.
fn refuse(name: &str, line: usize, problem: impl std::fmt::Display) -> RenderError {
    input_error(
        format!("{} line {line}: {problem}", quote::comment(name)),
        "lowlat edits only what it can read as the loader does: simplify that line by hand and run again, or write the arguments another way (`lowlat render grub` without --input gives a grub.d drop-in, `lowlat render grubby` a grubby script)",
    )
}

/// Comment lines for a warning or note in an edited file, left out where the same line is
/// already there (a second run adds nothing).
fn comments(text: &str, notes: &[String]) -> String {
    notes
        .iter()
        .map(|n| format!("# lowlat: {}\n", quote::comment(n)))
        .filter(|c| !text.lines().any(|l| format!("{l}\n") == *c))
        .collect()
}

/// The flags an `isolcpus=` value isolates with (the kernel's: no flag means `domain`).
fn isolcpus_flags(value: &str) -> std::collections::BTreeSet<&str> {
    let flags: std::collections::BTreeSet<&str> =
        value.split(',').filter(|p| matches!(*p, "domain" | "managed_irq" | "nohz")).collect();
    if flags.is_empty() {
        ["domain"].into()
    } else {
        flags
    }
}

/// Warnings for replaced arguments whose meaning changes beyond their CPUs: an `isolcpus=`
/// the plan's value takes isolation flags from. The plan's value wins (the booted line is
/// then the one `lowlat verify --plan` checks); this says what was lost and how to keep it.
fn flag_warnings(replaced: &[String], plan: &Plan) -> Vec<String> {
    let Some(new) = plan.kernel_args.iter().find(|a| a.key == "isolcpus") else {
        return vec![];
    };
    let new_value = new.value.as_deref().unwrap_or("");
    let kept = isolcpus_flags(new_value);
    let mut out = vec![];
    for old in replaced {
        let Some(old_value) = old.strip_prefix("isolcpus=") else { continue };
        let dropped: Vec<&str> =
            isolcpus_flags(old_value).into_iter().filter(|f| !kept.contains(f)).collect();
        if dropped.is_empty() {
            continue;
        }
        let flags = dropped.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ");
        let domain = if dropped.contains(&"domain") {
            " (no flag means `domain`): the scheduler will balance tasks onto those CPUs again; to keep domain isolation make the plan with `lowlat plan --isolcpus-domain` and render again"
        } else {
            "; to keep them, edit the plan's isolcpus value and render again"
        };
        out.push(format!(
            "`{old}` is replaced by the plan's `{}`, which drops the {flags} isolation flag{}{domain}",
            new.token(),
            if dropped.len() > 1 { "s" } else { "" },
        ));
    }
    out
}

/// One assignment to `GRUB_CMDLINE_LINUX` in `/etc/default/grub`.
struct Assignment {
    /// The statement's first byte and line.
    start: usize,
    line: usize,
    /// Where `GRUB_CMDLINE_LINUX=` starts and the value's word ends.
    var_at: usize,
    word_end: usize,
    /// The value as the shell reads it, and whether it was one `'…'` string.
    value: String,
    single: bool,
}

/// Blanks and `\`-newline continuations from `i`.
fn skip_blank(text: &str, mut i: usize) -> usize {
    loop {
        let rest = &text[i..];
        if rest.starts_with([' ', '\t']) {
            i += 1;
        } else if rest.starts_with("\\\n") {
            i += 2;
        } else {
            return i;
        }
    }
}

/// Every assignment to `GRUB_CMDLINE_LINUX` in a shell file, or why one cannot be edited.
fn grub_assignments(name: &str, text: &str) -> Result<(Vec<Assignment>, bool), RenderError> {
    let (statements, continued) =
        shfile::statements(text).map_err(|e| refuse(name, e.line, e.problem))?;
    let mut out = vec![];
    for s in &statements {
        let code = &text[s.start..s.code_end];
        let mut at = s.start + (code.len() - code.trim_start_matches([' ', '\t']).len());
        if let Some(r) = text[at..s.code_end].strip_prefix("export") {
            if r.starts_with([' ', '\t']) {
                at = skip_blank(text, at + "export".len());
            }
        }
        let here = &text[at..s.code_end];
        if !here.starts_with("GRUB_CMDLINE_LINUX=") {
            if code.contains("GRUB_CMDLINE_LINUX=") || code.contains("GRUB_CMDLINE_LINUX+=") {
                return Err(refuse(name, s.line, format!("{GRUB_VAR} is set inside another command or with `+=`; lowlat edits only a line of the form {GRUB_VAR}=\"…\"")));
            }
            continue;
        }
        let value_at = at + GRUB_VAR.len() + 1;
        let (value, word_end, single) = shfile::word(&text[..s.code_end], value_at).map_err(|e| match e {
            shfile::WordError::Expansion => refuse(name, s.line, format!("the value of {GRUB_VAR} uses `$` or a backquote; the command line it gives is only known when the shell runs")),
            shfile::WordError::Unterminated => refuse(name, s.line, format!("the value of {GRUB_VAR} is not a complete shell word")),
        })?;
        let after = skip_blank(text, word_end);
        let tail = &text[after..s.code_end];
        if tail.starts_with(';') && !tail.starts_with(";;") {
            if tail.contains("GRUB_CMDLINE_LINUX=") || tail.contains("GRUB_CMDLINE_LINUX+=") {
                return Err(refuse(
                    name,
                    s.line,
                    format!("{GRUB_VAR} is set twice in one statement"),
                ));
            }
        } else if tail.starts_with(['&', '|']) {
            return Err(refuse(name, s.line, format!("`{GRUB_VAR}=…` is joined to a command by `{}` (it may run in a subshell, or not at all)", tail.chars().take_while(|c| matches!(c, '&' | '|')).take(2).collect::<String>())));
        } else if !tail.is_empty() {
            return Err(refuse(name, s.line, format!("a command follows `{GRUB_VAR}=…` on the same line (`{}`): the shell then sets {GRUB_VAR} for that command only; put the command after a `;` or on its own line", quote::comment(tail.split_whitespace().next().unwrap_or(tail)))));
        }
        if cmdline::unclosed_quote(&value) {
            return Err(refuse(name, s.line, format!("the value of {GRUB_VAR} leaves a double quote open: the kernel would read everything after it as one argument; close the quote")));
        }
        out.push(Assignment { start: s.start, line: s.line, var_at: at, word_end, value, single });
    }
    Ok((out, continued))
}

/// The `GRUB_CMDLINE_LINUX=` edit: merged into an input `/etc/default/grub`, or a drop-in.
pub fn grub(plan: &Plan, input: Option<&(String, String)>) -> Result<OutFile, RenderError> {
    grub_with_warnings(plan, input).map(|(f, _)| f)
}

/// [`grub`] and what the edit warns about (also written into the file as comments).
///
/// The file is read as grub-mkconfig's shell reads it: the last assignment to
/// `GRUB_CMDLINE_LINUX` is the one that counts and the one edited (earlier ones are left
/// and named in a warning), a value may span lines (`\`-newline, or inside quotes) and is
/// written back on one line in the quotes it had, and a `; command` or `# comment` after
/// it is kept. A value the shell computes (`$…`), a command that takes the assignment as
/// its environment, or an unclosed quote is refused with its line.
pub fn grub_with_warnings(
    plan: &Plan,
    input: Option<&(String, String)>,
) -> Result<(OutFile, Vec<String>), RenderError> {
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
        return Ok((OutFile::new("50-lowlat.cfg", s), vec![]));
    };
    let (assignments, continued) = grub_assignments(name, text)?;
    let Some(last) = assignments.last() else {
        let mut out = text.clone();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if continued || shfile::statements(&out).is_ok_and(|(_, c)| c) {
            // The last statement goes on past the end (`\`-newline): end it first.
            out.push('\n');
        }
        out.push_str(&format!("{GRUB_VAR}=\"{}\"\n", quote::sh_double_inner(&line(plan))));
        return Ok((OutFile::new("grub", out), vec![]));
    };
    // Control characters are spaces to the kernel: made so before merging, so a token the
    // output splits off is one the merge saw.
    let (merged, replaced) = merge(&one_line(&last.value), plan);
    let value = if last.single {
        format!("'{}'", one_line(&merged).replace('\'', "'\\''"))
    } else {
        format!("\"{}\"", quote::sh_double_inner(&merged))
    };
    let mut warnings = vec![];
    if assignments.len() > 1 {
        let earlier: Vec<String> =
            assignments[..assignments.len() - 1].iter().map(|a| a.line.to_string()).collect();
        warnings.push(format!(
            "{} sets {GRUB_VAR} on line{} {} and again on line {}: the shell keeps the last, so line {} was edited; the earlier ones have no effect and were left as they were",
            quote::comment(name),
            if earlier.len() > 1 { "s" } else { "" },
            earlier.join(", "),
            last.line,
            last.line
        ));
    }
    // In the file, above the edited line, without a line number (comments shift lines, and
    // a second run must find the same text); the dead-assignment note is for stderr only.
    let flags = flag_warnings(&replaced, plan);
    let at = format!("{} line {}", quote::comment(name), last.line);
    warnings.extend(flags.iter().map(|f| format!("{at}: {f}")));
    let mut notes: Vec<String> = flags.iter().map(|f| format!("WARNING: {f}")).collect();
    if !replaced.is_empty() {
        notes.push(format!("replaced {} with the plan's values", replaced.join(" ")));
    }
    let mut out = String::with_capacity(text.len() + value.len());
    out.push_str(&text[..last.start]);
    out.push_str(&comments(text, &notes));
    out.push_str(&text[last.start..last.var_at]);
    out.push_str(&format!("{GRUB_VAR}={value}"));
    out.push_str(&text[last.word_end..]);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok((OutFile::new("grub", out), warnings))
}

/// The kernel command line an `/etc/default/grub` gives (`GRUB_CMDLINE_LINUX` as the shell
/// reads it: its last assignment), `None` where it sets none; an error, with the line, where
/// the editor would refuse the file.
pub fn grub_cmdline(name: &str, text: &str) -> Result<Option<String>, RenderError> {
    Ok(grub_assignments(name, text)?.0.pop().map(|a| a.value))
}

/// The kernel command line a BLS entry gives: its `options` lines joined by spaces.
pub fn bls_cmdline(text: &str) -> String {
    text.split_terminator('\n')
        .filter(|l| is_options(l))
        .map(|l| l.trim_start()["options".len()..].trim())
        .filter(|v| !v.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a BLS line is an `options` line.
fn is_options(l: &str) -> bool {
    l.trim_start()
        .strip_prefix("options")
        .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
}

/// A BLS (`/boot/loader/entries/*.conf`) or systemd-boot entry with its `options` line
/// patched; the original is returned as `<name>.lowlat-bak`.
pub fn bls(plan: &Plan, input: Option<&(String, String)>) -> Result<Vec<OutFile>, RenderError> {
    bls_with_warnings(plan, input).map(|(f, _)| f)
}

/// [`bls`] and what the edit warns about (also written into the entry as comments).
///
/// Every `options` line counts (the loaders join them with spaces): the plan's arguments
/// replace the first token of each key they set where it stands, later ones are dropped
/// (a line left empty goes), and new ones go at the end of the last `options` line.
pub fn bls_with_warnings(
    plan: &Plan,
    input: Option<&(String, String)>,
) -> Result<(Vec<OutFile>, Vec<String>), RenderError> {
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
            format!("{}: no `title`, `linux` or `options` line; this does not look like a boot loader entry", quote::comment(name)),
            "pass a BLS / systemd-boot entry file",
        ));
    }
    let base = name.rsplit('/').next().unwrap_or(name).to_string();
    // Split at `\n` only: a line's `\r` (CRLF, or a lone one) stays as it was, so a second
    // run reads what the first wrote.
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    let at: Vec<usize> = (0..lines.len()).filter(|&i| is_options(lines[i])).collect();
    let values: Vec<String> =
        at.iter().map(|&i| one_line(&lines[i].trim_start()["options".len()..])).collect();
    let mut said: Vec<(usize, String)> = vec![];
    for (&i, v) in at.iter().zip(&values) {
        if cmdline::unclosed_quote(v) {
            return Err(refuse(name, i + 1, "the options value leaves a double quote open: the kernel would read everything after it, the plan's arguments too, as one argument; close the quote"));
        }
        if v.contains('$') {
            said.push((i + 1, "options uses a `$` variable (GRUB's environment block, e.g. $kernelopts): arguments set there are not seen here and may repeat or contradict the plan's; check `grub2-editenv list`".to_string()));
        }
    }
    let (merged, replaced) =
        cmdline::merge_lines(&values.iter().map(String::as_str).collect::<Vec<_>>(), plan);
    let first_line = at.first().map_or(lines.len() + 1, |i| i + 1);
    said.extend(flag_warnings(&replaced, plan).into_iter().map(|f| (first_line, f)));
    let warnings: Vec<String> =
        said.iter().map(|(l, f)| format!("{} line {l}: {f}", quote::comment(name))).collect();
    let mut notes: Vec<String> = said.iter().map(|(_, f)| format!("WARNING: {f}")).collect();
    if !replaced.is_empty() {
        notes.push(format!("replaced {} with the plan's values", replaced.join(" ")));
    }
    let notes = comments(text, &notes);
    let mut out = String::new();
    let mut k = 0;
    for (i, l) in lines.iter().enumerate() {
        if at.get(k) == Some(&i) {
            if k == 0 {
                out.push_str(&notes);
            }
            let m = one_line(&merged[k]);
            k += 1;
            if m.is_empty() && k < at.len() {
                continue; // every token went to an earlier line
            }
            out.push_str(&format!("options {m}\n"));
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    if at.is_empty() {
        out.push_str(&notes);
        out.push_str(&format!("options {}\n", one_line(&merged[0])));
    }
    Ok((
        vec![
            OutFile::new(base.clone(), out),
            OutFile::new(format!("{base}{BACKUP_SUFFIX}"), text.clone()),
        ],
        warnings,
    ))
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
        assert_eq!(
            f.contents,
            "A=1\n# lowlat: replaced nohz_full=5 with the plan's values\nGRUB_CMDLINE_LINUX='quiet nohz_full=1-3'\nB=2\n"
        );
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
