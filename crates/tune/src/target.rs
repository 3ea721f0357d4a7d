//! What a write touches ([`Target`]), how its value is spelled ([`Format`]), and value
//! comparison that treats CPU sets as sets (`0-1` equals `3` as a mask) and selector files
//! (`always [madvise] never`) by their selected word.

use std::fmt;

use cpuset::CpuSet;
use serde::{Deserialize, Serialize};

/// How a file's value is spelled; decides how two values are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Plain text, compared after trimming and collapsing whitespace.
    Text,
    /// A Linux cpu-list (`0-3,8`).
    CpuList,
    /// A hex mask in 32-bit comma-separated groups (`ff,ffffffff`).
    CpuMask,
    /// A selector file (`always [madvise] never`): the bracketed word is the value.
    Selector,
}

/// One thing a write changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Target {
    /// A procfs/sysfs file, by its absolute path on the host.
    File { path: String, format: Format },
    /// One thread's CPU affinity (`sched_setaffinity`), identified by tid, start time
    /// (clock ticks since boot, `stat` field 22) and comm so a reused tid is never touched.
    Task { pid: u32, tid: u32, start_time: u64, comm: String },
}

/// What kind of thing a target is, for classifying refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetClass {
    /// `/proc/irq/N/smp_affinity*`.
    Irq,
    /// A thread's affinity.
    Task,
    /// Any other file.
    Other,
}

impl Target {
    /// A file target.
    pub fn file(path: impl Into<String>, format: Format) -> Self {
        Target::File { path: path.into(), format }
    }

    /// The value format (tasks are cpu-lists).
    pub fn format(&self) -> Format {
        match self {
            Target::File { format, .. } => *format,
            Target::Task { .. } => Format::CpuList,
        }
    }

    /// IRQ, task or other.
    pub fn class(&self) -> TargetClass {
        match self {
            Target::File { .. } if self.irq().is_some() => TargetClass::Irq,
            Target::File { .. } => TargetClass::Other,
            Target::Task { .. } => TargetClass::Task,
        }
    }

    /// The IRQ number of a `/proc/irq/<number>/…` file (not `/proc/irq/default_smp_affinity`).
    pub fn irq(&self) -> Option<u32> {
        let Target::File { path, .. } = self else { return None };
        let n = path.strip_prefix("/proc/irq/")?.split('/').next()?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        n.parse().ok()
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::File { path, .. } => f.write_str(path),
            Target::Task { pid, tid, comm, .. } if pid == tid => {
                write!(f, "affinity of pid {tid} ({comm})")
            }
            Target::Task { pid, tid, comm, .. } => {
                write!(f, "affinity of tid {tid} of pid {pid} ({comm})")
            }
        }
    }
}

/// The selected word of a selector file (`always [madvise] never` → `madvise`); the trimmed
/// text when there are no brackets.
pub fn selected(raw: &str) -> String {
    raw.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .map_or_else(|| raw.trim().to_string(), str::to_string)
}

/// A value as read from the host, normalised for writing back: trailing newline removed,
/// selector files reduced to their selected word.
pub fn normalise(format: Format, raw: &str) -> String {
    let trimmed = raw.trim_end_matches(['\n', '\0']);
    match format {
        Format::Selector => selected(trimmed),
        Format::Text | Format::CpuList | Format::CpuMask => trimmed.trim().to_string(),
    }
}

/// The CPU set a value denotes, when the format is a set and the value parses.
pub fn as_set(format: Format, value: &str) -> Option<CpuSet> {
    match format {
        Format::CpuList => CpuSet::parse_list(value.trim()).ok(),
        Format::CpuMask => CpuSet::parse_mask(value.trim()).ok(),
        Format::Text | Format::Selector => None,
    }
}

/// Whether two values of a target mean the same thing.
pub fn same_value(format: Format, a: &str, b: &str) -> bool {
    if let (Some(x), Some(y)) = (as_set(format, a), as_set(format, b)) {
        return x == y;
    }
    let norm = |s: &str| normalise(format, s).split_whitespace().collect::<Vec<_>>().join(" ");
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_and_sets_compare_by_meaning() {
        assert_eq!(selected("always [madvise] never\n"), "madvise");
        assert_eq!(selected("2"), "2");
        assert!(same_value(Format::CpuMask, "3", "00000003"));
        assert!(same_value(Format::CpuList, "0,1", "0-1"));
        assert!(!same_value(Format::CpuList, "0", "0-1"));
        assert!(same_value(Format::Selector, "always [never] madvise", "never"));
        assert!(same_value(Format::Text, "4\t4  1 7\n", "4 4 1 7"));
        assert!(!same_value(Format::Text, "1", "0"));
    }

    #[test]
    fn irq_paths_are_classified() {
        assert_eq!(
            Target::file("/proc/irq/24/smp_affinity_list", Format::CpuList).class(),
            TargetClass::Irq
        );
        assert_eq!(
            Target::file("/proc/irq/default_smp_affinity", Format::CpuMask).class(),
            TargetClass::Other
        );
        assert_eq!(Target::file("/proc/irq/24/smp_affinity", Format::CpuMask).irq(), Some(24));
        assert_eq!(Target::file("/proc/irq/default_smp_affinity", Format::CpuMask).irq(), None);
        assert_eq!(Target::file("/proc/irqx/2", Format::Text).irq(), None);
    }
}
