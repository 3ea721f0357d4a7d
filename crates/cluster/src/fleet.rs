//! Run one lowlat command on every selected node, one Job per node, and gather each node's
//! result directory through the API (the pod's log): the engine under `lowlat cluster check`
//! and `lowlat cluster snapshot`.
//!
//! Progress comes from one watch on the run's pods (no polling); a one-second timer only
//! compares clocks (start timeout, run timeout). A pod that never starts is reported after the
//! start timeout with the API's reason; when every node is done, or on Ctrl-C, everything
//! labelled with the run id is deleted and the deletion is watched until nothing is left.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt as _};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams, PropagationPolicy};
use kube::runtime::{watcher, WatchStreamExt as _};

use crate::conn::Session;
use crate::model::Status;
use crate::{bundle, job, labels, Error, Result};

/// What to run on every node.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub pod: crate::pod::Pod,
    /// What runs in every pod (its verb names the Jobs, its argv is the command line).
    pub task: crate::pod::Task,
    pub guaranteed_cpus: Option<u32>,
    /// Where each node's directory goes.
    pub out: PathBuf,
}

/// Progress, as it happens.
#[derive(Debug)]
pub enum Event<'a> {
    /// The nodes the selector chose.
    Nodes {
        nodes: &'a [String],
        run: &'a str,
        namespace: &'a str,
    },
    Created {
        node: &'a str,
        job: &'a str,
    },
    /// The pod's state changed (`Pending: …`, `Running`).
    State {
        node: &'a str,
        text: &'a str,
    },
    /// The node is done.
    Done {
        node: &'a str,
        status: Status,
        text: &'a str,
    },
    /// Ctrl-C: stopping.
    Interrupted,
    /// Cleanup finished.
    Cleaned {
        jobs: usize,
        pods: usize,
        leftover: &'a [String],
    },
}

/// What one node gave.
#[derive(Debug, Clone)]
pub struct Gathered {
    pub node: String,
    pub index: usize,
    pub status: Status,
    pub reason: Option<String>,
    pub pod: Option<String>,
    /// Directory (relative to `out`) holding its files, when gathered.
    pub dir: Option<String>,
    pub files: Vec<String>,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    /// The pod's `status.qosClass`, when a pod was seen.
    pub qos_class: Option<String>,
}

/// A node the selector picked.
#[derive(Debug, Clone, Default)]
pub struct Selected {
    pub name: String,
    /// One line: `Ready=True`, `Ready=Unknown (…)`.
    pub ready: String,
    /// `status.capacity.cpu` and `status.allocatable.cpu` (quantities).
    pub cpu_capacity: Option<String>,
    pub cpu_allocatable: Option<String>,
}

/// The whole run.
#[derive(Debug)]
pub struct Outcome {
    pub run: String,
    pub nodes: Vec<Gathered>,
    pub interrupted: bool,
    pub cleanup: crate::model::Cleanup,
}

