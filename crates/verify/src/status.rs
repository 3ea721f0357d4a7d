//! `lowlat status`: the `tuned-adm active` question for lowlat — what is applied now, from which
//! plan and journal, in which boot; which planned boot arguments are on the running command
//! line, which only in the boot loader (pending a reboot), which nowhere; and whether any value
//! `apply` wrote has changed since (drift). Read-only, on the live host or a snapshot.
//!
//! Pure over its inputs ([`status`]): the host model, the journal's records (read by the
//! caller through [`read_journal`]) and the boot loader entries; parsing and I/O stay apart.

use std::path::{Path, PathBuf};

use host::{Host, Root};
use plan::Plan;
use serde::{Deserialize, Serialize};
use tune::journal::{Outcome, Record};
use tune::target::{same_value, Target};

use crate::model::BootEntry;
use crate::sets::{same_arg, token, tokens};

/// Version of the status document.
pub const SCHEMA_VERSION: u32 = 1;

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Status {
    pub schema_version: u32,
    /// Always `status`.
    #[schemars(extend("const" = "status"))]
    pub kind: String,
    /// The host read (`live`, a snapshot or must-gather node).
    pub source: String,
    /// The running boot (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: Option<String>,
    /// What lowlat's journal says was applied.
    pub applied: Applied,
    /// The plan the boot arguments were compared with: given, or the one the journal names.
    pub plan: Option<PlanRef>,
    /// Each planned kernel argument: running, pending reboot, or missing.
    pub boot_args: Vec<BootArg>,
    /// The values the last apply wrote, read back now.
    pub drift: Option<Drift>,
    /// What needs doing, one line each (empty: nothing).
    pub attention: Vec<String>,
}

/// The journal's account of the last `apply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum Applied {
    /// No journal: lowlat applied nothing here (or it was reverted and forgotten).
    Nothing { journal: PathBuf },
    /// The journal could not be read.
    Unreadable { journal: PathBuf, error: String },
    /// Applied in this boot and in place.
    Active { journal: PathBuf, run: ApplyRun },
    /// Applied in an earlier boot: the runtime changes ended with it.
    EarlierBoot { journal: PathBuf, run: ApplyRun },
    /// The apply never finished (killed, crashed): `lowlat revert` restores what it wrote.
    Interrupted { journal: PathBuf, run: ApplyRun },
    /// The apply failed and rolled back.
    RolledBack { journal: PathBuf, run: ApplyRun, left: Vec<String> },
    /// Reverted since.
    Reverted { journal: PathBuf, run: ApplyRun, restored: usize },
}

/// One `apply` as the journal tells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApplyRun {
    /// The plan file as `apply` was given it.
    pub plan: Option<String>,
    pub time: String,
    pub version: String,
    pub boot_id: String,
    /// Changes written and in place.
    pub changes: usize,
    /// Changes the kernel refused by design (managed IRQs, per-CPU kthreads).
    pub refused: usize,
}

/// Which plan, and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanRef {
    pub file: String,
    pub name: String,
    /// `argument` (`--plan`) or `journal` (the plan the last apply used).
    pub from: PlanFrom,
    pub reserved: String,
    pub isolated: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PlanFrom {
    Argument,
    Journal,
}

/// One planned kernel argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BootArg {
    pub arg: String,
    pub state: ArgState,
    /// What the running command line has for the key, when it differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<String>,
    /// The boot loader files that hold it for the next boot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next_boot: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ArgState {
    /// On the running command line.
    Running,
    /// Not running, but in a boot loader entry: takes effect at the next reboot.
    PendingReboot,
    /// Neither running nor configured.
    Missing,
}

/// The last apply's values read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Drift {
    /// Values compared.
    pub checked: usize,
    /// Still as applied.
    pub unchanged: usize,
    /// Changed since apply.
    pub changed: Vec<Drifted>,
    /// Targets gone (a task that exited, an IRQ that went away) or unreadable here.
    pub gone: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Drifted {
    pub target: String,
    pub applied: String,
    pub now: String,
}

/// What to compare with.
#[derive(Debug, Clone)]
pub struct Request {
    /// The plan given (`--plan FILE`): (plan, file as given).
    pub plan: Option<(Plan, String)>,
    /// The journal, as a path on the host (read through the root).
    pub journal: PathBuf,
}

