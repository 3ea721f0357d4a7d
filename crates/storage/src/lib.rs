//! fsync latency probe (etcd's WAL pattern), a bulk writer imitating an OS update, the
//! mitigations compared against it, `lowlat measure etcd`'s metrics scrape, and the storage
//! watchers with change-point detection. Library only: typed configs, no CLI; kernel files
//! are read through `host::Root`; the live view is written to a `std::io::Write` the caller
//! picks.
//!
//! | module | what |
//! |---|---|
//! | [`fsync`] | `measure fsync` in one call: request → environment → scenarios → result |
//! | [`etcd`] | `measure etcd`: scrape loop (HTTP/HTTPS, mutual TLS), Prometheus queries, histograms |
//! | [`watch`] | `watch storage` / `watch cmd`: samples, recorder, cliff, textfile |
//! | [`scenario`], [`probe`], [`bulk`], [`command`], [`mitigation`] | one scenario: probe × bulk writer or update command × mitigations |
//! | [`env`] | the storage environment of a directory |
//! | [`restore`] | host writes and their undo (also from a second Ctrl-C) |
//! | [`text`] | the terminal view |

pub mod bulk;
pub mod changepoint;
pub mod command;
pub mod env;
pub mod error;
pub mod etcd;
pub mod fsync;
pub mod mitigation;
mod pace;
pub mod probe;
pub mod restore;
pub mod scenario;
pub mod sys;
pub mod text;
pub mod units;
pub mod watch;

pub use bulk::{BulkMode, Interference};
pub use env::SysRoot;
pub use error::StorageError;
pub use fsync::{ChoiceError, FsyncRequest, Scenarios};
pub use mitigation::MitigationSet;
pub use sys::SyncMode;
