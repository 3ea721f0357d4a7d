//! `lowlat measure …`: timer/noise/ticks arguments → a `measure` request → one
//! `measure::session` call → the JSON and the table (`results::export`). fsync/etcd: `fsync.rs`.

use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use cpuset::CpuSelector;
use measure::session::{self, LatencyKind, LatencyRequest, Load, Outcome, TicksRequest};
use measure::{load::LoadSpec, Input, MeasureError};
use results::{export::table, LatencyResult};
use util::duration::{parse_latency, parse_positive_span};
use util::sched::Policy;

use super::common::{JsonArg, Output};
use crate::exit::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Timer wake-up latency per CPU (cyclictest semantics).
    ///
    /// With `--json FILE`, FILE holds the partial result while running (rewritten every 5 s).
    Timer(TimerArgs),
    /// OS noise per CPU with attribution (oslat semantics).
    ///
    /// With `--json FILE`, FILE holds the partial result while running (rewritten every 5 s).
    Noise(NoiseArgs),
    /// Timer ticks and interrupt rates on CPUs kept busy (the "pig" test).
    Ticks(TicksArgs),
    /// etcd-style write + fdatasync latency, optionally under interference.
    Fsync(Box<super::fsync::Args>),
    /// A running etcd's own WAL fsync / backend commit histograms over a window.
    Etcd(super::fsync::EtcdArgs),
}

/// Options shared by timer and noise.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// CPUs to measure (`1-3,5`, a mask, a name). Default: isolated, else all but the main one.
    #[arg(long, short = 'a')]
    pub cpus: Option<CpuSelector>,
    /// Housekeeping CPU for the main thread (default: the first online CPU not measured).
    #[arg(long)]
    pub main_cpu: Option<u32>,
    /// Run length: `10s`, `10m`, `12h` (bare number = s). Default 10s unless --loops is given.
    #[arg(long, short = 'D', value_parser = parse_positive_span)]
    pub duration: Option<Duration>,
    /// A maximum at or above this is a failure (exit 1): `100us`, `1ms` (bare number = µs).
    #[arg(long, value_parser = parse_latency)]
    pub threshold: Option<Duration>,
    /// Stop the run at the first sample at or above --threshold (and record when and where).
    #[arg(long, requires = "threshold")]
    pub stop_on_threshold: bool,
    /// Built-in load on the housekeeping CPUs: cpu, memory, io or all, optionally `:CPUS`.
    #[arg(long)]
    pub load: Option<LoadSpec>,
    /// External load command (e.g. `stress-ng --cpu 1`) on the housekeeping CPUs for the run.
    #[arg(long, conflicts_with = "load")]
    pub load_cmd: Option<String>,
    #[command(flatten)]
    pub json: JsonArg,
    /// No progress and no table (the JSON and exit code still say everything).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Scheduling policy of the measuring threads.
    #[arg(long, value_parser = PossibleValuesParser::new(["fifo", "rr", "other"])
          .try_map(|s| s.parse::<Policy>()))]
    pub policy: Option<Policy>,
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
    #[arg(long, short = 'i', default_value = "1000us", value_parser = parse_latency)]
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
    #[arg(long, default_value = "1us", value_parser = parse_latency)]
    pub noise_threshold: Duration,
}

/// `lowlat measure ticks`.
#[derive(Debug, clap::Args)]
pub struct TicksArgs {
    /// CPUs to keep busy (`1-3`, a mask, a name). Default: nohz_full, else isolated, else all.
    #[arg(long, short = 'a')]
    pub cpus: Option<CpuSelector>,
    /// CPU for the main thread.
    #[arg(long)]
    pub main_cpu: Option<u32>,
    /// How long to spin (default 10s).
    #[arg(long, short = 'D', default_value = "10s", value_parser = parse_positive_span)]
    pub duration: Duration,
    #[command(flatten)]
    pub json: JsonArg,
    /// No table.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Run `lowlat measure …`.
pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    let tool = format!("lowlat {}", super::VERSION);
    match cmd {
        Command::Timer(a) => {
            let (cyclictest, hist) = (a.cyclictest, a.histogram);
            let kind = LatencyKind::Timer { interval: a.interval, loops: a.loops };
            latency(a.run, kind, tool, move |r| match cyclictest {
                true => results::export::cyclictest::to_text(r, hist),
                false => table::latency(r),
            })
        }
        Command::Noise(a) => {
            let kind = LatencyKind::Noise { threshold: a.noise_threshold };
            latency(a.run, kind, tool, table::latency)
        }
        Command::Ticks(a) => {
            let (cpus, main_cpu, duration) = (a.cpus, a.main_cpu, a.duration);
            let req = TicksRequest { cpus, main_cpu, duration, tool };
            show(&session::ticks(&req).map_err(flagged)?, &a.json, a.quiet, table::ticks)
        }
        Command::Fsync(a) => super::fsync::run(*a),
        Command::Etcd(a) => super::fsync::run_etcd(a),
    }
}

fn latency(
    a: RunArgs,
    kind: LatencyKind,
    tool: String,
    view: impl Fn(&LatencyResult) -> String,
) -> anyhow::Result<ExitCode> {
    let checkpoint = match &a.json.json {
        Some(Output::File(p)) => Some(p.clone()),
        _ => None,
    };
    let load = a.load.map(Load::Builtin).or(a.load_cmd.map(Load::Command));
    let req = LatencyRequest {
        kind,
        cpus: a.cpus,
        main_cpu: a.main_cpu,
        duration: a.duration,
        threshold: a.threshold,
        stop_on_threshold: a.stop_on_threshold,
        load,
        policy: a.policy,
        priority: a.priority,
        dma_latency: !a.no_dma_latency,
        checkpoint,
        progress: !a.quiet,
        tool,
    };
    show(&session::latency(&req).map_err(flagged)?, &a.json, a.quiet, view)
}

/// An input error in the words of the command line: the option it is about first.
fn flagged(e: MeasureError) -> anyhow::Error {
    let flag = match e.input() {
        Some(Input::Cpus) => "--cpus",
        Some(Input::MainCpu) => "--main-cpu",
        Some(Input::Load) => "--load",
        Some(Input::LoadCommand) => "--load-cmd",
        None => return e.into(),
    };
    anyhow::Error::from(e).context(flag)
}

/// The JSON where `--json` says; the view on stdout, or on stderr when the JSON is there.
fn show<R: serde::Serialize>(
    out: &Outcome<R>,
    json: &JsonArg,
    quiet: bool,
    view: impl Fn(&R) -> String,
) -> anyhow::Result<ExitCode> {
    if let Some(o) = &json.json {
        o.write_json(&out.result)?;
    }
    match (quiet, json.to_stdout()) {
        (true, _) => {}
        (false, true) => eprint!("{}", view(&out.result)),
        (false, false) => Output::Stdout.write(view(&out.result).as_bytes())?,
    }
    Ok(out.verdict.exit_code())
}
