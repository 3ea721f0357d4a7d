//! What runs inside each node's pod (`lowlat cluster agent`, hidden): give the pod's cgroup
//! chain real-time budget ([`crate::rt`]), run one lowlat command as a child (its progress goes
//! to the log), give the budget back, then print the result directory on stdout as a
//! [`crate::bundle`] payload, which the controller reads through the API (the pod's log).
//!
//! A SIGTERM (the controller deleting the Job on Ctrl-C) is passed on to the child as SIGINT, so
//! it writes partial results, and the budget is still restored.

use std::io::Write as _;
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::rt;
use util::exit::ExitCode;

/// What the agent does.
#[derive(Debug, Clone)]
pub struct Config {
    /// RT budget per level, µs per period (0: do not touch the cgroups).
    pub budget_us: i64,
    /// The child's result directory (packed at the end).
    pub out: PathBuf,
    /// The lowlat binary.
    pub exe: PathBuf,
    /// The child's arguments (a lowlat subcommand).
    pub args: Vec<String>,
    /// Where to mount the cgroup v1 `cpu` hierarchy.
    pub mount_dir: PathBuf,
    /// The node's grant records ([`rt::LEDGER_DIR`], a hostPath): restored from at the start,
    /// this run's own written before granting. Not there: no records (said in the report).
    pub ledger: PathBuf,
    /// Only give back what killed runs left on record (`cluster clean`'s per-node pass): no
    /// grant, no child.
    pub recover_only: bool,
}

impl Config {
    /// The agent as it runs in a pod: this binary as the child, the `cpu` hierarchy mounted
    /// under /tmp and the node's grant records in [`rt::LEDGER_DIR`].
    pub fn in_pod(
        budget_us: i64,
        out: PathBuf,
        args: Vec<String>,
        recover_only: bool,
    ) -> std::io::Result<Self> {
        Ok(Self {
            budget_us,
            out,
            exe: std::env::current_exe()?,
            args,
            mount_dir: PathBuf::from("/tmp/lowlat-cgroup-cpu"),
            ledger: PathBuf::from(rt::LEDGER_DIR),
            recover_only,
        })
    }
}

/// Written as `agent.json` beside the child's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    /// The child's exit status (`None`: it could not be started or was killed by a signal).
    pub exit_code: Option<i32>,
    pub args: Vec<String>,
    /// The child could not be started, or ended by a signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The agent was asked to stop (SIGTERM/SIGINT) and passed it on.
    pub interrupted: bool,
    /// The CPUs the container may run on and the node's online CPUs, read in the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<crate::cpus::Seen>,
}

/// File names inside a node's result directory.
pub const RT_FILE: &str = "rt-budget.json";
pub const SUMMARY_FILE: &str = "agent.json";

fn say(msg: &str) {
    eprintln!("lowlat-agent: {msg}");
}

fn empty_report(cfg: &Config) -> rt::Report {
    rt::Report {
        state: rt::State::NotNeeded,
        detail: String::new(),
        cgroup: None,
        budget_us: cfg.budget_us,
        levels: vec![],
        recovered: vec![],
    }
}

/// Read `/proc/self/cgroup` and mount the v1 `cpu` hierarchy afresh at `cfg.mount_dir`
/// (privileged pod, no cgroup namespace on v1: the mount shows the whole tree). `Ok(None)`:
/// nothing to do here (cgroup v2, or no RT group scheduling), said in `report`.
fn mount(cfg: &Config, report: &mut rt::Report) -> Result<Option<rt::CpuCgroup>, String> {
    let text = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let Some(cg) = rt::parse_proc_cgroup(&text) else {
        report.detail =
            "no cgroup v1 cpu hierarchy (cgroup v2): RT group scheduling is not in the way".into();
        return Ok(None);
    };
    report.cgroup = Some(cg.path.clone());
    std::fs::create_dir_all(&cfg.mount_dir)
        .map_err(|e| format!("cannot create {}: {e}", cfg.mount_dir.display()))?;
    let data = std::ffi::CString::new(cg.controllers.clone()).unwrap_or_default();
    rustix::mount::mount(
        "cgroup",
        &cfg.mount_dir,
        "cgroup",
        rustix::mount::MountFlags::empty(),
        Some(data.as_c_str()),
    )
    .map_err(|e| {
        format!(
            "cannot mount the cgroup v1 '{}' hierarchy to grant RT budget ({e}): the pod must be \
             privileged",
            cg.controllers
        )
    })?;
    if !cfg.mount_dir.join(rt::RUNTIME).is_file() {
        unmount(cfg);
        report.detail = format!(
            "no {} in the cpu hierarchy: the kernel has no RT group scheduling",
            rt::RUNTIME
        );
        return Ok(None);
    }
    Ok(Some(cg))
}

