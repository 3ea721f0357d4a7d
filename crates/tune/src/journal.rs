//! The journal: JSON lines, one [`Record`] each, appended and fsynced **before** the change it
//! describes, so `revert` can restore from the file alone after any crash. Also the lock file
//! that refuses a second concurrent `apply`.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

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
    /// What became of change `seq` (`applied`, `refused`, `gone`, `missing`, `failed`).
    Outcome { seq: u64, outcome: String, message: Option<String> },
    /// The apply finished; every change is in place.
    Commit { time: String, applied: usize, refused: usize },
    /// The apply failed and rolled back; `left` lists what could not be restored.
    RolledBack { time: String, left: Vec<String> },
    /// A `revert` finished.
    Reverted { time: String, restored: usize, skipped: usize },
}

/// Journal I/O errors, naming the file and line.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("journal {path}: {source} (check the directory exists and is writable, or pass --journal PATH)")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "journal {path} line {line}: {message} (the file is not a lowlat journal, or was edited)"
    )]
    Malformed { path: PathBuf, line: usize, message: String },
    #[error("another `lowlat apply`/`revert` holds {path} (pid in the file: {holder}); wait for it or remove the lock if that process is gone")]
    Locked { path: PathBuf, holder: String },
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

/// Now, as RFC 3339 UTC with seconds (`2026-11-22T03:04:05Z`).
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since the epoch as RFC 3339 UTC.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Format;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

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
            time: now_rfc3339(),
            boot_id: "b".into(),
        };
        j.append(&rec).unwrap_or_else(|e| panic!("{e}"));
        j.append(&Record::Outcome { seq: 1, outcome: "applied".into(), message: None })
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

    #[test]
    fn second_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("j.jsonl");
        let first = Lock::acquire(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(Lock::acquire(&path), Err(JournalError::Locked { .. })));
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
