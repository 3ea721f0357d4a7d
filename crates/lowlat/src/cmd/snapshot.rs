//! `lowlat snapshot`.

use crate::exit::ExitCode;

/// Arguments of `lowlat snapshot`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `lowlat snapshot`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("snapshot")
}