/// Give back what killed runs left on the node's ledger (see [`rt::recover`]); the hierarchy is
/// mounted.
fn recover(cfg: &Config, report: &mut rt::Report) {
    report.recovered = rt::recover(&cfg.mount_dir, &cfg.ledger);
    for r in &report.recovered {
        say(&format!("earlier grant {}: {:?}: {}", r.record, r.outcome, r.detail));
    }
}

/// `cluster clean`'s pass on a node: mount, give back what killed runs left, unmount.
fn recover_only(cfg: &Config) -> rt::Report {
    let mut report = empty_report(cfg);
    report.budget_us = 0;
    match mount(cfg, &mut report) {
        Ok(Some(_)) => {
            recover(cfg, &mut report);
            unmount(cfg);
            report.detail = format!(
                "{} earlier grant(s) on record in {}",
                report.recovered.len(),
                cfg.ledger.display()
            );
        }
        Ok(None) => {}
        Err(e) => {
            report.state = rt::State::Failed;
            report.detail = e;
        }
    }
    report
}

/// Grant the budget: mount, restore what killed runs left, read the chain, put the grant on
/// record in the ledger, grant. The mount stays until [`finish_rt`].
fn grant(cfg: &Config) -> (rt::Report, Option<rt::Chain>) {
    let mut report = empty_report(cfg);
    if cfg.budget_us <= 0 {
        report.detail = "no RT budget requested (budget 0): the cgroups were not touched".into();
        return (report, None);
    }
    let cg = match mount(cfg, &mut report) {
        Ok(Some(cg)) => cg,
        Ok(None) => return (report, None),
        Err(e) => {
            report.state = rt::State::Failed;
            report.detail = e;
            return (report, None);
        }
    };
    recover(cfg, &mut report);
    let mut chain = match rt::Chain::read(&cfg.mount_dir, &cg.path, cfg.budget_us) {
        Ok(c) => c,
        Err(e) => {
            unmount(cfg);
            report.state = rt::State::Failed;
            report.detail = format!("reading the pod's cgroup chain: {e}");
            return (report, None);
        }
    };
    let record = rt::Record::of(&chain, &cg.path);
    let on_record = if record.levels.is_empty() {
        String::new()
    } else if !cfg.ledger.is_dir() {
        format!("; not on record ({} missing: a killed pod's grant stays)", cfg.ledger.display())
    } else {
        match rt::write_record(&cfg.ledger, &record) {
            Ok(p) => format!("; on record in {}", p.display()),
            Err(e) => format!("; not on record ({e}: a killed pod's grant stays)"),
        }
    };
    match chain.grant() {
        Ok(state) => {
            report.state = state;
            report.detail = format!(
                "{} µs per period granted down {} ({} level(s) written){on_record}",
                cfg.budget_us,
                cg.path,
                chain.levels.iter().filter(|l| l.granted.is_some()).count()
            );
        }
        Err(e) => {
            if chain.restore() {
                forget(cfg, &cg.path);
            }
            report.state = rt::State::Failed;
            report.detail = e;
        }
    }
    report.levels = chain.levels.clone();
    (report, Some(chain))
}

/// Remove this run's record once everything is back.
fn forget(cfg: &Config, cgroup: &str) {
    let p = cfg.ledger.join(rt::record_file(cgroup));
    if let Err(e) = std::fs::remove_file(&p) {
        if e.kind() != std::io::ErrorKind::NotFound {
            say(&format!("cannot remove {}: {e}", p.display()));
        }
    }
}

fn unmount(cfg: &Config) {
    let _ = rustix::mount::unmount(&cfg.mount_dir, rustix::mount::UnmountFlags::DETACH);
}

fn finish_rt(cfg: &Config, report: &mut rt::Report, chain: Option<rt::Chain>) {
    let Some(mut chain) = chain else { return };
    if report.state == rt::State::Granted {
        if chain.restore() {
            let cgroup = report.cgroup.clone().unwrap_or_default();
            forget(cfg, &cgroup);
        } else {
            report.detail.push_str(
                "; some levels could not be given back (see levels[].restore_error; the record \
                 stays for the next run or `cluster clean`)",
            );
        }
    }
    report.levels = chain.levels;
    unmount(cfg);
}

