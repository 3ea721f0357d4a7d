//! Where `apply` and `revert` act — the live host, or a directory laid out like `/` (tests,
//! rehearsals) — and the journal's lifecycle around a transaction: the lock order (the
//! host-wide lock first, then the journal's), setting aside a journal from another boot,
//! forgetting one, and keeping a reverted journal for the record. What a step did comes back
//! as a value ([`DryRun`], [`Applied`], [`Reverted`]); the `view` module shows it.

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::Duration;

use plan::{KernelArg, Plan};
use util::exit::{Classify, ExitCode};

use crate::changes::{pending_kernel_args, plan_changes, Note, Options};
use crate::journal::{self, Journal, JournalError, Lock};
use crate::real::RealWriter;
use crate::txn::{self, ApplyError, ApplyReport, OtherBoot, Preview, RevertReport};
use crate::writer::Writer;

/// The directory to act on could not be opened.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct SiteError(#[from] host::OpenError);

impl Classify for SiteError {
    fn exit_code(&self) -> ExitCode {
        ExitCode::Usage
    }
}

/// Why `revert` did not finish.
#[derive(Debug, thiserror::Error)]
pub enum RevertError {
    /// The journal's changes were made in another boot (and it was not to be forgotten).
    #[error("refusing to revert {}", journal.display())]
    OtherBoot {
        journal: PathBuf,
        #[source]
        source: OtherBoot,
    },
    /// The journal could not be locked, read or closed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Some values could not be restored; the journal stays for another try.
    #[error(
        "{failed} value(s) could not be restored; fix the cause and run `lowlat revert` again"
    )]
    Incomplete { failed: usize },
}

impl Classify for RevertError {
    fn exit_code(&self) -> ExitCode {
        match self {
            RevertError::OtherBoot { .. } => ExitCode::Usage,
            RevertError::Journal(e) => e.exit_code(),
            RevertError::Incomplete { .. } => ExitCode::PartialApply,
        }
    }
}

/// What `apply` is asked to do.
#[derive(Debug, Clone)]
pub struct ApplyRequest<'a> {
    pub plan: &'a Plan,
    /// The plan's file, as named in the journal and in hints.
    pub plan_file: &'a Path,
    /// The journal of every change (what `revert` reads).
    pub journal: &'a Path,
    pub options: Options,
    /// Pause after each change (crash testing: kill it midway, then revert).
    pub step_delay: Duration,
}

/// The plan's boot-tier arguments that the running kernel was not booted with.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Pending {
    pub args: Vec<KernelArg>,
    /// How many kernel arguments the plan has in all.
    pub planned: usize,
    pub plan_file: PathBuf,
}

/// A dry run: every change with the value it would replace; nothing written.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct DryRun {
    pub rows: Vec<Preview>,
    pub notes: Vec<Note>,
    pub pending: Pending,
}

/// A completed `apply`.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Applied {
    pub report: ApplyReport,
    pub notes: Vec<Note>,
    pub pending: Pending,
    pub journal: PathBuf,
}

/// What `revert` did.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum Reverted {
    /// There is no journal: nothing to do.
    NoJournal { journal: PathBuf },
    /// The journal was from another boot and was moved aside unreverted.
    Forgotten { journal: PathBuf, kept_as: PathBuf, why: OtherBoot },
    /// Values restored; `kept_as` is where the closed journal went (`None` when some values
    /// could not be restored and the journal stays for another try).
    Restored { journal: PathBuf, report: RevertReport, kept_as: Option<PathBuf> },
}

impl Reverted {
    /// [`RevertError::Incomplete`] when some values could not be restored.
    pub fn check(&self) -> Result<(), RevertError> {
        match self {
            Reverted::Restored { report, .. } if !report.failed.is_empty() => {
                Err(RevertError::Incomplete { failed: report.failed.len() })
            }
            _ => Ok(()),
        }
    }
}

/// The fault schedule in `LOWLAT_FAULT`, in debug builds only (see [`crate::fault`]).
fn faults_from_env() -> Option<crate::fault::Faults> {
    #[cfg(debug_assertions)]
    return crate::fault::from_env().map(crate::fault::Faults::new);
    #[cfg(not(debug_assertions))]
    None
}

/// Where apply and revert act: the host model is read and the writes go through the same root.
#[derive(Debug)]
pub struct Site {
    root: host::Root,
    writer: RealWriter,
    /// The directory holding `run/lowlat-apply.lock`, the host-wide lock (`/` when live).
    base: PathBuf,
}

