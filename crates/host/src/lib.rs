//! Read-only model of a Linux host. Every read of `/proc` and `/sys` goes through a
//! [`Root`] (live `/`, a directory, a `.tgz`, a must-gather node); each kernel file is
//! read in one place (`read/`), parsed by pure functions (`parse/`) tested on captured text.
//! A missing file makes its field `None` and adds an [`Unknown`] entry with the reason; a
//! malformed one adds a [`Warning`] naming the file and line. Nothing here panics on input.

pub mod cgroup;
pub mod containers;
pub mod findings;
pub mod model;
pub mod parse;
mod read;
pub mod root;
pub mod rt;
pub mod snapshot;

pub use model::*;
pub use read::{read, read_with, ReadOptions};
pub use root::{OpenError, ReadError, Recorder, Root};
