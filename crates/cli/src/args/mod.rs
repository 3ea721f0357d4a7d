//! One module per subcommand: its clap arguments and help, and the conversion of those
//! arguments into the library's typed request where that is a plain mapping. What runs the
//! command lives in the binary's `cmd/<name>.rs`.

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
