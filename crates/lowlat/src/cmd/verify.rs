//! `lowlat verify`.

use crate::exit::ExitCode;

/// Arguments of `lowlat verify`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `lowlat verify`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("verify")
}
