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
    let planned: Vec<String> = plan.kernel_args.iter().map(KernelArg::token).collect();
    let plan_has_hugepages =
        plan.kernel_args.iter().any(|a| HUGEPAGE_KEYS.contains(&a.key.as_str()));
    let mut out: Vec<String> = vec![];
    let mut placed = vec![false; planned.len()];
    let mut replaced = vec![];
    for tok in tokens(existing) {
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
    for (i, p) in planned.iter().enumerate() {
        if !placed[i] {
            out.push(p.clone());
        }
    }
    (out.join(" "), replaced)
}