fn run_child(cfg: &Config) -> Summary {
    let mut summary = Summary {
        exit_code: None,
        args: cfg.args.clone(),
        error: None,
        interrupted: false,
        cpus: None,
    };
    // The child's stdout (progress) joins our stderr: stdout is reserved for the payload.
    let stdout = match std::io::stderr().as_fd().try_clone_to_owned() {
        Ok(fd) => Stdio::from(fd),
        Err(_) => Stdio::null(),
    };
    let mut child =
        match Command::new(&cfg.exe).args(&cfg.args).stdin(Stdio::null()).stdout(stdout).spawn() {
            Ok(c) => c,
            Err(e) => {
                summary.error = Some(format!("cannot start {}: {e}", cfg.exe.display()));
                return summary;
            }
        };
    let mut forwarded = false;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                summary.exit_code = status.code();
                if status.code().is_none() {
                    summary.error = Some(format!("the measurement ended by a signal ({status})"));
                }
                return summary;
            }
            Ok(None) => {}
            Err(e) => {
                summary.error = Some(format!("waiting for the measurement: {e}"));
                return summary;
            }
        }
        if util::signal::interrupted() && !forwarded {
            forwarded = true;
            summary.interrupted = true;
            say("stop requested: passing SIGINT to the measurement");
            if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn write_json(path: &Path, v: &impl Serialize) {
    match serde_json::to_vec_pretty(v) {
        Ok(b) => {
            if let Err(e) = std::fs::write(path, b) {
                say(&format!("cannot write {}: {e}", path.display()));
            }
        }
        Err(e) => say(&format!("cannot serialize {}: {e}", path.display())),
    }
}

/// Run the agent; returns the exit status for the pod (the child's, or a runtime error).
pub fn run(cfg: &Config) -> ExitCode {
    util::signal::install_flag_only();
    if let Err(e) = std::fs::create_dir_all(&cfg.out) {
        say(&format!("cannot create {}: {e}", cfg.out.display()));
        return ExitCode::Runtime;
    }
    if cfg.recover_only {
        let report = recover_only(cfg);
        say(&format!("earlier grants: {}", report.detail));
        write_json(&cfg.out.join(RT_FILE), &report);
        return match crate::bundle::pack(&cfg.out) {
            Ok(payload) => {
                let mut out = std::io::stdout().lock();
                match out.write_all(payload.as_bytes()).and_then(|()| out.flush()) {
                    Ok(()) if report.state != rt::State::Failed => ExitCode::Ok,
                    _ => ExitCode::Runtime,
                }
            }
            Err(e) => {
                say(&format!("cannot pack {}: {e}", cfg.out.display()));
                ExitCode::Runtime
            }
        };
    }
    let (mut report, chain) = grant(cfg);
    match report.state {
        rt::State::Failed => say(&format!("NOT REAL-TIME: {}", report.detail)),
        _ => say(&format!("real-time budget: {}", report.detail)),
    }
    // What the kubelet's cpuset left this container (the child inherits it).
    let seen = crate::cpus::seen(&host::Root::live());
    say(&format!(
        "container CPUs: {} (online {}){}",
        seen.allowed.as_ref().map_or_else(|| "?".into(), ToString::to_string),
        seen.online.as_ref().map_or_else(|| "?".into(), ToString::to_string),
        if seen.errors.is_empty() {
            String::new()
        } else {
            format!("; {}", seen.errors.join("; "))
        }
    ));
    let mut summary = run_child(cfg);
    summary.cpus = Some(seen);
    finish_rt(cfg, &mut report, chain);
    say(&format!(
        "real-time budget given back: {}",
        report.levels.iter().all(|l| l.granted.is_none() || l.restored.is_some())
    ));
    write_json(&cfg.out.join(RT_FILE), &report);
    write_json(&cfg.out.join(SUMMARY_FILE), &summary);
    match crate::bundle::pack(&cfg.out) {
        Ok(payload) => {
            let mut out = std::io::stdout().lock();
            if out.write_all(payload.as_bytes()).and_then(|()| out.flush()).is_err() {
                return ExitCode::Runtime;
            }
        }
        Err(e) => {
            say(&format!("cannot pack {}: {e}", cfg.out.display()));
            return ExitCode::Runtime;
        }
    }
    match (&summary.error, summary.exit_code) {
        (Some(e), _) => {
            say(e);
            ExitCode::Runtime
        }
        (None, Some(code)) => ExitCode::from_status(code),
        (None, None) => ExitCode::Runtime,
    }
}
