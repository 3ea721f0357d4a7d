//! `lowlat measure fsync` in one call: the request as asked, the environment of the directory
//! (from the host model and `/proc`/`/sys` through [`host::Root`]), the scenarios to run, the
//! live view, and the result (lowlat's, and fio's JSON shape).

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use results::fsync::{FsyncResult, Scenario, StorageEnv};
use util::exit::ExitCode;

use crate::bulk::{BulkMode, Interference};
use crate::env::SysRoot;
use crate::error::StorageError;
use crate::mitigation::MitigationSet;
use crate::probe::Stop;
use crate::scenario::{matrix, run_all, FsyncConfig, ScenarioSpec};
use crate::sys::SyncMode;
use crate::text;

/// Which scenarios to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Scenarios {
    /// One: the baseline, a mitigation of the probe's own device (a scheduler), or one
    /// interference with an optional mitigation set.
    Single { interference: Option<Interference>, mitigation: Option<MitigationSet> },
    /// The baseline plus every interference × mitigation. Empty lists take the defaults:
    /// `fsync-per-file, syncfs-at-end` × [`MATRIX_MITIGATIONS`] (less what this host cannot do);
    /// without interferences given, the seed's winning mitigation closes the matrix: the update
    /// skipping fsync (`no-sync`, ≈ `ostree pull --disable-fsync`).
    Matrix { interferences: Vec<Interference>, mitigations: Vec<MitigationSet> },
}

/// Why a choice of interferences and mitigations makes no scenario.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChoiceError {
    /// More than one interference or mitigation set, but no matrix.
    #[error("several interferences or mitigation sets need a matrix")]
    SeveralWithoutMatrix,
    /// A mitigation that acts on the bulk writer, but no bulk writer.
    #[error("mitigation {0} applies to the bulk writer; it needs an interference")]
    NeedsInterference(String),
}

impl Scenarios {
    /// The scenarios for these interferences and mitigation sets: a matrix of them, or one
    /// scenario from at most one of each.
    pub fn choose(
        interferences: Vec<Interference>,
        mitigations: Vec<MitigationSet>,
        matrix: bool,
    ) -> Result<Self, ChoiceError> {
        if matrix {
            return Ok(Self::Matrix { interferences, mitigations });
        }
        if interferences.len() > 1 || mitigations.len() > 1 {
            return Err(ChoiceError::SeveralWithoutMatrix);
        }
        let interference = interferences.into_iter().next();
        let mitigation = mitigations.into_iter().next();
        match &mitigation {
            Some(m) if interference.is_none() && m.needs_bulk_writer() => {
                Err(ChoiceError::NeedsInterference(mitigation_name(m)))
            }
            _ => Ok(Self::Single { interference, mitigation }),
        }
    }
}

/// The seed's comparison: the mitigations a matrix compares when none are given.
pub const MATRIX_MITIGATIONS: [&str; 5] =
    ["none", "ionice-idle", "scheduler=bfq+ionice-idle", "throttle=50", "rate=50"];

/// `measure fsync` as asked.
#[derive(Debug, Clone)]
pub struct FsyncRequest {
    /// Directory on the filesystem to test; scratch files go in a subdirectory.
    pub dir: PathBuf,
    /// Bytes per write.
    pub bs: u64,
    /// Write this many bytes then stop (fio's size); wins over `duration`.
    pub size: Option<u64>,
    /// Run this long (10 s when neither this nor `size` is given).
    pub duration: Option<Duration>,
    pub sync: SyncMode,
    /// IOPS budget for the probe.
    pub rate: Option<f64>,
    /// Window of the per-window series.
    pub window: Duration,
    /// Probe file preallocation (default: `size`, or 256 MiB in duration mode).
    pub file_size: Option<u64>,
    pub scenarios: Scenarios,
    /// Bytes the bulk writer writes.
    pub bulk_size: u64,
    /// When the bulk writer starts after the probe.
    pub bulk_delay: Duration,
    /// Bulk writer files in flight unless a mitigation sets it.
    pub outstanding: usize,
    /// The tool that ran it, for the result (`lowlat 0.1.0`).
    pub tool: String,
}

fn mitigation_name(m: &MitigationSet) -> String {
    m.name().unwrap_or_else(|| "none".into())
}

