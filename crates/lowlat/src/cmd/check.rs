//! `lowlat check`.

use crate::exit::ExitCode;

/// Arguments of `lowlat check`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `lowlat check`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("check")
}
