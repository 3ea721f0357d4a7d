//! lowlat on the Kubernetes API (kube-rs + k8s-openapi), with kubectl's conventions for finding
//! the cluster (`KUBECONFIG`, a context, in-cluster config, a namespace):
//!
//! | module | what |
//! |---|---|
//! | [`conn`] | which cluster, which context, which namespace; the client |
//! | [`labels`] | the label every object lowlat creates carries, run ids, object names |
//! | [`nodes`] | `lowlat cluster nodes`: nodes, pools, kernels, kubelet configuration (configz) |
//! | [`job`] | the Job that runs lowlat on one node (privileged, pinned, hostPID, hostNetwork) |
//! | [`fleet`] | one Job per node, watched; each node's results gathered through the API (its log) |
//! | [`check`] | `lowlat cluster check`: the fleet run of `lowlat check`, `fleet.json`, the report |
//! | [`cpus`] | which CPUs a node's pod had (read in the pod) and whether they were its own |
//! | [`model`] | the fleet result (`fleet.json`) and how a node's files become one row |
//! | [`html`] | the fleet report |
//! | [`agent`] | what runs inside the pod: RT budget, the measurement, results on stdout |
//! | [`rt`] | granting and restoring real-time budget down a cgroup-v1 `cpu` chain |
//! | [`bundle`] | a result directory as a tar.gz in base64 between marker lines (pod log transport) |
//! | [`clean`] | deleting everything labelled |
//! | [`apply`] | server-side apply of rendered manifests (field manager `lowlat`) |
//! | [`snapshot`] | `lowlat snapshot` from each node into a must-gather-shaped directory |
//! | [`view`] | terminal text: progress lines, the fleet summary |
//!
//! Library calls are synchronous: each builds a small current-thread tokio runtime.

pub mod agent;
pub mod apply;
pub mod bundle;
pub mod check;
pub mod clean;
pub mod conn;
pub mod cpus;
pub mod fleet;
pub mod html;
pub mod job;
pub mod labels;
pub mod model;
pub mod nodes;
pub mod pod;
pub mod rt;
pub mod snapshot;
pub mod view;

pub use conn::Conn;

use util::exit::{Classify, ExitCode};

/// What went wrong talking to the cluster.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No usable kubeconfig / context / in-cluster configuration.
    #[error("cannot find the cluster: {message}")]
    Config { message: String },
    /// The API refused for lack of permission (HTTP 403).
    #[error(
        "permission missing: {doing} was refused (403: {message}); grant it with the objects of \
         `lowlat render cluster-rbac`"
    )]
    Forbidden { doing: String, message: String },
    /// The request itself was wrong (bad label selector, invalid object: HTTP 400/422).
    #[error("{doing}: the API server rejected the request ({code}: {message})")]
    Invalid { doing: String, code: u16, message: String },
    /// Another manager owns fields lowlat would change (server-side apply, HTTP 409).
    #[error("{doing}: {message}; pass --force-conflicts to take the fields over")]
    Conflict { doing: String, message: String },
    /// Any other API or transport failure.
    #[error("{doing}: {source}")]
    Api {
        doing: String,
        #[source]
        source: Box<kube::Error>,
    },
    /// No node matched the selector.
    #[error("no node matches the label selector '{selector}' (see `lowlat cluster nodes`)")]
    NoNodes { selector: String },
    /// Bad input (a plan, a manifest, an option value).
    #[error("{0}")]
    Input(String),
    /// Local file I/O.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wrap a kube error, saying what was being done; 403, 400/422 and 409 get their own
    /// variants so the message can name the missing permission or the bad input.
    pub fn api(doing: impl Into<String>, e: kube::Error) -> Self {
        let doing = doing.into();
        match e {
            kube::Error::Api(s) if s.code == 403 => Error::Forbidden { doing, message: s.message },
            kube::Error::Api(s) if s.code == 400 || s.code == 422 => {
                Error::Invalid { doing, code: s.code, message: s.message }
            }
            kube::Error::Api(s) if s.code == 409 && s.reason == "Conflict" => {
                Error::Conflict { doing, message: s.message }
            }
            other => Error::Api { doing, source: Box::new(other) },
        }
    }

    pub(crate) fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Self {
        Error::Io { path: path.as_ref().display().to_string(), source }
    }

    /// The HTTP status of an API refusal, if this is one.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Error::Forbidden { .. } => Some(403),
            Error::Invalid { code, .. } => Some(*code),
            Error::Conflict { .. } => Some(409),
            Error::Api { source, .. } => match source.as_ref() {
                kube::Error::Api(s) => Some(s.code),
                _ => None,
            },
            _ => None,
        }
    }
}

impl Classify for Error {
    fn exit_code(&self) -> ExitCode {
        match self {
            Error::Config { .. } | Error::Invalid { .. } | Error::NoNodes { .. } => ExitCode::Usage,
            Error::Input(_) => ExitCode::Usage,
            Error::Forbidden { .. }
            | Error::Conflict { .. }
            | Error::Api { .. }
            | Error::Io { .. } => ExitCode::Runtime,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A small runtime for one library call.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("tokio runtime", e))
}

/// The tool string written into results.
pub(crate) fn tool(generator: &str) -> String {
    generator.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            status: Some(kube::core::response::StatusSummary::Failure),
            code,
            message: format!(
                "jobs.batch is forbidden: User \"u\" cannot create resource \"jobs\" ({reason})"
            ),
            reason: reason.into(),
            details: None,
            metadata: None,
        }))
    }

    #[test]
    fn refusals_say_what_and_why() {
        let e = Error::api(
            "creating Job lowlat-check-x in namespace default",
            status(403, "Forbidden"),
        );
        assert!(matches!(e, Error::Forbidden { .. }));
        let text = e.to_string();
        assert!(text.contains("cannot create resource \"jobs\""), "{text}");
        assert!(text.contains("cluster-rbac"), "{text}");
        assert_eq!(e.exit_code(), ExitCode::Runtime);
        let e = Error::api("listing nodes", status(400, "BadRequest"));
        assert_eq!(e.exit_code(), ExitCode::Usage);
        assert_eq!(Error::api("x", status(409, "Conflict")).http_status(), Some(409));
    }
}