impl FsyncRequest {
    /// The probe's configuration: when it stops, how much it preallocates, how long a scenario
    /// may take at most however long the bulk writer runs.
    pub fn config(&self) -> FsyncConfig {
        let stop = match (self.size, self.duration) {
            (Some(b), _) => Stop::Bytes(b),
            (None, d) => Stop::Duration(d.unwrap_or(Duration::from_secs(10))),
        };
        let base = match stop {
            Stop::Duration(d) => d,
            Stop::Bytes(_) => Duration::from_secs(60),
        };
        FsyncConfig {
            dir: self.dir.clone(),
            bs: self.bs as usize,
            sync: self.sync,
            stop,
            file_size: self.file_size.or(self.size).unwrap_or(256 << 20),
            rate: self.rate,
            window: self.window,
            bulk_bytes: self.bulk_size,
            bulk_delay: self.bulk_delay,
            outstanding: self.outstanding,
            max_duration: base * 10 + Duration::from_secs(300),
            settle: Duration::from_secs(2),
        }
    }

    /// The result's `params`: the request as given (durations in ns).
    fn params(&self, file_size: u64) -> results::FsyncParams {
        let (interference, mitigation, matrix): (Vec<&str>, Vec<String>, bool) =
            match &self.scenarios {
                Scenarios::Single { interference, mitigation } => (
                    interference.iter().map(|i| i.name()).collect(),
                    mitigation.iter().map(mitigation_name).collect(),
                    false,
                ),
                Scenarios::Matrix { interferences, mitigations } => (
                    interferences.iter().map(|i| i.name()).collect(),
                    mitigations.iter().map(mitigation_name).collect(),
                    true,
                ),
            };
        let ns = |d: Duration| d.as_nanos() as u64;
        results::FsyncParams {
            dir: Some(self.dir.display().to_string()),
            bs: Some(self.bs),
            sync: Some(self.sync.name().to_string()),
            size: self.size,
            duration_ns: self.duration.map(ns),
            rate: self.rate,
            window_ns: Some(ns(self.window)),
            file_size: Some(file_size),
            interference: Some(interference.into_iter().map(str::to_string).collect()),
            mitigation: Some(mitigation),
            matrix: Some(matrix),
            bulk_size: Some(self.bulk_size),
            bulk_delay_ns: Some(ns(self.bulk_delay)),
            outstanding: Some(self.outstanding as u64),
            interference_cmd: self.command().map(str::to_string),
            ..results::FsyncParams::default()
        }
    }
}

impl FsyncRequest {
    /// The update command, when one is the interferer.
    pub fn command(&self) -> Option<&str> {
        let list: Vec<&Interference> = match &self.scenarios {
            Scenarios::Single { interference, .. } => interference.iter().collect(),
            Scenarios::Matrix { interferences, .. } => interferences.iter().collect(),
        };
        list.into_iter().find_map(|i| match i {
            Interference::Command(c) => Some(c.as_str()),
            Interference::Bulk(_) => None,
        })
    }
}

/// The scenario specs to run, and a note for each default this host cannot do.
pub fn specs(
    scenarios: &Scenarios,
    env: &StorageEnv,
    sys: &SysRoot,
) -> (Vec<ScenarioSpec>, Vec<String>) {
    let mut skipped = Vec::new();
    let specs = match scenarios {
        Scenarios::Single { interference, mitigation } => vec![ScenarioSpec {
            interference: interference.clone(),
            mitigation: mitigation.clone().unwrap_or_default(),
        }],
        Scenarios::Matrix { interferences, mitigations } => {
            let modes = if interferences.is_empty() {
                vec![BulkMode::FsyncPerFile.into(), BulkMode::SyncfsAtEnd.into()]
            } else {
                interferences.clone()
            };
            let command = modes.iter().any(|i| matches!(i, Interference::Command(_)));
            let mits = if mitigations.is_empty() {
                MATRIX_MITIGATIONS
                    .iter()
                    .filter_map(|s| MitigationSet::parse(s).ok())
                    .filter(|m| {
                        match m.precheck(env, sys).and_then(|()| {
                            if command {
                                m.command_ok()
                            } else {
                                Ok(())
                            }
                        }) {
                            Ok(()) => true,
                            Err(e) => {
                                skipped.push(format!("skipped {}: {e}", mitigation_name(m)));
                                false
                            }
                        }
                    })
                    .collect()
            } else {
                mitigations.clone()
            };
            let mut v = matrix(&modes, &mits);
            if interferences.is_empty() {
                v.push(ScenarioSpec {
                    interference: Some(BulkMode::NoSync.into()),
                    mitigation: MitigationSet::default(),
                });
            }
            v
        }
    };
    (specs, skipped)
}

/// A finished (or interrupted) `measure fsync`.
#[derive(Debug, Clone)]
pub struct FsyncRun {
    /// The result document (`kind: fsync`); its top level mirrors the first scenario.
    pub result: FsyncResult,
    /// Stopped early by Ctrl-C.
    pub interrupted: bool,
    bs: u64,
}

