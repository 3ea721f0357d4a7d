//! One module per subcommand: its clap arguments and the function that runs it. The
//! dispatch from the parsed command line lives in `cli`, so nothing here imports `cli` back.

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

/// `--version` text.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("LOWLAT_VERSION_SUFFIX"));
