//! `lowlat plan`.

use crate::exit::ExitCode;

/// Arguments of `lowlat plan`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `lowlat plan`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("plan")
}
