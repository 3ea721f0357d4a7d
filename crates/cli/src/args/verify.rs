//! The arguments of `lowlat verify` and `lowlat status`, with their help.

use std::path::PathBuf;
use std::time::Duration;

use verify::Allow;

use super::common::{HostArgs, JsonArg};

/// Arguments of `lowlat verify`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat verify                             # the host's own isolation\n  \
lowlat verify --plan plan.yaml --json verify.json --junit verify.xml\n  \
lowlat verify --must-gather must-gather/ --node worker1\n  \
lowlat verify --plan plan.yaml --allow myapp --window 5s"
)]
pub struct Args {
    /// The plan to check against; without it, the plan implied by the host's own command
    /// line (isolcpus ∪ nohz_full isolated, the rest housekeeping).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub host: HostArgs,
    // `--json [FILE]`: the checks (`checks[] {id, status, evidence, fix}`, `summary`).
    #[command(flatten)]
    pub json: JsonArg,
    /// Also write the checks as JUnit XML to FILE (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<super::common::Output>,
    /// Also write Prometheus text for node_exporter's textfile collector: each check's status,
    /// the counts, 1 when nothing failed (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<super::common::Output>,
    /// A workload task allowed on the isolated CPUs: a PID or a comm (repeatable).
    #[arg(long, value_name = "COMM|PID")]
    pub allow: Vec<Allow>,
    /// The `lowlat apply` journal: IRQs whose affinity write the kernel refused there are
    /// classified as managed (expected residue).
    #[arg(long, value_name = "PATH", default_value = tune::journal::DEFAULT_JOURNAL)]
    pub journal: PathBuf,
    /// Live only: how long to watch interrupt and idle-state counters (e.g. 2s, 500ms; 0 to skip).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = util::duration::parse_span)]
    pub window: Duration,
}

/// Arguments of `lowlat status`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  lowlat status\n  lowlat status --plan plan.yaml --json\n  \
lowlat status --root node.tgz --plan plan.yaml\n\
Exit: 0 (the answer is the output: `attention` lists what needs doing), 2 usage, 3 runtime.")]
pub struct StatusArgs {
    /// Compare the boot arguments with this plan (default: the plan the last apply used).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub json: JsonArg,
    /// The apply journal (on the host read).
    #[arg(long, value_name = "PATH", default_value = tune::journal::DEFAULT_JOURNAL)]
    pub journal: PathBuf,
}