impl FsyncRun {
    /// 130 when interrupted, 1 when the (first) scenario fails etcd's 10 ms or the result
    /// holds no evidence (no write + sync completed, a run cut short: `results::evidence`),
    /// 0 otherwise.
    pub fn exit_code(&self) -> ExitCode {
        if self.interrupted {
            ExitCode::Interrupted
        } else if results::Evidence::no_evidence(&self.result).is_some() {
            ExitCode::CheckFailed
        } else if self.result.scenarios.first().is_none_or(Scenario::pass) {
            ExitCode::Ok
        } else {
            ExitCode::CheckFailed
        }
    }

    /// fio's JSON shape, one job per scenario
    /// (`jq '.jobs[0].sync.lat_ns.percentile["99.000000"]'` works unchanged).
    pub fn fio_json(&self) -> serde_json::Value {
        let jobs: Vec<serde_json::Value> = self
            .result
            .scenarios
            .iter()
            .filter_map(|s| {
                let h = results::Histogram::from_data(&s.histogram);
                let fio = results::fsync::to_fio_json(&s.name, self.bs, s.duration_ns, &h);
                fio["jobs"].get(0).cloned()
            })
            .collect();
        serde_json::json!({"fio version": "lowlat-compatible", "jobs": jobs})
    }
}

