//! `lowlat measure …`: the subcommand enum. timer/noise/ticks run here (arguments → typed
//! `measure` configs, progress on a terminal, tables, `--json`, exit codes); fsync/etcd in
//! `fsync.rs`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use measure::load::{LoadSpec, RunningLoad};
use measure::{Common, Live, Observer, Policy};
use results::{HostContext, LatencyResult};

use crate::exit::{usage, ExitCode};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Timer wake-up latency per CPU (cyclictest semantics).
    Timer(TimerArgs),
    /// OS noise per CPU with attribution (oslat semantics).
    Noise(NoiseArgs),
    /// Timer ticks and interrupt rates on CPUs kept busy (the "pig" test).
    Ticks(TicksArgs),
    /// etcd-style write + fdatasync latency, optionally under interference.
    Fsync(Box<super::fsync::Args>),
    /// A running etcd's own WAL fsync / backend commit histograms over a window.
    Etcd(super::fsync::EtcdArgs),
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum PolicyArg {
    Fifo,
    Rr,
    Other,
}

/// Options shared by timer and noise.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// CPUs to measure: a cpu-list (`1-3,5`), `isolated` or `all`. Default: the isolated
    /// CPUs, else every online CPU but the main thread's.
    #[arg(long, short = 'a')]
    pub cpus: Option<String>,
    /// Housekeeping CPU for the main thread (never a measured one). Default: the first
    /// online CPU not measured.
    #[arg(long)]
    pub main_cpu: Option<u32>,
    /// Run length: `10s`, `10m`, `12h`, `1d` (a bare number is seconds). Default 10s unless
    /// --loops is given.
    #[arg(long, short = 'D', value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// A maximum at or above this is a failure (exit 1): `100us`, `1ms` (bare number = µs).
    #[arg(long, value_parser = parse_us)]
    pub threshold: Option<Duration>,
    /// Stop the run at the first sample at or above --threshold (and record when and where).
    #[arg(long, requires = "threshold")]
    pub stop_on_threshold: bool,
    /// Built-in load on the housekeeping CPUs: cpu, memory, io or all, optionally `:CPUS`.
    #[arg(long)]
    pub load: Option<String>,
    /// External load command (e.g. `stress-ng --cpu 1`), run on the housekeeping CPUs and
    /// stopped at the end.
    #[arg(long, conflicts_with = "load")]
    pub load_cmd: Option<String>,
    /// Write the result as JSON to FILE (rewritten every 5 s while running; `-` = stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// No progress and no table (the JSON and exit code still say everything).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Scheduling policy of the measuring threads.
    #[arg(long, value_enum)]
    pub policy: Option<PolicyArg>,
    /// Real-time priority, 1-99 (timer default 95; for noise, giving one selects SCHED_FIFO).
    #[arg(long, short = 'p', value_parser = clap::value_parser!(u32).range(1..=99))]
    pub priority: Option<u32>,
    /// Do not hold /dev/cpu_dma_latency at 0 during the run.
    #[arg(long)]
    pub no_dma_latency: bool,
}

/// `lowlat measure timer`.
#[derive(Debug, clap::Args)]
pub struct TimerArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Wake-up interval: `1000us`, `1ms` (bare number = µs, like cyclictest -i).
    #[arg(long, short = 'i', default_value = "1000us", value_parser = parse_us)]
    pub interval: Duration,
    /// Stop each thread after this many wake-ups (like cyclictest -l).
    #[arg(long, short = 'l')]
    pub loops: Option<u64>,
    /// Print cyclictest's text (`T:` lines, `# Min/Avg/Max Latencies:`) instead of the table.
    #[arg(long)]
    pub cyclictest: bool,
    /// With --cyclictest: add a histogram of N 1-µs buckets (like cyclictest -h N).
    #[arg(long, short = 'H', value_name = "N", requires = "cyclictest",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub histogram: Option<u32>,
}

