//! What a write touches ([`Target`]), how its value is spelled ([`Format`]), which files
//! `apply` may write at all ([`Target::check`]), and value comparison that treats CPU sets as
//! sets (`0-1` equals `3` as a mask) and selector files (`always [madvise] never`) by their
//! selected word.

use std::fmt;

use cpuset::CpuSet;
use serde::{Deserialize, Serialize};

/// How a file's value is spelled; decides how two values are compared.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
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
    /// A value followed by what it resolves to (`default (cache)`, a workqueue's
    /// `affinity_scope`): the first word is the value.
    Word,
}

/// One thing a write changes.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
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

/// A target outside what `apply` writes (see [`Target::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{target}: {why}")]
pub struct NotAllowed {
    /// The target, as text (escaped).
    pub target: String,
    pub why: String,
}

/// The files `apply` writes, besides `/proc/sys/…` (any sysctl but those in [`DENIED_SYSCTLS`]):
/// one path component per pattern component, where `#` stands for a decimal number and `*`
/// for a name (letters, digits, `_ - . : @ +`, not `.` or `..`). `lowlat apply` writes no
/// configuration file. Documented in `docs/commands/apply.md`.
pub const ALLOWED_FILES: &[&str] = &[
    "/proc/irq/#/smp_affinity",
    "/proc/irq/#/smp_affinity_list",
    "/proc/irq/default_smp_affinity",
    "/sys/devices/virtual/workqueue/cpumask",
    "/sys/devices/virtual/workqueue/*/cpumask",
    "/sys/bus/workqueue/devices/*/cpumask",
    "/sys/bus/workqueue/devices/writeback/numa",
    "/sys/bus/workqueue/devices/writeback/affinity_scope",
    "/sys/devices/system/cpu/cpu#/cpufreq/scaling_governor",
    "/sys/devices/system/cpu/cpu#/cpufreq/energy_performance_preference",
    "/sys/devices/system/cpu/cpu#/power/energy_perf_bias",
    "/sys/devices/system/cpu/cpu#/power/pm_qos_resume_latency_us",
    "/sys/devices/system/cpu/cpu#/cpuidle/state#/disable",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/sys/kernel/mm/transparent_hugepage/defrag",
    "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag",
    "/sys/kernel/mm/ksm/run",
    "/sys/kernel/mm/hugepages/hugepages-#kB/nr_hugepages",
    "/sys/devices/system/node/node#/hugepages/hugepages-#kB/nr_hugepages",
];

/// Sysctls that make the kernel run a program or load code (a root shell for whoever writes
/// them): never written, whatever a plan or a journal says. Paths below `/proc/sys/`; a
/// trailing `/` denies the whole directory.
pub const DENIED_SYSCTLS: &[&str] = &[
    "kernel/core_pattern",
    "kernel/modprobe",
    "kernel/hotplug",
    "kernel/poweroff_cmd",
    "kernel/usermodehelper/",
    "fs/binfmt_misc/",
];

/// A path component `apply` accepts: a plain name, never `.`, `..` or empty.
fn plain_name(c: &str) -> bool {
    !c.is_empty()
        && c != "."
        && c != ".."
        && c.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.:@+".contains(&b))
}

/// Does component `c` match pattern component `p` (`#` a number, `*` a name)?
fn component_matches(p: &str, c: &str) -> bool {
    if p == "*" {
        return plain_name(c);
    }
    match p.split_once('#') {
        None => p == c,
        Some((pre, post)) => c
            .strip_prefix(pre)
            .and_then(|rest| rest.strip_suffix(post))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
    }
}

/// Is `path` a file `apply` may write (see [`ALLOWED_FILES`] and [`DENIED_SYSCTLS`])?
fn check_path(path: &str) -> Result<(), String> {
    let Some(rel) = path.strip_prefix('/') else {
        return Err("not an absolute path".into());
    };
    let parts: Vec<&str> = rel.split('/').collect();
    if let Some(bad) = parts.iter().find(|c| !plain_name(c)) {
        return Err(format!(
            "path component {:?} is not a plain name (no `..`, `.`, empty or unusual characters)",
            util::term::sanitize(bad, false)
        ));
    }
    if let Some(sysctl) = rel.strip_prefix("proc/sys/") {
        if let Some(d) = DENIED_SYSCTLS.iter().find(|d| match d.strip_suffix('/') {
            Some(dir) => sysctl == dir || sysctl.starts_with(*d),
            None => sysctl == **d,
        }) {
            return Err(format!(
                "/proc/sys/{d} makes the kernel run a program: lowlat never writes it"
            ));
        }
        return Ok(());
    }
    let allowed = ALLOWED_FILES.iter().any(|pat| {
        let pat: Vec<&str> = pat.trim_start_matches('/').split('/').collect();
        pat.len() == parts.len() && pat.iter().zip(&parts).all(|(p, c)| component_matches(p, c))
    });
    if allowed {
        Ok(())
    } else {
        Err("not a file lowlat apply writes (/proc/sys/…, IRQ and workqueue affinities, CPU \
             power and idle knobs, transparent and huge pages, KSM: see \
             `docs/commands/apply.md`)"
            .into())
    }
}

