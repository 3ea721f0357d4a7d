//! The live writer: files under a root directory (normally `/`) and thread affinities via
//! `sched_getaffinity`/`sched_setaffinity`. Each value is written with a single `write(2)`, as
//! sysfs and procfs require. Only targets that pass [`Target::check`] are touched, never
//! through a symlink at the last component; under a directory laid out like `/` (a sysroot),
//! every symlink on the way is resolved inside that directory, so nothing outside it is read
//! or written.

use std::fs;
use std::io::{Read as _, Write};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use cpuset::CpuSet;

use crate::target::{normalise, Format, Target};
use crate::writer::{ErrorKind, WriteError, Writer};

/// Writes the live host (root `/`), or a directory tree laid out like one (tests, sandboxes;
/// task targets are refused there since affinities are not files).
#[derive(Debug)]
pub struct RealWriter {
    root: PathBuf,
    /// The tree when it is not the live host: symlinks are resolved inside it.
    tree: Option<host::Root>,
}

impl Default for RealWriter {
    fn default() -> Self {
        RealWriter { root: PathBuf::from("/"), tree: None }
    }
}

impl RealWriter {
    /// A writer for the live host.
    pub fn live() -> Self {
        Self::default()
    }

    /// A writer that maps host paths under the directory `root` (e.g. a copy of `/proc` and
    /// `/sys`). Fails when `root` is not a directory.
    pub fn under(root: impl Into<PathBuf>) -> Result<Self, host::OpenError> {
        let root = root.into();
        if root == Path::new("/") {
            return Ok(Self::live());
        }
        if !root.is_dir() {
            return Err(host::OpenError::Io {
                path: root,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a directory laid out like /",
                ),
            });
        }
        let tree = host::Root::open(&root)?;
        Ok(RealWriter { root, tree: Some(tree) })
    }

    fn is_live(&self) -> bool {
        self.tree.is_none()
    }

    /// Where a file target is on disk: checked against the targets `apply` writes, and under a
    /// sysroot with every symlink resolved inside it (one pointing out is refused).
    fn path(&self, target: &Target, host_path: &str) -> Result<PathBuf, WriteError> {
        target.check().map_err(|e| WriteError::new(ErrorKind::Failed, target, e.why))?;
        let Some(tree) = &self.tree else { return Ok(PathBuf::from(host_path)) };
        let resolved = tree
            .resolve_links(host_path)
            .map_err(|e| WriteError::new(ErrorKind::Failed, target, e.to_string()))?;
        Ok(self.root.join(resolved.path))
    }

    /// Open a file target without following a symlink at its last component.
    fn open(&self, target: &Target, path: &str, write: bool) -> Result<fs::File, WriteError> {
        let full = self.path(target, path)?;
        let what = if write { "open for writing" } else { "read" };
        fs::OpenOptions::new()
            .read(!write)
            .write(write)
            // A file under a sysroot is replaced; sysfs and procfs take the value as written.
            .truncate(write && !self.is_live())
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(full)
            .map_err(|e| WriteError::from_errno(target, errno(&e), what))
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

/// What a selector file (`always [madvise] never`) reads after `value` is chosen, as sysfs
/// shows it; `None` when `value` is not one of its words (sysfs answers EINVAL). Used under a
/// sysroot, where the file is plain text, so a rehearsal reads back what the kernel would.
fn select(current: &str, value: &str) -> Option<String> {
    let words: Vec<&str> = current.split_whitespace().map(|w| w.trim_matches(['[', ']'])).collect();
    words.contains(&value).then(|| {
        let marked: Vec<String> = words
            .iter()
            .map(|w| if *w == value { format!("[{w}]") } else { (*w).to_string() })
            .collect();
        marked.join(" ")
    })
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
            Target::File { path, format } => {
                let mut text = String::new();
                self.open(target, path, false)?
                    .take(1 << 20)
                    .read_to_string(&mut text)
                    .map_err(|e| WriteError::from_errno(target, errno(&e), "read"))?;
                Ok(normalise(*format, &text))
            }
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
            Target::File { path, format } => {
                let mut text = value.to_string();
                if *format == Format::Selector && !self.is_live() {
                    let mut current = String::new();
                    let _ = self.open(target, path, false)?.read_to_string(&mut current);
                    if current.contains('[') {
                        text = select(&current, value)
                            .ok_or_else(|| WriteError::from_errno(target, libc::EINVAL, "write"))?;
                    }
                }
                let mut f = self.open(target, path, true)?;
                let mut bytes = text.into_bytes();
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
                target.check().map_err(|e| WriteError::new(ErrorKind::Failed, target, e.why))?;
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
        let read = match &self.tree {
            Some(tree) => tree.read_string("proc/sys/kernel/random/boot_id").ok(),
            None => fs::read_to_string("/proc/sys/kernel/random/boot_id").ok(),
        };
        read.map_or_else(|| "unknown".to_string(), |s| s.trim().to_string())
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
        let mut w = RealWriter::under(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let t = Target::file("/sys/kernel/mm/transparent_hugepage/enabled", Format::Selector);
        assert_eq!(w.read(&t), Ok("madvise".to_string()));
        w.write(&t, "never").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.read(&t), Ok("never".to_string()));
        // The brackets move as sysfs moves them, so a revert is byte for byte.
        assert_eq!(
            fs::read_to_string(p.join("enabled")).ok().as_deref(),
            Some("always madvise [never]\n")
        );
        assert_eq!(w.write(&t, "sometimes").map_err(|e| e.kind), Err(ErrorKind::Failed));
        let missing = Target::file("/proc/sys/kernel/nope", Format::Text);
        assert_eq!(w.read(&missing).map_err(|e| e.kind), Err(ErrorKind::Missing));
    }

    /// Nothing outside the sysroot is read or written: not through `..`, not through a
    /// symlink pointing out, not through a symlink at the last component.
    #[test]
    fn a_sysroot_is_never_left() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        fs::create_dir_all(root.join("proc/sys/vm")).unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(root.join("proc/sys/kernel")).unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(&outside).unwrap_or_else(|e| panic!("{e}"));
        fs::write(outside.join("stat_interval"), "precious\n").unwrap_or_else(|e| panic!("{e}"));
        fs::write(dir.path().join("victim"), "precious\n").unwrap_or_else(|e| panic!("{e}"));
        // proc/sys/net -> ../../../outside (a directory link pointing out of the tree).
        std::os::unix::fs::symlink("../../../outside", root.join("proc/sys/net"))
            .unwrap_or_else(|e| panic!("{e}"));
        // proc/sys/kernel/x -> /abs/victim (a last-component link).
        std::os::unix::fs::symlink(dir.path().join("victim"), root.join("proc/sys/kernel/x"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut w = RealWriter::under(&root).unwrap_or_else(|e| panic!("{e}"));
        for p in ["/proc/sys/net/stat_interval", "/proc/sys/kernel/x", "/../victim", "/etc/passwd"]
        {
            let t = Target::file(p, Format::Text);
            assert_eq!(w.write(&t, "PWNED").map_err(|e| e.kind), Err(ErrorKind::Failed), "{p}");
            assert!(w.read(&t).is_err(), "{p}");
        }
        assert_eq!(
            fs::read_to_string(outside.join("stat_interval")).ok().as_deref(),
            Some("precious\n")
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("victim")).ok().as_deref(),
            Some("precious\n")
        );
        assert!(RealWriter::under(dir.path().join("victim")).is_err(), "a file is no sysroot");
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
