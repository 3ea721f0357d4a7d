//! `lowlat watch storage` and `lowlat watch cmd`: sample forever (or `--duration`/`--count`),
//! print a live line, append JSON lines, detect a cliff (a step change that stays), and keep a
//! Prometheus textfile up to date.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use results::fsync::{Cliff, WatchSample};
use storage::changepoint::{detect, CliffConfig};
use storage::restore::{install_signal_handlers, INTERRUPTED};
use storage::units::{fmt_ns, hms, parse_duration, parse_size, rfc3339};
use storage::watch::{
    parse_psi, prometheus_text, scan_dstate, write_atomic, Canary, DStateTracker,
};

use crate::exit::{usage, ExitCode};

/// Options every watcher shares.
#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// Time between samples.
    #[arg(long, default_value = "1s", value_parser = duration_arg)]
    pub interval: Duration,
    /// Stop after this long (default: until Ctrl-C).
    #[arg(long, value_parser = duration_arg)]
    pub duration: Option<Duration>,
    /// Stop after this many samples.
    #[arg(long)]
    pub count: Option<u64>,
    /// Append the JSON-lines series here as it goes.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Keep a Prometheus textfile-collector file up to date (written atomically).
    #[arg(long)]
    pub prometheus: Option<PathBuf>,
    /// Smallest after/before ratio reported as a cliff.
    #[arg(long, default_value = "5")]
    pub cliff_ratio: f64,
    /// Samples needed on each side of a cliff.
    #[arg(long, default_value = "5")]
    pub cliff_samples: usize,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Sync-write canary, fsync burst, D-state threads and PSI io, with cliff detection.
    Storage(StorageArgs),
    /// Run a command in a loop and track its duration.
    Cmd(CmdArgs),
}

/// Arguments of `lowlat watch storage`.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Example:\n  lowlat watch storage --dir /var/lib/docker --interval 5s -o watch.jsonl --prometheus /var/lib/node_exporter/lowlat.prom"
)]
pub struct StorageArgs {
    #[command(flatten)]
    pub common: Common,
    /// Directory on the filesystem to watch (canary files are removed on exit).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Bytes of the O_DSYNC canary write (the seed's `dd bs=1M count=10 oflag=sync` is 10m).
    #[arg(long, default_value = "1m", value_parser = size_arg)]
    pub write_size: u64,
    /// fdatasyncs in the short burst after the canary write.
    #[arg(long, default_value = "10")]
    pub burst: usize,
}

/// Arguments of `lowlat watch cmd`.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Example (the seed's reproducer):\n  lowlat watch cmd --interval 0s -o docker.jsonl -- docker run --rm fedora date"
)]
pub struct CmdArgs {
    #[command(flatten)]
    pub common: Common,
    /// The command and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

fn duration_arg(s: &str) -> Result<Duration, String> {
    parse_duration(s).ok_or_else(|| format!("{s:?}: expected a duration like 500ms, 10s, 10m"))
}

fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s)
        .filter(|v| *v > 0)
        .ok_or_else(|| format!("{s:?}: expected a size like 64k, 1m, 10m"))
}

/// Run `lowlat watch …`.
pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    install_signal_handlers();
    match cmd {
        Command::Storage(a) => watch_storage(a),
        Command::Cmd(a) => watch_cmd(a),
    }
}

/// The shared loop state: series, cliff detector, outputs.
struct Recorder {
    common: Common,
    out: Option<std::fs::File>,
    values: std::collections::VecDeque<f64>,
    times: std::collections::VecDeque<(u64, String)>,
    samples: u64,
    cliff: Option<Cliff>,
    started: Instant,
}

const KEEP: usize = 4096;

