//! `lowlat cluster snapshot`: `lowlat snapshot` on every selected node, gathered through the
//! API into a must-gather-shaped directory, `DIR/nodes/<node>/sysinfo.tgz`, which
//! `--must-gather DIR --node NAME` reads (as it reads an OpenShift performance must-gather).

use std::path::PathBuf;

use crate::conn::Conn;
use crate::fleet::{self, Event, Gathered, RunSpec};
use crate::Result;

/// What `lowlat cluster snapshot` does.
#[derive(Debug, Clone)]
pub struct Config {
    pub selector: String,
    /// The must-gather directory (node files go to `DIR/nodes/<node>/`).
    pub out: PathBuf,
    pub pod: crate::pod::Pod,
}

/// The file each node's snapshot is written to, as in a must-gather (named beside the pod task
/// that writes it).
pub use crate::pod::SYSINFO;

/// Run it; the per-node outcomes (gathered files under `out/nodes/<node>/`).
pub fn run(
    conn: &Conn,
    cfg: &Config,
    on: &mut (dyn FnMut(&Event<'_>) + Send),
) -> Result<(Vec<Gathered>, bool)> {
    crate::runtime()?.block_on(async {
        let s = conn.session().await?;
        let nodes = fleet::select_nodes(&s, &cfg.selector).await?;
        let spec = RunSpec {
            pod: cfg.pod.clone(),
            task: crate::pod::Task::Snapshot,
            guaranteed_cpus: None,
            out: cfg.out.join("nodes"),
        };
        let o = fleet::run(&s, &nodes, &spec, on).await?;
        Ok((o.nodes, o.interrupted))
    })
}
