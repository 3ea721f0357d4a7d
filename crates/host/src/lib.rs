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

/// A root that holds no host at all: neither CPU topology nor a kernel command line (the
/// wrong directory, not a snapshot). The caller's mistake: a usage error.
#[derive(Debug, thiserror::Error)]
#[error("{root}: found neither sys/devices/system/cpu nor proc/cmdline; is this a host snapshot?")]
pub struct NotAHost {
    /// The root, as it prints.
    pub root: String,
}

impl util::exit::Classify for NotAHost {
    fn exit_code(&self) -> util::exit::ExitCode {
        util::exit::ExitCode::Usage
    }
}

/// [`read`], refusing a root that holds no host ([`NotAHost`]).
pub fn read_checked(root: &Root) -> Result<Host, NotAHost> {
    let h = read(root);
    if h.topology.cpus.is_empty() && h.kernel.cmdline.is_none() {
        return Err(NotAHost { root: root.to_string() });
    }
    Ok(h)
}
