//! The arguments of `lowlat measure …` (fsync/etcd: `fsync.rs`), with their help.

use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use cpuset::CpuSelector;
use measure::load::LoadSpec;
use util::duration::{parse_latency, parse_positive_span as span};
use util::sched::Policy;

use super::common::{JsonArg, Output};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Timer wake-up latency per CPU (cyclictest semantics).
    Timer(TimerArgs),
    /// OS noise per CPU with attribution (oslat semantics).
    Noise(NoiseArgs),
    /// Hardware/firmware latency with the kernel's hwlat tracer (hwlatdetect semantics).
    Hwlat(HwlatArgs),
    /// Timer ticks and interrupt rates on CPUs kept busy (the "pig" test).
    Ticks(TicksArgs),
    /// etcd-style write + fdatasync latency, optionally under interference.
    Fsync(Box<super::fsync::Args>),
    /// A running etcd's own WAL fsync / backend commit histograms over a window.
    Etcd(super::fsync::EtcdArgs),
}

/// Where the result and the table go (`--json [FILE]`; the global `-q` leaves the table out).
#[derive(Debug, clap::Args)]
pub struct Shown {
    #[command(flatten)]
    pub json: JsonArg,
    /// Also write the result as Prometheus text for node_exporter's textfile collector
    /// (per CPU: the figures the table shows; real-time, partial, evidence), atomically
    /// (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<Output>,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "With --json FILE, FILE holds the partial result while running (rewritten every 5 s)."
)]
pub struct RunArgs {
    /// CPUs to measure (`1-3,5`, a mask, a name). Default: isolated, else all but the main one.
    #[arg(long, short = 'a')]
    pub cpus: Option<CpuSelector>,
    /// Housekeeping CPU for the main thread (default: the first online CPU not measured).
    #[arg(long)]
    pub main_cpu: Option<u32>,
    /// Run length: `10s`, `10m`, `12h` (bare number = s). Default 10s unless --loops is given.
    #[arg(long, short = 'D', value_parser = span)]
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
    /// External load command (e.g. `stress-ng --cpu 1`) on the housekeeping CPUs for the run,
    /// stopped at its end; how it ended is recorded in the result's `load.exit`.
    #[arg(long, visible_alias = "interference-cmd", value_name = "CMD", conflicts_with = "load")]
    pub load_cmd: Option<String>,
    #[command(flatten)]
    pub shown: Shown,
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
    /// Run from a cgroup with an RT budget (`root`, or a cgroup path such as /rt) and move
    /// back afterwards: for hosts whose own cgroup cannot run SCHED_FIFO (root only).
    #[arg(long, value_name = "root|PATH", value_parser = |s: &str| s.parse::<measure::rt_cgroup::RtCgroup>())]
    pub rt_cgroup: Option<measure::rt_cgroup::RtCgroup>,
}

#[derive(Debug, clap::Args)]
#[command(
    disable_help_flag = true,
    after_help = "Examples:
  lowlat measure timer -a 2-5 -D 60s --load cpu --threshold 100us
  lowlat measure timer -m -S -p95 -i200 -h400 -q -D 10m > hist.txt   # cyclictest's habits
  lowlat measure timer --tracer -D 30s                                 # rtla timerlat's view

