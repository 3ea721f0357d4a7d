//! Mitigations compared against the bulk writer: I/O priority class idle on the bulk writer,
//! a different I/O scheduler for the run (restored afterwards, even on Ctrl-C), a cgroup
//! write-bandwidth throttle on the bulk writer's threads (v1 `blkio.throttle.write_bps_device`;
//! v2 `io.max` needs a separate process and is refused with a clear message), the bulk writer's
//! own MB/s cap, and fewer files in flight. Combine with `+`: `scheduler=bfq+ionice-idle`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use results::fsync::StorageEnv;

use crate::bulk::BulkConfig;
use crate::env::SysRoot;
use crate::error::StorageError;
use crate::restore::{DirGuard, SysfsGuard};

/// One mitigation.
#[derive(Debug, Clone, PartialEq)]
pub enum Mitigation {
    IoniceIdle,
    Scheduler(String),
    /// cgroup write throttle on the bulk writer, MB/s (10^6 bytes).
    Throttle(f64),
    /// The bulk writer limits itself, MB/s.
    Rate(f64),
    /// At most N files in flight (worker threads).
    Outstanding(usize),
}

const SCHEDULERS: [&str; 4] = ["none", "mq-deadline", "bfq", "kyber"];
const BLKIO: &str = "sys/fs/cgroup/blkio";
const BLKIO_WRITE_BPS: &str = "sys/fs/cgroup/blkio/blkio.throttle.write_bps_device";

fn mbps(s: &str, what: &str) -> Result<f64, StorageError> {
    let v: f64 = s.trim_end_matches("MB/s").trim_end_matches("mb").parse().map_err(|_| {
        StorageError::Input(format!("{what}={s}: expected a number of MB/s, e.g. {what}=50"))
    })?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(StorageError::Input(format!("{what}={s}: must be a positive number of MB/s")));
    }
    Ok(v)
}

impl Mitigation {
    /// Parse one item (`ionice-idle`, `scheduler=bfq`, `throttle=50`, `rate=50`, `outstanding=3`).
    pub fn parse(s: &str) -> Result<Self, StorageError> {
        let s = s.trim();
        match s.split_once('=') {
            None if s == "ionice-idle" || s == "idle" => Ok(Self::IoniceIdle),
            Some(("scheduler", v)) if SCHEDULERS.contains(&v) => Ok(Self::Scheduler(v.to_string())),
            Some(("scheduler", v)) => Err(StorageError::Input(format!(
                "scheduler={v}: unknown I/O scheduler; use one of {}",
                SCHEDULERS.join(", ")
            ))),
            Some(("throttle", v)) => Ok(Self::Throttle(mbps(v, "throttle")?)),
            Some(("rate", v)) => Ok(Self::Rate(mbps(v, "rate")?)),
            Some(("outstanding", v)) => match v.parse::<usize>() {
                Ok(n) if (1..=256).contains(&n) => Ok(Self::Outstanding(n)),
                _ => Err(StorageError::Input(format!("outstanding={v}: expected 1..=256 files in flight"))),
            },
            _ => Err(StorageError::Input(format!(
                "unknown mitigation {s:?}: use ionice-idle, scheduler=none|mq-deadline|bfq|kyber, throttle=MB/s, rate=MB/s, outstanding=N (combine with +)"
            ))),
        }
    }

    /// Canonical text.
    pub fn name(&self) -> String {
        match self {
            Self::IoniceIdle => "ionice-idle".into(),
            Self::Scheduler(s) => format!("scheduler={s}"),
            Self::Throttle(v) => format!("throttle={v}"),
            Self::Rate(v) => format!("rate={v}"),
            Self::Outstanding(n) => format!("outstanding={n}"),
        }
    }
}

/// A combination of mitigations applied together (`a+b`); empty = none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MitigationSet(pub Vec<Mitigation>);

impl MitigationSet {
    /// Parse `a+b+…`; `none` (or empty) is the empty set.
    pub fn parse(s: &str) -> Result<Self, StorageError> {
        let s = s.trim();
        if s.is_empty() || s == "none" {
            return Ok(Self::default());
        }
        let v = s.split('+').map(Mitigation::parse).collect::<Result<Vec<_>, _>>()?;
        if v.iter().filter(|m| matches!(m, Mitigation::Scheduler(_))).count() > 1 {
            return Err(StorageError::Input(format!(
                "{s}: more than one scheduler in one combination"
            )));
        }
        Ok(Self(v))
    }

    /// Canonical text (`None` when empty).
    pub fn name(&self) -> Option<String> {
        (!self.0.is_empty())
            .then(|| self.0.iter().map(Mitigation::name).collect::<Vec<_>>().join("+"))
    }

    /// Does it act on the bulk writer only (nothing to do without one)? A scheduler switch
    /// also changes the probe's own device.
    pub fn needs_bulk_writer(&self) -> bool {
        !self.0.is_empty() && self.scheduler().is_none()
    }