impl Recorder {
    fn new(common: Common) -> anyhow::Result<Self> {
        if common.cliff_ratio.is_nan() || common.cliff_ratio <= 1.0 {
            return Err(usage("--cliff-ratio: must be above 1"));
        }
        let out = match &common.output {
            Some(p) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| usage(format!("--output {}: {e}", p.display())))?,
            ),
            None => None,
        };
        Ok(Self {
            common,
            out,
            values: Default::default(),
            times: Default::default(),
            samples: 0,
            cliff: None,
            started: Instant::now(),
        })
    }

    fn done(&self) -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
            || self.common.count.is_some_and(|c| self.samples >= c)
            || self.common.duration.is_some_and(|d| self.started.elapsed() >= d)
    }

    /// Record a sample: cliff detection, JSON line, Prometheus file. Returns the cliff message.
    fn record(&mut self, mut s: WatchSample) -> anyhow::Result<Option<String>> {
        self.samples += 1;
        self.values.push_back(s.value_ns.max(1) as f64);
        self.times.push_back((s.t_ns, s.time.clone()));
        if self.values.len() > KEEP {
            self.values.pop_front();
            self.times.pop_front();
        }
        let cfg = CliffConfig {
            min_ratio: self.common.cliff_ratio,
            min_segment: self.common.cliff_samples.max(2),
            ..Default::default()
        };
        let series: Vec<f64> = self.values.iter().copied().collect();
        let mut msg = None;
        if let Some(c) = detect(&series, &cfg) {
            let (t_ns, time) = self.times.get(c.index).cloned().unwrap_or_default();
            let global = self.samples as usize - (series.len() - c.index);
            // The same step seen again (its index may wobble by a sample or two) is not new.
            let new =
                self.cliff.as_ref().map_or(true, |l| l.index.abs_diff(global) > cfg.min_segment);
            if new {
                let verb = if c.ratio >= 1.0 { "rose" } else { "fell" };
                let factor = if c.ratio >= 1.0 { c.ratio } else { 1.0 / c.ratio };
                let when = time.get(11..19).unwrap_or(&time).to_string();
                msg = Some(format!(
                    "CLIFF: latency {verb} {factor:.0}× at {when} ({} → {}) and stayed",
                    fmt_ns(c.before as u64),
                    fmt_ns(c.after as u64)
                ));
                let cliff = Cliff {
                    index: global,
                    t_ns,
                    time: Some(time),
                    before_ns: c.before as u64,
                    after_ns: c.after as u64,
                    ratio: c.ratio,
                };
                s.cliff = Some(cliff.clone());
                self.cliff = Some(cliff);
            }
        }
        if let Some(f) = &mut self.out {
            let line = serde_json::to_string(&s).context("serialise sample")?;
            writeln!(f, "{line}").context("append to --output")?;
        }
        if let Some(p) = &self.common.prometheus {
            let text = prometheus_text(&s, self.samples, self.cliff.as_ref().map(|c| c.ratio));
            write_atomic(p, &text).with_context(|| format!("write {}", p.display()))?;
        }
        Ok(msg)
    }

    fn exit(&self) -> ExitCode {
        if INTERRUPTED.load(Ordering::SeqCst) {
            ExitCode::Interrupted
        } else if self.cliff.is_some() {
            ExitCode::CheckFailed
        } else {
            ExitCode::Ok
        }
    }

    fn sleep_until(&self, t: Instant) {
        while !self.done() {
            let now = Instant::now();
            if now >= t {
                break;
            }
            std::thread::sleep((t - now).min(Duration::from_millis(50)));
        }
    }
}

fn base_sample(watch: &str, rec: &Recorder) -> WatchSample {
    WatchSample {
        time: rfc3339(SystemTime::now()),
        t_ns: rec.started.elapsed().as_nanos() as u64,
        watch: watch.into(),
        ..Default::default()
    }
}

