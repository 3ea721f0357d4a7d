//! The kernel command line of a plan, its explanation, and merging it into an existing
//! command line (other arguments kept, conflicting ones replaced in place, new ones appended).

use plan::{KernelArg, Plan};

use crate::OutFile;

/// The plan's arguments as one line.
pub fn line(plan: &Plan) -> String {
    plan.kernel_args.iter().map(KernelArg::token).collect::<Vec<_>>().join(" ")
}

/// `cmdline` target: the line, or with `explain` every argument and why.
pub fn render(plan: &Plan, explain: bool) -> OutFile {
    if !explain {
        return OutFile::new("cmdline", format!("{}\n", line(plan)));
    }
    let width = plan.kernel_args.iter().map(|a| a.token().len().min(40)).max().unwrap_or(0);
    let mut out = String::new();
    for a in &plan.kernel_args {
        let t = a.token();
        if t.len() > 40 {
            out.push_str(&format!("{t}\n{:width$}  {}\n", "", a.reason));
        } else {
            out.push_str(&format!("{t:width$}  {}\n", a.reason));
        }
    }
    OutFile::new("cmdline.explain", out)
}

/// Split a command line into tokens (kernel rules: spaces separate, double quotes group).
pub fn tokens(cmdline: &str) -> Vec<String> {
    let mut out = vec![];
    let mut cur = String::new();
    let mut quoted = false;
    for ch in cmdline.chars() {
        match ch {
            '"' => {
                quoted = !quoted;
                cur.push(ch);
            }
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn key(token: &str) -> &str {
    token.split_once('=').map_or(token, |(k, _)| k)
}

/// Keys the plan owns as a group: any of them in the plan replaces all of them.
const HUGEPAGE_KEYS: [&str; 3] = ["default_hugepagesz", "hugepagesz", "hugepages"];

/// Aliases whose meaning the plan's keys replace (`noht` is the old spelling of `nosmt`).
fn same_meaning(existing: &str, planned: &str) -> bool {
    existing == planned || (existing == "noht" && planned == "nosmt")
}

/// Merge the plan's arguments into `existing`: an existing token whose key the plan sets is
/// replaced where it stood (later duplicates dropped); the plan's remaining arguments are
/// appended in plan order. Returns the new line and the replaced tokens.
pub fn merge(existing: &str, plan: &Plan) -> (String, Vec<String>) {
    let (mut lines, replaced) = merge_lines(&[existing], plan);
    (lines.remove(0), replaced)
}

/// [`merge`] over a command line held in several lines that are read as one, joined by
/// spaces (a BLS entry's `options` lines): each line keeps its other tokens, the first
/// token of a key the plan sets is replaced where it stood and the later ones dropped, and
/// the plan's remaining arguments go at the end of the last line. Returns one line per
/// input line (one line for no input) and the replaced tokens.
pub fn merge_lines(existing: &[&str], plan: &Plan) -> (Vec<String>, Vec<String>) {
    let planned: Vec<String> = plan.kernel_args.iter().map(KernelArg::token).collect();
    let plan_has_hugepages =
        plan.kernel_args.iter().any(|a| HUGEPAGE_KEYS.contains(&a.key.as_str()));
    let mut lines: Vec<Vec<String>> = vec![];
    let mut placed = vec![false; planned.len()];
    let mut replaced = vec![];
    for l in existing.iter().copied().chain(existing.is_empty().then_some("")) {
        let mut out: Vec<String> = vec![];
        for tok in tokens(l) {
            let k = key(&tok);
            if plan_has_hugepages && HUGEPAGE_KEYS.contains(&k) {
                replaced.push(tok.clone());
                continue;
            }
            let hit = planned.iter().enumerate().find(|(_, p)| same_meaning(k, key(p)));
            match hit {
                Some((i, p)) => {
                    if !placed[i] {
                        if &tok != p {
                            replaced.push(tok.clone());
                        }
                        out.push(p.clone());
                        placed[i] = true;
                    } else if &tok != p {
                        replaced.push(tok.clone());
                    }
                }
                None => out.push(tok),
            }
        }
        lines.push(out);
    }
    if let Some(last) = lines.last_mut() {
        for (i, p) in planned.iter().enumerate() {
            if !placed[i] {
                last.push(p.clone());
            }
        }
    }
    (lines.into_iter().map(|l| l.join(" ")).collect(), replaced)
}

/// Whether `cmdline` leaves a double quote open: the kernel would read everything after
/// it, the arguments an editor appends included, as one argument.
pub fn unclosed_quote(cmdline: &str) -> bool {
    cmdline.chars().filter(|&c| c == '"').count() % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::{KernelArg, Plan, PlanOptions};

    fn plan(args: &[(&str, Option<&str>)]) -> Plan {
        Plan {
            schema_version: 1,
            name: "t".into(),
            host: None,
            reserved: cpuset::CpuSet::parse_list("0").unwrap(),
            isolated: cpuset::CpuSet::parse_list("1-3").unwrap(),
            offlined: cpuset::CpuSet::new(),
            options: PlanOptions::default(),
            kernel_args: args
                .iter()
                .map(|(k, v)| KernelArg {
                    key: (*k).into(),
                    value: v.map(str::to_string),
                    reason: format!("because {k}"),
                })
                .collect(),
            runtime: vec![],
            rationale: vec![],
            smt_disabled: cpuset::CpuSet::new(),
        }
    }

    #[test]
    fn merge_replaces_in_place_keeps_others_appends_new() {
        let p = plan(&[
            ("nohz", Some("on")),
            ("isolcpus", Some("managed_irq,1-3")),
            ("skew_tick", Some("1")),
            ("nosmt", None),
        ]);
        let (line, replaced) =
            merge("LABEL=boot isolcpus=2 nohz=off quiet noht isolcpus=5 console=tty0", &p);
        assert_eq!(
            line,
            "LABEL=boot isolcpus=managed_irq,1-3 nohz=on quiet nosmt console=tty0 skew_tick=1"
        );
        assert_eq!(replaced, vec!["isolcpus=2", "nohz=off", "noht", "isolcpus=5"]);
        // Idempotent.
        let (again, replaced) = merge(&line, &p);
        assert_eq!(again, line);
        assert!(replaced.is_empty());
    }

    #[test]
    fn hugepage_args_replace_as_a_group() {
        let p = plan(&[
            ("default_hugepagesz", Some("1G")),
            ("hugepagesz", Some("1G")),
            ("hugepages", Some("4")),
        ]);
        let (line, _) = merge("a default_hugepagesz=2M hugepagesz=2M hugepages=128 b", &p);
        assert_eq!(line, "a b default_hugepagesz=1G hugepagesz=1G hugepages=4");
        let (line, _) = merge("hugepagesz=2M hugepages=8", &plan(&[("nohz", Some("on"))]));
        assert_eq!(line, "hugepagesz=2M hugepages=8 nohz=on");
    }

    #[test]
    fn tokens_respect_quotes() {
        assert_eq!(tokens(" a  b=\"x y\" c\n"), vec!["a", "b=\"x y\"", "c"]);
        assert!(tokens("").is_empty());
    }

    #[test]
    fn explain_lists_every_argument_with_its_reason() {
        let p = plan(&[("nohz", Some("on")), ("nosmt", None)]);
        let out = render(&p, true).contents;
        assert_eq!(out, "nohz=on  because nohz\nnosmt    because nosmt\n");
        assert_eq!(render(&p, false).contents, "nohz=on nosmt\n");
    }
}