impl Site {
    /// The live host.
    pub fn live() -> Self {
        Site { root: host::Root::live(), writer: RealWriter::live(), base: PathBuf::from("/") }
    }

    /// A directory laid out like `/` (task affinities are skipped there). Nothing outside it
    /// is written: see [`RealWriter::under`].
    pub fn sysroot(dir: &Path) -> Result<Self, SiteError> {
        Ok(Site {
            writer: RealWriter::under(dir)?,
            root: host::Root::open(dir)?,
            base: dir.to_path_buf(),
        })
    }

    /// [`Site::sysroot`] when a directory is given, else [`Site::live`].
    pub fn open(sysroot: Option<&Path>) -> Result<Self, SiteError> {
        sysroot.map_or_else(|| Ok(Self::live()), Self::sysroot)
    }

    /// Is this the running host?
    pub fn is_live(&self) -> bool {
        self.root.is_live()
    }

    /// The host model, the changes of the plan on it (refused when one is not a write `apply`
    /// makes), and the pending boot-tier arguments.
    fn prepare(&self, req: &ApplyRequest<'_>) -> Result<(crate::Changes, Pending), ApplyError> {
        let host = host::read(&self.root);
        req.plan
            .check_host(&host)
            .map_err(|why| ApplyError::WrongHost { plan: req.plan_file.to_path_buf(), why })?;
        let changes = plan_changes(req.plan, &host, &req.options).map_err(|source| {
            ApplyError::NotAllowed { plan: req.plan_file.to_path_buf(), source }
        })?;
        let pending = Pending {
            args: pending_kernel_args(req.plan, &host),
            planned: req.plan.kernel_args.len(),
            plan_file: req.plan_file.to_path_buf(),
        };
        Ok((changes, pending))
    }

    /// Read every target's current value; write nothing (no lock, no journal).
    pub fn dry_run(&mut self, req: &ApplyRequest<'_>) -> Result<DryRun, ApplyError> {
        let (changes, pending) = self.prepare(req)?;
        let rows = txn::preview(&mut self.writer, &changes.changes);
        Ok(DryRun { rows, notes: changes.notes, pending })
    }

    /// Apply the plan all-or-nothing: take the host-wide lock, then the journal's; set aside a
    /// journal from another boot and cut a torn last line off (each reported to `on_note`);
    /// journal each change before it is made. `stop` is asked after every change: `true`
    /// (e.g. on Ctrl-C) rolls everything back.
    ///
    /// Debug builds honour a fault schedule in `LOWLAT_FAULT` (crash tests, see
    /// [`crate::fault`]); release builds never read it.
    pub fn apply(
        &mut self,
        req: &ApplyRequest<'_>,
        stop: &dyn Fn() -> bool,
        on_note: &mut dyn FnMut(&dyn Display),
    ) -> Result<Applied, ApplyError> {
        let (changes, pending) = self.prepare(req)?;
        let _host_lock = Lock::host(&self.base).map_err(ApplyError::Journal)?;
        let _lock = Lock::acquire(req.journal).map_err(ApplyError::Journal)?;
        let boot = self.writer.boot_id();
        if let Some(aside) =
            journal::set_aside_other_boots(req.journal, &boot).map_err(ApplyError::Journal)?
        {
            on_note(&aside);
        }
        let mut j = Journal::open(req.journal).map_err(ApplyError::Journal)?;
        if let Some(repaired) = j.repaired() {
            on_note(repaired);
        }
        let delay = req.step_delay;
        let mut pace = |_: usize| {
            if !delay.is_zero() {
                std::thread::sleep(delay);
            }
            !stop()
        };
        let plan_name = Some(req.plan_file.display().to_string());
        let report = match faults_from_env() {
            Some(f) => txn::apply_with(
                &mut f.writer(&mut self.writer),
                &mut f.log(&mut j),
                &changes.changes,
                plan_name,
                &mut pace,
            ),
            None => {
                txn::apply_with(&mut self.writer, &mut j, &changes.changes, plan_name, &mut pace)
            }
        }?;
        Ok(Applied { report, notes: changes.notes, pending, journal: req.journal.to_path_buf() })
    }

