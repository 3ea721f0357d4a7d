//! The arguments of `lowlat watch …`, with their help.

use std::path::PathBuf;
use std::time::Duration;

use storage::watch::WatchConfig;
use util::duration::parse_span as span;

/// Options every watcher shares.
#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// Time between samples.
    #[arg(long, default_value = "1s", value_parser = span)]
    pub interval: Duration,
    /// Stop after this long (default: until Ctrl-C).
    #[arg(long, value_parser = span)]
    pub duration: Option<Duration>,
    /// Stop after this many samples.
    #[arg(long)]
    pub count: Option<u64>,
    /// Append the JSON-lines series to this file as it goes (not `-`: stdout has the live
    /// lines).
    #[arg(long, short = 'o', value_parser = series_file)]
    pub output: Option<PathBuf>,
    /// Keep a Prometheus textfile-collector file up to date (written atomically).
    #[arg(long, value_name = "FILE", value_parser = textfile)]
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
    after_help = "Examples:\n  lowlat watch storage --dir /var/lib/docker --interval 5s -o watch.jsonl --prometheus /var/lib/node_exporter/lowlat.prom\n  \
lowlat watch storage --dir /var/lib/etcd --duration 1h -o etcd-disk.jsonl"
)]
pub struct StorageArgs {
    #[command(flatten)]
    pub common: Common,
    /// Directory on the filesystem to watch (canary files are removed on exit).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Bytes of the O_DSYNC canary write (the seed's `dd bs=1M count=10 oflag=sync` is 10m).
    #[arg(long, default_value = "1m", value_parser = storage::units::parse_size)]
    pub write_size: u64,
    /// fdatasyncs in the short burst after the canary write.
    #[arg(long, default_value = "10")]
    pub burst: usize,
}

/// Arguments of `lowlat watch cmd`.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat watch cmd --interval 0s -o docker.jsonl -- docker run --rm fedora date   # the seed's reproducer\n  \
lowlat watch cmd --interval 10s --duration 1h -- curl -sf http://127.0.0.1:2379/health"
)]
pub struct CmdArgs {
    #[command(flatten)]
    pub common: Common,
    /// The command and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// A file option of `watch`, refusing `-` (stdout carries the live lines, and a file named `-`
/// is a trap) with `what` to give instead.
fn not_stdout(s: &str, what: &str) -> Result<PathBuf, String> {
    if s == "-" {
        return Err(format!("stdout carries the live lines: {what}"));
    }
    Ok(PathBuf::from(s))
}

/// `-o FILE`.
fn series_file(s: &str) -> Result<PathBuf, String> {
    not_stdout(s, "give a file for the JSON-lines series (e.g. -o watch.jsonl)")
}

/// `--prometheus FILE`: rewritten every interval.
fn textfile(s: &str) -> Result<PathBuf, String> {
    not_stdout(
        s,
        "give a file for the textfile, which is rewritten every interval (e.g. \
         /var/lib/node_exporter/textfile/lowlat.prom)",
    )
}

impl Common {
    /// The watch's typed config.
    pub fn config(self) -> WatchConfig {
        let Common { interval, duration, count, output, prometheus, cliff_ratio, cliff_samples } =
            self;
        WatchConfig { interval, duration, count, output, prometheus, cliff_ratio, cliff_samples }
    }
}
