//! The transaction: apply a list of changes all-or-nothing (journal first, then write; any
//! failure rolls back what was done, in reverse), preview without writing, and revert from the
//! journal alone.

use util::exit::{Classify, ExitCode};
use util::time::now_rfc3339;

use crate::changes::Change;
use crate::journal::{JournalError, Log, Outcome, Record};
use crate::target::{same_value, NotAllowed, Target};
use crate::writer::{ErrorKind, WriteError, Writer};

/// One change and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Done {
    pub target: Target,
    pub old: String,
    pub new: String,
    pub why: String,
    /// The refusal / skip reason, when there is one.
    pub message: Option<String>,
}

/// What `apply` did.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct ApplyReport {
    /// Written and in place.
    pub applied: Vec<Done>,
    /// Already at the new value.
    pub unchanged: Vec<Done>,
    /// Refused by the kernel by design (managed/per-CPU IRQ, per-CPU kthread): classified.
    pub refused: Vec<Done>,
    /// Not there any more (task exited, file absent on this host).
    pub skipped: Vec<Done>,
}

/// Why `apply` did not complete.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The journal could not be written before the first change: nothing was changed.
    #[error("{0}; nothing was changed")]
    Journal(JournalError),
    /// The plan asks for a write `apply` never makes: nothing was changed.
    #[error("the plan {} asks for a write lowlat apply never makes; nothing was changed", plan.display())]
    NotAllowed {
        plan: std::path::PathBuf,
        #[source]
        source: NotAllowed,
    },
    /// The plan names CPUs or NUMA nodes this host does not have (a plan made for another
    /// host): nothing was changed.
    #[error("the plan {}: {why}; nothing was changed", plan.display())]
    WrongHost { plan: std::path::PathBuf, why: plan::PlanError },
    /// A step failed, or the caller cancelled (`interrupted`); every change made so far was
    /// undone.
    #[error("{cause}; rolled back all {restored} change(s) made so far, the host is as before")]
    RolledBack { cause: String, restored: usize, interrupted: bool },
    /// A step failed and rollback could not undo everything.
    #[error("{cause}; rollback left {} change(s) in place: {}; run `lowlat revert`", left.len(), left.join("; "))]
    Partial { cause: String, left: Vec<String> },
}

impl Classify for ApplyError {
    fn exit_code(&self) -> ExitCode {
        match self {
            ApplyError::Journal(e) => e.exit_code(),
            ApplyError::NotAllowed { .. } | ApplyError::WrongHost { .. } => ExitCode::Usage,
            ApplyError::RolledBack { interrupted: true, .. } => ExitCode::Interrupted,
            ApplyError::RolledBack { interrupted: false, .. } => ExitCode::Runtime,
            ApplyError::Partial { .. } => ExitCode::PartialApply,
        }
    }
}

/// The JSON shape `ok_or_err` writes, for the schema: `{"ok": value}` or `{"err": why}`.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
enum OkOrErr {
    #[serde(rename = "ok")]
    Ok(String),
    #[serde(rename = "err")]
    Err(String),
}

fn ok_or_err<S: serde::Serializer>(v: &Result<String, String>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap as _;
    let mut m = s.serialize_map(Some(1))?;
    match v {
        Ok(x) => m.serialize_entry("ok", x)?,
        Err(e) => m.serialize_entry("err", e)?,
    }
    m.end()
}

/// One row of a dry run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Preview {
    pub target: Target,
    /// The current value, or why it could not be read (`{"ok": …}` / `{"err": …}` in JSON).
    #[serde(serialize_with = "ok_or_err")]
    #[schemars(with = "OkOrErr")]
    pub old: Result<String, String>,
    pub new: String,
    pub why: String,
    pub unchanged: bool,
}

/// Read every target's current value; write nothing.
pub fn preview(writer: &mut dyn Writer, changes: &[Change]) -> Vec<Preview> {
    changes
        .iter()
        .map(|c| {
            let old = writer.read(&c.target).map_err(|e| e.message);
            let unchanged = old.as_ref().is_ok_and(|o| same_value(c.target.format(), o, &c.new));
            Preview {
                target: c.target.clone(),
                old,
                new: c.new.clone(),
                why: c.why.clone(),
                unchanged,
            }
        })
        .collect()
}

