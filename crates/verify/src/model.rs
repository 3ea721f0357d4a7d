//! The verifier's vocabulary: a [`Check`] (id, group, status, evidence, fix), the [`Status`]
//! values, the [`Report`] with its summary, and the [`Input`] gathered for one run (the host
//! model, the plan, and the evidence only a live host or the boot loader files can give).

use std::collections::BTreeMap;
use std::time::Duration;

use host::{CpuPower, Host, InterruptTable};
use plan::Plan;
use serde::{Deserialize, Serialize};

/// Outcome of one check.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum Status {
    #[serde(rename = "pass")]
    Pass,
    #[serde(rename = "fail")]
    Fail,
    #[serde(rename = "warn")]
    Warn,
    /// Left on isolated CPUs by design (per-CPU kthreads, managed IRQs, the workload).
    #[serde(rename = "expected-residue")]
    ExpectedResidue,
    /// Configured for the next boot, not yet running.
    #[serde(rename = "pending-reboot")]
    PendingReboot,
    /// Does not apply here (not planned, or needs the live host).
    #[serde(rename = "n.a.")]
    NotApplicable,
}

impl Status {
    /// The name used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Warn => "warn",
            Status::ExpectedResidue => "expected-residue",
            Status::PendingReboot => "pending-reboot",
            Status::NotApplicable => "n.a.",
        }
    }
}

/// What a check is about; the terminal table shows the groups in this order.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    Boot,
    Irq,
    Tasks,
    Workqueues,
    Sysctl,
    Files,
    Memory,
    Power,
    Rt,
}

impl Group {
    /// Every group, in display order.
    pub const ALL: [Group; 9] = [
        Group::Boot,
        Group::Irq,
        Group::Tasks,
        Group::Workqueues,
        Group::Sysctl,
        Group::Files,
        Group::Memory,
        Group::Power,
        Group::Rt,
    ];

    /// The name used in tables, JSON and JUnit.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Boot => "boot",
            Group::Irq => "irq",
            Group::Tasks => "tasks",
            Group::Workqueues => "workqueues",
            Group::Sysctl => "sysctl",
            Group::Files => "files",
            Group::Memory => "memory",
            Group::Power => "power",
            Group::Rt => "rt",
        }
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Check {
    /// Stable kebab-case id (`irq-effective-affinity`, `sysctl:kernel.timer_migration`, …).
    pub id: String,
    pub group: Group,
    pub status: Status,
    /// One line per fact that shows it (files and values).
    pub evidence: Vec<String>,
    /// The lowlat step that fixes it, when it is not a pass.
    pub fix: Option<String>,
}

impl Check {
    pub(crate) fn new(group: Group, id: impl Into<String>, status: Status) -> Self {
        Check { id: id.into(), group, status, evidence: Vec::new(), fix: None }
    }
    pub(crate) fn ev(mut self, line: impl Into<String>) -> Self {
        self.evidence.push(line.into());
        self
    }
    pub(crate) fn evs(mut self, lines: impl IntoIterator<Item = String>) -> Self {
        self.evidence.extend(lines);
        self
    }
    pub(crate) fn fix(mut self, fix: impl Into<String>) -> Self {
        if !matches!(self.status, Status::Pass | Status::NotApplicable) {
            self.fix = Some(fix.into());
        }
        self
    }
}

/// Counts by status (`pass`, `fail`, `warn` are the public contract).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub expected_residue: usize,
    pub pending_reboot: usize,
    pub not_applicable: usize,
}

/// Version of the verify report (`verify --json`).
pub const SCHEMA_VERSION: u32 = 1;

fn schema_version() -> u32 {
    SCHEMA_VERSION
}

/// Every check of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    /// Files written before it was recorded read as version 1.
    #[serde(default = "schema_version")]
    pub schema_version: u32,
    pub checks: Vec<Check>,
    pub summary: Summary,
}

impl Report {
    /// Build the summary from the checks.
    pub fn new(checks: Vec<Check>) -> Self {
        let mut s = Summary::default();
        for c in &checks {
            match c.status {
                Status::Pass => s.pass += 1,
                Status::Fail => s.fail += 1,
                Status::Warn => s.warn += 1,
                Status::ExpectedResidue => s.expected_residue += 1,
                Status::PendingReboot => s.pending_reboot += 1,
                Status::NotApplicable => s.not_applicable += 1,
            }
        }
        Report { schema_version: SCHEMA_VERSION, checks, summary: s }
    }

    /// Whether nothing failed.
    pub fn passed(&self) -> bool {
        self.summary.fail == 0
    }

    /// The check with this id.
    pub fn get(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }
}

/// A command line the boot loader will use next time (BLS entry, grub default, rpm-ostree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootEntry {
    /// Where it came from (`/boot/loader/entries/x.conf`, `/etc/default/grub`).
    pub source: String,
    pub cmdline: String,
}

/// irqbalance as found on the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Irqbalance {
    pub running: bool,
    /// `IRQBALANCE_BANNED_CPULIST` / `IRQBALANCE_BANNED_CPUS` as (file, variable, value).
    pub ban: Option<(String, String, String)>,
}

/// What a short observation window on the live host saw.
#[derive(Debug, Clone)]
pub struct Window {
    pub duration: Duration,
    pub interrupts_before: InterruptTable,
    pub interrupts_after: InterruptTable,
    pub idle_before: Vec<CpuPower>,
    pub idle_after: Vec<CpuPower>,
}

/// A workload task to accept on isolated CPUs: pid or comm (the same as `apply`'s).
pub use tune::Allow;

/// Everything one verify run looks at.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    pub host: &'a Host,
    pub plan: &'a Plan,
    /// Whether the host is the live one (else live-only checks are n.a.).
    pub live: bool,
    /// Boot loader command lines for the next boot; empty when none could be read.
    pub boot_entries: Vec<BootEntry>,
    pub irqbalance: Option<Irqbalance>,
    pub window: Option<Window>,
    pub allow: Vec<Allow>,
    /// Container cgroups and their RT budgets (`host::rt::containers`).
    pub rt: host::rt::Containers,
    /// Values of planned files the host model does not carry (EPB, arbitrary `File` items),
    /// keyed by absolute path, read by the caller.
    pub files: BTreeMap<String, String>,
    /// sysctl settings in the config files `sysctl --system` applies: (file, key, value).
    pub sysctl_conf: Vec<(String, String, String)>,
    /// How the plan is named in fix hints (`--plan FILE`).
    pub plan_arg: String,
}
