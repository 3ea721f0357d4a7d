//! `lowlat import`.

use crate::exit::ExitCode;

/// Arguments of `lowlat import`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `lowlat import`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("import")
}