impl Target {
    /// Refuse a target `apply` never writes: a file outside [`ALLOWED_FILES`] and `/proc/sys`
    /// (or one of [`DENIED_SYSCTLS`]), a path with `..`, or task 0 (the caller itself).
    /// Checked for every change of a plan and every change read back from a journal, so
    /// neither can make `apply` or `revert` write elsewhere (nor leave a `--sysroot`).
    pub fn check(&self) -> Result<(), NotAllowed> {
        let why = match self {
            Target::File { path, .. } => check_path(path).err(),
            Target::Task { tid: 0, .. } | Target::Task { pid: 0, .. } => {
                Some("task 0 is not a task".to_string())
            }
            Target::Task { .. } => None,
        };
        match why {
            None => Ok(()),
            Some(why) => Err(NotAllowed {
                target: util::term::sanitize(&self.to_string(), false).into_owned(),
                why,
            }),
        }
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
        Format::Word => trimmed.split_whitespace().next().unwrap_or_default().to_string(),
        Format::Text | Format::CpuList | Format::CpuMask => trimmed.trim().to_string(),
    }
}

/// The CPU set a value denotes, when the format is a set and the value parses.
pub fn as_set(format: Format, value: &str) -> Option<CpuSet> {
    match format {
        Format::CpuList => CpuSet::parse_list(value.trim()).ok(),
        Format::CpuMask => CpuSet::parse_mask(value.trim()).ok(),
        Format::Text | Format::Selector | Format::Word => None,
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
        assert_eq!(normalise(Format::Word, "default (cache)\n"), "default");
        assert!(same_value(Format::Word, "system\n", "system"));
        assert!(!same_value(Format::Word, "default (system)", "system"));
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

    #[test]
    fn only_the_files_apply_knows_are_allowed() {
        let ok = |p: &str| Target::file(p, Format::Text).check().map_err(|e| e.to_string());
        for p in [
            "/proc/sys/vm/stat_interval",
            "/proc/sys/net/ipv4/conf/eth0.100/rp_filter",
            "/proc/irq/24/smp_affinity_list",
            "/proc/irq/24/smp_affinity",
            "/proc/irq/default_smp_affinity",
            "/sys/devices/virtual/workqueue/cpumask",
            "/sys/devices/virtual/workqueue/nvme-wq/cpumask",
            "/sys/bus/workqueue/devices/writeback/cpumask",
            "/sys/devices/system/cpu/cpu12/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu3/cpuidle/state2/disable",
            "/sys/devices/system/cpu/cpu3/power/pm_qos_resume_latency_us",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "/sys/kernel/mm/ksm/run",
            "/sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages",
            "/sys/bus/workqueue/devices/writeback/numa",
            "/sys/bus/workqueue/devices/writeback/affinity_scope",
            "/sys/devices/system/cpu/cpu79/cpuidle/state10/disable",
            "/proc/sys/net/core/busy_read",
            "/proc/sys/net/core/busy_poll",
        ] {
            assert_eq!(ok(p), Ok(()), "{p}");
        }
        for p in [
            "/etc/passwd",
            "/../victim",
            "/proc/sys/../../etc/passwd",
            "/proc/sys/vm/./stat_interval",
            "/proc/sys//vm",
            "proc/sys/vm/stat_interval",
            "/proc/sys/kernel/core_pattern",
            "/proc/sys/kernel/modprobe",
            "/proc/sys/kernel/usermodehelper/bset",
            "/proc/sys/fs/binfmt_misc/register",
            "/proc/sys/vm/x\nsmuggled",
            "/proc/irq/24/spurious",
            "/proc/irq/x/smp_affinity",
            "/proc/1/oom_score_adj",
            "/sys/devices/system/cpu/cpu/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu1x/cpufreq/scaling_governor",
            "/sys/devices/virtual/workqueue/../cpumask",
            "/sys/kernel/mm/transparent_hugepage/enabled/x",
            "/sys/class/gpio/export",
            // Only the writeback workqueue's scope, and only the files the knobs need.
            "/sys/bus/workqueue/devices/nvme-wq/numa",
            "/sys/bus/workqueue/devices/writeback/affinity_strict",
            "/sys/bus/workqueue/devices/writeback/max_active",
            "/sys/devices/system/cpu/cpu3/cpuidle/state2/latency",
            "/sys/devices/system/cpu/cpu3/cpuidle/stateX/disable",
            "/sys/devices/system/cpu/cpuidle/current_governor",
        ] {
            assert!(ok(p).is_err(), "{p} must be refused");
        }
        let task = |pid, tid| Target::Task { pid, tid, start_time: 1, comm: "x".into() };
        assert!(task(2, 2).check().is_ok());
        assert!(task(0, 0).check().is_err() && task(5, 0).check().is_err());
        let e = Target::file("/proc/sys/kernel/core_pattern", Format::Text).check();
        assert!(e.is_err_and(|e| e.why.contains("run a program")));
    }
}
