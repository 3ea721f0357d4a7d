//! A recording in-memory host for tests: files and tasks in maps, every write logged, and
//! failures injectable (the k-th write fails, a target refuses, a task exits).

use std::collections::{BTreeMap, BTreeSet};

use crate::target::{normalise, Target};
use crate::writer::{ErrorKind, WriteError, Writer};

/// A fake task: identity and affinity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeTask {
    pub start_time: u64,
    pub comm: String,
    pub affinity: String,
    /// PF_NO_SETAFFINITY: writes are refused.
    pub per_cpu: bool,
}

/// In-memory host. `files` keyed by absolute path; `tasks` by tid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FakeWriter {
    pub files: BTreeMap<String, String>,
    pub tasks: BTreeMap<u32, FakeTask>,
    /// Paths whose writes the kernel refuses (EIO on a managed IRQ).
    pub refuse: BTreeSet<String>,
    /// Fail write number `k` (1-based, counting every write attempt) …
    pub fail_write: Option<usize>,
    /// … and every write attempt after it too (to make rollback fail).
    pub fail_after: bool,
    /// Every write attempt, in order: (target, value, succeeded).
    pub log: Vec<(String, String, bool)>,
    pub boot: String,
}

impl FakeWriter {
    /// An empty fake host with boot id `boot-A`.
    pub fn new() -> Self {
        FakeWriter { boot: "boot-A".into(), ..Default::default() }
    }

    /// Add a file.
    pub fn with_file(mut self, path: &str, value: &str) -> Self {
        self.files.insert(path.into(), value.into());
        self
    }

    /// Add a task.
    pub fn with_task(
        mut self,
        tid: u32,
        start_time: u64,
        comm: &str,
        affinity: &str,
        per_cpu: bool,
    ) -> Self {
        self.tasks.insert(
            tid,
            FakeTask { start_time, comm: comm.into(), affinity: affinity.into(), per_cpu },
        );
        self
    }

    /// The observable host state (files and task affinities), for before/after comparisons.
    pub fn state(&self) -> (BTreeMap<String, String>, BTreeMap<u32, FakeTask>) {
        (self.files.clone(), self.tasks.clone())
    }

    fn task(&self, target: &Target) -> Result<u32, WriteError> {
        let Target::Task { tid, start_time, comm, .. } = target else {
            return Err(WriteError::new(ErrorKind::Failed, target, "not a task"));
        };
        match self.tasks.get(tid) {
            Some(t) if t.start_time == *start_time && t.comm == *comm => Ok(*tid),
            Some(_) => Err(WriteError::new(ErrorKind::Gone, target, "tid reused by another task")),
            None => Err(WriteError::new(ErrorKind::Gone, target, "task has exited")),
        }
    }
}

impl Writer for FakeWriter {
    fn read(&mut self, target: &Target) -> Result<String, WriteError> {
        match target {
            Target::File { path, format } => self
                .files
                .get(path)
                .map(|v| normalise(*format, v))
                .ok_or_else(|| WriteError::new(ErrorKind::Missing, target, "no such file")),
            Target::Task { .. } => {
                let tid = self.task(target)?;
                Ok(self.tasks.get(&tid).map(|t| t.affinity.clone()).unwrap_or_default())
            }
        }
    }

    fn write(&mut self, target: &Target, value: &str) -> Result<(), WriteError> {
        let n = self.log.len() + 1;
        let injected = match self.fail_write {
            Some(k) => n == k || (self.fail_after && n > k),
            None => false,
        };
        let result = if injected {
            Err(WriteError::new(
                ErrorKind::Failed,
                target,
                format!("injected failure of write {n}"),
            ))
        } else {
            match target {
                Target::File { path, .. } if self.refuse.contains(path) => {
                    Err(WriteError::from_errno(target, libc::EIO, "write"))
                }
                Target::File { path, .. } => match self.files.get_mut(path) {
                    // A selector file keeps its choices and moves the brackets, like sysfs.
                    Some(v) if v.contains('[') => {
                        let words: Vec<String> = v
                            .split_whitespace()
                            .map(|w| w.trim_matches(['[', ']']).to_string())
                            .collect();
                        if words.iter().any(|w| w == value) {
                            let marked: Vec<String> = words
                                .iter()
                                .map(|w| if w == value { format!("[{w}]") } else { w.clone() })
                                .collect();
                            *v = marked.join(" ");
                            Ok(())
                        } else {
                            Err(WriteError::from_errno(target, libc::EINVAL, "write"))
                        }
                    }
                    Some(v) => {
                        *v = value.to_string();
                        Ok(())
                    }
                    None => Err(WriteError::new(ErrorKind::Missing, target, "no such file")),
                },
                Target::Task { .. } => {
                    self.task(target).and_then(|tid| match self.tasks.get_mut(&tid) {
                        Some(t) if t.per_cpu => {
                            Err(WriteError::from_errno(target, libc::EINVAL, "sched_setaffinity"))
                        }
                        Some(t) => {
                            t.affinity = value.to_string();
                            Ok(())
                        }
                        None => Err(WriteError::new(ErrorKind::Gone, target, "task has exited")),
                    })
                }
            }
        };
        self.log.push((target.to_string(), value.to_string(), result.is_ok()));
        result
    }

    fn boot_id(&mut self) -> String {
        self.boot.clone()
    }
}
