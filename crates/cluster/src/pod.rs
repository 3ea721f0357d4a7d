//! What a node's pod runs and how it is started: the in-pod command as a type ([`Task`]),
//! rendered to the container's argv in one place ([`Task::argv`], which the binary's hidden
//! `lowlat cluster agent` parses back), with the time it should take, and the pod settings every
//! fleet command shares ([`Pod`]).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Where the in-pod command writes its results (packed by the agent at the end).
pub const POD_OUT: &str = "/tmp/lowlat-out";

/// The file a snapshot task writes its node's snapshot to, as in a must-gather.
pub const SYSINFO: &str = "sysinfo.tgz";

/// The pods' `imagePullPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PullPolicy {
    /// The image was imported on every node (the default: no registry needed).
    #[default]
    Never,
    IfNotPresent,
    Always,
}

impl PullPolicy {
    /// Every value, as Kubernetes spells it.
    pub const ALL: [&'static str; 3] = ["Never", "IfNotPresent", "Always"];

    /// As Kubernetes spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Never => "Never",
            Self::IfNotPresent => "IfNotPresent",
            Self::Always => "Always",
        }
    }
}

impl fmt::Display for PullPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PullPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "Never" => Ok(Self::Never),
            "IfNotPresent" => Ok(Self::IfNotPresent),
            "Always" => Ok(Self::Always),
            _ => Err(format!("unknown pull policy {s:?}: one of {}", Self::ALL.join(", "))),
        }
    }
}

/// How every node's pod is started.
#[derive(Debug, Clone)]
pub struct Pod {
    /// The image holding lowlat.
    pub image: String,
    pub pull_policy: PullPolicy,
    /// Report a node whose pod has not started after this long (Pending, image missing, …).
    pub start_timeout: Duration,
}

/// What the agent runs in a node's pod.
#[derive(Debug, Clone, PartialEq)]
pub enum Task {
    /// `lowlat check` on the node with this schedule and timer threshold, under an RT budget
    /// (µs per second at every level of the pod's cgroup chain; 0: none).
    Check { rt_budget_us: i64, schedule: check::Schedule, threshold: Duration },
    /// `lowlat snapshot` into [`POD_OUT`]`/sysinfo.tgz`, no RT budget.
    Snapshot,
    /// Only give back the RT budget killed runs left on the node's record.
    RecoverRt,
}

impl Task {
    /// The word in the Jobs' names and labels.
    pub fn verb(&self) -> &'static str {
        match self {
            Self::Check { .. } => "check",
            Self::Snapshot => "snapshot",
            Self::RecoverRt => "clean",
        }
    }

    /// How long it should take once the pod runs: the check's own schedule plus packing and
    /// start-up, a minute for a snapshot, half a minute for the recovery pass.
    pub fn expected(&self) -> Duration {
        match self {
            Self::Check { schedule, .. } => schedule.total() + Duration::from_secs(10),
            Self::Snapshot => Duration::from_secs(60),
            Self::RecoverRt => Duration::from_secs(30),
        }
    }

    /// The container's command line: `lowlat cluster agent …`, and after `--` the lowlat
    /// command the agent runs.
    pub fn argv(&self) -> Vec<String> {
        let mut v: Vec<String> = ["lowlat", "cluster", "agent"].map(String::from).to_vec();
        let span = util::duration::format;
        match self {
            Self::Check { rt_budget_us, schedule, threshold } => {
                v.extend(["--rt-budget-us".into(), rt_budget_us.to_string()]);
                v.extend(["--out".into(), POD_OUT.into(), "--".into(), "check".into()]);
                v.extend([
                    "--out".into(),
                    POD_OUT.into(),
                    "--duration".into(),
                    span(schedule.timer),
                ]);
                v.extend(["--threshold".into(), span(*threshold)]);
            }
            Self::Snapshot => {
                v.extend(
                    ["--rt-budget-us", "0", "--out", POD_OUT, "--", "snapshot", "-o"]
                        .map(String::from),
                );
                v.push(format!("{POD_OUT}/{}", SYSINFO));
            }
            Self::RecoverRt => v.extend(["--recover-only", "--out", POD_OUT].map(String::from)),
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_round_trips_and_names_the_choices() {
        for s in PullPolicy::ALL {
            assert_eq!(s.parse::<PullPolicy>().unwrap().to_string(), s);
        }
        let e = "never".parse::<PullPolicy>().unwrap_err();
        assert!(e.contains("Never, IfNotPresent, Always"), "{e}");
    }

    #[test]
    fn the_check_task_follows_checks_own_schedule() {
        let schedule = check::Schedule::for_run(true, None);
        let t =
            Task::Check { rt_budget_us: 100_000, schedule, threshold: Duration::from_micros(100) };
        assert_eq!(t.expected(), schedule.total() + Duration::from_secs(10));
        let argv = t.argv().join(" ");
        assert_eq!(
            argv,
            "lowlat cluster agent --rt-budget-us 100000 --out /tmp/lowlat-out -- check --out \
             /tmp/lowlat-out --duration 9s --threshold 100us"
        );
        assert_eq!(
            Task::Snapshot.argv().join(" "),
            "lowlat cluster agent --rt-budget-us 0 --out /tmp/lowlat-out -- snapshot -o \
             /tmp/lowlat-out/sysinfo.tgz"
        );
        assert_eq!(
            Task::RecoverRt.argv().join(" "),
            "lowlat cluster agent --recover-only --out /tmp/lowlat-out"
        );
    }
}
