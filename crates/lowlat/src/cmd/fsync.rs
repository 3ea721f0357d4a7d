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
    results::HostContext::from_host(&host::read(&host::Root::live()))
}

/// Fill what the storage crate could not read from the host model's block devices and
/// cgroup facts (the storage crate finds the device behind the directory; `host` reads every
/// device's queue).
fn complete_env(env: &mut results::fsync::StorageEnv, h: &host::Host) {
    if let Some(b) =
        env.device.as_deref().and_then(|d| h.block_devices.iter().find(|b| b.name == d))
    {
        if env.scheduler.is_none() {
            env.scheduler = b.scheduler.clone();
        }
        if env.schedulers_available.is_empty() {
            env.schedulers_available = b.schedulers_available.clone();
        }
        if env.wbt_lat_usec.is_none() {
            env.wbt_lat_usec = b.wbt_lat_usec.as_deref().and_then(|w| w.trim().parse().ok());
        }
        if env.write_cache.is_none() {
            env.write_cache = b.write_cache.clone();
        }
        if env.rotational.is_none() {
            env.rotational = b.rotational;
        }
    }
    if env.cgroup_version.is_none() {
        env.cgroup_version = h.cgroup.version.clone();
    }
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
    let host = host::read(&host::Root::live());
    let mut env = storage::env::read_env(&root, &a.dir);
    complete_env(&mut env, &host);
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
    let mut envelope =
        results::Envelope::new(results::Kind::Fsync, &format!("lowlat {}", super::VERSION));
    envelope.partial = interrupted || scenarios.len() < specs.len();
    envelope.started_at = Some(rfc3339(started));
    envelope.duration_ns = started.elapsed().unwrap_or_default().as_nanos() as u64;
    envelope.host = results::HostContext::from_host(&host);
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
#[command(
    after_help = "Example:\n  lowlat measure etcd --endpoint http://127.0.0.1:2379 --duration 60s --interval 5s"
)]
pub struct EtcdArgs {
    /// etcd's metrics URL (http only: a client URL, or --listen-metrics-urls); `/metrics` is
    /// appended when no path is given.
    #[arg(long)]
    pub endpoint: String,
    /// Window to measure (bucket deltas between the first and the last scrape).
    #[arg(long, default_value = "30s", value_parser = duration_arg)]
    pub duration: Duration,
    /// Scrape this often for the per-interval series.
    #[arg(long, default_value = "5s", value_parser = duration_arg)]
    pub interval: Duration,
    /// Write the lowlat result (JSON) here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

const CAVEAT: &str = "etcd histograms have buckets 1 ms, 2 ms, 4 ms … 8.192 s: quantiles are linear interpolations inside a bucket (a p99 of 3 ms means 'between 2 and 4 ms'); sub-millisecond behaviour is invisible — use `lowlat measure fsync` on the same directory for that";

fn scrape(
    url: &str,
) -> anyhow::Result<(storage::etcd::PromHistogram, Option<storage::etcd::PromHistogram>)> {
    use storage::etcd::{http_get, parse_histogram, BACKEND_COMMIT, WAL_FSYNC};
    let text = http_get(url, Duration::from_secs(10)).map_err(|e| {
        if e.is_input() {
            usage(e.to_string())
        } else {
            anyhow::Error::new(e).context("is etcd running there? (its client URL serves /metrics)")
        }
    })?;
    let wal = parse_histogram(&text, WAL_FSYNC).ok_or_else(|| {
        usage(format!("{url}: no {WAL_FSYNC} in the response: not an etcd metrics endpoint?"))
    })?;
    Ok((wal, parse_histogram(&text, BACKEND_COMMIT)))
}

fn etcd_hist(metric: &str, h: &storage::etcd::PromHistogram) -> results::fsync::EtcdHistogram {
    let q = |x: f64| h.quantile(x).map_or(0, |s| (s * 1e9).round() as u64);
    results::fsync::EtcdHistogram {
        metric: metric.to_string(),
        count: h.count as u64,
        mean_ns: if h.count > 0.0 { (h.sum / h.count * 1e9).round() as u64 } else { 0 },
        p50_ns: q(0.5),
        p90_ns: q(0.9),
        p99_ns: q(0.99),
        p999_ns: q(0.999),
        buckets: h.etcd_buckets(),
    }
}

/// Run `lowlat measure etcd`.
pub fn run_etcd(a: EtcdArgs) -> anyhow::Result<ExitCode> {
    use results::fsync::{
        EtcdResult, EtcdWindow, Verdict, ETCD_COMMIT_P99_LIMIT_NS, ETCD_P99_LIMIT_NS,
    };
    use storage::units::fmt_ns;
    install_signal_handlers();
    let started = SystemTime::now();
    let t0 = std::time::Instant::now();
    let first = scrape(&a.endpoint)?;
    let mut prev = first.clone();
    let mut last = first.clone();
    let mut windows = Vec::new();
    println!("lowlat measure etcd: {} for {:?}, every {:?}", a.endpoint, a.duration, a.interval);
    println!(
        "{:>8}  {:>9}  {:>12}  {:>9}  {:>12}",
        "t", "wal n", "wal p99", "commit n", "commit p99"
    );
    while t0.elapsed() < a.duration && !INTERRUPTED.load(Ordering::SeqCst) {
        let left = a.duration.saturating_sub(t0.elapsed()).min(a.interval);
        let end = std::time::Instant::now() + left;
        while std::time::Instant::now() < end && !INTERRUPTED.load(Ordering::SeqCst) {
            std::thread::sleep(
                Duration::from_millis(100)
                    .min(end.saturating_duration_since(std::time::Instant::now())),
            );
        }
        let now = scrape(&a.endpoint)?;
        let dw = now.0.delta(&prev.0);
        let dc = match (&now.1, &prev.1) {
            (Some(n), Some(p)) => Some(n.delta(p)),
            _ => None,
        };
        let p99 = |h: &storage::etcd::PromHistogram| {
            h.quantile(0.99).map_or(0, |s| (s * 1e9).round() as u64)
        };
        let w = EtcdWindow {
            start_ns: windows.len() as u64 * a.interval.as_nanos() as u64,
            wal_fsync_count: dw.count as u64,
            wal_fsync_p99_ns: p99(&dw),
            backend_commit_count: dc.as_ref().map_or(0, |h| h.count as u64),
            backend_commit_p99_ns: dc.as_ref().map_or(0, p99),
        };
        println!(
            "{:>7.0}s  {:>9}  {:>12}  {:>9}  {:>12}",
            t0.elapsed().as_secs_f64(),
            w.wal_fsync_count,
            fmt_ns(w.wal_fsync_p99_ns),
            w.backend_commit_count,
            fmt_ns(w.backend_commit_p99_ns)
        );
        windows.push(w);
        prev = now.clone();
        last = now;
    }
    let wal = etcd_hist(storage::etcd::WAL_FSYNC, &last.0.delta(&first.0));
    let commit = match (&last.1, &first.1) {
        (Some(l), Some(f)) => Some(etcd_hist(storage::etcd::BACKEND_COMMIT, &l.delta(f))),
        _ => None,
    };
    let mut verdicts = vec![Verdict {
        name: "etcd wal_fsync".into(),
        limit_ns: ETCD_P99_LIMIT_NS,
        value_ns: wal.p99_ns,
        pass: wal.p99_ns < ETCD_P99_LIMIT_NS,
    }];
    if let Some(c) = &commit {
        verdicts.push(Verdict {
            name: "etcd backend_commit".into(),
            limit_ns: ETCD_COMMIT_P99_LIMIT_NS,
            value_ns: c.p99_ns,
            pass: c.p99_ns < ETCD_COMMIT_P99_LIMIT_NS,
        });
    }
    println!();
    for h in std::iter::once(&wal).chain(commit.as_ref()) {
        println!(
            "{}: {} in window, mean {}, p50 {}, p90 {}, p99 {}, p99.9 {}",
            h.metric,
            h.count,
            fmt_ns(h.mean_ns),
            fmt_ns(h.p50_ns),
            fmt_ns(h.p90_ns),
            fmt_ns(h.p99_ns),
            fmt_ns(h.p999_ns)
        );
    }
    for v in &verdicts {
        println!(
            "verdict: {} p99 < {} ms: {}",
            v.name,
            v.limit_ns / 1_000_000,
            if v.pass { "PASS" } else { "FAIL" }
        );
    }
    println!("caveat: {CAVEAT}");
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    let empty = wal.count == 0;
    if empty {
        println!("note: etcd did no WAL fsync in the window (no writes?): nothing to judge");
    }
    let pass = verdicts.iter().all(|v| v.pass);
    if let Some(p) = &a.json {
        let mut envelope =
            results::Envelope::new(results::Kind::Etcd, &format!("lowlat {}", super::VERSION));
        envelope.partial = interrupted;
        envelope.started_at = Some(rfc3339(started));
        envelope.duration_ns = t0.elapsed().as_nanos() as u64;
        envelope.host = host_context();
        envelope.params = serde_json::json!({"endpoint": a.endpoint, "duration_ns": a.duration.as_nanos() as u64, "interval_ns": a.interval.as_nanos() as u64});
        write_file(
            p,
            &EtcdResult {
                envelope,
                endpoint: a.endpoint.clone(),
                wal_fsync: wal,
                backend_commit: commit,
                windows,
                verdicts,
                caveat: CAVEAT.into(),
            },
        )?;
    }
    Ok(if interrupted {
        ExitCode::Interrupted
    } else if pass || empty {
        ExitCode::Ok
    } else {
        ExitCode::CheckFailed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_model_fills_what_the_storage_reader_missed() {
        let mut h = host::Host::default();
        h.block_devices.push(host::model::BlockDevice {
            name: "vdz".into(),
            scheduler: Some("bfq".into()),
            schedulers_available: vec!["none".into(), "bfq".into()],
            wbt_lat_usec: Some("75000".into()),
            write_cache: Some("write back".into()),
            rotational: Some(true),
            ..Default::default()
        });
        h.cgroup.version = Some("v2".into());
        let mut env = results::fsync::StorageEnv {
            device: Some("vdz".into()),
            write_cache: Some("write through".into()),
            ..Default::default()
        };
        complete_env(&mut env, &h);
        assert_eq!(env.scheduler.as_deref(), Some("bfq"));
        assert_eq!(env.wbt_lat_usec, Some(75000));
        assert_eq!(env.write_cache.as_deref(), Some("write through"), "own reading wins");
        assert_eq!(env.cgroup_version.as_deref(), Some("v2"));
        assert_eq!(env.schedulers_available.len(), 2);
    }
}
