//! `lowlat report`.

use crate::exit::ExitCode;

/// Arguments of `lowlat report`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `lowlat report`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("report")
}
