//! `lowlat cluster check`: `lowlat check` on every selected node (through [`crate::fleet`]),
//! each node's files read into a row, then `fleet.json` and `fleet-report.html`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use futures::StreamExt as _;
use std::time::{Duration, Instant, SystemTime};

use crate::conn::Conn;
use crate::fleet::{self, Event, RunSpec};
use crate::model::{CpuContext, Fleet, NodeResult, Status, SCHEMA_VERSION};
use crate::pod::{Pod, Task};
use crate::{Error, Result};

/// What `lowlat cluster check` does.
#[derive(Debug, Clone)]
pub struct Config {
    pub selector: String,
    pub out: PathBuf,
    pub pod: Pod,
    /// The in-pod check's schedule (`lowlat check --duration`).
    pub schedule: ::check::Schedule,
    /// Timer latency each measured CPU must stay below.
    pub threshold: Duration,
    /// RT budget granted down each pod's cgroup chain, µs per second (0: none).
    pub rt_budget_us: i64,
    pub guaranteed_cpus: Option<u32>,
    pub generator: String,
}

impl Config {
    /// What every pod runs.
    pub fn task(&self) -> Task {
        Task::Check {
            rt_budget_us: self.rt_budget_us,
            schedule: self.schedule,
            threshold: self.threshold,
        }
    }

    fn threshold_ns(&self) -> u64 {
        u64::try_from(self.threshold.as_nanos()).unwrap_or(u64::MAX)
    }
}

/// The files written into `out` (named in the model, which the report reads too).
pub use crate::model::{FLEET_HTML, FLEET_JSON};

/// Run the fleet check.
pub fn run(conn: &Conn, cfg: &Config, on: &mut (dyn FnMut(&Event<'_>) + Send)) -> Result<Fleet> {
    let started = SystemTime::now();
    let t0 = Instant::now();
    let outcome = crate::runtime()?.block_on(async {
        let s = conn.session().await?;
        let nodes = fleet::select_nodes(&s, &cfg.selector).await?;
        let spec = RunSpec {
            pod: cfg.pod.clone(),
            task: cfg.task(),
            guaranteed_cpus: cfg.guaranteed_cpus,
            out: cfg.out.clone(),
        };
        let o = fleet::run(&s, &nodes, &spec, on).await?;
        // Exclusive CPUs asked for: each node's kubelet CPU manager settings, to judge them.
        let mut kubelets = BTreeMap::new();
        if cfg.guaranteed_cpus.is_some() {
            let ran = o.nodes.iter().filter(|g| g.dir.is_some()).map(|g| g.node.clone());
            let s = &s;
            kubelets = futures::stream::iter(ran.map(|n| async move {
                let k = crate::nodes::configz(s, &n).await;
                (n, k)
            }))
            .buffer_unordered(16)
            .collect()
            .await;
        }
        Ok::<_, Error>((o, s.namespace.clone(), kubelets))
    })?;
    let (outcome, namespace, kubelets) = outcome;
    let not_read = Err("not read".to_string());
    let nodes: Vec<NodeResult> = outcome
        .nodes
        .iter()
        .map(|g| {
            let mut n =
                NodeResult::not_run(&g.node, g.status, g.reason.clone().unwrap_or_default());
            n.reason = g.reason.clone();
            n.pod = g.pod.clone();
            n.files = g.files.clone();
            n.start_s = g.start_s;
            n.end_s = g.end_s;
            if let Some(dir) = &g.dir {
                let k = kubelets.get(&g.node).unwrap_or(&not_read);
                let ctx = CpuContext {
                    requested: cfg.guaranteed_cpus,
                    qos_class: g.qos_class.as_deref(),
                    kubelet: k.as_ref().map_err(String::as_str).map(|k| crate::cpus::Kubelet {
                        policy: k.cpu_manager_policy.as_deref(),
                        reserved: k.reserved_system_cpus.as_deref(),
                    }),
                };
                n.read_dir(&cfg.out, dir, cfg.threshold_ns(), Some(&ctx));
                if g.status != Status::Completed && n.verdict < crate::model::Verdict::Fail {
                    n.verdict = crate::model::Verdict::Fail;
                }
            }
            n
        })
        .collect();
    let fleet = Fleet {
        schema_version: SCHEMA_VERSION,
        kind: "fleet".into(),
        tool: crate::tool(&cfg.generator),
        started_at: util::time::rfc3339(started),
        duration_ns: t0.elapsed().as_nanos() as u64,
        run: outcome.run,
        namespace,
        selector: cfg.selector.clone(),
        image: cfg.pod.image.clone(),
        command: cfg.task().argv(),
        interrupted: outcome.interrupted,
        verdict: Fleet::judge(&nodes),
        nodes,
        cleanup: outcome.cleanup,
    };
    write(&fleet, cfg)?;
    Ok(fleet)
}

fn write(fleet: &Fleet, cfg: &Config) -> Result<()> {
    let json = serde_json::to_vec_pretty(fleet)
        .map_err(|e| Error::Input(format!("serializing fleet.json: {e}")))?;
    let p = cfg.out.join(FLEET_JSON);
    util::fs::write_atomic(&p, &json, 0o644).map_err(|e| Error::io(&p, e))?;
    let p = cfg.out.join(FLEET_HTML);
    util::fs::write_atomic(
        &p,
        crate::html::render(fleet, Some(cfg.threshold_ns())).as_bytes(),
        0o644,
    )
    .map_err(|e| Error::io(&p, e))?;
    Ok(())
}
