//! The arguments of `lowlat import` and `lowlat export`, with their help.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use results::import::Tool;

use super::common::Output;

/// Arguments of `lowlat import`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  cyclictest -m -S -p95 -h400 -q -D 10m > ct.txt; lowlat import cyclictest ct.txt -o timer.json\n  \
lowlat import oslat oslat.txt --table\n  fio etcd.fio --output-format=json | lowlat import fio - -o fsync.json\n  \
lowlat report timer.json -o report.html"
)]
pub struct Args {
    /// Which tool wrote FILE: cyclictest (text, with or without -h histograms, rt-tests <=2.6
    /// and >=2.7, or --json), oslat (text or --json), or fio (its normal text, json or
    /// normal,json output: the sync latency block).
    #[arg(value_parser = PossibleValuesParser::new(["cyclictest", "oslat", "fio"]).try_map(|s| s.parse::<Tool>()))]
    pub tool: Tool,
    /// The tool's output (`-` = stdin).
    pub file: PathBuf,
    /// Write the lowlat result here, atomically (default: JSON on stdout).
    #[arg(long, short = 'o', value_name = "OUT")]
    pub output: Option<Output>,
    /// Print the per-CPU table instead of JSON (when no --output).
    #[arg(long)]
    pub table: bool,
    /// The lowlat result as JSON, as on every command: `--json FILE` is `-o FILE`, `--json`
    /// alone stdout (the default).
    #[command(flatten)]
    pub json: super::common::JsonArg,
}

/// Arguments of `lowlat export`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat export cyclictest timer.json -H 400 > timer.hist   # for mklatencyplot / gnuplot\n  \
lowlat export oslat noise.json\n\
`lowlat import cyclictest|oslat` reads these back."
)]
pub struct ExportArgs {
    /// The format: cyclictest (`T:` lines, `-h`-style histogram, `# Max Latencies:`) or oslat
    /// (its summary block: 1 µs bucket rows, Minimum/Average/Maximum/Duration).
    #[arg(value_parser = ["cyclictest", "oslat"])]
    pub format: String,
    /// A lowlat timer or noise result (`measure timer|noise --json`, `import`); `-` reads
    /// standard input.
    pub file: PathBuf,
    /// Histogram rows of 1 µs (cyclictest's -h N, default none; oslat's -b N, default 32).
    #[arg(long, short = 'H', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub histogram: Option<u32>,
}
