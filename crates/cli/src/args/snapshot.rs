//! The arguments of `lowlat snapshot`, with their help.

use super::common::{HostArgs, Output};

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
