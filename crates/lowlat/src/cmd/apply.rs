//! `lowlat apply`.

use crate::exit::ExitCode;

/// Arguments of `lowlat apply`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `lowlat apply`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("apply")
}

/// Arguments of `lowlat revert`.
#[derive(Debug, clap::Args)]
pub struct RevertArgs {}

/// Run `lowlat revert`.
pub fn revert(_args: RevertArgs) -> anyhow::Result<ExitCode> {
    super::not_built("revert")
}
