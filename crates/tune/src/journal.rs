//! The journal: JSON lines, one [`Record`] each, appended and fsynced **before** the change it
//! describes, so `revert` can restore from the file alone after any crash. Also the lock file
//! that refuses a second concurrent `apply`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use util::exit::{Classify, ExitCode};

use crate::target::Target;

/// Default journal location.
pub const DEFAULT_JOURNAL: &str = "/var/lib/lowlat/journal.jsonl";

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Record {
    /// An `apply` started.
    Begin { time: String, boot_id: String, plan: Option<String>, version: String, pid: u32 },
    /// A change about to be made: written and flushed before the write.
    Change {
        seq: u64,
        #[serde(flatten)]
        target: Target,
        old: String,
        new: String,
        why: String,
        time: String,
        boot_id: String,
    },
    /// What became of change `seq`.
    Outcome { seq: u64, outcome: Outcome, message: Option<String> },
    /// The apply finished; every change is in place.
    Commit { time: String, applied: usize, refused: usize },
    /// The apply failed and rolled back; `left` lists what could not be restored.
    RolledBack { time: String, left: Vec<String> },
    /// A `revert` finished.
    Reverted { time: String, restored: usize, skipped: usize },
}

/// What became of a journaled change (the `outcome` of an [`Record::Outcome`] line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Written and in place.
    Applied,
    /// Refused by the kernel by design (managed or per-CPU IRQ, per-CPU kthread).
    Refused,
    /// The task exited or the file vanished between the read and the write.
    Gone,
}

/// Journal I/O errors, naming the file and line.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("journal {path}: {source} (check the directory exists and is writable, or choose another journal path)")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "journal {path} line {line}: {message} (the file is not a lowlat journal, or was edited)"
    )]
    Malformed { path: PathBuf, line: usize, message: String },
    #[error("another `lowlat apply`/`revert` holds {path} (pid in the file: {holder}); wait for it or remove the lock if that process is gone")]
    Locked { path: PathBuf, holder: String },
    #[error("moving the journal {from} to {to}: {source}")]
    Move { from: PathBuf, to: PathBuf, source: std::io::Error },
}

impl Classify for JournalError {
    fn exit_code(&self) -> ExitCode {
        match self {
            // An edited or foreign file, or a concurrent run: the user's to sort out.
            JournalError::Malformed { .. } | JournalError::Locked { .. } => ExitCode::Usage,
            JournalError::Io { .. } | JournalError::Move { .. } => ExitCode::Runtime,
        }
    }
}

/// An open journal, appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Open (creating it and its directory) for appending.
    pub fn open(path: &Path) -> Result<Self, JournalError> {
        let io = |source| JournalError::Io { path: path.to_path_buf(), source };
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(io)?;
        let existed = path.exists();
        let file = OpenOptions::new().create(true).append(true).open(path).map_err(io)?;
        if !existed {
            // Make the new directory entry durable too.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(Journal { path: path.to_path_buf(), file })
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one record and flush it to stable storage before returning.
    pub fn append(&mut self, record: &Record) -> Result<(), JournalError> {
        let io = |source| JournalError::Io { path: self.path.clone(), source };
        let mut line =
            serde_json::to_string(record).map_err(|e| io(std::io::Error::other(e.to_string())))?;
        line.push('\n');
        self.file.write_all(line.as_bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}

/// Parse a journal's text. A torn last line (a crash while appending it) is ignored: its
/// change was never made, since writes happen only after the line is flushed.
pub fn parse(path: &Path, text: &str) -> Result<Vec<Record>, JournalError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => out.push(r),
            // The last line without its newline: torn by a crash.
            Err(_) if i + 1 == lines.len() => {}
            Err(e) => {
                return Err(JournalError::Malformed {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: e.to_string(),
                })
            }
        }
    }
    Ok(out)
}