/// The journal's records, read through `root` (a snapshot holds none: `Ok(None)`). A journal
/// that `revert` closed (kept as `<journal>.reverted`) still tells its story.
pub fn read_journal(root: &Root, journal: &Path) -> Result<Option<Vec<Record>>, String> {
    let rel = journal.to_string_lossy();
    let rel = rel.trim_start_matches('/');
    for rel in [rel.to_string(), format!("{rel}.reverted")] {
        match root.read_bytes(&rel) {
            Ok(bytes) => {
                return tune::journal::parse(journal, &bytes).map(Some).map_err(|e| e.to_string())
            }
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(None)
}

/// The answer for `host` (read from `root`), its journal records and boot loader entries.
pub fn status(
    root: &Root,
    host: &Host,
    records: Result<Option<Vec<Record>>, String>,
    entries: &[BootEntry],
    req: &Request,
) -> Status {
    let boot_id = root.read_trimmed("proc/sys/kernel/random/boot_id").ok();
    let journal = req.journal.clone();
    let (applied, last) = match records {
        Err(error) => (Applied::Unreadable { journal, error }, None),
        Ok(None) => (Applied::Nothing { journal }, None),
        Ok(Some(r)) => match last_apply(&r, boot_id.as_deref()) {
            Some((a, changes)) => (a(journal), Some(changes)),
            None => (Applied::Nothing { journal }, None),
        },
    };
    let journal_plan = match &applied {
        Applied::Active { run, .. } | Applied::Interrupted { run, .. } => run.plan.clone(),
        _ => None,
    };
    let plan: Option<(Plan, String, PlanFrom)> = match &req.plan {
        Some((p, f)) => Some((p.clone(), f.clone(), PlanFrom::Argument)),
        None => journal_plan
            .and_then(|f| Plan::load(Path::new(&f)).ok().map(|p| (p, f, PlanFrom::Journal))),
    };
    let boot_args = plan.as_ref().map_or_else(Vec::new, |(p, _, _)| boot_args(host, p, entries));
    let drift = match (&applied, &last) {
        (Applied::Active { .. } | Applied::Interrupted { .. }, Some(changes)) => {
            Some(drift(root, changes))
        }
        _ => None,
    };
    let mut attention = Vec::new();
    let plan_file = plan.as_ref().map_or("PLAN".to_string(), |(_, f, _)| f.clone());
    match &applied {
        Applied::Interrupted { .. } => attention.push(
            "the last apply did not finish: `sudo lowlat revert` restores what it wrote".into(),
        ),
        Applied::EarlierBoot { .. } => attention.push(format!(
            "the runtime changes of the last apply ended with its boot: `sudo lowlat apply --plan \
             {plan_file}` again, or make them persistent (`lowlat render --plan {plan_file} tuned` \
             or `systemd`)"
        )),
        Applied::Active { .. } => attention.push(format!(
            "runtime changes last until reboot: `lowlat render --plan {plan_file} tuned` (or \
             `systemd`) makes them persistent"
        )),
        Applied::Unreadable { error, .. } => attention.push(format!("journal: {error}")),
        _ => {}
    }
    let missing: Vec<&str> =
        boot_args.iter().filter(|a| a.state == ArgState::Missing).map(|a| a.arg.as_str()).collect();
    if !missing.is_empty() {
        attention.push(format!(
            "{} planned argument(s) neither running nor configured ({}): `lowlat render --plan \
             {plan_file} grubby` (or bls / grub / rpm-ostree), then reboot",
            missing.len(),
            missing.join(" ")
        ));
    }
    if boot_args.iter().any(|a| a.state == ArgState::PendingReboot) {
        attention.push("boot arguments are configured but not running: reboot".into());
    }
    if let Some(d) = drift.as_ref().filter(|d| !d.changed.is_empty()) {
        attention.push(format!(
            "{} value(s) changed since apply (irqbalance, tuned or another tool?): `lowlat verify \
             --plan {plan_file}` says which effects are lost",
            d.changed.len()
        ));
    }
    Status {
        schema_version: SCHEMA_VERSION,
        kind: "status".into(),
        source: if root.is_live() { "live host".into() } else { root.to_string() },
        boot_id,
        applied,
        plan: plan.map(|(p, file, from)| PlanRef {
            file,
            name: p.name.clone(),
            from,
            reserved: p.reserved.to_list(),
            isolated: p.isolated.to_list(),
        }),
        boot_args,
        drift,
        attention,
    }
}

type MakeApplied = Box<dyn FnOnce(PathBuf) -> Applied>;

/// The last apply in the records: how it ended, and the changes it left in place.
fn last_apply(
    records: &[Record],
    boot: Option<&str>,
) -> Option<(MakeApplied, Vec<(Target, String)>)> {
    let start = records.iter().rposition(|r| matches!(r, Record::Begin { .. }))?;
    let Record::Begin { time, boot_id, plan, version, .. } = &records[start] else { return None };
    let rest = &records[start + 1..];
    let mut pending: Vec<(u64, Target, String)> = Vec::new();
    let mut changes: Vec<(Target, String)> = Vec::new();
    let mut refused = 0;
    let mut end: Option<&Record> = None;
    for r in rest {
        match r {
            Record::Change { seq, target, new, .. } => {
                pending.push((*seq, target.clone(), new.clone()))
            }
            Record::Outcome { seq, outcome, .. } => {
                if let Some(i) = pending.iter().position(|(s, _, _)| s == seq) {
                    let (_, t, new) = pending.remove(i);
                    match outcome {
                        Outcome::Applied => changes.push((t, new)),
                        Outcome::Refused => refused += 1,
                        Outcome::Gone => {}
                    }
                }
            }
            Record::Commit { .. } | Record::RolledBack { .. } | Record::Reverted { .. } => {
                end = Some(r)
            }
            Record::Begin { .. } => {}
        }
    }
    // A change journaled without its outcome may have been written (the crash came after).
    changes.extend(pending.into_iter().map(|(_, t, new)| (t, new)));
    let run = ApplyRun {
        plan: plan.clone(),
        time: time.clone(),
        version: version.clone(),
        boot_id: boot_id.clone(),
        changes: changes.len(),
        refused,
    };
    let this_boot = boot == Some(boot_id.as_str());
    let make: MakeApplied = match end {
        Some(Record::Reverted { restored, .. }) => {
            let restored = *restored;
            Box::new(move |journal| Applied::Reverted { journal, run, restored })
        }
        Some(Record::RolledBack { left, .. }) => {
            let left = left.clone();
            Box::new(move |journal| Applied::RolledBack { journal, run, left })
        }
        _ if !this_boot => Box::new(move |journal| Applied::EarlierBoot { journal, run }),
        Some(Record::Commit { .. }) => Box::new(move |journal| Applied::Active { journal, run }),
        _ => Box::new(move |journal| Applied::Interrupted { journal, run }),
    };
    Some((make, changes))
}

/// Each planned argument against the running command line and the boot loader entries.
fn boot_args(host: &Host, plan: &Plan, entries: &[BootEntry]) -> Vec<BootArg> {
    let running = host.kernel.cmdline.as_deref().map(tokens).unwrap_or_default();
    plan.kernel_args
        .iter()
        .map(|a| {
            let on = |toks: &[(String, Option<String>)]| {
                toks.iter().any(|(k, v)| *k == a.key && same_arg(a.value.as_deref(), v.as_deref()))
            };
            let next_boot: Vec<String> = entries
                .iter()
                .filter(|e| on(&tokens(&e.cmdline)))
                .map(|e| e.source.clone())
                .collect();
            let state = if on(&running) {
                ArgState::Running
            } else if !next_boot.is_empty() {
                ArgState::PendingReboot
            } else {
                ArgState::Missing
            };
            let now: Vec<String> = running
                .iter()
                .filter(|(k, _)| *k == a.key)
                .map(|(k, v)| token(k, v.as_deref()))
                .collect();
            BootArg {
                arg: a.token(),
                state,
                running: (state != ArgState::Running && !now.is_empty()).then(|| now.join(" ")),
                next_boot,
            }
        })
        .collect()
}

/// The value a target holds now, read through `root`; `None`: gone or unreadable.
fn current(root: &Root, target: &Target) -> Option<String> {
    match target {
        Target::File { path, .. } => root.read_trimmed(path.trim_start_matches('/')).ok(),
        Target::Task { pid, tid, start_time, comm } => {
            let dir = format!("proc/{pid}/task/{tid}");
            // The host model's parsers; a reused tid (another start time or comm) is gone.
            let stat =
                host::parse::task::stat(&root.read_string(&format!("{dir}/stat")).ok()?).ok()?;
            if stat.start_time != *start_time || stat.comm != *comm {
                return None;
            }
            host::parse::task::status(&root.read_string(&format!("{dir}/status")).ok()?)
                .cpus_allowed_list
        }
    }
}

fn drift(root: &Root, changes: &[(Target, String)]) -> Drift {
    let mut d = Drift { checked: changes.len(), unchanged: 0, changed: Vec::new(), gone: 0 };
    for (t, applied) in changes {
        match current(root, t) {
            None => d.gone += 1,
            Some(now) if same_value(t.format(), &now, applied) => d.unchanged += 1,
            Some(now) => {
                d.changed.push(Drifted { target: t.to_string(), applied: applied.clone(), now })
            }
        }
    }
    d
}

/// The terminal view.
pub fn terminal(s: &Status) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let boot =
        s.boot_id.as_deref().map_or("unknown".into(), |b| b.chars().take(8).collect::<String>());
    let _ = writeln!(o, "lowlat status: {} (boot {boot}…)", s.source);
    let run_line = |run: &ApplyRun| {
        format!(
            "plan {} at {} by lowlat {}: {} change(s) in place{}",
            run.plan.as_deref().unwrap_or("(unnamed)"),
            run.time,
            run.version,
            run.changes,
            if run.refused > 0 {
                format!(", {} refused by the kernel", run.refused)
            } else {
                String::new()
            }
        )
    };
    let applied = match &s.applied {
        Applied::Nothing { journal } => format!("nothing (no journal at {})", journal.display()),
        Applied::Unreadable { journal, error } => {
            format!("unknown: {} cannot be read: {error}", journal.display())
        }
        Applied::Active { run, .. } => format!("yes, this boot — {}", run_line(run)),
        Applied::EarlierBoot { run, .. } => {
            format!(
                "not any more: applied in an earlier boot ({}) — {}",
                run.boot_id,
                run_line(run)
            )
        }
        Applied::Interrupted { run, .. } => {
            format!("PARTLY: the apply did not finish — {}", run_line(run))
        }
        Applied::RolledBack { run, left, .. } => format!(
            "no: rolled back — {}{}",
            run_line(run),
            if left.is_empty() {
                String::new()
            } else {
                format!("; not restored: {}", left.join(", "))
            }
        ),
        Applied::Reverted { run, restored, .. } => {
            format!("no: reverted ({restored} value(s) restored) — {}", run_line(run))
        }
    };
    let _ = writeln!(o, "Applied:    {applied}");
    match &s.plan {
        Some(p) => {
            let from = match p.from {
                PlanFrom::Argument => "--plan",
                PlanFrom::Journal => "the last apply's",
            };
            let _ = writeln!(
                o,
                "Plan:       {} ({from}): \"{}\", housekeeping {}, isolated {}",
                p.file, p.name, p.reserved, p.isolated
            );
        }
        None => {
            let _ = writeln!(o, "Plan:       none to compare with (`lowlat status --plan FILE`)");
        }
    }
    if s.plan.is_some() {
        let count = |st: ArgState| s.boot_args.iter().filter(|a| a.state == st).count();
        let _ = writeln!(
            o,
            "Boot args:  {} planned: {} running, {} pending reboot, {} missing",
            s.boot_args.len(),
            count(ArgState::Running),
            count(ArgState::PendingReboot),
            count(ArgState::Missing)
        );
        for a in s.boot_args.iter().filter(|a| a.state != ArgState::Running) {
            let what = match a.state {
                ArgState::PendingReboot => {
                    format!("pending reboot (in {})", a.next_boot.join(", "))
                }
                _ => "missing".to_string(),
            };
            let running =
                a.running.as_deref().map_or(String::new(), |r| format!("; running has {r}"));
            let _ = writeln!(o, "  {:<34} {what}{running}", a.arg);
        }
    }
    if let Some(d) = &s.drift {
        let _ = writeln!(
            o,
            "Drift:      {} of {} applied value(s) unchanged, {} changed, {} gone",
            d.unchanged,
            d.checked,
            d.changed.len(),
            d.gone
        );
        for c in d.changed.iter().take(20) {
            let _ = writeln!(o, "  {}: applied {}, now {}", c.target, c.applied, c.now);
        }
        if d.changed.len() > 20 {
            let _ = writeln!(o, "  … and {} more (--json lists all)", d.changed.len() - 20);
        }
    }
    if s.attention.is_empty() {
        let _ = writeln!(o, "Nothing needs doing.");
    } else {
        for a in &s.attention {
            let _ = writeln!(o, "-> {a}");
        }
    }
    o
}
