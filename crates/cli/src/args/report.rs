//! The arguments of `lowlat report`, with their help.

use std::path::PathBuf;
use std::time::Duration;

use super::common::JsonArg;

/// Arguments of `lowlat report`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat report timer.json noise.json fsync.json -o report.html\n  \
lowlat report --compare before/*.json --vs after/*.json -o compare.html\n  \
lowlat measure timer -D 10s --json | lowlat report - --strict --junit - > timer.xml"
)]
pub struct Args {
    /// Result files (lowlat `measure … --json`, `import`, `verify --json`, `inspect --json`);
    /// `-` reads one from standard input.
    #[arg(value_name = "RESULT", conflicts_with = "compare")]
    pub results: Vec<PathBuf>,
    /// Compare: the "before" result files (use with --vs).
    #[arg(long, value_name = "BEFORE", num_args = 1.., requires = "vs")]
    pub compare: Vec<PathBuf>,
    /// Compare: the "after" result files.
    #[arg(long, value_name = "AFTER", num_args = 1.., requires = "compare")]
    pub vs: Vec<PathBuf>,
    /// Where to write the HTML report (`-`: to stdout, the summary then goes to stderr).
    #[arg(short, long, value_name = "FILE", default_value = "lowlat-report.html")]
    pub output: super::common::Output,
    /// Report title.
    #[arg(long, default_value = "lowlat report")]
    pub title: String,
    /// Timer latency each CPU must stay below (e.g. 50us, 1ms), unless a result says otherwise.
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_latency, default_value = "100us")]
    pub threshold: Duration,
    /// For CI gates: exit 1 when the overall verdict is FAIL or a result is partial (cut
    /// short), 2 when an input cannot be judged (unreadable, newer schema_version, unknown
    /// kind, nothing measured).
    #[arg(long)]
    pub strict: bool,
    /// Also write JUnit XML for CI: a suite per report section, a case per verdict line
    /// (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<super::common::Output>,
    /// The report's data (verdict, headlines, sections, tables, chart series) as JSON; alone
    /// (or `-`) on stdout instead of the terminal summary.
    #[command(flatten)]
    pub json: JsonArg,
}