/// Read a journal; `Ok(None)` when there is none.
pub fn read(path: &Path) -> Result<Option<Vec<Record>>, JournalError> {
    match fs::read_to_string(path) {
        Ok(text) => parse(path, &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(JournalError::Io { path: path.to_path_buf(), source }),
    }
}

/// An exclusive `flock` on `<journal>.lock`, released on drop or process death (SIGKILL
/// included), so a crashed apply never leaves a stale lock behind.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Take the lock beside `journal`, or fail with [`JournalError::Locked`].
    pub fn acquire(journal: &Path) -> Result<Self, JournalError> {
        let mut name = journal.as_os_str().to_os_string();
        name.push(".lock");
        Self::acquire_file(&PathBuf::from(name))
    }

    /// The host-wide lock (`<root>/run/lowlat-apply.lock`): two applies with different
    /// journals must not interleave on one host either.
    pub fn host(root: &Path) -> Result<Self, JournalError> {
        Self::acquire_file(&root.join("run/lowlat-apply.lock"))
    }

    /// Take an exclusive lock on `path` (created if needed).
    pub fn acquire_file(path: &Path) -> Result<Self, JournalError> {
        let path = path.to_path_buf();
        let io = |source| JournalError::Io { path: path.clone(), source };
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io)?;
        // SAFETY: flock on a valid open fd; no memory is passed.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let holder = fs::read_to_string(&path).unwrap_or_default().trim().to_string();
            return Err(JournalError::Locked { path, holder });
        }
        let _ = file.set_len(0);
        let _ = writeln!(file, "{}", std::process::id());
        Ok(Lock { _file: file })
    }
}

/// `<path>.<suffix>`: where a journal is kept once it is done with.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

/// Rename a journal to `<path>.<suffix>`; the new path.
fn move_to_suffix(path: &Path, suffix: &str) -> Result<PathBuf, JournalError> {
    let to = with_suffix(path, suffix);
    fs::rename(path, &to).map_err(|source| JournalError::Move {
        from: path.to_path_buf(),
        to: to.clone(),
        source,
    })?;
    Ok(to)
}

/// A journal moved aside because its changes were made in another boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// Where the journal was.
    pub journal: PathBuf,
    /// The boot its changes were made in.
    pub boot: String,
    /// Where it is kept now.
    pub kept_as: PathBuf,
}

/// A journal whose changes were made in a boot other than `boot` describes values the reboot
/// already reset: move it aside to `<path>.boot-<id>` (kept for the record) so this boot starts
/// a fresh one. `None` when there is no journal or it is this boot's.
pub fn set_aside_other_boots(path: &Path, boot: &str) -> Result<Option<SetAside>, JournalError> {
    let Some(records) = read(path)? else { return Ok(None) };
    let other = records.iter().find_map(|r| match r {
        Record::Change { boot_id, .. } | Record::Begin { boot_id, .. } if boot_id != boot => {
            Some(boot_id.clone())
        }
        _ => None,
    });
    let Some(old) = other else { return Ok(None) };
    let kept_as = move_to_suffix(path, &format!("boot-{old}"))?;
    Ok(Some(SetAside { journal: path.to_path_buf(), boot: old, kept_as }))
}

/// Move a journal aside unreverted (`<path>.forgotten`): its changes are past restoring.
pub fn forget(path: &Path) -> Result<PathBuf, JournalError> {
    move_to_suffix(path, "forgotten")
}

/// Close a fully reverted journal: append the [`Record::Reverted`] line and keep the file as
/// `<path>.reverted`, so the next `apply` starts a fresh one. The new path.
pub fn close_reverted(
    path: &Path,
    restored: usize,
    skipped: usize,
) -> Result<PathBuf, JournalError> {
    let mut j = Journal::open(path)?;
    j.append(&Record::Reverted { time: util::time::now_rfc3339(), restored, skipped })?;
    drop(j);
    move_to_suffix(path, "reverted")
}

