//! `lowlat watch storage` and `lowlat watch cmd`.

use crate::exit::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Sync-write canary, fsync burst, D-state threads and PSI io, with cliff detection.
    Storage,
    /// Run a command in a loop and track its duration.
    Cmd,
}

/// Run `lowlat watch …`.
pub fn run(_cmd: Command) -> anyhow::Result<ExitCode> {
    super::not_built("watch")
}
