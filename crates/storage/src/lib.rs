//! fsync latency probe (etcd's WAL pattern), a bulk writer imitating an OS update, the
//! mitigations compared against it, `lowlat measure etcd`'s metrics scrape, and the storage
//! watcher with change-point detection. Library only: typed configs, no CLI.

pub mod bulk;
pub mod env;
pub mod error;
pub mod mitigation;
pub mod probe;
pub mod restore;
pub mod scenario;
pub mod sys;

pub use error::StorageError;
pub mod changepoint;
pub mod etcd;
pub mod text;
pub mod units;
pub mod watch;
