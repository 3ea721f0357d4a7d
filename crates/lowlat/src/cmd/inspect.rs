//! `lowlat inspect`.

use crate::exit::ExitCode;

/// Arguments of `lowlat inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `lowlat inspect`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("inspect")
}
