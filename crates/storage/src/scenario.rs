//! One measurement scenario (baseline, or the probe under a bulk writer with a mitigation
//! set) and the matrix of them. Validation happens before anything is written; the scratch
//! directory and every host change are undone on every exit path.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use results::fsync::{etcd_buckets, verdicts, worst_windows, BulkRun, LatNs, Scenario, StorageEnv};

use crate::bulk::{run_bulk, BulkConfig, BulkMode, Interference};
use crate::command::{run_command, CommandConfig, CommandRun};
use crate::env::SysRoot;
use crate::error::StorageError;
use crate::mitigation::MitigationSet;
use crate::probe::{Probe, ProbeConfig, Stop};
use crate::restore::Scratch;
use crate::sys::{self, SyncMode};

/// Everything the probe and the bulk writer need ([`crate::fsync::FsyncRequest::config`]).
#[derive(Debug, Clone)]
pub struct FsyncConfig {
    pub dir: PathBuf,
    pub bs: usize,
    pub sync: SyncMode,
    pub stop: Stop,
    /// Bytes preallocated for the probe file.
    pub file_size: u64,
    /// Probe IOPS budget.
    pub rate: Option<f64>,
    pub window: Duration,
    pub bulk_bytes: u64,
    /// When the bulk writer starts after the probe (so the series shows a baseline first).
    pub bulk_delay: Duration,
    /// Default files in flight for the bulk writer.
    pub outstanding: usize,
    /// Upper bound on one scenario, however long the bulk writer takes.
    pub max_duration: Duration,
    /// Pause between matrix scenarios (after a syncfs) so one does not bleed into the next.
    pub settle: Duration,
}

/// Which scenario: interference (or none) × mitigation set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioSpec {
    pub interference: Option<Interference>,
    pub mitigation: MitigationSet,
}

impl ScenarioSpec {
    /// `baseline`, `<interference>`, `<interference> + <mitigation>` (or the mitigation alone).
    pub fn name(&self) -> String {
        match (self.interference.as_ref(), self.mitigation.name()) {
            (None, None) => "baseline".into(),
            (Some(i), None) => i.name().into(),
            (Some(i), Some(m)) => format!("{} + {m}", i.name()),
            (None, Some(m)) => m,
        }
    }
}

/// Baseline, then every interference × mitigation (an empty mitigation list means "none").
pub fn matrix(interferences: &[Interference], mitigations: &[MitigationSet]) -> Vec<ScenarioSpec> {
    let none = [MitigationSet::default()];
    let mits = if mitigations.is_empty() { &none[..] } else { mitigations };
    let mut v = vec![ScenarioSpec::default()];
    for i in interferences {
        for m in mits {
            v.push(ScenarioSpec { interference: Some(i.clone()), mitigation: m.clone() });
        }
    }
    v
}

/// Check the inputs before writing anything: the directory exists, is a writable directory
/// on a writable filesystem, has room for the probe file and the bulk data, and every
/// mitigation is possible here.
pub fn validate(
    cfg: &FsyncConfig,
    specs: &[ScenarioSpec],
    env: &StorageEnv,
    root: &SysRoot,
) -> Result<(), StorageError> {
    let d = &cfg.dir;
    let input = |m: String| StorageError::Input(format!("the directory {}: {m}", d.display()));
    let md = std::fs::metadata(d)
        .map_err(|e| input(format!("{e}; create it or pick an existing directory")))?;
    if !md.is_dir() {
        return Err(input("not a directory".into()));
    }
    let st = sys::statvfs(d).map_err(|e| input(format!("statvfs failed: {e}")))?;
    if st.read_only {
        return Err(input("the filesystem is mounted read-only".into()));
    }
    sys::writable(d).map_err(|e| input(format!("not writable ({e})")))?;
    if cfg.bs == 0 || cfg.bs > 64 << 20 {
        return Err(StorageError::Input(format!(
            "a block size of {} bytes: must be 1 byte .. 64 MiB",
            cfg.bs
        )));
    }
    if let Stop::Bytes(b) = cfg.stop {
        if b < cfg.bs as u64 {
            return Err(StorageError::Input(format!(
                "a size of {b} bytes: smaller than one block of {}",
                cfg.bs
            )));
        }
    }
    if cfg.rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
        return Err(StorageError::Input(
            "the probe's rate: expected a positive number of IOPS".into(),
        ));
    }
    if !(1..=256).contains(&cfg.outstanding) {
        return Err(StorageError::Input(format!(
            "{} bulk-writer files in flight: expected 1..=256",
            cfg.outstanding
        )));
    }
    let bulk_writer = specs.iter().any(|s| matches!(s.interference, Some(Interference::Bulk(_))));
    let bulk = if bulk_writer { cfg.bulk_bytes } else { 0 };
    let need = cfg.file_size + bulk + (64 << 20);
    if need > st.free_bytes {
        return Err(input(format!(
            "needs {} MiB (probe file {} MiB + bulk {} MiB + 64 MiB margin) but only {} MiB are free; write less or pick another directory",
            need >> 20,
            cfg.file_size >> 20,
            bulk >> 20,
            st.free_bytes >> 20
        )));
    }
    for s in specs {
        s.mitigation.precheck(env, root)?;
        if let Some(Interference::Command(c)) = &s.interference {
            s.mitigation.command_ok()?;
            if c.trim().is_empty() || c.len() > crate::command::MAX_COMMAND || c.contains('\0') {
                return Err(StorageError::Input(format!(
                    "the interference command: empty, longer than {} bytes or with a NUL byte",
                    crate::command::MAX_COMMAND
                )));
            }
        }
        if s.interference.is_none() && s.mitigation.needs_bulk_writer() {
            return Err(StorageError::Input(format!(
                "mitigation {}: applies to the bulk writer; add an interference",
                s.mitigation.name().unwrap_or_default()
            )));
        }
    }
    Ok(())
}