    /// Can it act on an update command (a separate process tree, not the bulk writer's
    /// threads)? `ionice-idle` and a scheduler can; the others shape the built-in writer.
    pub fn command_ok(&self) -> Result<(), StorageError> {
        match self.0.iter().find(|m| !matches!(m, Mitigation::IoniceIdle | Mitigation::Scheduler(_))) {
            None => Ok(()),
            Some(m) => Err(StorageError::Input(format!(
                "mitigation {}: shapes the built-in bulk writer's threads, not an update command; with a command use ionice-idle and/or scheduler=…",
                m.name()
            ))),
        }
    }

    fn scheduler(&self) -> Option<&str> {
        self.0.iter().find_map(|m| match m {
            Mitigation::Scheduler(s) => Some(s.as_str()),
            _ => None,
        })
    }

    fn throttle(&self) -> Option<f64> {
        self.0.iter().find_map(|m| match m {
            Mitigation::Throttle(v) => Some(*v),
            _ => None,
        })
    }

    /// Check everything that can be checked without writing: the scheduler exists for the
    /// device, a throttle has a cgroup hierarchy to use and a device number.
    pub fn precheck(&self, env: &StorageEnv, sys: &SysRoot) -> Result<(), StorageError> {
        if let Some(s) = self.scheduler() {
            let dev = env.device.as_deref().ok_or_else(|| {
                StorageError::Input(format!(
                    "scheduler={s}: could not find the block device behind {} (not a block-device filesystem?)",
                    env.dir
                ))
            })?;
            if !env.schedulers_available.iter().any(|a| a == s) {
                return Err(StorageError::Input(format!(
                    "scheduler={s}: device {dev} offers [{}]; pick one of those (bfq may need `modprobe bfq`)",
                    env.schedulers_available.join(" ")
                )));
            }
            crate::sys::writable(&sys.knob(&format!("sys/block/{dev}/queue/scheduler"))).map_err(|e| {
                StorageError::Input(format!("scheduler={s}: cannot write /sys/block/{dev}/queue/scheduler ({e}); run as root"))
            })?;
        }
        if self.throttle().is_some() {
            if env.devno.is_none() {
                return Err(StorageError::Input(format!(
                    "throttle: no block device found behind {}",
                    env.dir
                )));
            }
            if sys.root().kind(BLKIO_WRITE_BPS).is_none() {
                return Err(StorageError::Input(
                    "throttle: needs the cgroup v1 blkio controller (/sys/fs/cgroup/blkio); on a pure cgroup v2 host io.max applies per process and this build runs the bulk writer as threads — use rate=MB/s instead".into(),
                ));
            }
            crate::sys::writable(&sys.knob(BLKIO)).map_err(|e| {
                StorageError::Input(format!("throttle: cannot create a cgroup under /sys/fs/cgroup/blkio ({e}); run as root"))
            })?;
        }
        Ok(())
    }

    /// Apply for one run: host writes are guarded (undone when the returned value drops) and
    /// the bulk writer's config is adjusted. Returns notes saying what was done.
    pub fn apply(
        &self,
        env: &StorageEnv,
        sys: &SysRoot,
        bulk: &mut BulkConfig,
    ) -> Result<Applied, StorageError> {
        self.precheck(env, sys)?;
        let mut applied = Applied::default();
        for m in &self.0 {
            match m {
                Mitigation::IoniceIdle => {
                    bulk.ioprio_idle = true;
                    applied.notes.push("bulk writer threads in I/O class idle".into());
                }
                Mitigation::Rate(v) => {
                    bulk.rate_bps = Some((v * 1e6) as u64);
                    applied.notes.push(format!("bulk writer self-limited to {v} MB/s"));
                }
                Mitigation::Outstanding(n) => {
                    bulk.outstanding = *n;
                    applied.notes.push(format!("bulk writer with {n} file(s) in flight"));
                }
                Mitigation::Scheduler(s) => {
                    let dev = env.device.clone().unwrap_or_default();
                    let rel = format!("sys/block/{dev}/queue/scheduler");
                    let path = sys.knob(&rel);
                    let now = sys
                        .root()
                        .read_string(&rel)
                        .map_err(|e| StorageError::io("read", &path, std::io::Error::other(e)))?;
                    let old = host::parse::bracketed(&now).unwrap_or_else(|| "none".into());
                    let g = SysfsGuard::write(&path, &old, s)
                        .map_err(|e| StorageError::io("write scheduler to", &path, e))?;
                    applied.notes.push(format!("scheduler {dev}: {old} -> {s} for the run"));
                    applied.scheduler = Some((dev, old));
                    applied.guards.push(g);
                }
                Mitigation::Throttle(v) => {
                    static N: AtomicUsize = AtomicUsize::new(0);
                    let cg: PathBuf = sys.knob(&format!(
                        "{BLKIO}/lowlat-bulk-{}-{}",
                        std::process::id(),
                        N.fetch_add(1, Ordering::Relaxed)
                    ));
                    let dir = DirGuard::create(&cg)
                        .map_err(|e| StorageError::io("create cgroup", &cg, e))?;
                    let devno = env.devno.clone().unwrap_or_default();
                    let bps = (v * 1e6) as u64;
                    let knob = cg.join("blkio.throttle.write_bps_device");
                    std::fs::write(&knob, format!("{devno} {bps}"))
                        .map_err(|e| StorageError::io("write", &knob, e))?;
                    let tasks = cg.join("tasks");
                    bulk.on_thread_start = Some(Arc::new(move || join_cgroup(&tasks)));
                    applied.notes.push(format!(
                        "bulk writer threads in blkio cgroup {} with write_bps_device \"{devno} {bps}\" (v1 throttles only I/O the threads submit themselves: fsync/direct, not flusher writeback)",
                        cg.display()
                    ));
                    applied.cgroup = Some(dir);
                }
            }
        }
        Ok(applied)
    }
}

