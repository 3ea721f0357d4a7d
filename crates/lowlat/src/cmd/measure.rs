//! `lowlat measure …`: the subcommand enum. timer/noise/ticks run here; fsync/etcd in `fsync.rs`.

use crate::exit::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Timer wake-up latency per CPU (cyclictest semantics).
    Timer,
    /// OS noise per CPU with attribution (oslat semantics).
    Noise,
    /// Timer ticks and interrupt rates on CPUs kept busy (the "pig" test).
    Ticks,
    /// etcd-style write + fdatasync latency, optionally under interference.
    Fsync(Box<super::fsync::Args>),
    /// A running etcd's own WAL fsync / backend commit histograms over a window.
    Etcd(super::fsync::EtcdArgs),
}

/// Run `lowlat measure …`.
pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Timer => super::not_built("measure timer"),
        Command::Noise => super::not_built("measure noise"),
        Command::Ticks => super::not_built("measure ticks"),
        Command::Fsync(a) => super::fsync::run(*a),
        Command::Etcd(a) => super::fsync::run_etcd(a),
    }
}
