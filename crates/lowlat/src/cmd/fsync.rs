//! `lowlat measure fsync` and `lowlat measure etcd`: flags mapped onto the storage crate's
//! typed configs, text output, `--json` (lowlat result) and `--fio-json` (fio's shape).

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use storage::bulk::BulkMode;
use storage::env::SysRoot;
use storage::mitigation::MitigationSet;
use storage::probe::Stop;
use storage::restore::{install_signal_handlers, INTERRUPTED};
use storage::scenario::{matrix, run_all, FsyncConfig, ScenarioSpec};
use storage::sys::SyncMode;
use storage::units::{parse_duration, parse_size, rfc3339};

use crate::exit::{usage, ExitCode};

/// Arguments of `lowlat measure fsync`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  lowlat measure fsync --dir /var/lib/etcd --duration 20s\n  \
lowlat measure fsync --dir /var/lib/etcd --size 22m --bs 2300 --fio-json fio.json   # the etcd fio recipe\n  \
lowlat measure fsync --interference syncfs-at-end --mitigation scheduler=bfq+ionice-idle\n  \
lowlat measure fsync --matrix --duration 15s --json matrix.json")]
pub struct Args {
    /// Directory on the filesystem to test (e.g. /var/lib/etcd); scratch files go in a
    /// subdirectory that is removed afterwards.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Bytes per write (etcd's average WAL write is ~2300 B; OpenShift's etcd-perf uses 8000).
    #[arg(long, default_value = "2300", value_parser = size_arg)]
    pub bs: u64,
    /// Write this many bytes then stop (fio --size); conflicts with --duration.
    #[arg(long, value_parser = size_arg, conflicts_with = "duration")]
    pub size: Option<u64>,
    /// Run this long (default 10s when --size is not given). With interference the probe runs
    /// at least until the bulk writer finishes.
    #[arg(long, value_parser = duration_arg)]
    pub duration: Option<Duration>,
    /// fdatasync (etcd, fio --fdatasync=1), fsync, or dsync (O_DSYNC writes).
    #[arg(long, default_value = "fdatasync", value_parser = sync_arg)]
    pub sync: SyncMode,
    /// IOPS budget for the probe (so it cannot drain cloud burst credits itself).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Window of the per-window series.
    #[arg(long, default_value = "1s", value_parser = duration_arg)]
    pub window: Duration,
    /// Probe file preallocation (default: --size, or 256m in duration mode; wraps around).
    #[arg(long, value_parser = size_arg)]
    pub file_size: Option<u64>,
    /// Bulk writer imitating an OS update: fsync-per-file, syncfs-at-end, no-sync, trickle
    /// (comma-separated or repeated with --matrix).
    #[arg(long, value_delimiter = ',')]
    pub interference: Vec<String>,
    /// ionice-idle, scheduler=none|mq-deadline|bfq|kyber, throttle=MB/s, rate=MB/s,
    /// outstanding=N, `none`; combine with + (comma-separated or repeated with --matrix).
    #[arg(long, value_delimiter = ',')]
    pub mitigation: Vec<String>,
    /// Baseline plus every interference × mitigation, and the comparison table.
    #[arg(long)]
    pub matrix: bool,
    /// Bytes the bulk writer writes.
    #[arg(long, default_value = "1g", value_parser = size_arg)]
    pub bulk_size: u64,
    /// When the bulk writer starts after the probe.
    #[arg(long, default_value = "2s", value_parser = duration_arg)]
    pub bulk_delay: Duration,
    /// Bulk writer files in flight (worker threads) unless a mitigation sets it.
    #[arg(long, default_value = "4")]
    pub outstanding: usize,
    /// Write the lowlat result (JSON) here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write fio's JSON shape here (`jobs[0].sync.lat_ns.percentile["99.000000"]`).
    #[arg(long)]
    pub fio_json: Option<PathBuf>,
}

fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).ok_or_else(|| format!("{s:?}: expected a size like 2300, 4k, 22m, 1g"))
}

fn duration_arg(s: &str) -> Result<Duration, String> {
    parse_duration(s)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?}: expected a duration like 500ms, 10s, 10m, 12h"))
}

fn sync_arg(s: &str) -> Result<SyncMode, String> {
    SyncMode::parse(s).ok_or_else(|| format!("{s:?}: expected fdatasync, fsync or dsync"))
}

/// Host facts for the envelope, from the host model (`host::read` on the live host).
pub(crate) fn host_context() -> results::HostContext {
    super::common::host_context(&host::read(&host::Root::live()))
}