impl std::str::FromStr for MitigationSet {
    type Err = StorageError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

fn join_cgroup(tasks: &Path) -> std::io::Result<()> {
    std::fs::write(tasks, util::sched::gettid().to_string())
}

/// What a mitigation set changed on the host; dropping it undoes the changes.
#[derive(Debug, Default)]
pub struct Applied {
    pub notes: Vec<String>,
    /// `(device, old scheduler)` when a scheduler was switched.
    pub scheduler: Option<(String, String)>,
    guards: Vec<SysfsGuard>,
    cgroup: Option<DirGuard>,
}

impl Applied {
    /// Undo now (the bulk writer's threads must have exited); notes say what was restored.
    pub fn undo(mut self) -> Vec<String> {
        let mut notes = std::mem::take(&mut self.notes);
        for g in self.guards.iter_mut() {
            match g.restore() {
                Ok(()) => {}
                Err(e) => notes.push(format!("RESTORE FAILED: {e}")),
            }
        }
        if let Some((dev, old)) = &self.scheduler {
            notes.push(format!("scheduler {dev} restored to {old}"));
        }
        self.cgroup = None;
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_name_roundtrip() {
        for s in [
            "ionice-idle",
            "scheduler=bfq",
            "throttle=50",
            "rate=12.5",
            "outstanding=3",
            "scheduler=bfq+ionice-idle",
        ] {
            assert_eq!(MitigationSet::parse(s).unwrap().name().as_deref(), Some(s));
        }
        assert_eq!(MitigationSet::parse("none").unwrap().name(), None);
    }

    #[test]
    fn bad_mitigations_are_input_errors_with_advice() {
        for (s, needle) in [
            ("scheduler=cfq", "one of none, mq-deadline, bfq, kyber"),
            ("throttle=-1", "positive"),
            ("rate=fast", "MB/s"),
            ("outstanding=0", "1..=256"),
            ("turbo", "unknown mitigation"),
            ("scheduler=bfq+scheduler=none", "more than one scheduler"),
        ] {
            let e = MitigationSet::parse(s).unwrap_err();
            assert!(e.is_input() && e.to_string().contains(needle), "{s}: {e}");
        }
    }

    fn env(avail: &[&str]) -> StorageEnv {
        StorageEnv {
            dir: "/x".into(),
            device: Some("vdz".into()),
            devno: Some("254:0".into()),
            scheduler: Some("mq-deadline".into()),
            schedulers_available: avail.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn precheck_refuses_a_scheduler_the_device_lacks() {
        let d = tempfile::tempdir().unwrap();
        let root = SysRoot::dir(d.path()).unwrap();
        let e = MitigationSet::parse("scheduler=bfq")
            .unwrap()
            .precheck(&env(&["none", "mq-deadline"]), &root)
            .unwrap_err();
        assert!(e.to_string().contains("offers [none mq-deadline]"), "{e}");
        let e = MitigationSet::parse("throttle=5").unwrap().precheck(&env(&[]), &root).unwrap_err();
        assert!(e.to_string().contains("cgroup v1 blkio"), "{e}");
    }

    #[test]
    fn scheduler_switch_on_a_fake_sysfs_is_undone() {
        let d = tempfile::tempdir().unwrap();
        let q = d.path().join("sys/block/vdz/queue");
        std::fs::create_dir_all(&q).unwrap();
        std::fs::write(q.join("scheduler"), "none [mq-deadline] kyber bfq\n").unwrap();
        let root = SysRoot::dir(d.path()).unwrap();
        let set = MitigationSet::parse("scheduler=bfq+ionice-idle+rate=10+outstanding=1").unwrap();
        let mut bulk = BulkConfig {
            dir: d.path().into(),
            mode: crate::bulk::BulkMode::FsyncPerFile,
            bytes: 1,
            outstanding: 4,
            ioprio_idle: false,
            rate_bps: None,
            on_thread_start: None,
        };
        let a =
            set.apply(&env(&["none", "mq-deadline", "kyber", "bfq"]), &root, &mut bulk).unwrap();
        assert_eq!(std::fs::read_to_string(q.join("scheduler")).unwrap(), "bfq");
        assert!(bulk.ioprio_idle && bulk.rate_bps == Some(10_000_000) && bulk.outstanding == 1);
        let notes = a.undo();
        assert_eq!(std::fs::read_to_string(q.join("scheduler")).unwrap(), "mq-deadline");
        assert!(notes.iter().any(|n| n == "scheduler vdz restored to mq-deadline"), "{notes:?}");
    }
}
