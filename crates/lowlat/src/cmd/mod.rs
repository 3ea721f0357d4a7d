//! One module per subcommand: its clap arguments and the function that runs it.

pub mod apply;
pub mod check;
pub mod common;
pub mod fsync;
pub mod generate;
pub mod import;
pub mod inspect;
pub mod measure;
pub mod plan;
pub mod render;
pub mod report;
pub mod snapshot;
pub mod verify;
pub mod watch;

use crate::cli::{Cli, Command};
use crate::exit::ExitCode;

/// `--version` text.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("LOWLAT_VERSION_SUFFIX"));

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Check(a) => check::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Snapshot(a) => snapshot::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Render(a) => render::run(a),
        Command::Apply(a) => apply::run(a),
        Command::Revert(a) => apply::revert(a),
        Command::Verify(a) => verify::run(a),
        Command::Measure(c) => measure::run(c),
        Command::Import(a) => import::run(a),
        Command::Watch(c) => watch::run(c),
        Command::Report(a) => report::run(a),
        Command::Generate(c) => generate::run(c),
    }
}