fn interruptible_sleep(d: Duration, stop: &AtomicBool) {
    crate::pace::sleep_until(Instant::now() + d, Duration::from_millis(50), stop);
}

/// Run one scenario. `stop` (Ctrl-C) ends it early; the result then covers what ran.
pub fn run_scenario(
    cfg: &FsyncConfig,
    spec: &ScenarioSpec,
    env: &StorageEnv,
    root: &SysRoot,
    stop: &AtomicBool,
) -> Result<Scenario, StorageError> {
    let scratch = Scratch::create(&cfg.dir)
        .map_err(|e| StorageError::io("create scratch dir in", &cfg.dir, e))?;
    let mut bulk_cfg = BulkConfig {
        dir: scratch.path.join("bulk"),
        mode: spec.interference.as_ref().and_then(Interference::mode).unwrap_or(BulkMode::NoSync),
        bytes: cfg.bulk_bytes,
        outstanding: cfg.outstanding,
        ioprio_idle: false,
        rate_bps: None,
        on_thread_start: None,
    };
    let applied = spec.mitigation.apply(env, root, &mut bulk_cfg)?;
    let probe_path = scratch.path.join("probe.dat");
    let probe = Probe::new(ProbeConfig {
        file: probe_path.clone(),
        bs: cfg.bs,
        sync: cfg.sync,
        stop: cfg.stop,
        file_size: cfg.file_size,
        rate: cfg.rate,
        window: cfg.window,
        max_duration: cfg.max_duration,
    })
    .map_err(|e| StorageError::io("create probe file", &probe_path, e))?;
    // Settle the preallocation so the first windows measure the probe, not the layout.
    if let Ok(d) = std::fs::File::open(&scratch.path) {
        let _ = sys::syncfs(&d);
    }
    let keep_going = AtomicBool::new(spec.interference.is_some());
    let halt = AtomicBool::new(false);
    let t0 = Instant::now();
    let (probe_out, bulk_out) = std::thread::scope(|s| {
        let bulk = spec.interference.as_ref().map(|i| {
            let (bulk_cfg, keep_going, halt) = (&bulk_cfg, &keep_going, &halt);
            let scratch = &scratch.path;
            s.spawn(move || {
                interruptible_sleep(cfg.bulk_delay, halt);
                let start = t0.elapsed();
                let r = match i {
                    _ if halt.load(Ordering::Relaxed) => Ok(CommandRun::default()),
                    Interference::Bulk(_) => run_bulk(bulk_cfg, halt)
                        .map(|stats| CommandRun { stats, ..Default::default() }),
                    Interference::Command(c) => {
                        let cc = CommandConfig {
                            command: c.clone(),
                            cwd: cfg.dir.clone(),
                            scratch: bulk_cfg.dir.clone(),
                            log: scratch.join("command.log"),
                            ioprio_idle: bulk_cfg.ioprio_idle,
                        };
                        run_command(&cc, root.root(), halt, cfg.max_duration)
                    }
                };
                // Keep probing two windows past the end: writeback outlives the writer.
                interruptible_sleep(cfg.window * 2, halt);
                keep_going.store(false, Ordering::Relaxed);
                (start, r)
            })
        });
        let p = probe.run(stop, &keep_going);
        halt.store(true, Ordering::Relaxed);
        let b = bulk.map(|h| {
            h.join().unwrap_or_else(|_| {
                (Duration::ZERO, Err(std::io::Error::other("bulk writer panicked")))
            })
        });
        (p, b)
    });
    let mut notes = applied.undo();
    let command = match &spec.interference {
        Some(Interference::Command(c)) => Some(c.as_str()),
        _ => None,
    };
    let out = probe_out.map_err(|e| StorageError::io("probe write/sync on", &probe_path, e))?;
    let bulk = match bulk_out {
        None => None,
        Some((start, r)) => {
            let what = if command.is_some() { "interference command in" } else { "bulk writer in" };
            let run = r.map_err(|e| StorageError::io(what, &bulk_cfg.dir, e))?;
            let st = run.stats;
            if st.interrupted {
                notes.push(format!(
                    "{} stopped before finishing (probe ended or interrupted)",
                    if command.is_some() {
                        "the command (its process group)"
                    } else {
                        "bulk writer"
                    }
                ));
            }
            if command.is_some() && !st.interrupted && run.exit_code != Some(0) {
                notes.push(format!(
                    "the command failed ({}){}",
                    run.exit_code.map_or_else(
                        || format!("signal {}", run.signal.unwrap_or(0)),
                        |c| format!("exit {c}")
                    ),
                    run.log_tail.map_or(String::new(), |t| format!(": {t}"))
                ));
            }
            Some(BulkRun {
                mode: spec.interference.as_ref().map_or("", |i| i.name()).into(),
                command: command.map(str::to_string),
                exit_code: run.exit_code,
                bytes: st.bytes,
                files: st.files,
                start_ns: start.as_nanos() as u64,
                duration_ns: st.duration.as_nanos() as u64,
                sync_ns: st.sync.map(|d| d.as_nanos() as u64),
                unfinished: st.interrupted,
            })
        }
    };
    drop(scratch);
    let lat_ns = LatNs::from_histogram(&out.hist);
    let (wp99, wmax) = worst_windows(&out.windows);
    let secs = out.elapsed.as_secs_f64();
    Ok(Scenario {
        name: spec.name(),
        interference: spec.interference.as_ref().map(|i| i.name().to_string()),
        mitigation: spec.mitigation.name(),
        ops: out.ops,
        iops: if secs > 0.0 { out.ops as f64 / secs } else { 0.0 },
        duration_ns: out.elapsed.as_nanos() as u64,
        lat_ns,
        worst_window_p99_ns: wp99,
        worst_window_max_ns: wmax,
        windows: out.windows,
        etcd_buckets: etcd_buckets(&out.hist),
        // A verdict needs evidence: no completed write + sync is never a pass (p99 0 ns).
        verdicts: verdicts(lat_ns.p99)
            .into_iter()
            .map(|v| results::fsync::Verdict { pass: v.pass && out.ops > 0, ..v })
            .collect(),
        bulk,
        notes,
        histogram: out.hist.to_data(),
    })
}

