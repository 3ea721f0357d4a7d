//! Errors of the storage crate. Input errors (checked before anything is written) are kept
//! apart from runtime I/O errors so the binary can map them to exit codes 2 and 3.

use std::path::PathBuf;

/// Why a storage measurement could not run.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// Bad input, found before any write: the message says what to change.
    #[error("{0}")]
    Input(String),
    /// A syscall failed during the run.
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl StorageError {
    /// An I/O error with the operation and path it concerns.
    pub fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { what, path: path.into(), source }
    }

    /// Whether this is an input error (exit 2) rather than a runtime one (exit 3).
    pub fn is_input(&self) -> bool {
        matches!(self, Self::Input(_))
    }
}