/// Apply `changes` through `writer`, journaling each before it is made.
pub fn apply(
    writer: &mut dyn Writer,
    journal: &mut dyn Log,
    changes: &[Change],
    plan: Option<String>,
) -> Result<ApplyReport, ApplyError> {
    apply_with(writer, journal, changes, plan, &mut |_| true)
}

/// [`apply`], calling `after_step(n)` after the n-th change (1-based) is done: progress
/// reporting, the crash test's pacing (`lowlat apply --step-delay`), and cancellation:
/// returning `false` (e.g. on Ctrl-C) rolls back everything done so far, as a failure would.
pub fn apply_with(
    writer: &mut dyn Writer,
    journal: &mut dyn Log,
    changes: &[Change],
    plan: Option<String>,
    after_step: &mut dyn FnMut(usize) -> bool,
) -> Result<ApplyReport, ApplyError> {
    let boot_id = writer.boot_id();
    journal
        .append(&Record::Begin {
            time: now_rfc3339(),
            boot_id: boot_id.clone(),
            plan,
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
        })
        .map_err(ApplyError::Journal)?;
    let mut report = ApplyReport::default();
    for (i, change) in changes.iter().enumerate() {
        if let Err(cause) = step(writer, journal, change, i as u64 + 1, &boot_id, &mut report) {
            return Err(rollback(writer, journal, &report.applied, cause, false));
        }
        if !after_step(i + 1) {
            let cause = format!("interrupted after step {}", i + 1);
            return Err(rollback(writer, journal, &report.applied, cause, true));
        }
    }
    let commit = Record::Commit {
        time: now_rfc3339(),
        applied: report.applied.len(),
        refused: report.refused.len(),
    };
    if let Err(e) = journal.append(&commit) {
        return Err(rollback(writer, journal, &report.applied, e.to_string(), false));
    }
    Ok(report)
}

/// One change: read, journal, write, record the outcome. `Err` means: roll back.
fn step(
    writer: &mut dyn Writer,
    journal: &mut dyn Log,
    change: &Change,
    seq: u64,
    boot_id: &str,
    report: &mut ApplyReport,
) -> Result<(), String> {
    let done = |old: &str, message: Option<String>| Done {
        target: change.target.clone(),
        old: old.to_string(),
        new: change.new.clone(),
        why: change.why.clone(),
        message,
    };
    let old = match writer.read(&change.target) {
        Ok(v) => v,
        Err(e) if matches!(e.kind, ErrorKind::Gone | ErrorKind::Missing) => {
            report.skipped.push(done("", Some(e.message)));
            return Ok(());
        }
        Err(e) => return Err(e.to_string()),
    };
    if same_value(change.target.format(), &old, &change.new) {
        report.unchanged.push(done(&old, None));
        return Ok(());
    }
    journal
        .append(&Record::Change {
            seq,
            target: change.target.clone(),
            old: old.clone(),
            new: change.new.clone(),
            why: change.why.clone(),
            time: now_rfc3339(),
            boot_id: boot_id.to_string(),
        })
        .map_err(|e| e.to_string())?;
    let (outcome, message) = match writer.write(&change.target, &change.new) {
        Ok(()) => {
            report.applied.push(done(&old, None));
            (Outcome::Applied, None)
        }
        Err(e) if e.kind == ErrorKind::Refused => {
            report.refused.push(done(&old, Some(e.message.clone())));
            (Outcome::Refused, Some(e.message))
        }
        Err(e) if matches!(e.kind, ErrorKind::Gone | ErrorKind::Missing) => {
            report.skipped.push(done(&old, Some(e.message.clone())));
            (Outcome::Gone, Some(e.message))
        }
        Err(e) => return Err(e.to_string()),
    };
    journal.append(&Record::Outcome { seq, outcome, message }).map_err(|e| e.to_string())
}

