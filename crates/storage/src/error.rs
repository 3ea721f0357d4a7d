//! Errors of the storage crate, each with the exit code it means (`util::exit::Classify`):
//! input errors (found before anything is written, an endpoint that is not etcd, a certificate
//! the given CA does not verify, a Prometheus without etcd's series) are usage
//! errors (2); failed syscalls, scrapes and writes are runtime errors (3).

use std::path::PathBuf;

use util::exit::{Classify, ExitCode};

/// Why a storage measurement or watcher could not run.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// Bad input, found before any write: the message says what to change.
    #[error("{0}")]
    Input(String),
    /// A syscall failed during the run.
    #[error("{what} {}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An HTTP request failed (connection, time limit, status): `detail` says how.
    #[error("GET {url}: {detail}")]
    Http { url: String, detail: String },
    /// The TLS handshake failed on a certificate (the CA file, the client certificate): a
    /// matter of the files given, so an input error.
    #[error("TLS with {url}: {detail}")]
    Tls { url: String, detail: String },
    /// Prometheus has no series of etcd's histogram for the query.
    #[error("Prometheus at {url} has no data for {query} (is etcd scraped there? does the selector match? a window shorter than two scrape intervals is empty)")]
    NoSeries { url: String, query: String },
    /// Prometheus answered, but not with what a query for etcd's histogram should give.
    #[error("Prometheus at {url}: {detail}")]
    Prometheus { url: String, detail: String },
    /// The endpoint answered, but without etcd's WAL fsync histogram.
    #[error("{url}: no {metric} in the response: not an etcd metrics endpoint?")]
    NotEtcd { url: String, metric: &'static str },
    /// The endpoint's histogram holds numbers no verdict can rest on (NaN, negative counts,
    /// bounds out of order, no bucket): `why` says which.
    #[error("{url}: {metric}: {why}; lowlat judges only a well-formed histogram: is this etcd's own /metrics?")]
    Unusable { url: String, metric: &'static str, why: String },
    /// The live view (terminal lines) could not be written, e.g. a closed pipe.
    #[error("writing the live view")]
    View(#[source] std::io::Error),
}

impl StorageError {
    /// An I/O error with the operation and path it concerns.
    pub fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { what, path: path.into(), source }
    }

    /// Whether this is an input error (exit 2) rather than a runtime one (exit 3).
    pub fn is_input(&self) -> bool {
        self.exit_code() == ExitCode::Usage
    }
}

impl Classify for StorageError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::Input(_)
            | Self::NotEtcd { .. }
            | Self::Unusable { .. }
            | Self::NoSeries { .. }
            | Self::Tls { .. } => ExitCode::Usage,
            Self::Io { .. } | Self::Http { .. } | Self::Prometheus { .. } | Self::View(_) => {
                ExitCode::Runtime
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(StorageError::Input("x".into()).exit_code(), ExitCode::Usage);
        let e = StorageError::NotEtcd { url: "u".into(), metric: "m" };
        assert!(e.is_input());
        let e = StorageError::io("write", "/x", std::io::Error::other("disk on fire"));
        assert_eq!(e.exit_code(), ExitCode::Runtime);
        assert_eq!(e.to_string(), "write /x", "the cause is the source, not repeated");
        let e = StorageError::View(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(!e.is_input());
    }
}
