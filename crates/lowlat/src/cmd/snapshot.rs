//! `lowlat snapshot -o FILE.tgz`: capture exactly the files `inspect` reads (same layout as a
//! must-gather `sysinfo.tgz`, symlinks kept) plus `lowlat-snapshot.json`, the manifest of
//! what could not be read and why (`host::snapshot`).

use anyhow::Context as _;

use super::common::{HostArgs, Output};
use crate::exit::{usage, ExitCode};

/// Arguments of `lowlat snapshot`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  sudo lowlat snapshot -o node.tgz\n  \
lowlat inspect --root node.tgz            # read it back anywhere\n  \
lowlat plan --root node.tgz -o plan.yaml\n  \
sudo lowlat snapshot -o - | ssh lab 'cat > node.tgz'   # the tarball on stdout")]
pub struct Args {
    /// The tarball to write (gzip-compressed tar), atomically; `-` writes it to stdout (not
    /// to a terminal) and the summary to stderr.
    #[arg(short, long, value_name = "FILE.tgz")]
    pub output: Output,
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
    let to_stdout = args.output.is_stdout();
    if to_stdout && util::term::is_tty(util::term::Stream::Stdout) {
        return Err(usage(
            "-o -: stdout is a terminal; redirect it (`> node.tgz`, `| ssh …`) or give -o FILE.tgz",
        ));
    }
    let root = args.host.open_root()?;
    let opts = host::ReadOptions {
        max_processes: args.max_processes,
        skip_cmdline: args.no_cmdline,
        ..Default::default()
    };
    let snap = host::snapshot::capture(root, &opts).context("taking the snapshot")?;
    args.output.write(&snap.tgz)?;
    let summary = snap.summary(std::path::Path::new(&args.output.to_string()));
    util::term::say(to_stdout, &util::term::sanitize(&summary, true));
    Ok(ExitCode::Ok)
}