/// Run `measure fsync` on the host `sys`: read the environment, run every scenario (each
/// printed to `out` as it finishes, then the comparison table of a matrix) and build the
/// result. `stop` (Ctrl-C) ends the run early; the result then covers what ran and says so.
/// Bad input fails before anything is written.
pub fn run(
    req: &FsyncRequest,
    sys: &SysRoot,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<FsyncRun, StorageError> {
    let host = host::read(sys.root());
    let env = crate::env::read_env(sys.root(), &host, &req.dir);
    let (specs, skipped) = specs(&req.scenarios, &env, sys);
    let cfg = req.config();
    let started = SystemTime::now();
    let view = |r: std::io::Result<()>| r.map_err(StorageError::View);
    view(writeln!(out, "lowlat measure fsync: {}", text::env_line(&env)))?;
    for s in &skipped {
        view(writeln!(out, "note: {s}"))?;
    }
    let (sync, window_ns) = (req.sync.name(), req.window.as_nanos() as u64);
    let scenarios = run_all(&cfg, &specs, &env, sys, stop, &mut |s| {
        view(write!(out, "{}", text::scenario_text(s, cfg.bs, sync, window_ns)))
    })?;
    let interrupted = stop.load(Ordering::SeqCst);
    if scenarios.len() > 1 {
        view(writeln!(out, "\n{}", text::matrix_table(&scenarios)))?;
    }
    let mut envelope = results::Envelope::new(results::Kind::Fsync, &req.tool);
    envelope.partial = interrupted || scenarios.len() < specs.len();
    envelope.started_at = Some(util::time::rfc3339_millis(started));
    envelope.duration_ns = started.elapsed().unwrap_or_default().as_nanos() as u64;
    envelope.host = results::HostContext::from_host(&host);
    envelope.params = results::Params::Fsync(req.params(cfg.file_size));
    let result = FsyncResult::new(envelope, env, scenarios);
    Ok(FsyncRun { result, interrupted, bs: req.bs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: &std::path::Path, scenarios: Scenarios) -> FsyncRequest {
        FsyncRequest {
            dir: dir.into(),
            bs: 2300,
            size: Some(2300 * 20),
            duration: None,
            sync: SyncMode::Fdatasync,
            rate: None,
            window: Duration::from_millis(100),
            file_size: Some(1 << 20),
            scenarios,
            bulk_size: 1 << 20,
            bulk_delay: Duration::ZERO,
            outstanding: 4,
            tool: "lowlat test".into(),
        }
    }

    const BASELINE: Scenarios = Scenarios::Single { interference: None, mitigation: None };

    #[test]
    fn choices() {
        let idle: MitigationSet = "ionice-idle".parse().unwrap();
        let bfq: MitigationSet = "scheduler=bfq".parse().unwrap();
        let one =
            |i: &[Interference], m: &[MitigationSet]| Scenarios::choose(i.into(), m.into(), false);
        assert_eq!(one(&[], &[]), Ok(BASELINE));
        assert_eq!(
            one(&[], std::slice::from_ref(&idle)),
            Err(ChoiceError::NeedsInterference("ionice-idle".into()))
        );
        assert_eq!(
            one(&[], std::slice::from_ref(&bfq)),
            Ok(Scenarios::Single { interference: None, mitigation: Some(bfq.clone()) })
        );
        assert_eq!(
            one(&[BulkMode::NoSync.into(), BulkMode::Trickle.into()], &[]),
            Err(ChoiceError::SeveralWithoutMatrix)
        );
        assert_eq!(one(&[], &[idle.clone(), bfq]), Err(ChoiceError::SeveralWithoutMatrix));
        assert_eq!(
            Scenarios::choose(vec![], vec![idle.clone()], true),
            Ok(Scenarios::Matrix { interferences: vec![], mitigations: vec![idle] })
        );
    }

    #[test]
    fn config_derives_stop_preallocation_and_bound() {
        let mut r = request(std::path::Path::new("/x"), BASELINE);
        let c = r.config();
        assert_eq!((c.stop, c.file_size), (Stop::Bytes(46_000), 1 << 20));
        assert_eq!(c.max_duration, Duration::from_secs(900));
        (r.size, r.file_size, r.duration) = (None, None, None);
        let c = r.config();
        assert_eq!((c.stop, c.file_size), (Stop::Duration(Duration::from_secs(10)), 256 << 20));
        assert_eq!(c.max_duration, Duration::from_secs(400));
    }

    #[test]
    fn params_record_the_request() {
        let m = Scenarios::Matrix {
            interferences: vec![BulkMode::NoSync.into()],
            mitigations: vec![MitigationSet::default(), "rate=5".parse().unwrap()],
        };
        let p = request(std::path::Path::new("/x"), m).params(7);
        assert_eq!(p.interference, Some(vec!["no-sync".to_string()]));
        assert_eq!(p.mitigation, Some(vec!["none".to_string(), "rate=5".to_string()]));
        assert_eq!((p.matrix, p.file_size), (Some(true), Some(7)));
        assert_eq!((p.sync.as_deref(), p.window_ns), (Some("fdatasync"), Some(100_000_000)));
        let p = request(std::path::Path::new("/x"), BASELINE).params(7);
        assert_eq!(p.mitigation, Some(vec![]));
        assert_eq!(p.duration_ns, None);
    }

    #[test]
    fn matrix_defaults_drop_what_the_host_cannot_do() {
        let d = tempfile::tempdir().unwrap();
        let sys = SysRoot::dir(d.path()).unwrap();
        let m = Scenarios::Matrix { interferences: vec![], mitigations: vec![] };
        let (specs, skipped) = specs(&m, &StorageEnv::default(), &sys);
        // No block device and no blkio here: the scheduler and throttle sets are skipped.
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped[0].starts_with("skipped scheduler=bfq+ionice-idle: "), "{skipped:?}");
        assert_eq!(specs.len(), 1 + 2 * 3 + 1);
        assert_eq!(specs[0], ScenarioSpec::default());
        let last = specs.last().unwrap();
        assert_eq!(last.name(), "no-sync", "the seed's winner (--disable-fsync) closes the matrix");
    }

    #[test]
    fn a_short_run_prints_and_returns_the_result() {
        let d = tempfile::tempdir().unwrap();
        let mut out = Vec::new();
        let req = request(d.path(), BASELINE);
        let run = run(&req, &SysRoot::live(), &AtomicBool::new(false), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("lowlat measure fsync: "), "{text}");
        assert!(text.contains("== baseline ==\nprobe: pwrite 2300 B + fdatasync"), "{text}");
        assert_eq!((run.result.ops, run.result.envelope.partial), (20, false));
        assert_eq!(run.result.envelope.tool, "lowlat test");
        assert!(matches!(run.exit_code(), ExitCode::Ok | ExitCode::CheckFailed));
        let fio = run.fio_json();
        assert_eq!(fio["jobs"][0]["sync"]["lat_ns"]["N"], 20);
        assert_eq!(fio["jobs"][0]["jobname"], "baseline");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "scratch removed");
        // Issue 21: no completed write + sync is never a pass, whatever the verdicts say.
        let mut empty = run.clone();
        empty.result.ops = 0;
        empty.result.scenarios.iter_mut().for_each(|s| s.ops = 0);
        empty.result.verdicts.iter_mut().for_each(|v| v.pass = true);
        assert_eq!(empty.exit_code(), ExitCode::CheckFailed);
    }

    #[test]
    fn a_closed_view_stops_the_run() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let d = tempfile::tempdir().unwrap();
        let r = run(
            &request(d.path(), BASELINE),
            &SysRoot::live(),
            &AtomicBool::new(false),
            &mut Closed,
        );
        assert!(matches!(r, Err(StorageError::View(_))), "{r:?}");
    }
}
