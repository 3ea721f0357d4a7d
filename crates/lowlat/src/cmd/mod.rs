//! One module per subcommand: the function that runs it (its arguments are defined in the `cli`
//! crate, `cli::args::<name>`), and the dispatch from the parsed command line.

pub mod apply;
pub mod check;
#[cfg(feature = "cluster")]
pub mod cluster;
#[cfg(not(feature = "cluster"))]
#[path = "cluster_absent.rs"]
pub mod cluster;
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

pub use cli::VERSION;

use cli::{Cli, Command};

use crate::exit::ExitCode;

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    util::term::set_quiet(cli.quiet);
    match cli.command {
        Command::Check(a) => check::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Snapshot(a) => snapshot::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Render(a) => render::run(a),
        Command::Apply(a) => apply::run(a),
        Command::Revert(a) => apply::revert(a),
        Command::Verify(a) => verify::run(a),
        Command::Status(a) => verify::status(a),
        Command::Measure(c) => measure::run(c),
        Command::Import(a) => import::run(a),
        Command::Export(a) => import::export(a),
        Command::Watch(c) => watch::run(c),
        Command::Report(a) => report::run(a),
        Command::Cluster(a) => cluster::run(a),
        Command::Generate(c) => generate::run(c, <Cli as clap::CommandFactory>::command()),
    }
}