/// The nodes the label selector picks, sorted by name, with a one-line Ready summary each.
pub async fn select_nodes(s: &Session, selector: &str) -> Result<Vec<Selected>> {
    let api: Api<Node> = Api::all(s.client.clone());
    let list = api
        .list(&ListParams::default().labels(selector))
        .await
        .map_err(|e| Error::api(format!("listing nodes with selector '{selector}'"), e))?;
    if list.items.is_empty() {
        return Err(Error::NoNodes { selector: selector.to_string() });
    }
    let mut out: Vec<Selected> = list
        .items
        .iter()
        .map(|n| {
            let st = n.status.as_ref();
            Selected {
                name: n.metadata.name.clone().unwrap_or_default(),
                ready: ready_text(n),
                cpu_capacity: crate::cpus::cpu_quantity(st.and_then(|s| s.capacity.as_ref())),
                cpu_allocatable: crate::cpus::cpu_quantity(st.and_then(|s| s.allocatable.as_ref())),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Why a Guaranteed pod asking `cpus` whole CPUs can never be scheduled on `node` (its
/// allocatable CPU is smaller), or `None` when it fits or the allocatable CPU is unknown.
pub fn too_few_cpus(node: &Selected, cpus: u32) -> Option<String> {
    let alloc = node.cpu_allocatable.as_deref()?;
    let millis = crate::cpus::cpu_millis(alloc)?;
    if millis >= u64::from(cpus) * 1000 {
        return None;
    }
    let capacity = match node.cpu_capacity.as_deref() {
        Some(c) if crate::cpus::cpu_millis(c).is_some_and(|cap| cap > millis) => {
            format!(" of capacity {c}; the kubelet keeps the rest for the system")
        }
        Some(c) => format!(" of capacity {c}"),
        None => String::new(),
    };
    let fit = match millis / 1000 {
        0 => "not one whole CPU is left for pods".to_string(),
        w => format!("at most {w} whole CPU(s) fit"),
    };
    Some(format!(
        "never schedulable: a Guaranteed pod asking {cpus} whole CPU(s) does not fit on node {}, \
         which has {alloc} allocatable CPU(s){capacity}: {fit}",
        node.name
    ))
}

/// `Ready=True`, `Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)`.
pub fn ready_text(n: &Node) -> String {
    let cond = n
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
    match cond {
        None => "no Ready condition (no kubelet ever reported)".into(),
        Some(c) if c.status == "True" => "Ready=True".into(),
        Some(c) => format!(
            "Ready={} ({}: {})",
            c.status,
            c.reason.as_deref().unwrap_or("-"),
            c.message.as_deref().unwrap_or("-")
        ),
    }
}

/// The pod's state in the API's words, for progress and for "why it never started".
pub fn describe(pod: &Pod) -> (PodState, String) {
    let st = pod.status.clone().unwrap_or_default();
    let phase = st.phase.as_deref().unwrap_or("Unknown");
    let cs = st.container_statuses.as_ref().and_then(|v| v.first());
    match phase {
        "Succeeded" | "Failed" => {
            let term = cs.and_then(|c| c.state.as_ref()).and_then(|s| s.terminated.as_ref());
            let mut text = phase.to_string();
            if let Some(t) = term {
                text.push_str(&format!(" (exit {}", t.exit_code));
                if let Some(r) = &t.reason {
                    text.push_str(&format!(", {r}"));
                }
                text.push(')');
            }
            if let Some(r) = &st.reason {
                text.push_str(&format!(": {r}"));
                if let Some(m) = &st.message {
                    text.push_str(&format!(": {m}"));
                }
            }
            (PodState::Ended { exit: term.map(|t| t.exit_code) }, text)
        }
        "Running" => (PodState::Running, "Running".into()),
        _ => {
            if let Some(w) = cs.and_then(|c| c.state.as_ref()).and_then(|s| s.waiting.as_ref()) {
                let reason = w.reason.clone().unwrap_or_else(|| "Waiting".into());
                let text = format!("Pending: {reason}: {}", w.message.as_deref().unwrap_or("-"));
                // Waiting reasons that never resolve on their own.
                let hopeless = matches!(
                    reason.as_str(),
                    "ErrImageNeverPull" | "InvalidImageName" | "CreateContainerConfigError"
                );
                return (PodState::Waiting { hopeless }, text);
            }
            let conds = st.conditions.unwrap_or_default();
            let sched = conds.iter().find(|c| c.type_ == "PodScheduled");
            let text = match sched {
                Some(c) if c.status != "True" => format!(
                    "Pending: not scheduled: {}",
                    c.message.as_deref().or(c.reason.as_deref()).unwrap_or("-")
                ),
                Some(_) => format!(
                    "Pending: scheduled on {}, no container status from its kubelet yet",
                    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("?")
                ),
                None => "Pending: not yet seen by the scheduler".into(),
            };
            (PodState::Waiting { hopeless: false }, text)
        }
    }
}

/// A pod's state, reduced to what the controller acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodState {
    Waiting { hopeless: bool },
    Running,
    Ended { exit: Option<i32> },
}

#[derive(Debug)]
enum Phase {
    Waiting,
    Running(Instant),
    Gathering,
    Done,
}

struct Track {
    node: String,
    ready: String,
    qos: Option<String>,
    phase: Phase,
    last_text: String,
    pod: Option<String>,
    result: Option<Gathered>,
    start_s: Option<f64>,
}

/// Run `spec` on every node in `nodes` and gather. A node that can never hold the pod (a
/// Guaranteed pod asking more whole CPUs than the node has allocatable) gets no Job: it is
/// reported at once, with the numbers.
pub async fn run(
    s: &Session,
    nodes: &[Selected],
    spec: &RunSpec,
    on: &mut (dyn FnMut(&Event<'_>) + Send),
) -> Result<Outcome> {
    let run = labels::new_run_id();
    let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    on(&Event::Nodes { nodes: &names, run: &run, namespace: &s.namespace });
    std::fs::create_dir_all(&spec.out).map_err(|e| Error::io(&spec.out, e))?;
    let jobs: Api<Job> = Api::namespaced(s.client.clone(), &s.namespace);
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    let t0 = Instant::now();
    let deadline_s = (spec.pod.start_timeout + spec.task.expected() * 2 + Duration::from_secs(300))
        .as_secs() as i64;
    let mut tracks: Vec<Track> = nodes
        .iter()
        .map(|n| Track {
            node: n.name.clone(),
            ready: n.ready.clone(),
            qos: None,
            phase: Phase::Waiting,
            last_text: String::new(),
            pod: None,
            result: None,
            start_s: None,
        })
        .collect();

    // Create every Job, a few at a time.
    let specs: Vec<job::Spec> = names
        .iter()
        .enumerate()
        .map(|(i, node)| job::Spec {
            name: labels::job_name(spec.task.verb(), &run, node, i),
            namespace: s.namespace.clone(),
            node: node.clone(),
            labels: labels::for_node(&run, spec.task.verb(), i),
            image: spec.pod.image.clone(),
            pull_policy: spec.pod.pull_policy,
            command: spec.task.argv(),
            guaranteed_cpus: spec.guaranteed_cpus,
            deadline_s,
        })
        .collect();
    for (i, n) in nodes.iter().enumerate() {
        let Some(reason) = spec.guaranteed_cpus.and_then(|c| too_few_cpus(n, c)) else { continue };
        tracks[i].phase = Phase::Done;
        tracks[i].result = Some(not_run(&names[i], i, Status::NeverStarted, reason.clone()));
        on(&Event::Done { node: &names[i], status: Status::NeverStarted, text: &reason });
    }
    let refused: Vec<bool> = tracks.iter().map(|t| matches!(t.phase, Phase::Done)).collect();
    let runnable = specs.iter().enumerate().filter(|(i, _)| !refused[*i]);
    let mut created = futures::stream::iter(runnable.map(|(i, js)| {
        let jobs = jobs.clone();
        async move { (i, jobs.create(&PostParams::default(), &job::build(js)).await) }
    }))
    .buffer_unordered(16);
    let mut fatal = None;
    while let Some((i, r)) = created.next().await {
        match r {
            Ok(_) => on(&Event::Created { node: &names[i], job: &specs[i].name }),
            Err(e) => {
                let e = Error::api(
                    format!("creating Job {} in namespace {}", specs[i].name, s.namespace),
                    e,
                );
                if matches!(e, Error::Forbidden { .. }) {
                    fatal = Some(e);
                    break;
                }
                let reason = e.to_string();
                tracks[i].phase = Phase::Done;
                tracks[i].result =
                    Some(not_run(&names[i], i, Status::NeverStarted, reason.clone()));
                on(&Event::Done { node: &names[i], status: Status::NeverStarted, text: &reason });
            }
        }
    }
    drop(created);
    if let Some(e) = fatal {
        let _ = cleanup(s, &run, &mut |_| {}).await;
        return Err(e);
    }

    let selector = labels::run_selector(&run);
    let mut watch = watcher(pods.clone(), watcher::Config::default().labels(&selector))
        .default_backoff()
        .boxed();
    let mut gathers = FuturesUnordered::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| Error::io("SIGTERM handler", e))?;
    let mut interrupted = false;
    let expected = spec.task.expected();
    let run_limit = expected + expected / 2 + Duration::from_secs(120);

    while tracks.iter().any(|t| !matches!(t.phase, Phase::Done)) {
        tokio::select! {
            ev = watch.next() => {
                let pod = match ev {
                    Some(Ok(watcher::Event::Apply(p) | watcher::Event::InitApply(p))) => p,
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => {
                        if let watcher::Error::WatchStartFailed(kube::Error::Api(st)) | watcher::Error::InitialListFailed(kube::Error::Api(st)) = &e {
                            if st.code == 403 {
                                let _ = cleanup(s, &run, &mut |_| {}).await;
                                return Err(Error::Forbidden { doing: format!("watching pods in namespace {}", s.namespace), message: st.message.clone() });
                            }
                        }
                        continue;
                    }
                    None => break,
                };
                let Some(i) = pod_index(&pod).filter(|i| *i < tracks.len()) else { continue };
                let t = &mut tracks[i];
                if matches!(t.phase, Phase::Done | Phase::Gathering) { continue; }
                let (state, text) = describe(&pod);
                t.pod = pod.metadata.name.clone();
                if let Some(q) = pod.status.as_ref().and_then(|s| s.qos_class.clone()) {
                    t.qos = Some(q);
                }
                if text != t.last_text {
                    on(&Event::State { node: &t.node, text: &text });
                    t.last_text = text.clone();
                }
                match state {
                    PodState::Running => {
                        if matches!(t.phase, Phase::Waiting) {
                            t.phase = Phase::Running(Instant::now());
                            t.start_s = Some(t0.elapsed().as_secs_f64());
                        }
                    }
                    PodState::Waiting { hopeless: true } => {
                        t.phase = Phase::Done;
                        let reason = format!("{text} (node {})", t.ready);
                        on(&Event::Done { node: &t.node, status: Status::NeverStarted, text: &reason });
                        t.result = Some(not_run(&t.node, i, Status::NeverStarted, reason));
                    }
                    PodState::Waiting { .. } => {}
                    PodState::Ended { exit } => {
                        if t.start_s.is_none() {
                            t.start_s = Some(t0.elapsed().as_secs_f64());
                        }
                        t.phase = Phase::Gathering;
                        let name = t.pod.clone().unwrap_or_default();
                        let dir = labels::node_dir(&t.node, i);
                        let (pods, out) = (pods.clone(), spec.out.clone());
                        gathers.push(async move {
                            let r = gather(&pods, &name, &out, &dir).await;
                            (i, exit, text, r)
                        });
                    }
                }
            }
            Some((i, exit, text, r)) = gathers.next(), if !gathers.is_empty() => {
                let t = &mut tracks[i];
                t.phase = Phase::Done;
                let end_s = Some(t0.elapsed().as_secs_f64());
                let g = match r {
                    Ok((dir, files)) => {
                        let status = if exit == Some(0) || exit == Some(1) { Status::Completed } else { Status::Failed };
                        let reason = (status == Status::Failed).then(|| text.clone());
                        let msg = format!("{text}, {} file(s) gathered into {dir}/", files.len());
                        on(&Event::Done { node: &t.node, status, text: &msg });
                        Gathered { node: t.node.clone(), index: i, status, reason, pod: t.pod.clone(), dir: Some(dir), files, start_s: t.start_s, end_s, qos_class: t.qos.clone() }
                    }
                    Err(e) => {
                        let reason = format!("{text}; results not gathered: {e}");
                        on(&Event::Done { node: &t.node, status: Status::Failed, text: &reason });
                        Gathered { reason: Some(reason), pod: t.pod.clone(), start_s: t.start_s, end_s, qos_class: t.qos.clone(), ..not_run(&t.node, i, Status::Failed, String::new()) }
                    }
                };
                t.result = Some(g);
            }
            _ = tick.tick() => {
                for (i, t) in tracks.iter_mut().enumerate() {
                    let late = match t.phase {
                        Phase::Waiting if t0.elapsed() >= spec.pod.start_timeout => Some(Status::NeverStarted),
                        Phase::Running(since) if since.elapsed() >= run_limit => Some(Status::TimedOut),
                        _ => None,
                    };
                    let Some(status) = late else { continue };
                    let reason = match status {
                        Status::NeverStarted => format!(
                            "not started after {}: {} (node {}){}",
                            util::duration::format(spec.pod.start_timeout),
                            if t.last_text.is_empty() { "no pod seen" } else { &t.last_text },
                            t.ready,
                            cpu_shortage(spec.guaranteed_cpus, &t.last_text, &nodes[i])
                        ),
                        _ => format!("still running after {}", util::duration::format(run_limit)),
                    };
                    on(&Event::Done { node: &t.node, status, text: &reason });
                    t.phase = Phase::Done;
                    t.result = Some(Gathered { pod: t.pod.clone(), start_s: t.start_s, ..not_run(&t.node, i, status, reason) });
                }
            }
            _ = &mut ctrl_c => { interrupted = true; }
            _ = term.recv() => { interrupted = true; }
        }
        if interrupted {
            on(&Event::Interrupted);
            for (i, t) in tracks.iter_mut().enumerate() {
                if !matches!(t.phase, Phase::Done) {
                    t.phase = Phase::Done;
                    let reason = format!(
                        "interrupted (Ctrl-C) while {}",
                        if t.last_text.is_empty() { "waiting" } else { &t.last_text }
                    );
                    t.result = Some(Gathered {
                        pod: t.pod.clone(),
                        start_s: t.start_s,
                        ..not_run(&t.node, i, Status::Interrupted, reason)
                    });
                }
            }
            break;
        }
    }
    drop(watch);
    drop(gathers);
    let cleanup = cleanup(s, &run, on).await?;
    let nodes = tracks
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            t.result.unwrap_or_else(|| not_run(&t.node, i, Status::Interrupted, "no result".into()))
        })
        .collect();
    Ok(Outcome { run, nodes, interrupted, cleanup })
}

/// For a Guaranteed pod the scheduler finds no room for: the numbers behind "Insufficient cpu".
fn cpu_shortage(asked: Option<u32>, text: &str, node: &Selected) -> String {
    match asked {
        Some(n) if text.contains("Insufficient cpu") => format!(
            "; the pod asks {n} whole CPU(s), node {} has {} allocatable, part of it requested by \
             other pods",
            node.name,
            node.cpu_allocatable.as_deref().unwrap_or("?")
        ),
        _ => String::new(),
    }
}

fn not_run(node: &str, index: usize, status: Status, reason: String) -> Gathered {
    Gathered {
        node: node.to_string(),
        index,
        status,
        reason: Some(reason),
        pod: None,
        dir: None,
        files: vec![],
        start_s: None,
        end_s: None,
        qos_class: None,
    }
}

fn pod_index(p: &Pod) -> Option<usize> {
    p.metadata.labels.as_ref()?.get(labels::NODE_INDEX)?.parse().ok()
}

/// Read the pod's log through the API and unpack its payload into `out/dir`.
async fn gather(
    pods: &Api<Pod>,
    name: &str,
    out: &Path,
    dir: &str,
) -> Result<(String, Vec<String>), String> {
    let params = LogParams {
        container: Some(job::CONTAINER.to_string()),
        limit_bytes: Some((bundle::MAX_ENCODED + (1 << 20)) as i64),
        ..Default::default()
    };
    let log = pods
        .logs(name, &params)
        .await
        .map_err(|e| format!("reading the log of pod {name}: {e}"))?;
    let files = bundle::receive(&log, &out.join(dir))?;
    Ok((dir.to_string(), files))
}

/// Delete everything labelled with `run` (or, `run` = None, with any run id) in the session's
/// namespace: Jobs (background propagation), pods that never started (grace 0: no kubelet will
/// ever confirm), the rest with their grace period (the agent gives the RT budget back); then
/// watch until no labelled pod is left (at most 60 s).
pub async fn cleanup(
    s: &Session,
    run: &str,
    on: &mut (dyn FnMut(&Event<'_>) + Send),
) -> Result<crate::model::Cleanup> {
    let sel = labels::run_selector(run);
    delete_labelled(s, &s.namespace, &sel, on).await
}

pub(crate) async fn delete_labelled(
    s: &Session,
    namespace: &str,
    sel: &str,
    on: &mut (dyn FnMut(&Event<'_>) + Send),
) -> Result<crate::model::Cleanup> {
    let jobs: Api<Job> = Api::namespaced(s.client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), namespace);
    let lp = ListParams::default().labels(sel);
    let bg = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..Default::default()
    };
    let deleted_jobs = match jobs.delete_collection(&bg, &lp).await {
        Ok(either) => either.map_left(|l| l.items.len()).left_or(0),
        Err(e) => {
            return Err(Error::api(
                format!("deleting Jobs labelled {sel} in namespace {namespace}"),
                e,
            ))
        }
    };
    let force = DeleteParams { grace_period_seconds: Some(0), ..Default::default() };
    let pending = pods
        .delete_collection(
            &force,
            &ListParams::default().labels(sel).fields("status.phase=Pending"),
        )
        .await
        .map_err(|e| Error::api(format!("deleting pending pods labelled {sel}"), e))?
        .map_left(|l| l.items.len())
        .left_or(0);
    let rest = pods
        .delete_collection(&DeleteParams::default(), &lp)
        .await
        .map_err(|e| Error::api(format!("deleting pods labelled {sel}"), e))?
        .map_left(|l| l.items.len())
        .left_or(0);
    let leftover = wait_gone(&pods, sel, Duration::from_secs(60)).await;
    let c = crate::model::Cleanup { jobs: deleted_jobs, pods: pending + rest, leftover };
    on(&Event::Cleaned { jobs: c.jobs, pods: c.pods, leftover: &c.leftover });
    Ok(c)
}

/// Watch the pods of `sel` until none is left; the names still there at the limit.
async fn wait_gone(pods: &Api<Pod>, sel: &str, limit: Duration) -> Vec<String> {
    let mut alive: BTreeMap<String, ()> = BTreeMap::new();
    let mut listed = false;
    let mut stream =
        watcher(pods.clone(), watcher::Config::default().labels(sel)).default_backoff().boxed();
    let sleep = tokio::time::sleep(limit);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            ev = stream.next() => match ev {
                Some(Ok(watcher::Event::Init)) => { alive.clear(); listed = false; }
                Some(Ok(watcher::Event::InitApply(p) | watcher::Event::Apply(p))) => { alive.insert(p.metadata.name.unwrap_or_default(), ()); }
                Some(Ok(watcher::Event::Delete(p))) => { alive.remove(&p.metadata.name.unwrap_or_default()); }
                Some(Ok(watcher::Event::InitDone)) => { listed = true; }
                Some(Err(_)) => {}
                None => break,
            },
            _ = &mut sleep => break,
        }
        if listed && alive.is_empty() {
            return vec![];
        }
    }
    alive.into_keys().map(|n| format!("pod/{n}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: serde_json::Value) -> Pod {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn pending_pods_say_why() {
        let p = pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [], "nodeName": "fake-0001"},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}}),
        );
        let (s, text) = describe(&p);
        assert_eq!(s, PodState::Waiting { hopeless: false });
        assert_eq!(
            text,
            "Pending: scheduled on fake-0001, no container status from its kubelet yet"
        );
        let p = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": []},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
              "message": "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."}]}}));
        assert!(describe(&p).1.contains("didn't match"));
        let p = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": []},
            "status": {"phase": "Pending", "containerStatuses": [{"name": "lowlat", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
              "state": {"waiting": {"reason": "ErrImageNeverPull", "message": "Container image \"x\" is not present with pull policy of Never"}}}]}}));
        let (s, text) = describe(&p);
        assert_eq!(s, PodState::Waiting { hopeless: true });
        assert!(text.contains("ErrImageNeverPull"), "{text}");
    }

    #[test]
    fn ended_pods_carry_their_exit() {
        let p = pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": []},
            "status": {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory.",
              "containerStatuses": [{"name": "lowlat", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
              "state": {"terminated": {"exitCode": 137, "reason": "Error"}}}]}}));
        let (s, text) = describe(&p);
        assert_eq!(s, PodState::Ended { exit: Some(137) });
        assert_eq!(
            text,
            "Failed (exit 137, Error): Evicted: The node was low on resource: memory."
        );
    }

    #[test]
    fn a_node_too_small_for_the_guaranteed_pod_is_named_with_numbers() {
        let n = Selected {
            name: "vm".into(),
            ready: "Ready=True".into(),
            cpu_capacity: Some("2".into()),
            cpu_allocatable: Some("1".into()),
        };
        assert_eq!(
            too_few_cpus(&n, 4).unwrap(),
            "never schedulable: a Guaranteed pod asking 4 whole CPU(s) does not fit on node vm, \
             which has 1 allocatable CPU(s) of capacity 2; the kubelet keeps the rest for the \
             system: at most 1 whole CPU(s) fit"
        );
        assert_eq!(too_few_cpus(&n, 1), None);
        let all = Selected { cpu_allocatable: Some("2".into()), ..n.clone() };
        assert!(
            too_few_cpus(&all, 4).unwrap().contains("has 2 allocatable CPU(s) of capacity 2: at"),
            "{:?}",
            too_few_cpus(&all, 4)
        );
        let small = Selected { cpu_allocatable: Some("500m".into()), ..n.clone() };
        assert!(too_few_cpus(&small, 1).unwrap().ends_with("not one whole CPU is left for pods"));
        let unknown = Selected { cpu_allocatable: None, ..n.clone() };
        assert_eq!(too_few_cpus(&unknown, 64), None);
        let busy = "Pending: not scheduled: 0/2 nodes are available: 1 Insufficient cpu.";
        assert!(cpu_shortage(Some(1), busy, &n).contains("node vm has 1 allocatable"));
        assert_eq!(cpu_shortage(None, busy, &n), "");
    }

    #[test]
    fn ready_conditions_read() {
        let n: Node = serde_json::from_value(serde_json::json!({"metadata": {"name": "n"}, "status": {"conditions": [
            {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}]}}))
        .unwrap();
        assert_eq!(
            ready_text(&n),
            "Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)"
        );
        let n: Node =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "n"}})).unwrap();
        assert!(ready_text(&n).starts_with("no Ready condition"));
    }
}