cyclictest's flags work with its meaning: -m (memory is always locked), -n (clock_nanosleep
is always used), -S/--smp (one pinned thread per measured CPU, lowlat's default), -t without a
count, -a CPUS, -p PRIO, -i US, -l LOOPS, -D TIME, -b US (= --threshold US --stop-on-threshold),
-h/-H N (histogram of N 1-µs rows in cyclictest's text), -q (no progress; the text still ends
the run). -t N (N unpinned threads) has no lowlat equivalent: choose CPUs with -a.
With --json FILE, FILE holds the partial result while running (rewritten every 5 s)."
)]
pub struct TimerArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Print help (`-h` is cyclictest's histogram here).
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// cyclictest -m: accepted; lowlat always locks its memory.
    #[arg(short = 'm', long = "mlockall", hide = true)]
    pub mlockall: bool,
    /// cyclictest -n: accepted; lowlat always sleeps with clock_nanosleep.
    #[arg(short = 'n', long = "nanosleep", hide = true)]
    pub nanosleep: bool,
    /// cyclictest -S: accepted; one pinned thread per measured CPU is lowlat's default.
    #[arg(short = 'S', long = "smp", hide = true)]
    pub smp: bool,
    /// cyclictest -t [N]: without N accepted (one thread per CPU); N unpinned threads refused.
    #[arg(short = 't', long = "threads", hide = true, num_args = 0..=1, default_missing_value = "0")]
    pub threads: Option<u32>,
    /// cyclictest -b US: stop at the first wake-up at or above US (= --threshold US
    /// --stop-on-threshold).
    #[arg(short = 'b', long = "breaktrace", hide = true, value_parser = parse_latency,
          conflicts_with = "threshold")]
    pub breaktrace: Option<Duration>,
    /// Wake-up interval: `1000us`, `1ms` (bare number = µs, like cyclictest -i).
    #[arg(long, short = 'i', default_value = "1000us", value_parser = parse_latency)]
    pub interval: Duration,
    /// Stop each thread after this many wake-ups (like cyclictest -l).
    #[arg(long, short = 'l')]
    pub loops: Option<u64>,
    /// Print cyclictest's text (`T:` lines, `# Min/Avg/Max Latencies:`) instead of the table.
    #[arg(long)]
    pub cyclictest: bool,
    /// cyclictest's text with a histogram of N 1-µs buckets (cyclictest -h N; implies
    /// --cyclictest).
    #[arg(long, short = 'h', short_alias = 'H', visible_short_alias = 'H', value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub histogram: Option<u32>,
    /// Measure with the kernel's timerlat tracer (IRQ and thread latency per CPU, as rtla
    /// timerlat reports them). Without the tracer (CONFIG_TIMERLAT_TRACER), lowlat's own
    /// threads measure and the result says so.
    #[arg(long)]
    pub tracer: bool,
    /// With --tracer: keep the tracer's raw output (trace_pipe text) in FILE (rtla's -t).
    #[arg(long, value_name = "FILE", requires = "tracer")]
    pub save_trace: Option<std::path::PathBuf>,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  lowlat measure noise -a 2-5 -D 60s                      # oslat's question, per CPU
  lowlat measure noise --tracer -D 30s                    # osnoise: noise by source, every gap attributed
  lowlat measure noise -D 10m --json noise.json; lowlat export oslat noise.json

With --json FILE, FILE holds the partial result while running (rewritten every 5 s).")]
pub struct NoiseArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Gaps at or above this count as noise: `1us` default (oslat's first bucket).
    #[arg(long, default_value = "1us", value_parser = parse_latency)]
    pub noise_threshold: Duration,
    /// Measure with the kernel's osnoise tracer: noise by source (HW, NMI, IRQ, softirq,
    /// thread) and, for every gap at or above --noise-threshold, the IRQs and threads that ran
    /// in it. Without the tracer, lowlat's own threads measure and the result says so.
    #[arg(long)]
    pub tracer: bool,
    /// With --tracer: keep the tracer's raw output (trace_pipe text) in FILE (rtla's -t).
    #[arg(long, value_name = "FILE", requires = "tracer")]
    pub save_trace: Option<std::path::PathBuf>,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  lowlat measure hwlat -D 60s                   # every CPU in turn, samples above 10 µs
  lowlat measure hwlat -a 2-5 --threshold 5us --json hwlat.json

Needs root and a kernel with CONFIG_HWLAT_TRACER. Exit 1 when any sample is above the
threshold. tracefs is left as it was found, also after Ctrl-C.")]
pub struct HwlatArgs {
    /// CPUs the detector visits in turn (default: every online CPU).
    #[arg(long, short = 'a')]
    pub cpus: Option<CpuSelector>,
    /// Run length (default 30s).
    #[arg(long, short = 'D', default_value = "30s", value_parser = span)]
    pub duration: Duration,
    /// Interrupts-off time per window (hwlatdetect --width; default 500ms).
    #[arg(long, default_value = "500ms", value_parser = span)]
    pub width: Duration,
    /// Window length (hwlatdetect --window; default 1s).
    #[arg(long, default_value = "1s", value_parser = span)]
    pub window: Duration,
    /// Report gaps above this (hwlatdetect --threshold; default 10us, bare number = µs).
    #[arg(long, default_value = "10us", value_parser = parse_latency)]
    pub threshold: Duration,
    #[command(flatten)]
    pub shown: Shown,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  lowlat measure ticks                                    # nohz_full CPUs, else isolated, else all
  lowlat measure ticks -a 2-5 -D 30s --json ticks.json")]
pub struct TicksArgs {
    /// CPUs to keep busy (`1-3`, a mask, a name). Default: nohz_full, else isolated, else all.
    #[arg(long, short = 'a')]
    pub cpus: Option<CpuSelector>,
    /// CPU for the main thread.
    #[arg(long)]
    pub main_cpu: Option<u32>,
    /// How long to spin (default 10s).
    #[arg(long, short = 'D', default_value = "10s", value_parser = span)]
    pub duration: Duration,
    #[command(flatten)]
    pub shown: Shown,
}
