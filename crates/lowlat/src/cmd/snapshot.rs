//! `lowlat snapshot -o FILE.tgz`: capture exactly the files `inspect` reads (same layout as a
//! must-gather `sysinfo.tgz`, symlinks kept) plus `lowlat-snapshot.json`, the manifest of
//! what could not be read and why (`host::snapshot`).

use std::path::PathBuf;

use anyhow::Context as _;

use super::common::HostArgs;
use crate::exit::ExitCode;

/// Arguments of `lowlat snapshot`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  sudo lowlat snapshot -o node.tgz\n  \
lowlat inspect --root node.tgz            # read it back anywhere\n  \
lowlat plan --root node.tgz -o plan.yaml")]
pub struct Args {
    /// The tarball to write (gzip-compressed tar), atomically.
    #[arg(short, long, value_name = "FILE.tgz")]
    pub output: PathBuf,
    /// Capture the threads of at most this many processes (lowest PIDs first) to keep the
    /// file small; the snapshot still reads back to the same model.
    #[arg(long, value_name = "N")]
    pub max_processes: Option<usize>,
    /// Leave out every process's command line (/proc/PID/cmdline): they can hold passwords
    /// or tokens given as arguments. Without it the snapshot contains them, and says so.
    #[arg(long)]
    pub no_cmdline: bool,
    #[command(flatten)]
    pub host: HostArgs,
}

/// Run `lowlat snapshot`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = args.host.open_root()?;
    let opts = host::ReadOptions {
        max_processes: args.max_processes,
        skip_cmdline: args.no_cmdline,
        ..Default::default()
    };
    let snap = host::snapshot::capture(root, &opts).context("taking the snapshot")?;
    util::fs::write_atomic(&args.output, &snap.tgz, 0o644)
        .with_context(|| format!("writing {}", args.output.display()))?;
    super::common::print_view(snap.summary(&args.output))?;
    Ok(ExitCode::Ok)
}
