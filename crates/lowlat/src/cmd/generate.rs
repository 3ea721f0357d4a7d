//! `lowlat generate completions|man`.

use crate::exit::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Shell completions.
    Completions,
    /// The man page (roff).
    Man,
}

/// Run `lowlat generate …`.
pub fn run(_cmd: Command) -> anyhow::Result<ExitCode> {
    super::not_built("generate")
}
