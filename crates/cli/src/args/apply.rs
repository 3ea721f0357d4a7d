//! The arguments of `lowlat apply` and `lowlat revert`, with their help.

use std::path::PathBuf;

use tune::journal::DEFAULT_JOURNAL;
use tune::Allow;

/// Arguments of `lowlat apply`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat apply --plan plan.yaml --dry-run    # what would change\n  \
sudo lowlat apply --plan plan.yaml\n  sudo lowlat apply --plan plan.yaml --move-tasks --allow myapp\n  \
lowlat status                             # what is applied now\n  sudo lowlat revert"
)]
pub struct Args {
    /// The plan file (YAML, from `lowlat plan`).
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    /// Print the changes (target, old → new) and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Journal of every change, written before the change (what `revert` reads).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_JOURNAL)]
    pub journal: PathBuf,
    /// Also move user tasks off the isolated CPUs (never tasks in kubepods cgroups).
    #[arg(long)]
    pub move_tasks: bool,
    /// A workload task to leave on the isolated CPUs with --move-tasks: a PID or a comm
    /// (repeatable).
    #[arg(long, value_name = "COMM|PID")]
    pub allow: Vec<Allow>,
    /// Apply to a directory laid out like / instead of the live host (tests, rehearsals;
    /// task affinities are skipped there).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,
    /// Pause this many milliseconds after each change (crash testing: kill it midway, then
    /// `lowlat revert`).
    #[arg(long, value_name = "MS", hide = true, default_value_t = 0)]
    pub step_delay: u64,
    #[command(flatten)]
    pub json: super::common::JsonArg,
}

/// Arguments of `lowlat revert`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  sudo lowlat revert\n  \
sudo lowlat revert --journal /var/lib/lowlat/journal.jsonl\n  \
sudo lowlat revert --forget                # a journal from an earlier boot: set it aside")]
pub struct RevertArgs {
    /// The journal written by `lowlat apply`.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_JOURNAL)]
    pub journal: PathBuf,
    /// The journal is from another boot: move it aside instead of refusing.
    #[arg(long)]
    pub forget: bool,
    /// Revert a directory laid out like / (see `apply --sysroot`).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,
    #[command(flatten)]
    pub json: super::common::JsonArg,
}
