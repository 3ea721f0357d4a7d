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

/// What a snapshot run gathered.
#[derive(Debug)]
pub struct Outcome {
    /// Per node: its gathered files under `out/nodes/<node>/`.
    pub nodes: Vec<Gathered>,
    /// Ctrl-C ended the run.
    pub interrupted: bool,
}

impl Outcome {
    /// The nodes whose snapshot ([`SYSINFO`]) came back.
    pub fn captured(&self) -> Vec<&str> {
        let has = |g: &&Gathered| g.files.iter().any(|f| f == SYSINFO);
        self.nodes.iter().filter(has).map(|g| g.node.as_str()).collect()
    }

    /// Interrupted (130), every node captured (0), or some missing (1).
    pub fn exit_code(&self) -> util::exit::ExitCode {
        use util::exit::ExitCode;
        if self.interrupted {
            ExitCode::Interrupted
        } else if self.captured().len() == self.nodes.len() {
            ExitCode::Ok
        } else {
            ExitCode::CheckFailed
        }
    }

    /// The closing summary: how many nodes were captured and how to read one back. Node names
    /// come from the API server and the path from the user: print it through an escaping writer.
    pub fn summary(&self, out: &std::path::Path) -> String {
        let ok = self.captured();
        let mut text = format!(
            "must-gather in {}: {} of {} node(s) captured\n",
            out.display(),
            ok.len(),
            self.nodes.len()
        );
        if let Some(first) = ok.first() {
            text.push_str(&format!(
                "read back: lowlat inspect --must-gather {} --node {first}\n",
                out.display()
            ));
        }
        text
    }
}

/// Run it; the per-node outcomes (gathered files under `out/nodes/<node>/`).
pub fn run(conn: &Conn, cfg: &Config, on: &mut (dyn FnMut(&Event<'_>) + Send)) -> Result<Outcome> {
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
        Ok(Outcome { nodes: o.nodes, interrupted: o.interrupted })
    })
}
