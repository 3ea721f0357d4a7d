//! The live writer: files under a root directory (normally `/`) and thread affinities via
//! `sched_getaffinity`/`sched_setaffinity`. Each value is written with a single `write(2)`, as
//! sysfs and procfs require.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use cpuset::CpuSet;

use crate::target::{normalise, Target};
use crate::writer::{ErrorKind, WriteError, Writer};

/// Writes the live host (root `/`), or a directory tree laid out like one (tests, sandboxes;
/// task targets are refused there since affinities are not files).
#[derive(Debug, Clone)]
pub struct RealWriter {
    root: PathBuf,
}

impl Default for RealWriter {
    fn default() -> Self {
        RealWriter { root: PathBuf::from("/") }
    }
}

impl RealWriter {
    /// A writer for the live host.
    pub fn live() -> Self {
        Self::default()
    }

    /// A writer that maps host paths under `root` (e.g. a copy of `/proc` and `/sys`).
    pub fn under(root: impl Into<PathBuf>) -> Self {
        RealWriter { root: root.into() }
    }

    fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    fn path(&self, host_path: &str) -> PathBuf {
        self.root.join(host_path.trim_start_matches('/'))
    }

    fn check_identity(&self, target: &Target) -> Result<(), WriteError> {
        let Target::Task { tid, start_time, comm, .. } = target else { return Ok(()) };
        match task_identity(&self.root, *tid) {
            Some((st, c)) if st == *start_time && c == *comm => Ok(()),
            Some((st, c)) => Err(WriteError::new(
                ErrorKind::Gone,
                target,
                format!("tid {tid} is now {c:?} started at tick {st}, not the recorded task"),
            )),
            None => Err(WriteError::new(ErrorKind::Gone, target, "task has exited")),
        }
    }
}

/// The errno of an I/O error (0 when it has none).
fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

/// Start time (stat field 22) and comm of a thread, from `<root>/proc/<tid>/stat` (parsed by
/// host's `stat` parser, the one the host model's tasks come from).
pub fn task_identity(root: &Path, tid: u32) -> Option<(u64, String)> {
    let text = fs::read_to_string(root.join(format!("proc/{tid}/stat"))).ok()?;
    let stat = host::parse::task::stat(&text).ok()?;
    Some((stat.start_time, stat.comm))
}

impl Writer for RealWriter {
    fn read(&mut self, target: &Target) -> Result<String, WriteError> {
        match target {
            Target::File { path, format } => match fs::read_to_string(self.path(path)) {
                Ok(text) => Ok(normalise(*format, &text)),
                Err(e) => Err(WriteError::from_errno(target, errno(&e), "read")),
            },
            Target::Task { tid, .. } => {
                if !self.is_live() {
                    return Err(WriteError::new(
                        ErrorKind::Failed,
                        target,
                        "task affinity needs the live host",
                    ));
                }
                self.check_identity(target)?;
                util::sched::get_affinity(*tid)
                    .map(|s| s.to_list())
                    .map_err(|e| WriteError::from_errno(target, errno(&e), "sched_getaffinity"))
            }
        }
    }

    fn write(&mut self, target: &Target, value: &str) -> Result<(), WriteError> {
        match target {
            Target::File { path, .. } => {
                let full = self.path(path);
                let mut f = fs::OpenOptions::new()
                    .write(true)
                    .truncate(!self.is_live())
                    .open(&full)
                    .map_err(|e| WriteError::from_errno(target, errno(&e), "open for writing"))?;
                let mut bytes = value.as_bytes().to_vec();
                bytes.push(b'\n');
                // One write(2): sysfs/procfs take the value from a single call.
                let n = f
                    .write(&bytes)
                    .map_err(|e| WriteError::from_errno(target, errno(&e), "write"))?;
                if n != bytes.len() {
                    return Err(WriteError::new(
                        ErrorKind::Failed,
                        target,
                        format!("short write: {n} of {} bytes", bytes.len()),
                    ));
                }
                Ok(())
            }
            Target::Task { tid, .. } => {
                if !self.is_live() {
                    return Err(WriteError::new(
                        ErrorKind::Failed,
                        target,
                        "task affinity needs the live host",
                    ));
                }
                let set = CpuSet::parse_list(value).map_err(|e| {
                    WriteError::new(
                        ErrorKind::Failed,
                        target,
                        format!("bad cpu-list {value:?}: {e}"),
                    )
                })?;
                self.check_identity(target)?;
                util::sched::set_affinity(*tid, &set)
                    .map_err(|e| WriteError::from_errno(target, errno(&e), "sched_setaffinity"))
            }
        }
    }

    fn boot_id(&mut self) -> String {
        fs::read_to_string(self.path("/proc/sys/kernel/random/boot_id"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Format;

    #[test]
    fn task_identity_reads_stat_under_a_root() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let stat =
            "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        fs::create_dir_all(dir.path().join("proc/1234")).unwrap_or_else(|e| panic!("{e}"));
        fs::write(dir.path().join("proc/1234/stat"), stat).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(task_identity(dir.path(), 1234), Some((987654, "a (b) c".to_string())));
        fs::write(dir.path().join("proc/1234/stat"), "1234 (x) S 1")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(task_identity(dir.path(), 1234), None, "a truncated line");
        assert_eq!(task_identity(dir.path(), 99), None, "no such task");
    }

    #[test]
    fn writes_and_reads_under_a_root() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("sys/kernel/mm/transparent_hugepage");
        fs::create_dir_all(&p).unwrap_or_else(|e| panic!("{e}"));
        fs::write(p.join("enabled"), "always [madvise] never\n").unwrap_or_else(|e| panic!("{e}"));
        let mut w = RealWriter::under(dir.path());
        let t = Target::file("/sys/kernel/mm/transparent_hugepage/enabled", Format::Selector);
        assert_eq!(w.read(&t), Ok("madvise".to_string()));
        w.write(&t, "never").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.read(&t), Ok("never".to_string()));
        let missing = Target::file("/proc/sys/kernel/nope", Format::Text);
        assert_eq!(w.read(&missing).map_err(|e| e.kind), Err(ErrorKind::Missing));
    }

    #[test]
    fn own_affinity_reads_back_and_writes_back() {
        let tid = util::sched::gettid();
        let (start_time, comm) =
            task_identity(Path::new("/"), tid).unwrap_or_else(|| panic!("no stat for tid {tid}"));
        let t = Target::Task { pid: std::process::id(), tid, start_time, comm };
        let mut w = RealWriter::live();
        let aff = w.read(&t).unwrap_or_else(|e| panic!("{e}"));
        assert!(!aff.is_empty());
        w.write(&t, &aff).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.read(&t), Ok(aff));
    }
}
