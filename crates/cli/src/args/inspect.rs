//! The arguments of `lowlat inspect`, with their help.

use super::common::{HostArgs, JsonArg};

/// Arguments of `lowlat inspect`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat inspect\n  lowlat inspect --cpu 3                       # \
everything that runs or may run on CPU 3\n  lowlat inspect --json > host.json\n  \
lowlat inspect --must-gather must-gather/ --node worker1\n  lowlat inspect --root node.tgz"
)]
pub struct Args {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub json: JsonArg,
    /// Focus on one CPU: every thread that ran or may run there, its IRQs, its power state.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Show the container/pod cgroups: CPU usage, CFS quota and throttling, cpuset, memory,
    /// PSI, RT readiness, and their latency issues (`--json` writes the whole model).
    #[arg(long, conflicts_with = "cpu")]
    pub containers: bool,
}
