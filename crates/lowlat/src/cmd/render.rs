//! `lowlat render`.

use crate::exit::ExitCode;

/// Arguments of `lowlat render`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `lowlat render`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("render")
}
