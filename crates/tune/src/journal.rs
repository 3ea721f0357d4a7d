//! The journal: JSON lines, one [`Record`] each, appended and fsynced **before** the change it
//! describes, so `revert` can restore from the file alone after any crash. Also the lock file
//! that refuses a second concurrent `apply`.
//!
//! Crash safety rests on three rules: a line is written and flushed before its change is made
//! (so a change without a complete line never happened); only the last line can be torn (each
//! append is flushed before the next begins), so an unreadable last line — cut anywhere, even
//! inside a multi-byte character — is ignored on reading and cut off before the next append
//! ([`Journal::open`]); and every change read back is checked ([`Target::check`]), so a journal
//! cannot make `revert` write anything `apply` would not.
//!
//! The journal is private state: its directory is created `0700`, the file `0600` whatever the
//! umask, and it and its lock are opened without following a symlink, refused when someone
//! other than the caller or root owns them ([`util::fs::open_private`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{self, File};
use std::io::{Read as _, Seek as _, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use util::exit::{Classify, ExitCode};

use crate::target::{NotAllowed, Target};

/// Default journal location.
pub const DEFAULT_JOURNAL: &str = "/var/lib/lowlat/journal.jsonl";

/// The largest journal read back (a journal of every IRQ and thread of a large host is a few
/// MiB).
pub const MAX_JOURNAL_BYTES: u64 = 64 << 20;

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

impl Record {
    /// The record as one journal line, with its newline.
    pub fn line(&self) -> Result<String, serde_json::Error> {
        let mut line = serde_json::to_string(self)?;
        line.push('\n');
        Ok(line)
    }
}

/// What became of a journaled change (the `outcome` of an [`Record::Outcome`] line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// A change naming something `apply` never writes: the journal is not to be trusted.
    #[error("journal {path} line {line}: refusing a change lowlat apply never makes (the file was not written by lowlat apply, or was edited)")]
    Target {
        path: PathBuf,
        line: usize,
        #[source]
        source: NotAllowed,
    },
    #[error("another `lowlat apply`/`revert` is running (pid {holder}, holding {path}): wait for it to end. The lock is released by the kernel when that process ends, even when it is killed, so it is never stale: do not remove the file — a new run would then take a new lock while that one still writes")]
    Locked { path: PathBuf, holder: String },
    #[error("moving the journal {from} to {to}: {source}")]
    Move { from: PathBuf, to: PathBuf, source: std::io::Error },
}

impl Classify for JournalError {
    fn exit_code(&self) -> ExitCode {
        match self {
            // An edited or foreign file, or a concurrent run: the user's to sort out.
            JournalError::Malformed { .. }
            | JournalError::Target { .. }
            | JournalError::Locked { .. } => ExitCode::Usage,
            JournalError::Io { .. } | JournalError::Move { .. } => ExitCode::Runtime,
        }
    }
}

/// Where records go: the journal file ([`Journal`]), or a wrapper injecting faults in tests
/// ([`crate::fault`]).
pub trait Log {
    /// Append one record and flush it to stable storage before returning.
    fn append(&mut self, record: &Record) -> Result<(), JournalError>;
}

/// The torn last line [`Journal::open`] cut off (a crash while it was being appended).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaired {
    pub journal: PathBuf,
    /// Bytes dropped.
    pub dropped: usize,
}

impl fmt::Display for Repaired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: dropped a torn last line ({} bytes, written when a crash interrupted it; its change was never made)",
            self.journal.display(),
            self.dropped
        )
    }
}

/// An open journal, appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    repaired: Option<Repaired>,
}

