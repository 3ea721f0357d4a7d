//! Which cluster: kubectl's rules. An explicit kubeconfig file, else `KUBECONFIG` (a list of
//! files) or `~/.kube/config`, else the in-cluster service account; `context` picks a context
//! of the kubeconfig; the namespace is the one asked for, else the context's, else `default`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::{Error, Result};

static REQUESTS: AtomicU64 = AtomicU64::new(0);

fn count<B>(r: http::Request<B>) -> http::Request<B> {
    REQUESTS.fetch_add(1, Ordering::Relaxed);
    r
}

/// HTTP requests this process has sent to API servers (watches count once per connection):
/// what the scale benchmark reports.
pub fn api_requests() -> u64 {
    REQUESTS.load(Ordering::Relaxed)
}

/// How to reach the cluster (what `--kubeconfig`, `--context` and `--namespace` said).
#[derive(Debug, Clone, Default)]
pub struct Conn {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
}

/// A connected client and the namespace to work in.
#[derive(Clone)]
pub struct Session {
    pub client: kube::Client,
    pub namespace: String,
    /// The API server's URL, for messages.
    pub server: String,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("namespace", &self.namespace)
            .field("server", &self.server)
            .finish()
    }
}

impl Conn {
    /// The client configuration, by kubectl's rules.
    pub async fn config(&self) -> Result<kube::Config> {
        let opts = KubeConfigOptions { context: self.context.clone(), ..Default::default() };
        let cfg = match &self.kubeconfig {
            Some(path) => {
                let kc = Kubeconfig::read_from(path).map_err(|e| Error::Config {
                    message: format!("reading kubeconfig {}: {e}", path.display()),
                })?;
                kube::Config::from_custom_kubeconfig(kc, &opts).await.map_err(|e| {
                    Error::Config { message: format!("kubeconfig {}: {e}", path.display()) }
                })?
            }
            None if self.context.is_some() => {
                kube::Config::from_kubeconfig(&opts).await.map_err(|e| Error::Config {
                    message: format!("kubeconfig (KUBECONFIG or ~/.kube/config): {e}"),
                })?
            }
            None => kube::Config::infer().await.map_err(|e| Error::Config {
                message: format!(
                    "no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a pod: {e}; pass \
                     --kubeconfig FILE"
                ),
            })?,
        };
        Ok(cfg)
    }

    /// Connect: a client and the namespace.
    pub async fn session(&self) -> Result<Session> {
        let cfg = self.config().await?;
        let namespace = self.namespace.clone().unwrap_or_else(|| cfg.default_namespace.clone());
        let server = cfg.cluster_url.to_string();
        let client = kube::client::ClientBuilder::try_from(cfg)
            .map_err(|e| Error::Config {
                message: format!("building the client for {server}: {e}"),
            })?
            .with_layer(&tower::util::MapRequestLayer::new(count::<kube::client::Body>))
            .build();
        Ok(Session { client, namespace, server })
    }
}