fn specs(
    a: &Args,
    env: &results::fsync::StorageEnv,
) -> anyhow::Result<(Vec<ScenarioSpec>, Vec<String>)> {
    let modes = a
        .interference
        .iter()
        .map(|s| {
            BulkMode::parse(s).ok_or_else(|| {
                usage(format!(
                    "--interference {s}: expected fsync-per-file, syncfs-at-end, no-sync or trickle"
                ))
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mits = a
        .mitigation
        .iter()
        .map(|s| MitigationSet::parse(s).map_err(|e| usage(format!("--mitigation: {e}"))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut skipped = Vec::new();
    if a.matrix {
        let modes = if modes.is_empty() {
            vec![BulkMode::FsyncPerFile, BulkMode::SyncfsAtEnd]
        } else {
            modes
        };
        let mits = if mits.is_empty() {
            // The seed's comparison; drop what this host cannot do, and say so.
            let root = SysRoot::default();
            ["none", "ionice-idle", "scheduler=bfq+ionice-idle", "throttle=50", "rate=50"]
                .iter()
                .filter_map(|s| MitigationSet::parse(s).ok())
                .filter(|m| match m.precheck(env, &root) {
                    Ok(()) => true,
                    Err(e) => {
                        skipped.push(format!("skipped {}: {e}", m.name().unwrap_or_default()));
                        false
                    }
                })
                .collect()
        } else {
            mits
        };
        return Ok((matrix(&modes, &mits), skipped));
    }
    if modes.len() > 1 || mits.len() > 1 {
        return Err(usage("several --interference/--mitigation values need --matrix"));
    }
    Ok((
        vec![ScenarioSpec {
            interference: modes.first().copied(),
            mitigation: mits.into_iter().next().unwrap_or_default(),
        }],
        skipped,
    ))
}

fn write_file(path: &PathBuf, v: &impl serde::Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(v).context("serialise result")?;
    std::fs::write(path, text + "\n").with_context(|| format!("write {}", path.display()))
}

/// Run `lowlat measure fsync`.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
        return Err(usage("--rate: expected a positive number of IOPS"));
    }
    if a.outstanding == 0 || a.outstanding > 256 {
        return Err(usage("--outstanding: expected 1..=256"));
    }
    let root = SysRoot::default();
    let env = storage::env::read_env(&root, &a.dir);
    let (specs, skipped) = specs(&a, &env)?;
    let stop = match (a.size, a.duration) {
        (Some(b), _) => Stop::Bytes(b),
        (None, d) => Stop::Duration(d.unwrap_or(Duration::from_secs(10))),
    };
    let base = match stop {
        Stop::Duration(d) => d,
        Stop::Bytes(_) => Duration::from_secs(60),
    };
    let cfg = FsyncConfig {
        dir: a.dir.clone(),
        bs: a.bs as usize,
        sync: a.sync,
        stop,
        file_size: a.file_size.or(a.size).unwrap_or(256 << 20),
        rate: a.rate,
        window: a.window,
        bulk_bytes: a.bulk_size,
        bulk_delay: a.bulk_delay,
        outstanding: a.outstanding,
        max_duration: base * 10 + Duration::from_secs(300),
        settle: Duration::from_secs(2),
    };
    install_signal_handlers();
    let started = SystemTime::now();
    println!("lowlat measure fsync: {}", storage::text::env_line(&env));
    for s in &skipped {
        println!("note: {s}");
    }
    let sync_name = a.sync.name();
    let window_ns = a.window.as_nanos() as u64;
    let scenarios = run_all(&cfg, &specs, &env, &root, &INTERRUPTED, &mut |s| {
        print!("{}", storage::text::scenario_text(s, a.bs as usize, sync_name, window_ns));
    })
    .map_err(|e| if e.is_input() { usage(e.to_string()) } else { anyhow::Error::new(e) })?;
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    if scenarios.len() > 1 {
        println!("\n{}", storage::text::matrix_table(&scenarios));
    }
    let mut envelope = results::Envelope::new("fsync", &format!("lowlat {}", super::VERSION));
    envelope.partial = interrupted || scenarios.len() < specs.len();
    envelope.started_at = Some(rfc3339(started));
    envelope.duration_ns = started.elapsed().unwrap_or_default().as_nanos() as u64;
    envelope.host = host_context();
    envelope.params = serde_json::json!({
        "dir": a.dir, "bs": a.bs, "sync": sync_name,
        "size": a.size, "duration_ns": a.duration.map(|d| d.as_nanos() as u64),
        "rate": a.rate, "window_ns": window_ns, "file_size": cfg.file_size,
        "interference": a.interference, "mitigation": a.mitigation, "matrix": a.matrix,
        "bulk_size": a.bulk_size, "bulk_delay_ns": a.bulk_delay.as_nanos() as u64,
        "outstanding": a.outstanding,
    });
    let pass = scenarios.first().map_or(true, |s| s.pass());
    if let Some(p) = &a.fio_json {
        let mut jobs = Vec::new();
        for s in &scenarios {
            let h = results::Histogram::from_data(&s.histogram);
            let j = results::fsync::to_fio_json(&s.name, a.bs, s.duration_ns, &h);
            if let Some(job) = j["jobs"].get(0) {
                jobs.push(job.clone());
            }
        }
        write_file(p, &serde_json::json!({"fio version": "lowlat-compatible", "jobs": jobs}))?;
    }
    if let Some(p) = &a.json {
        write_file(p, &results::fsync::FsyncResult::new(envelope, env, scenarios))?;
    }
    Ok(if interrupted {
        ExitCode::Interrupted
    } else if pass {
        ExitCode::Ok
    } else {
        ExitCode::CheckFailed
    })
}

/// Arguments of `lowlat measure etcd`.
#[derive(Debug, clap::Args)]
pub struct EtcdArgs {}

/// Run `lowlat measure etcd`.
pub fn run_etcd(_args: EtcdArgs) -> anyhow::Result<ExitCode> {
    super::not_built("measure etcd")
}