impl Journal {
    /// Open for appending, creating it (`0600`) and its directory (`0700`) when missing. A torn
    /// last line is cut off first (see [`Journal::repaired`]): appending after it would make
    /// it a line in the middle, which reads as an edited journal. A complete last record that
    /// only lacks its newline gets one.
    pub fn open(path: &Path) -> Result<Self, JournalError> {
        let io = |source| JournalError::Io { path: path.to_path_buf(), source };
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        util::fs::create_private_dir(dir).map_err(io)?;
        let existed = path.symlink_metadata().is_ok();
        let mut file = util::fs::open_private(path, true).map_err(io)?;
        if !existed {
            // Make the new directory entry durable too.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        let len = file.metadata().map_err(io)?.len();
        if len > MAX_JOURNAL_BYTES {
            return Err(io(too_big(len)));
        }
        let mut bytes = Vec::new();
        file.rewind().and_then(|_| file.read_to_end(&mut bytes)).map_err(io)?;
        let scan = scan(path, &bytes)?;
        let mut repaired = None;
        if scan.keep < bytes.len() {
            file.set_len(scan.keep as u64).and_then(|()| file.sync_data()).map_err(io)?;
            repaired =
                Some(Repaired { journal: path.to_path_buf(), dropped: bytes.len() - scan.keep });
        } else if scan.unterminated {
            file.write_all(b"\n").and_then(|()| file.sync_data()).map_err(io)?;
        }
        Ok(Journal { path: path.to_path_buf(), file, repaired })
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The torn last line cut off when it was opened, if there was one.
    pub fn repaired(&self) -> Option<&Repaired> {
        self.repaired.as_ref()
    }

    /// Write the first `n` bytes of `record`'s line, as a crash in the middle of an append
    /// leaves it (fault injection, [`crate::fault`]).
    pub(crate) fn tear(&mut self, record: &Record, n: usize) -> Result<(), JournalError> {
        let io = |source| JournalError::Io { path: self.path.clone(), source };
        let line = record.line().map_err(|e| io(std::io::Error::other(e.to_string())))?;
        let part = line.as_bytes().get(..n).unwrap_or(line.as_bytes());
        self.file.write_all(part).and_then(|()| self.file.sync_data()).map_err(io)
    }
}

impl Log for Journal {
    fn append(&mut self, record: &Record) -> Result<(), JournalError> {
        let io = |source| JournalError::Io { path: self.path.clone(), source };
        let line = record.line().map_err(|e| io(std::io::Error::other(e.to_string())))?;
        // One write(2) of the whole line, then fdatasync: only this line can be torn.
        self.file.write_all(line.as_bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}

fn too_big(len: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("{len} bytes, more than a journal holds ({MAX_JOURNAL_BYTES} at most)"),
    )
}

/// A journal's bytes read as records.
#[derive(Debug)]
struct Scan {
    records: Vec<Record>,
    /// Bytes up to the end of the last good line (less than the length when the last line is
    /// torn).
    keep: usize,
    /// The last record is complete but lacks its newline.
    unterminated: bool,
}

/// Read a journal's bytes. Blank lines are skipped. The last line that is not blank, when it
/// is not JSON (cut short, cut inside a multi-byte character, zeros), was torn by a crash and
/// is ignored: its change was never made, since a write happens only after its line is
/// flushed. Any other line that is not JSON, and any JSON that is not a record, is
/// [`JournalError::Malformed`]; a record whose target `apply` never writes is
/// [`JournalError::Target`].
fn scan(path: &Path, bytes: &[u8]) -> Result<Scan, JournalError> {
    let mut lines: Vec<(usize, &[u8])> = Vec::new();
    let mut start = 0;
    for piece in bytes.split(|&b| b == b'\n') {
        lines.push((start, piece));
        start += piece.len() + 1;
    }
    let blank = |l: &[u8]| l.iter().all(u8::is_ascii_whitespace);
    let last = lines.iter().rposition(|(_, l)| !blank(l));
    let mut out = Scan { records: Vec::new(), keep: bytes.len(), unterminated: false };
    for (i, (at, line)) in lines.iter().enumerate() {
        if blank(line) {
            continue;
        }
        // A tear leaves bytes that are not JSON (cut short, cut inside a character, or the
        // zeros of data that never reached the disk); JSON that is not a record was edited.
        let text = std::str::from_utf8(line).map_err(|e| e.to_string()).and_then(|t| {
            serde_json::from_str::<serde::de::IgnoredAny>(t).map(|_| t).map_err(|e| e.to_string())
        });
        let text = match text {
            Ok(t) => t,
            Err(_) if Some(i) == last => {
                out.keep = *at;
                break;
            }
            Err(message) => {
                return Err(JournalError::Malformed {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message,
                })
            }
        };
        let record = serde_json::from_str::<Record>(text).map_err(|e| JournalError::Malformed {
            path: path.to_path_buf(),
            line: i + 1,
            message: e.to_string(),
        })?;
        if let Record::Change { target, .. } = &record {
            target.check().map_err(|source| JournalError::Target {
                path: path.to_path_buf(),
                line: i + 1,
                source,
            })?;
        }
        out.records.push(record);
        // The last piece of a split has no newline after it.
        out.unterminated = i + 1 == lines.len();
    }
    Ok(out)
}

/// Parse a journal's bytes (see [`scan`] for what is ignored and what refused).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Vec<Record>, JournalError> {
    scan(path, bytes).map(|s| s.records)
}

/// Read a journal; `Ok(None)` when there is none. Refused like [`Journal::open`] refuses it
/// (a symlink, not a regular file, owned by someone else) and when it is writable by others
/// or larger than [`MAX_JOURNAL_BYTES`].
pub fn read(path: &Path) -> Result<Option<Vec<Record>>, JournalError> {
    match util::fs::read_private(path, MAX_JOURNAL_BYTES) {
        Ok(bytes) => parse(path, &bytes).map(Some),
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

    /// Take an exclusive lock on `path` (created `0600` if needed, its directory `0700`; never
    /// through a symlink).
    pub fn acquire_file(path: &Path) -> Result<Self, JournalError> {
        let path = path.to_path_buf();
        let io = |source| JournalError::Io { path: path.clone(), source };
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            util::fs::create_private_dir(dir).map_err(io)?;
        }
        let mut file = util::fs::open_private(&path, false).map_err(io)?;
        // SAFETY: flock on a valid open fd; no memory is passed.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = util::term::sanitize(holder.trim(), false).chars().take(20).collect();
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
    // A journal that also holds this boot's changes is live: those values are still tuned
    // and only it knows their old values. Kept (one foreign line set it all aside, and
    // `revert` then restored nothing); `revert` skips the other boots' lines.
    let this_boot = records.iter().any(|r| {
        matches!(r, Record::Change { boot_id, .. } | Record::Begin { boot_id, .. } if boot_id == boot)
    });
    if this_boot {
        return Ok(None);
    }
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
        let recs = parse(&path, text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0], rec);
        // A malformed line in the middle is an error naming the line.
        let bad = format!("garbage\n{text}");
        match parse(&path, bad.as_bytes()) {
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
        match parse(Path::new("j"), format!("{edited}\n").as_bytes()) {
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
        // Issue 21, item 12: one line of another boot in a journal of this boot's changes
        // does not set the live journal aside.
        write_journal(
            &path,
            &[
                change(1, "/proc/irq/3/smp_affinity_list", "c"),
                change(2, "/proc/irq/4/smp_affinity_list", "b"),
            ],
        );
        assert_eq!(set_aside_other_boots(&path, "c").ok(), Some(None), "mixed: kept");
        assert!(path.exists());
        assert_eq!(forget(&path).ok(), Some(dir.path().join("j.jsonl.forgotten")));
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
    fn a_torn_tail_is_cut_before_the_next_append() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        let one = change(1, "/proc/irq/3/smp_affinity_list", "b");
        write_journal(&path, std::slice::from_ref(&one));
        let good = fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
        // Cut inside the multi-byte `∩` of a reason: not UTF-8, still only a torn tail.
        let mut torn = Record::Change {
            seq: 2,
            target: Target::file("/proc/sys/vm/stat_interval", Format::Text),
            old: "1".into(),
            new: "10".into(),
            why: "a ∩ b".into(),
            time: String::new(),
            boot_id: "b".into(),
        }
        .line()
        .unwrap_or_default()
        .into_bytes();
        let at = torn.iter().position(|&b| b == 0xe2).unwrap_or_else(|| panic!("no ∩")) + 2;
        torn.truncate(at);
        let mut bytes = good.clone();
        bytes.extend_from_slice(&torn);
        fs::write(&path, &bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read(&path).ok(), Some(Some(vec![one.clone()])), "the torn line is ignored");
        let mut j = Journal::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.repaired().map(|r| r.dropped), Some(torn.len()));
        assert!(j.repaired().is_some_and(|r| r.to_string().contains("torn last line")));
        assert_eq!(fs::read(&path).ok(), Some(good.clone()), "cut back to the last newline");
        let two = change(2, "/proc/irq/4/smp_affinity_list", "b");
        j.append(&two).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read(&path).ok(), Some(Some(vec![one.clone(), two.clone()])));
        // A complete record that only lacks its newline is kept and terminated.
        let three = change(3, "/proc/irq/5/smp_affinity_list", "b");
        let mut f =
            fs::OpenOptions::new().append(true).open(&path).unwrap_or_else(|e| panic!("{e}"));
        let line = three.line().unwrap_or_default();
        f.write_all(line.trim_end().as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let j = Journal::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(j.repaired().is_none());
        assert!(fs::read(&path).unwrap_or_default().ends_with(b"}\n"));
        assert_eq!(read(&path).ok(), Some(Some(vec![one, two, three])));
        // A NUL-filled tail (the file grew, its data never reached the disk) is torn too.
        let mut f =
            fs::OpenOptions::new().append(true).open(&path).unwrap_or_else(|e| panic!("{e}"));
        f.write_all(&[0; 300]).unwrap_or_else(|e| panic!("{e}"));
        let before = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let j = Journal::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.repaired().map(|r| r.dropped), Some(300));
        assert_eq!(fs::metadata(&path).map(|m| m.len()).ok(), Some(before - 300));
    }

    #[test]
    fn a_journal_naming_a_file_apply_never_writes_is_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        for target in ["/etc/shadow", "/../victim", "/proc/sys/kernel/core_pattern"] {
            let line = change(1, target, "b").line().unwrap_or_default();
            // Even as the last line, where a torn line would be forgiven.
            fs::write(&path, format!("{line}{line}")).unwrap_or_else(|e| panic!("{e}"));
            match read(&path) {
                Err(e @ JournalError::Target { line: 1, .. }) => {
                    assert_eq!(e.exit_code(), ExitCode::Usage);
                    let why = std::error::Error::source(&e).map(ToString::to_string);
                    assert!(why.is_some_and(|w| w.contains(target)), "{e}");
                }
                other => panic!("{target}: expected a refusal, got {other:?}"),
            }
            assert!(Journal::open(&path).is_err(), "nor appended to");
        }
    }

