//! `lowlat measure fsync` and `lowlat measure etcd`.

use crate::exit::ExitCode;

/// Arguments of `lowlat measure fsync`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Arguments of `lowlat measure etcd`.
#[derive(Debug, clap::Args)]
pub struct EtcdArgs {}

/// Run `lowlat measure fsync`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("measure fsync")
}

/// Run `lowlat measure etcd`.
pub fn run_etcd(_args: EtcdArgs) -> anyhow::Result<ExitCode> {
    super::not_built("measure etcd")
}