fn watch_storage(a: StorageArgs) -> anyhow::Result<ExitCode> {
    let md =
        std::fs::metadata(&a.dir).map_err(|e| usage(format!("--dir {}: {e}", a.dir.display())))?;
    if !md.is_dir() {
        return Err(usage(format!("--dir {}: not a directory", a.dir.display())));
    }
    let mut canary = Canary::new(&a.dir, a.write_size, a.burst).map_err(|e| {
        usage(format!("--dir {}: cannot create canary files: {e}", a.dir.display()))
    })?;
    let mut rec = Recorder::new(a.common.clone())?;
    let interval = a.common.interval;
    println!(
        "lowlat watch storage: {} every {:?}: O_DSYNC write of {} B + {} fdatasyncs; D-state threads; PSI io",
        a.dir.display(),
        interval,
        a.write_size,
        a.burst
    );
    // The canary runs on its own thread so a hung write is still reported while it hangs.
    let (req_tx, req_rx) = mpsc::channel::<()>();
    let (res_tx, res_rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        while req_rx.recv().is_ok() {
            if res_tx.send(canary.run_once()).is_err() {
                break;
            }
        }
        drop(canary);
    });
    let mut tracker = DStateTracker::default();
    let mut in_flight: Option<Instant> = None;
    let mut failure = None;
    while !rec.done() {
        let tick = Instant::now();
        if in_flight.is_none() {
            req_tx.send(()).ok();
            in_flight = Some(Instant::now());
        }
        let mut s = base_sample("storage", &rec);
        let wait = interval.max(Duration::from_millis(10));
        match res_rx.recv_timeout(wait) {
            Ok(Ok(r)) => {
                s.value_ns = r.write_ns;
                s.burst_p50_ns = Some(r.burst_p50_ns);
                s.burst_max_ns = Some(r.burst_max_ns);
                in_flight = None;
            }
            Ok(Err(e)) => {
                failure = Some(format!("canary write failed: {e}"));
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let blocked = in_flight.map_or(Duration::ZERO, |t| t.elapsed());
                s.value_ns = blocked.as_nanos() as u64;
                s.error =
                    Some(format!("sync write still blocked after {:.1} s", blocked.as_secs_f64()));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                failure = Some("canary thread ended".into());
                break;
            }
        }
        s.dstate = tracker.update(scan_dstate(std::path::Path::new("/proc")), interval);
        if let Ok(t) = std::fs::read_to_string("/proc/pressure/io") {
            (s.psi_some_avg10, s.psi_full_avg10) = parse_psi(&t);
        }
        let dline = s
            .dstate
            .iter()
            .take(3)
            .map(|d| {
                format!(
                    "{}[{}] {} {:.0}s",
                    d.comm,
                    d.tid,
                    d.wchan.as_deref().unwrap_or("?"),
                    d.seen_ns as f64 / 1e9
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        println!(
            "{} sync-write {:>9}  fsync p50 {:>8} max {:>8}  D {:>2}{}  psi-io {}{}",
            hms(SystemTime::now()),
            fmt_ns(s.value_ns),
            s.burst_p50_ns.map_or("-".into(), fmt_ns),
            s.burst_max_ns.map_or("-".into(), fmt_ns),
            s.dstate.len(),
            if dline.is_empty() { String::new() } else { format!(" ({dline})") },
            s.psi_some_avg10.map_or("-".into(), |v| format!("{v:.1}%")),
            s.error.as_deref().map_or(String::new(), |e| format!("  [{e}]"))
        );
        if let Some(m) = rec.record(s)? {
            println!("{m}");
        }
        if in_flight.is_none() {
            rec.sleep_until(tick + interval);
        }
    }
    drop(req_tx);
    // A canary stuck in the kernel cannot be cancelled: wait briefly, then leave its files.
    let end = Instant::now() + Duration::from_secs(10);
    while !worker.is_finished() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    if worker.is_finished() {
        let _ = worker.join();
    } else {
        eprintln!(
            "lowlat: canary write still blocked at exit; its files in {} stay",
            a.dir.display()
        );
    }
    if let Some(f) = failure {
        return Err(anyhow::anyhow!(f));
    }
    Ok(rec.exit())
}

fn watch_cmd(a: CmdArgs) -> anyhow::Result<ExitCode> {
    let mut rec = Recorder::new(a.common.clone())?;
    let (prog, args) = a.command.split_first().ok_or_else(|| usage("give a command after --"))?;
    println!("lowlat watch cmd: {} (every {:?})", a.command.join(" "), a.common.interval);
    while !rec.done() {
        let tick = Instant::now();
        let mut s = base_sample("cmd", &rec);
        let status = std::process::Command::new(prog)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        s.value_ns = tick.elapsed().as_nanos() as u64;
        match status {
            Ok(st) => s.exit_code = st.code(),
            Err(e) if rec.samples == 0 => return Err(usage(format!("cannot run {prog:?}: {e}"))),
            Err(e) => s.error = Some(e.to_string()),
        }
        println!(
            "{} #{:<5} {:>9}  exit {}",
            hms(SystemTime::now()),
            rec.samples + 1,
            fmt_ns(s.value_ns),
            s.exit_code.map_or("signal".into(), |c| c.to_string())
        );
        if let Some(m) = rec.record(s)? {
            println!("{m}");
        }
        rec.sleep_until(tick + a.common.interval);
    }
    Ok(rec.exit())
}