    /// Restore every change of the journal at `path`, newest first, under the same locks as
    /// `apply`; a journal with nothing left to restore (restores the kernel refuses by design
    /// count as done, as apply counts them) is closed and kept as `<path>.reverted`. A journal
    /// from another boot is refused, or moved aside unreverted when `forget` is set.
    pub fn revert(&mut self, path: &Path, forget: bool) -> Result<Reverted, RevertError> {
        let journal = path.to_path_buf();
        let _host_lock = Lock::host(&self.base)?;
        let _lock = Lock::acquire(path)?;
        let Some(records) = journal::read(path)? else {
            return Ok(Reverted::NoJournal { journal });
        };
        let report = match txn::revert(&mut self.writer, &records) {
            Ok(r) => r,
            Err(why) if forget => {
                let kept_as = journal::forget(path)?;
                return Ok(Reverted::Forgotten { journal, kept_as, why });
            }
            Err(source) => return Err(RevertError::OtherBoot { journal, source }),
        };
        let kept_as = if report.failed.is_empty() {
            Some(journal::close_reverted(path, report.restored.len(), report.skipped.len())?)
        } else {
            None
        };
        Ok(Reverted::Restored { journal, report, kept_as })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::journal::{Log as _, Record};
    use crate::target::{Format, Target};

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
        fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
    }

    fn change(boot: &str) -> Record {
        Record::Change {
            seq: 1,
            target: Target::file("/proc/sys/vm/stat_interval", Format::Text),
            old: "1".into(),
            new: "10".into(),
            why: String::new(),
            time: String::new(),
            boot_id: boot.into(),
        }
    }

    fn journal_with(path: &Path, records: &[Record]) {
        let mut j = Journal::open(path).unwrap_or_else(|e| panic!("{e}"));
        for r in records {
            j.append(r).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn revert_of_another_boot_is_refused_or_forgotten() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().join("root");
        write(&root, "proc/sys/kernel/random/boot_id", "this-boot\n");
        write(&root, "proc/sys/vm/stat_interval", "10\n");
        let path = dir.path().join("j.jsonl");
        journal_with(&path, &[change("old-boot")]);
        let mut site = Site::sysroot(&root).unwrap_or_else(|e| panic!("{e}"));
        match site.revert(&path, false) {
            Err(e @ RevertError::OtherBoot { .. }) => assert_eq!(e.exit_code(), ExitCode::Usage),
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(path.exists());
        match site.revert(&path, true) {
            Ok(Reverted::Forgotten { kept_as, .. }) => {
                assert!(kept_as.ends_with("j.jsonl.forgotten") && kept_as.exists())
            }
            other => panic!("expected the journal forgotten, got {other:?}"),
        }
        assert!(!path.exists());
        assert!(matches!(site.revert(&path, false), Ok(Reverted::NoJournal { .. })));
    }

    #[test]
    fn revert_restores_and_keeps_the_journal() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().join("root");
        write(&root, "proc/sys/kernel/random/boot_id", "b\n");
        write(&root, "proc/sys/vm/stat_interval", "10\n");
        let path = dir.path().join("j.jsonl");
        journal_with(&path, &[change("b")]);
        let mut site = Site::sysroot(&root).unwrap_or_else(|e| panic!("{e}"));
        let done = site.revert(&path, false).unwrap_or_else(|e| panic!("{e}"));
        assert!(done.check().is_ok());
        let Reverted::Restored { report, kept_as: Some(kept), .. } = done else {
            panic!("expected values restored: {done:?}")
        };
        assert_eq!(report.restored.len(), 1);
        assert_eq!(
            fs::read_to_string(root.join("proc/sys/vm/stat_interval")).ok(),
            Some("1\n".into())
        );
        let records = journal::read(&kept).unwrap_or_else(|e| panic!("{e}")).unwrap_or_default();
        assert!(matches!(records.last(), Some(Record::Reverted { restored: 1, .. })));
    }

    #[test]
    fn a_missing_sysroot_is_a_usage_error() {
        let err = Site::sysroot(Path::new("/nonexistent/lowlat-sysroot")).err();
        assert_eq!(err.map(|e| e.exit_code()), Some(ExitCode::Usage));
    }
}

/// Version of the `apply --json` / `revert --json` documents.
pub const SCHEMA_VERSION: u32 = 1;

/// `apply --json` and `revert --json`: the outcome (a [`DryRun`], [`Applied`] or [`Reverted`])
/// with its `schema_version` and `kind` (`apply-dry-run`, `apply`, `revert`).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "{T}Document")]
pub struct Document<'a, T: serde::Serialize> {
    pub schema_version: u32,
    pub kind: &'static str,
    #[serde(flatten)]
    pub body: &'a T,
}

impl<'a, T: serde::Serialize> Document<'a, T> {
    pub fn new(kind: &'static str, body: &'a T) -> Self {
        Self { schema_version: SCHEMA_VERSION, kind, body }
    }
}