/// The IRQs whose affinity write the kernel refused in boot `boot` (managed or per-CPU IRQs,
/// which `/proc` does not mark), from the journal at `path`; empty when there is none.
pub fn refused_irqs(path: &Path, boot: &str) -> Result<BTreeSet<u32>, JournalError> {
    let records = read(path)?.unwrap_or_default();
    let mut irq_of: BTreeMap<u64, u32> = BTreeMap::new();
    let mut refused = BTreeSet::new();
    for r in &records {
        match r {
            // `seq` restarts with each apply: a later change takes the number over (one of
            // another boot, or not of an IRQ, takes it out).
            Record::Change { seq, target, boot_id, .. } => {
                match target.irq().filter(|_| boot_id == boot) {
                    Some(n) => irq_of.insert(*seq, n),
                    None => irq_of.remove(seq),
                };
            }
            Record::Outcome { seq, outcome: Outcome::Refused, .. } => {
                refused.extend(irq_of.get(seq).copied());
            }
            _ => {}
        }
    }
    Ok(refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Format;

    #[test]
    fn round_trip_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("sub/j.jsonl");
        let mut j = Journal::open(&path).unwrap_or_else(|e| panic!("{e}"));
        let rec = Record::Change {
            seq: 1,
            target: Target::Task { pid: 5, tid: 6, start_time: 7, comm: "x y".into() },
            old: "0-1".into(),
            new: "0".into(),
            why: "w".into(),
            time: util::time::now_rfc3339(),
            boot_id: "b".into(),
        };
        j.append(&rec).unwrap_or_else(|e| panic!("{e}"));
        j.append(&Record::Outcome { seq: 1, outcome: Outcome::Applied, message: None })
            .unwrap_or_else(|e| panic!("{e}"));
        let mut text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(text.contains(r#""kind":"task""#) && text.contains(r#""start_time":7"#));
        text.push_str(r#"{"type":"change","seq":2,"kind":"fi"#);
        let recs = parse(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0], rec);
        // A malformed line in the middle is an error naming the line.
        let bad = format!("garbage\n{text}");
        match parse(&path, &bad) {
            Err(JournalError::Malformed { line: 1, .. }) => {}
            other => panic!("expected malformed line 1, got {other:?}"),
        }
        let file_rec = Record::Change {
            seq: 3,
            target: Target::file("/proc/irq/3/smp_affinity_list", Format::CpuList),
            old: "0-1".into(),
            new: "0".into(),
            why: String::new(),
            time: String::new(),
            boot_id: String::new(),
        };
        let line = serde_json::to_string(&file_rec).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::from_str::<Record>(&line).ok(), Some(file_rec));
    }

    fn change(seq: u64, path: &str, boot: &str) -> Record {
        Record::Change {
            seq,
            target: Target::file(path, Format::CpuList),
            old: "0-1".into(),
            new: "0".into(),
            why: String::new(),
            time: String::new(),
            boot_id: boot.into(),
        }
    }

    fn write_journal(path: &Path, records: &[Record]) {
        let mut j = Journal::open(path).unwrap_or_else(|e| panic!("{e}"));
        for r in records {
            j.append(r).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn outcomes_keep_their_strings() {
        let line = serde_json::to_string(&Record::Outcome {
            seq: 2,
            outcome: Outcome::Refused,
            message: None,
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(line, r#"{"type":"outcome","seq":2,"outcome":"refused","message":null}"#);
        for (o, s) in [(Outcome::Applied, "applied"), (Outcome::Gone, "gone")] {
            let text = serde_json::to_string(&o).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(text, format!("\"{s}\""));
        }
        let edited = r#"{"type":"outcome","seq":2,"outcome":"maybe","message":null}"#;
        match parse(Path::new("j"), &format!("{edited}\n")) {
            Err(e @ JournalError::Malformed { .. }) => assert_eq!(e.exit_code(), ExitCode::Usage),
            other => panic!("expected an edited journal to be refused, got {other:?}"),
        }
    }

    #[test]
    fn journals_of_other_boots_are_set_aside() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        assert_eq!(set_aside_other_boots(&path, "b").ok(), Some(None), "no journal: nothing");
        write_journal(&path, &[change(1, "/proc/irq/3/smp_affinity_list", "b")]);
        assert_eq!(set_aside_other_boots(&path, "b").ok(), Some(None), "this boot's: kept");
        assert!(path.exists());
        let aside = set_aside_other_boots(&path, "c").unwrap_or_else(|e| panic!("{e}"));
        let kept = dir.path().join("j.jsonl.boot-b");
        assert_eq!(
            aside,
            Some(SetAside { journal: path.clone(), boot: "b".into(), kept_as: kept.clone() })
        );
        assert!(!path.exists() && kept.exists());
        write_journal(&path, &[change(1, "/proc/irq/3/smp_affinity_list", "c")]);
        assert_eq!(forget(&path).ok(), Some(dir.path().join("j.jsonl.forgotten")));
        assert!(!path.exists());
        write_journal(&path, &[change(1, "/proc/irq/3/smp_affinity_list", "c")]);
        let closed = close_reverted(&path, 1, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(closed, dir.path().join("j.jsonl.reverted"));
        let recs = read(&closed).unwrap_or_else(|e| panic!("{e}")).unwrap_or_default();
        assert!(matches!(recs.last(), Some(Record::Reverted { restored: 1, skipped: 0, .. })));
        // A move that cannot happen says where to.
        let err = forget(&path).err();
        assert!(matches!(err, Some(JournalError::Move { .. })), "{err:?}");
        assert_eq!(err.map(|e| e.exit_code()), Some(ExitCode::Runtime));
    }

    #[test]
    fn refused_irqs_follow_seq_and_boot() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        let outcome = |seq, outcome| Record::Outcome { seq, outcome, message: None };
        write_journal(
            &path,
            &[
                change(1, "/proc/irq/24/smp_affinity_list", "b"),
                outcome(1, Outcome::Refused),
                change(2, "/proc/irq/25/smp_affinity_list", "b"),
                outcome(2, Outcome::Applied),
                change(3, "/proc/irq/default_smp_affinity", "b"),
                outcome(3, Outcome::Refused),
                change(4, "/proc/irq/26/smp_affinity_list", "a"),
                outcome(4, Outcome::Refused),
                // A second apply reuses seq 2 for a refused IRQ.
                change(2, "/proc/irq/27/smp_affinity_list", "b"),
                outcome(2, Outcome::Refused),
                // Seq 5 of this boot, then of another: the other boot's refusal is not ours.
                change(5, "/proc/irq/28/smp_affinity_list", "b"),
                outcome(5, Outcome::Applied),
                change(5, "/proc/irq/29/smp_affinity_list", "a"),
                outcome(5, Outcome::Refused),
            ],
        );
        let irqs = refused_irqs(&path, "b").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(irqs.into_iter().collect::<Vec<_>>(), vec![24, 27]);
        assert_eq!(refused_irqs(&dir.path().join("none"), "b").ok(), Some(BTreeSet::new()));
    }

    #[test]
    fn second_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        let first = Lock::acquire(&path).unwrap_or_else(|e| panic!("{e}"));
        match Lock::acquire(&path) {
            Err(e @ JournalError::Locked { .. }) => assert_eq!(e.exit_code(), ExitCode::Usage),
            other => panic!("expected the lock refused, got {other:?}"),
        }
        drop(first);
        assert!(Lock::acquire(&path).is_ok());
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use crate::target::Format;
    use proptest::prelude::*;

    fn sample() -> Vec<Record> {
        (1..=4)
            .map(|seq| Record::Change {
                seq,
                target: Target::file(format!("/proc/irq/{seq}/smp_affinity_list"), Format::CpuList),
                old: "0-1".into(),
                new: "0".into(),
                why: "why \"quoted\" ∩ unicode".into(),
                time: "t".into(),
                boot_id: "b".into(),
            })
            .collect()
    }

    proptest! {
        /// A journal cut anywhere (a crash mid-append) parses to a prefix of its records.
        #[test]
        fn truncated_journal_parses_to_a_prefix(cut in 0usize..2000) {
            let recs = sample();
            let text: String = recs.iter().map(|r| serde_json::to_string(r).unwrap_or_default() + "\n").collect();
            let mut cut = cut.min(text.len());
            while !text.is_char_boundary(cut) { cut -= 1; }
            let parsed = parse(Path::new("j"), &text[..cut]).unwrap_or_else(|e| panic!("{e}"));
            prop_assert!(parsed.len() <= recs.len());
            prop_assert_eq!(&parsed[..], &recs[..parsed.len()]);
        }
    }
}