/// `lowlat measure noise`.
#[derive(Debug, clap::Args)]
pub struct NoiseArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Gaps at or above this count as noise: `1us` default (oslat's first bucket).
    #[arg(long, default_value = "1us", value_parser = parse_us)]
    pub noise_threshold: Duration,
}

/// `lowlat measure ticks`.
#[derive(Debug, clap::Args)]
pub struct TicksArgs {
    /// CPUs to keep busy: cpu-list, `isolated`, `nohz_full` or `all`. Default: nohz_full
    /// CPUs, else isolated, else all but the main thread's.
    #[arg(long, short = 'a')]
    pub cpus: Option<String>,
    /// CPU for the main thread.
    #[arg(long)]
    pub main_cpu: Option<u32>,
    /// How long to spin (default 10s).
    #[arg(long, short = 'D', default_value = "10s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Write the result as JSON to FILE (`-` = stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// No table.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Run `lowlat measure …`.
pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Timer(a) => timer(a),
        Command::Noise(a) => noise(a),
        Command::Ticks(a) => ticks(a),
        Command::Fsync(a) => super::fsync::run(*a),
        Command::Etcd(a) => super::fsync::run_etcd(a),
    }
}

/// `10s`, `10m`, `12h`, `1d`, `500ms`; bare number = seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: f64 = n.parse().map_err(|_| format!("{s:?}: expected a duration like 10s, 10m, 12h"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1e3,
        "us" | "µs" => n / 1e6,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => return Err(format!("{s:?}: unknown unit {unit:?}; use ms, s, m, h or d")),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("{s:?}: must be greater than 0"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `100us`, `1ms`, `250ns`; bare number = µs (cyclictest's unit).
pub fn parse_us(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.chars().all(|c| c.is_ascii_digit()) && !t.is_empty() {
        return t.parse::<u64>().map(Duration::from_micros).map_err(|e| format!("{s:?}: {e}"));
    }
    if let Some(n) = t.strip_suffix("ns") {
        return n
            .parse::<u64>()
            .map(Duration::from_nanos)
            .map_err(|_| format!("{s:?}: expected e.g. 250ns"));
    }
    parse_duration(t)
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn cpus_of(path: &str) -> Vec<u32> {
    read(path)
        .and_then(|s| cpuset::CpuSet::parse_list(&s).ok())
        .map(|s| s.iter().map(|c| c as u32).collect())
        .unwrap_or_default()
}

fn list(cpus: &[u32]) -> String {
    let mut s = cpuset::CpuSet::new();
    for &c in cpus {
        s.insert(c as usize);
    }
    s.to_list()
}

/// The host context every result carries: from the host model (`host::read` of the live
/// host); the few /proc and /sys files directly if the model came back empty.
fn host_context() -> HostContext {
    let h = host::read(&host::Root::live());
    if h.kernel.release.is_some() {
        let mut ctx = results::HostContext::from_host(&h);
        if ctx.virtualization.is_none() {
            ctx.virtualization = proc_host_context().virtualization;
        }
        return ctx;
    }
    proc_host_context()
}

/// Minimal host context straight from /proc and /sys.
fn proc_host_context() -> HostContext {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let hypervisor = cpuinfo
        .lines()
        .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"));
    let virt = read("/sys/hypervisor/type")
        .or_else(|| {
            read("/sys/class/dmi/id/sys_vendor").filter(|v| v.contains("QEMU") || v.contains("KVM"))
        })
        .or_else(|| hypervisor.then(|| "vm (cpuid hypervisor flag)".to_string()));
    HostContext {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        realtime: Some(read("/sys/kernel/realtime").as_deref() == Some("1")),
        virtualization: virt,
        cmdline: read("/proc/cmdline"),
        clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        isolated: read("/sys/devices/system/cpu/isolated"),
        nohz_full: read("/sys/devices/system/cpu/nohz_full").filter(|s| s != "(null)"),
        online: read("/sys/devices/system/cpu/online"),
        governors: Vec::new(),
        smt_active: read("/sys/devices/system/cpu/smt/active").map(|s| s == "1"),
        cpu_model: cpuinfo.lines().find_map(|l| {
            l.strip_prefix("model name").map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        }),
    }
}

/// Resolve `--cpus` (cpu-list or a name) against this host.
fn resolve_cpus(
    arg: Option<&str>,
    main_cpu: Option<u32>,
    prefer: &[&str],
) -> anyhow::Result<Vec<u32>> {
    let online = measure::sys::online_cpus();
    let named = |name: &str| -> Option<Vec<u32>> {
        match name {
            "all" | "online" => Some(online.clone()),
            "isolated" => Some(cpus_of("/sys/devices/system/cpu/isolated")),
            "nohz_full" => Some(cpus_of("/sys/devices/system/cpu/nohz_full")),
            _ => None,
        }
    };
    match arg {
        Some(a) => {
            if let Some(v) = named(a) {
                if v.is_empty() {
                    return Err(usage(format!(
                        "--cpus {a}: this host has no {a} CPUs; pass a cpu-list such as 1-3"
                    )));
                }
                return Ok(v);
            }
            let set = cpuset::CpuSet::parse_list(a).map_err(|e| {
                usage(format!("--cpus {a:?}: {e}; expected a cpu-list (1-3,5), isolated or all"))
            })?;
            let v: Vec<u32> = set.iter().map(|c| c as u32).collect();
            if let Some(bad) = v.iter().find(|c| !online.contains(c)) {
                return Err(usage(format!(
                    "--cpus {a}: CPU {bad} is not online (online: {})",
                    list(&online)
                )));
            }
            Ok(v)
        }
        None => {
            for p in prefer {
                if let Some(v) = named(p).filter(|v| !v.is_empty()) {
                    return Ok(v);
                }
            }
            let main = main_cpu.or_else(|| online.first().copied());
            let v: Vec<u32> = online.iter().copied().filter(|c| Some(*c) != main).collect();
            Ok(if v.is_empty() { online } else { v })
        }
    }
}

/// RFC 3339 UTC of now.
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86400, secs % 86400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Write JSON atomically (temp file + rename), or to stdout for `-`.
fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    if path.as_os_str() == "-" {
        println!("{text}");
        return Ok(());
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text + "\n").with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    Ok(())
}

/// Progress on a terminal and periodic JSON checkpoints.
struct Progress {
    tty: bool,
    total: Option<Duration>,
    json: Option<PathBuf>,
}

impl Observer for Progress {
    fn tick(&mut self, elapsed: Duration, live: &[Live]) {
        if !self.tty {
            return;
        }
        let cpus: Vec<String> = live
            .iter()
            .take(8)
            .map(|l| format!("CPU{} max {:.1}µs", l.cpu, l.max_ns as f64 / 1000.0))
            .collect();
        let total = self.total.map_or(String::new(), |t| format!("/{}s", t.as_secs()));
        eprint!("\r\x1b[K{}s{total}  {}", elapsed.as_secs(), cpus.join("  "));
        let _ = std::io::stderr().flush();
    }

    fn checkpoint(&mut self, partial: &LatencyResult) {
        if let Some(p) = self.json.as_ref().filter(|p| p.as_os_str() != "-") {
            if let Err(e) = write_json(p, partial) {
                eprintln!("\nlowlat: warning: checkpoint not written: {e:#}");
            }
        }
    }
}

struct Prepared {
    common: Common,
    load: Option<RunningLoad>,
    json: Option<PathBuf>,
    quiet: bool,
}

fn prepare(
    kind: &str,
    a: &RunArgs,
    default_policy: Policy,
    params: serde_json::Value,
) -> anyhow::Result<Prepared> {
    let cpus = resolve_cpus(a.cpus.as_deref(), a.main_cpu, &["isolated"])?;
    let online = measure::sys::online_cpus();
    let main_cpu = measure::runner::pick_main_cpu(a.main_cpu, &cpus, &online);
    if let Some(m) = a.main_cpu.filter(|m| cpus.contains(m)) {
        return Err(usage(format!(
            "--main-cpu {m} is also measured: pick a housekeeping CPU outside --cpus"
        )));
    }
    let policy = match (a.policy, a.priority) {
        (Some(PolicyArg::Fifo), _) => Policy::Fifo,
        (Some(PolicyArg::Rr), _) => Policy::Rr,
        (Some(PolicyArg::Other), _) => Policy::Other,
        (None, Some(_)) => Policy::Fifo,
        (None, None) => default_policy,
    };
    let priority = a.priority.unwrap_or(95);
    let housekeeping: Vec<u32> = online.iter().copied().filter(|c| !cpus.contains(c)).collect();
    let load = match (&a.load, &a.load_cmd) {
        (Some(spec), _) => {
            let spec = LoadSpec::parse(spec).map_err(|e| usage(e.to_string()))?;
            Some(
                RunningLoad::start_builtin(&spec, &housekeeping)
                    .map_err(|e| usage(e.to_string()))?,
            )
        }
        (None, Some(cmd)) => Some(RunningLoad::start_command(cmd, &housekeeping)?),
        (None, None) => None,
    };
    let duration = match a.duration {
        Some(d) => Some(d),
        None if params.get("loops").is_some_and(|l| !l.is_null()) => None,
        None => Some(Duration::from_secs(10)),
    };
    let mut params = params;
    params["cpus"] = list(&cpus).into();
    params["main_cpu"] = main_cpu.into();
    params["policy"] = serde_json::to_value(policy)?;
    params["priority"] =
        if policy.is_realtime() { priority.into() } else { serde_json::Value::Null };
    params["duration_ns"] = duration.map(|d| d.as_nanos() as u64).into();
    params["threshold_ns"] = a.threshold.map(|d| d.as_nanos() as u64).into();
    params["stop_on_threshold"] = a.stop_on_threshold.into();
    params["dma_latency"] = (!a.no_dma_latency).into();
    params["kind"] = kind.into();
    let common = Common {
        cpus,
        main_cpu: a.main_cpu,
        duration,
        policy,
        priority,
        threshold_ns: a.threshold.map(|d| d.as_nanos() as u64),
        stop_on_threshold: a.stop_on_threshold,
        dma_latency: !a.no_dma_latency,
        host: host_context(),
        tool: format!("lowlat {}", super::VERSION),
        params,
        load: load.as_ref().map(|l| l.info.clone()),
        checkpoint_every: a.json.as_ref().map(|_| Duration::from_secs(5)),
    };
    Ok(Prepared { common, load, json: a.json.clone(), quiet: a.quiet })
}

fn finish(
    mut p: Prepared,
    mut r: LatencyResult,
    started_at: String,
    render: impl Fn(&LatencyResult) -> String,
    tty: bool,
) -> anyhow::Result<ExitCode> {
    if let Some(l) = p.load.as_mut() {
        if let Some(n) = l.exited_early() {
            r.notes.push(n);
        }
        l.stop();
    }
    r.envelope.started_at = Some(started_at);
    if tty && !p.quiet {
        eprint!("\r\x1b[K");
    }
    if let Some(n) = r.notes.iter().find(|n| n.starts_with("NOT REAL-TIME")) {
        eprintln!("lowlat: WARNING: {n}");
    }
    if let Some(path) = &p.json {
        write_json(path, &r)?;
    }
    let to_stdout_json = p.json.as_ref().is_some_and(|j| j.as_os_str() == "-");
    if !p.quiet && !to_stdout_json {
        print!("{}", render(&r));
    }
    if measure::sys::interrupted() {
        return Ok(ExitCode::Interrupted);
    }
    let threshold = p.common.threshold_ns;
    let failed = threshold.is_some_and(|t| r.threads.iter().any(|th| th.stats.max_ns >= t));
    Ok(if failed { ExitCode::CheckFailed } else { ExitCode::Ok })
}

fn timer(a: TimerArgs) -> anyhow::Result<ExitCode> {
    measure::sys::install_signal_handlers();
    let params =
        serde_json::json!({ "interval_ns": a.interval.as_nanos() as u64, "loops": a.loops });
    let p = prepare("timer", &a.run, Policy::Fifo, params)?;
    let cfg = measure::timer::TimerConfig {
        common: p.common.clone(),
        interval: a.interval,
        loops: a.loops,
    };
    let tty = measure::sys::is_tty(2) && !p.quiet;
    let mut progress = Progress { tty, total: cfg.common.duration, json: p.json.clone() };
    let started = now_rfc3339();
    let r = measure::timer::run(&cfg, &mut progress).map_err(|e| usage(e.to_string()))?;
    let cyclic = a.cyclictest;
    let hist = a.histogram;
    finish(
        p,
        r,
        started,
        move |r| {
            if cyclic {
                results::export::cyclictest::to_text(r, hist)
            } else {
                results::export::table::latency(r)
            }
        },
        tty,
    )
}

fn noise(a: NoiseArgs) -> anyhow::Result<ExitCode> {
    measure::sys::install_signal_handlers();
    let params = serde_json::json!({ "noise_threshold_ns": a.noise_threshold.as_nanos() as u64 });
    let p = prepare("noise", &a.run, Policy::Other, params)?;
    let cfg = measure::noise::NoiseConfig {
        common: p.common.clone(),
        noise_threshold: a.noise_threshold,
    };
    let tty = measure::sys::is_tty(2) && !p.quiet;
    let mut progress = Progress { tty, total: cfg.common.duration, json: p.json.clone() };
    let started = now_rfc3339();
    let r = measure::noise::run(&cfg, &mut progress).map_err(|e| usage(e.to_string()))?;
    finish(p, r, started, results::export::table::latency, tty)
}

fn ticks(a: TicksArgs) -> anyhow::Result<ExitCode> {
    measure::sys::install_signal_handlers();
    let cpus = resolve_cpus(a.cpus.as_deref(), a.main_cpu, &["nohz_full", "isolated"])?;
    let release = read("/proc/sys/kernel/osrelease").unwrap_or_default();
    let hz = std::fs::read_to_string(format!("/boot/config-{release}"))
        .ok()
        .and_then(|c| measure::ticks::config_hz(&c));
    let cfg = measure::ticks::TicksConfig {
        params: serde_json::json!({ "cpus": list(&cpus), "duration_ns": a.duration.as_nanos() as u64, "main_cpu": a.main_cpu }),
        cpus,
        duration: a.duration,
        main_cpu: a.main_cpu,
        nohz_full: cpus_of("/sys/devices/system/cpu/nohz_full"),
        isolated: cpus_of("/sys/devices/system/cpu/isolated"),
        hz,
        host: host_context(),
        tool: format!("lowlat {}", super::VERSION),
    };
    let mut r = measure::ticks::run(&cfg).map_err(|e| usage(e.to_string()))?;
    r.envelope.started_at = Some(now_rfc3339());
    if let Some(path) = &a.json {
        write_json(path, &r)?;
    }
    if !a.quiet && a.json.as_ref().is_none_or(|j| j.as_os_str() != "-") {
        print!("{}", results::export::table::ticks(&r));
    }
    Ok(if measure::sys::interrupted() { ExitCode::Interrupted } else { ExitCode::Ok })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("12h"), Ok(Duration::from_secs(43200)));
        assert_eq!(parse_duration("5"), Ok(Duration::from_secs(5)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("10x").is_err());
        assert_eq!(parse_us("1000"), Ok(Duration::from_micros(1000)));
        assert_eq!(parse_us("200us"), Ok(Duration::from_micros(200)));
        assert_eq!(parse_us("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(parse_us("500ns"), Ok(Duration::from_nanos(500)));
    }

    #[test]
    fn rfc3339_shape() {
        let s = now_rfc3339();
        assert_eq!(s.len(), 20, "{s}");
        assert!(s.starts_with("20") && s.ends_with('Z'));
    }
}