/// Undo `applied` in reverse; the error to return.
fn rollback(
    writer: &mut dyn Writer,
    journal: &mut dyn Log,
    applied: &[Done],
    cause: String,
    interrupted: bool,
) -> ApplyError {
    let mut left = Vec::new();
    for d in applied.iter().rev() {
        match writer.write(&d.target, &d.old) {
            Ok(()) => {}
            // A task that exited has nothing left to restore.
            Err(e) if e.kind == ErrorKind::Gone => {}
            Err(e) => {
                left.push(format!("{} (still {}, was {}): {}", d.target, d.new, d.old, e.message))
            }
        }
    }
    // Best effort: the journal already holds every change, so revert works without this line.
    let _ = journal.append(&Record::RolledBack { time: now_rfc3339(), left: left.clone() });
    if left.is_empty() {
        ApplyError::RolledBack { cause, restored: applied.len(), interrupted }
    } else {
        ApplyError::Partial { cause, left }
    }
}

/// A change `revert` could not restore, as `done_and_error` writes it: the change and the
/// write error as text.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Failed<'a> {
    #[serde(flatten)]
    done: &'a Done,
    error: String,
}

fn done_and_error<S: serde::Serializer>(v: &[(Done, WriteError)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq as _;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for (done, e) in v {
        seq.serialize_element(&Failed { done, error: e.to_string() })?;
    }
    seq.end()
}

/// What `revert` did.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct RevertReport {
    /// Written back to the recorded old value.
    pub restored: Vec<Done>,
    /// Already at the old value (idempotence, refused or rolled-back changes).
    pub already: usize,
    /// Refused by the kernel by design (a managed or per-CPU IRQ, a per-CPU kthread), as apply
    /// classifies them: the kernel owns the value, so there is nothing to restore. Not failures.
    pub refused: Vec<Done>,
    /// Left alone, with the reason (task gone or tid reused, file absent).
    pub skipped: Vec<Done>,
    /// Could not be restored (the write error as text in JSON).
    #[serde(serialize_with = "done_and_error")]
    #[schemars(with = "Vec<Failed<'static>>")]
    pub failed: Vec<(Done, WriteError)>,
}

/// Why `revert` refused to start: the journal's changes were made in another boot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, schemars::JsonSchema)]
#[error(
    "{count} journal entries were recorded in boot {recorded}, but this is boot {current}: \
     runtime values were reset by the reboot, so there is nothing of theirs to restore \
     (move the journal aside, e.g. `lowlat revert --forget`, to start afresh)"
)]
pub struct OtherBoot {
    pub recorded: String,
    pub current: String,
    pub count: usize,
}