/// Run scenarios in order, calling `each` after every one (its error ends the run); stops
/// early on `stop`.
pub fn run_all(
    cfg: &FsyncConfig,
    specs: &[ScenarioSpec],
    env: &StorageEnv,
    root: &SysRoot,
    stop: &AtomicBool,
    each: &mut dyn FnMut(&Scenario) -> Result<(), StorageError>,
) -> Result<Vec<Scenario>, StorageError> {
    validate(cfg, specs, env, root)?;
    let mut out = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if i > 0 {
            if let Ok(d) = std::fs::File::open(&cfg.dir) {
                let _ = sys::syncfs(&d);
            }
            interruptible_sleep(cfg.settle, stop);
        }
        let s = run_scenario(cfg, spec, env, root, stop)?;
        each(&s)?;
        out.push(s);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn cfg(dir: &std::path::Path) -> FsyncConfig {
        FsyncConfig {
            dir: dir.to_path_buf(),
            bs: 2300,
            sync: SyncMode::Fdatasync,
            stop: Stop::Duration(Duration::from_millis(300)),
            file_size: 8 << 20,
            rate: None,
            window: Duration::from_millis(100),
            bulk_bytes: 8 << 20,
            bulk_delay: Duration::from_millis(50),
            outstanding: 2,
            max_duration: Duration::from_secs(60),
            settle: Duration::ZERO,
        }
    }

    #[test]
    fn matrix_is_baseline_then_cross_product() {
        let m = matrix(
            &[BulkMode::FsyncPerFile.into(), BulkMode::SyncfsAtEnd.into()],
            &[MitigationSet::default(), MitigationSet::parse("ionice-idle").unwrap()],
        );
        let names: Vec<String> = m.iter().map(ScenarioSpec::name).collect();
        assert_eq!(
            names,
            [
                "baseline",
                "fsync-per-file",
                "fsync-per-file + ionice-idle",
                "syncfs-at-end",
                "syncfs-at-end + ionice-idle"
            ]
        );
        assert_eq!(matrix(&[BulkMode::NoSync.into()], &[]).len(), 2);
    }

    #[test]
    fn validation_refuses_bad_dirs_and_space_before_writing() {
        let d = tempfile::tempdir().unwrap();
        let env = StorageEnv::default();
        let root = SysRoot::live();
        let mut c = cfg(&d.path().join("missing"));
        let e = validate(&c, &[ScenarioSpec::default()], &env, &root).unwrap_err();
        assert!(e.is_input() && e.to_string().contains("missing"), "{e}");
        c.dir = d.path().to_path_buf();
        c.file_size = u64::MAX / 4;
        let e = validate(&c, &[ScenarioSpec::default()], &env, &root).unwrap_err();
        assert!(e.to_string().contains("MiB are free"), "{e}");
        c.file_size = 1 << 20;
        let spec = ScenarioSpec {
            interference: None,
            mitigation: MitigationSet::parse("ionice-idle").unwrap(),
        };
        let e = validate(&c, &[spec], &env, &root).unwrap_err();
        assert!(e.to_string().contains("add an interference"), "{e}");
        c.rate = Some(0.0);
        let e = validate(&c, &[ScenarioSpec::default()], &env, &root).unwrap_err();
        assert!(e.to_string().contains("IOPS"), "{e}");
        (c.rate, c.outstanding) = (None, 0);
        let e = validate(&c, &[ScenarioSpec::default()], &env, &root).unwrap_err();
        assert!(e.to_string().contains("1..=256"), "{e}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "nothing written");
    }

    #[test]
    fn scenario_with_interference_reports_bulk_and_cleans_up() {
        let d = tempfile::tempdir().unwrap();
        let c = cfg(d.path());
        let root = SysRoot::live();
        let env = crate::env::read_env(root.root(), &host::Host::default(), d.path());
        let spec = ScenarioSpec {
            interference: Some(BulkMode::SyncfsAtEnd.into()),
            mitigation: MitigationSet::parse("ionice-idle").unwrap(),
        };
        let s = run_all(
            &c,
            &[ScenarioSpec::default(), spec],
            &env,
            &root,
            &AtomicBool::new(false),
            &mut |_| Ok(()),
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].bulk.is_none() && s[0].ops > 0);
        let b = s[1].bulk.as_ref().unwrap();
        assert_eq!(b.bytes, 8 << 20);
        assert!(b.sync_ns.is_some() && b.start_ns >= 50_000_000);
        assert!(s[1].duration_ns >= b.start_ns + b.duration_ns, "probe outlasts the bulk writer");
        assert_eq!(s[1].name, "syncfs-at-end + ionice-idle");
        assert_eq!(s[1].etcd_buckets.iter().map(|b| b.count).sum::<u64>(), s[1].ops);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "scratch removed");
    }

    #[test]
    fn probe_error_still_removes_scratch() {
        // A 1-byte preallocation limit is fine; force an error with a directory as --dir that
        // vanishes mid-run is racy, so use an impossible bs instead via run_scenario directly.
        let d = tempfile::tempdir().unwrap();
        let mut c = cfg(d.path());
        c.file_size = 1 << 62; // fallocate fails (EFBIG/ENOSPC) after the scratch dir exists
        let r = run_scenario(
            &c,
            &ScenarioSpec::default(),
            &StorageEnv::default(),
            &SysRoot::live(),
            &AtomicBool::new(false),
        );
        assert!(r.is_err());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "scratch removed on error");
    }
}