    #[test]
    fn journal_and_lock_are_private_and_never_followed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mode = |p: &Path| {
            use std::os::unix::fs::PermissionsExt as _;
            fs::metadata(p).map(|m| m.permissions().mode() & 0o777).unwrap_or(0)
        };
        let path = dir.path().join("d/j.jsonl");
        let lock = Lock::acquire(&path).unwrap_or_else(|e| panic!("{e}"));
        drop(lock);
        write_journal(&path, &[change(1, "/proc/irq/3/smp_affinity_list", "b")]);
        assert_eq!(mode(&dir.path().join("d")), 0o700);
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("d/j.jsonl.lock")), 0o600);
        // Symlinks planted at the journal's or the lock's name are refused, their targets
        // untouched.
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious\n").unwrap_or_else(|e| panic!("{e}"));
        let linked = dir.path().join("l/j.jsonl");
        fs::create_dir_all(dir.path().join("l")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&victim, &linked).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&victim, dir.path().join("l/j.jsonl.lock"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(Journal::open(&linked), Err(JournalError::Io { .. })));
        assert!(matches!(read(&linked), Err(JournalError::Io { .. })));
        assert!(matches!(Lock::acquire(&linked), Err(JournalError::Io { .. })));
        assert_eq!(fs::read_to_string(&victim).ok().as_deref(), Some("precious\n"));
    }

    #[test]
    fn second_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        let first = Lock::acquire(&path).unwrap_or_else(|e| panic!("{e}"));
        match Lock::acquire(&path) {
            Err(e @ JournalError::Locked { .. }) => {
                assert_eq!(e.exit_code(), ExitCode::Usage);
                // Issue 21, item 12: removing the file while its holder lives let two applies
                // run at once; the message must not suggest it.
                let m = e.to_string();
                assert!(m.contains(&format!("pid {}", std::process::id())), "{m}");
                assert!(m.contains("do not remove") && !m.contains("remove the lock if"), "{m}");
            }
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
        /// A journal cut anywhere (a crash mid-append), even inside a multi-byte character,
        /// parses to a prefix of its records, and opening it for appending cuts the torn line
        /// off so the next record starts on a line of its own.
        #[test]
        fn truncated_journal_parses_to_a_prefix(cut in 0usize..2000) {
            let recs = sample();
            let text: String = recs.iter().map(|r| r.line().unwrap_or_default()).collect();
            let cut = cut.min(text.len());
            let bytes = &text.as_bytes()[..cut];
            let parsed = parse(Path::new("j"), bytes).unwrap_or_else(|e| panic!("{e}"));
            prop_assert!(parsed.len() <= recs.len());
            prop_assert_eq!(&parsed[..], &recs[..parsed.len()]);
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let path = dir.path().join("j");
            fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
            let mut j = Journal::open(&path).unwrap_or_else(|e| panic!("{e}"));
            let extra = Record::Commit { time: "t".into(), applied: 0, refused: 0 };
            j.append(&extra).unwrap_or_else(|e| panic!("{e}"));
            let after = read(&path).unwrap_or_else(|e| panic!("{e}")).unwrap_or_default();
            prop_assert_eq!(&after[..parsed.len()], &parsed[..]);
            prop_assert_eq!(after.len(), parsed.len() + 1);
        }
    }
}