/// Restore every change in `records` to its old value, newest first.
pub fn revert(writer: &mut dyn Writer, records: &[Record]) -> Result<RevertReport, OtherBoot> {
    let current = writer.boot_id();
    let foreign: Vec<&String> = records
        .iter()
        .filter_map(|r| match r {
            Record::Change { boot_id, .. } if *boot_id != current => Some(boot_id),
            _ => None,
        })
        .collect();
    let changes = records.iter().filter(|r| matches!(r, Record::Change { .. })).count();
    // Only another boot's changes: refused (the reboot reset them). Mixed with this boot's:
    // those are restored and the others skipped, each saying why.
    if let Some(first) = foreign.first().filter(|_| foreign.len() == changes) {
        return Err(OtherBoot { recorded: (*first).clone(), current, count: foreign.len() });
    }
    let mut report = RevertReport::default();
    for r in records.iter().rev() {
        let Record::Change { target, old, new, why, boot_id, .. } = r else { continue };
        let done = |message: Option<String>| Done {
            target: target.clone(),
            old: old.clone(),
            new: new.clone(),
            why: why.clone(),
            message,
        };
        if *boot_id != current {
            report.skipped.push(done(Some(format!(
                "changed in boot {boot_id}, which the reboot reset: not restored (its old value may be stale)"
            ))));
            continue;
        }
        match writer.read(target) {
            Ok(cur) if same_value(target.format(), &cur, old) => {
                report.already += 1;
                continue;
            }
            Ok(_) => {}
            Err(e) if matches!(e.kind, ErrorKind::Gone | ErrorKind::Missing) => {
                report.skipped.push(done(Some(e.message)));
                continue;
            }
            Err(e) => {
                report.failed.push((done(None), e));
                continue;
            }
        }
        match writer.write(target, old) {
            Ok(()) => report.restored.push(done(None)),
            Err(e) if e.kind == ErrorKind::Refused => report.refused.push(done(Some(e.message))),
            Err(e) if matches!(e.kind, ErrorKind::Gone | ErrorKind::Missing) => {
                report.skipped.push(done(Some(e.message)))
            }
            Err(e) => report.failed.push((done(None), e)),
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeWriter;
    use crate::journal::Journal;
    use crate::target::Format;

    #[test]
    fn errors_map_to_exit_codes() {
        let mut fake = FakeWriter::new().with_file("/proc/sys/vm/stat_interval", "1");
        let changes = [Change {
            target: Target::file("/proc/sys/vm/stat_interval", Format::Text),
            new: "10".into(),
            why: String::new(),
        }];
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut j = Journal::open(&dir.path().join("j")).unwrap_or_else(|e| panic!("{e}"));
        let cancelled = apply_with(&mut fake, &mut j, &changes, None, &mut |_| false);
        assert_eq!(cancelled.err().map(|e| e.exit_code()), Some(ExitCode::Interrupted));
        assert_eq!(fake.files["/proc/sys/vm/stat_interval"], "1");
        fake.fail_write = Some(fake.log.len() + 1);
        let failed = apply(&mut fake, &mut j, &changes, None);
        assert_eq!(failed.err().map(|e| e.exit_code()), Some(ExitCode::Runtime));
        let partial = ApplyError::Partial { cause: "x".into(), left: vec!["y".into()] };
        assert_eq!(partial.exit_code(), ExitCode::PartialApply);
    }

    /// A restore the kernel refuses by design (the IRQ became managed since apply) is
    /// classified as apply classifies it, not counted as a failure.
    #[test]
    fn revert_classifies_a_refused_restore() {
        let irq = "/proc/irq/24/smp_affinity_list";
        let mut fake = FakeWriter::new().with_file(irq, "0-3");
        let changes = [Change {
            target: Target::file(irq, Format::CpuList),
            new: "0-1".into(),
            why: String::new(),
        }];
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j");
        let mut j = Journal::open(&path).unwrap_or_else(|e| panic!("{e}"));
        apply(&mut fake, &mut j, &changes, None).unwrap_or_else(|e| panic!("{e}"));
        fake.refuse.insert(irq.into());
        let records = crate::journal::read(&path).ok().flatten().unwrap_or_default();
        let rev = revert(&mut fake, &records).unwrap_or_else(|e| panic!("{e}"));
        assert!(rev.failed.is_empty(), "{:?}", rev.failed);
        assert_eq!(rev.refused.len(), 1);
        assert!(rev.refused[0].message.as_deref().is_some_and(|m| m.contains("managed")));
    }

    /// Issue 21, item 12: a journal of this boot's changes with one line of another boot is
    /// reverted — this boot's values restored, the other boot's line skipped with why —
    /// instead of restoring nothing; a journal of only other boots is still refused.
    #[test]
    fn revert_of_a_mixed_journal_restores_this_boots_changes() {
        let (a, b) = ("/proc/irq/24/smp_affinity_list", "/proc/irq/25/smp_affinity_list");
        let mut fake = FakeWriter::new().with_file(a, "0-3").with_file(b, "0-3");
        let changes = [Change {
            target: Target::file(a, Format::CpuList),
            new: "0-1".into(),
            why: String::new(),
        }];
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j");
        let mut j = Journal::open(&path).unwrap_or_else(|e| panic!("{e}"));
        apply(&mut fake, &mut j, &changes, None).unwrap_or_else(|e| panic!("{e}"));
        let foreign = Record::Change {
            seq: 99,
            target: Target::file(b, Format::CpuList),
            old: "0".into(),
            new: "0-3".into(),
            why: String::new(),
            time: String::new(),
            boot_id: "boot-OLD".into(),
        };
        let mut records = crate::journal::read(&path).ok().flatten().unwrap_or_default();
        records.push(foreign.clone());
        let rev = revert(&mut fake, &records).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rev.restored.len(), 1, "{rev:?}");
        assert_eq!(fake.state().0.get(a).map(String::as_str), Some("0-3"));
        assert_eq!(
            fake.state().0.get(b).map(String::as_str),
            Some("0-3"),
            "stale line not written"
        );
        assert!(rev
            .skipped
            .iter()
            .any(|d| d.message.as_deref().is_some_and(|m| m.contains("boot-OLD"))));
        assert!(revert(&mut fake, &[foreign]).is_err(), "only another boot's: refused");
    }
}
