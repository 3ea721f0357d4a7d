//! A measurement as a command runs it: a typed request in, a result and a verdict out.
//! [`latency`] (timer, noise) and [`ticks`] read the live host's model through `host::Root`
//! (the host context every result carries, the online, isolated and `nohz_full` CPUs), choose
//! the CPUs, install the signal handlers (first Ctrl-C: stop and keep a partial result; second:
//! kill an external load and exit 130), start and stop the load, show progress and rewrite
//! the partial result every 5 s while running (atomically, so a run killed hard leaves it).

use std::path::PathBuf;
use std::time::Duration;

use cpuset::{CpuName, CpuSelector};
use host::{Host, ReadOptions, Root};
use results::{HostContext, LatencyResult, TicksResult};
use util::exit::ExitCode;
use util::sched::Policy;
use util::term::{is_tty, Stream};

use crate::error::MeasureError;
use crate::load::{LoadSpec, RunningLoad};
use crate::progress::{Progress, CHECKPOINT_EVERY};
use crate::runner::{pick_main_cpu, Common};
use crate::select::{self, cpus_of, list};
use crate::tracer::Mode;
use crate::{noise, ticks as tick_test, timer};

/// Run length when neither a duration nor a loop count is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// Real-time priority when none is given.
pub const DEFAULT_PRIORITY: u32 = 95;

/// Which latency measurement, with its own settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyKind {
    /// Timer wake-up latency: one wake-up every `interval`, at most `loops` per thread; with
    /// `histogram_us` (cyclictest's `-h N`) the cycle numbers of the samples past N µs are
    /// kept, the first N of them.
    Timer { interval: Duration, loops: Option<u64>, histogram_us: Option<u32> },
    /// OS noise: gaps at or above `threshold` count as noise.
    Noise { threshold: Duration },
}

/// Load on the housekeeping CPUs while measuring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Load {
    /// Built-in stressors.
    Builtin(LoadSpec),
    /// A shell command (e.g. `stress-ng --cpu 1`), in its own process group.
    Command(String),
}

/// A timer or noise measurement to run.
#[derive(Debug, Clone)]
pub struct LatencyRequest {
    pub kind: LatencyKind,
    /// CPUs to measure; default: the isolated CPUs, else every online CPU but the main one.
    pub cpus: Option<CpuSelector>,
    /// Housekeeping CPU for the main thread (never a measured one).
    pub main_cpu: Option<u32>,
    /// Run length; default [`DEFAULT_DURATION`] unless a timer loop count bounds the run.
    pub duration: Option<Duration>,
    /// A maximum at or above this fails the run.
    pub threshold: Option<Duration>,
    /// Stop at the first sample at or above the threshold.
    pub stop_on_threshold: bool,
    pub load: Option<Load>,
    /// Default: SCHED_FIFO for timer, SCHED_OTHER for noise, SCHED_FIFO when a priority is given.
    pub policy: Option<Policy>,
    /// Real-time priority; default [`DEFAULT_PRIORITY`].
    pub priority: Option<u32>,
    /// Hold `/dev/cpu_dma_latency` at 0 while measuring.
    pub dma_latency: bool,
    /// Rewrite the partial result here while running.
    pub checkpoint: Option<PathBuf>,
    /// Show progress on stderr when it is a terminal.
    pub progress: bool,
    /// Recorded as the result's `tool`.
    pub tool: String,
    /// Run from this cgroup (for its RT budget) and move back afterwards.
    pub rt_cgroup: Option<crate::rt_cgroup::RtCgroup>,
    /// Measure with the kernel's tracer (timer: timerlat, noise: osnoise) when it has it;
    /// without it, lowlat's own threads measure and the result says why.
    pub tracer: bool,
    /// With `tracer`: keep the tracer's raw `trace_pipe` text in this file (rtla's `-t`).
    pub save_trace: Option<PathBuf>,
}

/// A tick test to run.
#[derive(Debug, Clone)]
pub struct TicksRequest {
    /// CPUs to keep busy; default: the `nohz_full` CPUs, else the isolated ones, else every
    /// online CPU but the main one.
    pub cpus: Option<CpuSelector>,
    pub main_cpu: Option<u32>,
    pub duration: Duration,
    /// Recorded as the result's `tool`.
    pub tool: String,
}

/// A hardware/firmware latency run (`hwlat`).
#[derive(Debug, Clone)]
pub struct HwlatRequest {
    /// CPUs the detector visits; default every online CPU (an SMI stalls them all; the
    /// detector finds it on whichever it runs).
    pub cpus: Option<CpuSelector>,
    pub duration: Duration,
    pub width: Duration,
    pub window: Duration,
    pub threshold: Duration,
    pub tool: String,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Ran to its end; no sample reached the threshold.
    Passed,
    /// A maximum reached the threshold.
    ThresholdReached,
    /// Stopped by a signal; the result is partial.
    Interrupted,
    /// Ran, but the result holds no evidence a verdict can rest on (no samples, unusable
    /// numbers: `results::evidence`, the reason is in the result's table): never a pass.
    NoEvidence,
}

impl Verdict {
    /// The documented exit code (0, 1, 130).
    pub fn exit_code(self) -> ExitCode {
        match self {
            Self::Passed => ExitCode::Ok,
            Self::ThresholdReached => ExitCode::CheckFailed,
            Self::Interrupted => ExitCode::Interrupted,
            Self::NoEvidence => ExitCode::CheckFailed,
        }
    }
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct Outcome<R> {
    pub result: R,
    pub verdict: Verdict,
}

/// The live host, as far as a measurement needs it (tasks are not read: not needed, and the
/// slowest part on a busy node).
fn live_host() -> (Root, Host) {
    let root = Root::live();
    let host = host::read_with(&root, &ReadOptions { skip_tasks: true, ..Default::default() });
    (root, host)
}

/// Run a timer or noise measurement.
pub fn latency(req: &LatencyRequest) -> Result<Outcome<LatencyResult>, MeasureError> {
    util::signal::install();
    let (_, host) = live_host();
    let cpus = select::measured(&host, req.cpus.as_ref(), req.main_cpu, &[CpuName::Isolated])?;
    if let Some(cpu) = req.main_cpu.filter(|m| cpus.contains(m)) {
        return Err(MeasureError::MainCpuMeasured { cpu });
    }
    // This run owns its CPUs until it returns: a second measurement on one is refused.
    let what = match req.kind {
        LatencyKind::Timer { .. } => "measure timer",
        LatencyKind::Noise { .. } => "measure noise",
    };
    let locks = crate::cpulock::acquire(&crate::cpulock::dir(), &cpus, what)?;
    let online = cpus_of(&host.online_cpus());
    // Moved back when `moved` drops: at the end, on an error return, after Ctrl-C.
    let moved = req.rt_cgroup.as_ref().map(crate::rt_cgroup::enter).transpose()?;
    let (housekeeping, outside) =
        housekeeping(&online, &cpus, util::sched::get_affinity(0).ok().as_ref());
    // Confined to a cpuset with no housekeeping CPU in it (a Guaranteed pod's exclusive CPUs):
    // a load could only run on the measured CPUs, which is not what was asked. Said, not run.
    let mut load_note = None;
    let load_req = match &req.load {
        Some(Load::Builtin(spec))
            if spec.cpus.is_none() && housekeeping.is_empty() && !outside.is_empty() =>
        {
            None
        }
        Some(Load::Command(_)) if housekeeping.is_empty() && !outside.is_empty() => None,
        other => other.as_ref(),
    };
    if req.load.is_some() && load_req.is_none() {
        load_note = Some(format!(
            "NO LOAD: the housekeeping CPUs {} are outside this process's CPU affinity (a cpuset, e.g. \
             a Guaranteed pod's exclusive CPUs, or taskset): a load could only have run on the measured CPUs",
            list(&outside)
        ));
    }
    let mut load = match load_req {
        Some(Load::Builtin(spec)) => Some(RunningLoad::start_builtin(spec, &housekeeping)?),
        Some(Load::Command(cmd)) => Some(RunningLoad::start_command(cmd, &housekeeping)?),
        None => None,
    };
    let common = common(req, &host, cpus, online, load.as_ref().map(|l| l.info.clone()));
    let mut progress = Progress::new(
        req.progress && is_tty(Stream::Stderr),
        common.duration,
        req.checkpoint.clone(),
    );
    let (mode, tracer_name) = match req.kind {
        LatencyKind::Timer { interval, .. } => {
            (Mode::Timerlat { period: interval }, results::tracer::TracerName::Timerlat)
        }
        LatencyKind::Noise { threshold } => {
            (Mode::Osnoise { threshold }, results::tracer::TracerName::Osnoise)
        }
    };
    let mut tracer_note = None;
    let mut _mounted = None;
    let tracefs_dir = if req.tracer {
        match crate::tracer::prepare(tracer_name) {
            Ok((dir, m)) => {
                _mounted = m;
                Some(dir)
            }
            Err(why) => {
                tracer_note = Some(format!(
                    "NO TRACER: {}; measured with lowlat's own threads instead",
                    why.0
                ));
                None
            }
        }
    } else {
        None
    };
    let run = match (req.kind, tracefs_dir) {
        (LatencyKind::Timer { interval, loops: Some(n), .. }, Some(dir))
            if common.duration.is_none() =>
        {
            // timerlat has no loop count: the same number of periods as a duration.
            let mut c = common;
            c.duration = Some(interval.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX)));
            crate::tracer::run(mode, &c, &dir, req.save_trace.as_deref(), &mut progress)
        }
        (_, Some(dir)) => {
            crate::tracer::run(mode, &common, &dir, req.save_trace.as_deref(), &mut progress)
        }
        (LatencyKind::Timer { interval, loops, .. }, None) => {
            timer::run(&timer::TimerConfig { common, interval, loops }, &mut progress)
        }
        (LatencyKind::Noise { threshold }, None) => {
            let cfg =
                noise::NoiseConfig { common, noise_threshold: threshold, tracer_note: !req.tracer };
            noise::run(&cfg, &mut progress)
        }
    };
    progress.finish(run.as_ref().ok());
    let mut r = run?;
    r.notes.extend(locks.not_locked.clone());
    r.notes.extend(tracer_note);
    r.notes.extend(load_note);
    if let (Some(m), Some(s)) = (&moved, r.envelope.scheduling.as_mut()) {
        s.rt_cgroup = Some(m.to.clone());
    }
    drop(moved);
    if let Some(l) = load.as_mut() {
        r.notes.extend(l.exited_early());
        // What ran: how the external command ended.
        if let (Some(exit), Some(info)) = (l.stop(), r.load.as_mut()) {
            info.exit = Some(exit);
        }
    }
    let threshold = req.threshold.map(|t| t.as_nanos() as u64);
    let reached = threshold.is_some_and(|t| r.threads.iter().any(|th| th.stats.max_ns >= t));
    let verdict = if util::signal::interrupted() {
        Verdict::Interrupted
    } else if reached {
        Verdict::ThresholdReached
    } else if results::Evidence::no_evidence(&r).is_some() {
        Verdict::NoEvidence
    } else {
        Verdict::Passed
    };
    Ok(Outcome { result: r, verdict })
}

/// The housekeeping CPUs (online, not measured) this process may use, and those outside its
/// affinity (`allowed`; `None`: unknown, every CPU counts as usable).
fn housekeeping(
    online: &[u32],
    cpus: &[u32],
    allowed: Option<&cpuset::CpuSet>,
) -> (Vec<u32>, Vec<u32>) {
    online
        .iter()
        .copied()
        .filter(|c| !cpus.contains(c))
        .partition(|&c| allowed.is_none_or(|a| a.contains(c as usize)))
}

/// The runner's settings for `req` on `host`, with the parameters the result records.
fn common(
    req: &LatencyRequest,
    host: &Host,
    cpus: Vec<u32>,
    online: Vec<u32>,
    load: Option<results::LoadInfo>,
) -> Common {
    let ns = |d: Duration| d.as_nanos() as u64;
    let (default_policy, mut params) = match req.kind {
        LatencyKind::Timer { interval, loops, .. } => (
            Policy::Fifo,
            results::LatencyParams { interval_ns: Some(ns(interval)), loops, ..Default::default() },
        ),
        LatencyKind::Noise { threshold } => (
            Policy::Other,
            results::LatencyParams {
                noise_threshold_ns: Some(ns(threshold)),
                ..Default::default()
            },
        ),
    };
    let policy = match (req.policy, req.priority) {
        (Some(p), _) => p,
        (None, Some(_)) => Policy::Fifo,
        (None, None) => default_policy,
    };
    let priority = req.priority.unwrap_or(DEFAULT_PRIORITY);
    let loops = matches!(req.kind, LatencyKind::Timer { loops: Some(_), .. });
    let duration = req.duration.or((!loops).then_some(DEFAULT_DURATION));
    let threshold_ns = req.threshold.map(|d| d.as_nanos() as u64);
    params.cpus = Some(list(&cpus));
    params.main_cpu = pick_main_cpu(req.main_cpu, &cpus, &online);
    params.policy = Some(policy);
    params.priority = policy.is_realtime().then_some(priority);
    params.duration_ns = duration.map(ns);
    params.threshold_ns = threshold_ns;
    params.stop_on_threshold = Some(req.stop_on_threshold);
    params.dma_latency = Some(req.dma_latency);
    Common {
        cpus,
        main_cpu: req.main_cpu,
        online,
        duration,
        policy,
        priority,
        threshold_ns,
        stop_on_threshold: req.stop_on_threshold,
        dma_latency: req.dma_latency,
        host: HostContext::from_host(host),
        tool: req.tool.clone(),
        started_at: Some(util::time::now_rfc3339()),
        params,
        load,
        checkpoint_every: req.checkpoint.as_ref().map(|_| CHECKPOINT_EVERY),
        histogram_us: match req.kind {
            LatencyKind::Timer { histogram_us, .. } => histogram_us,
            LatencyKind::Noise { .. } => None,
        },
    }
}

/// Run hwlat. Without the tracer there is nothing to fall back to: the error says why.
pub fn hwlat(req: &HwlatRequest) -> Result<Outcome<LatencyResult>, MeasureError> {
    util::signal::install();
    let (_, host) = live_host();
    let (dir, _mounted) = crate::tracer::prepare(results::tracer::TracerName::Hwlat)
        .map_err(|u| MeasureError::TracerUnavailable(u.0))?;
    let cpus = match &req.cpus {
        Some(sel) => select::measured(&host, Some(sel), None, &[])?,
        None => cpus_of(&host.online_cpus()),
    };
    let cfg = crate::tracer::hwlat::HwlatConfig {
        params: results::LatencyParams {
            cpus: Some(list(&cpus)),
            duration_ns: Some(req.duration.as_nanos() as u64),
            width_ns: Some(req.width.as_nanos() as u64),
            window_ns: Some(req.window.as_nanos() as u64),
            threshold_ns: Some(req.threshold.as_nanos() as u64),
            ..results::LatencyParams::default()
        },
        cpus,
        duration: req.duration,
        width: req.width,
        window: req.window,
        threshold: req.threshold,
        host: HostContext::from_host(&host),
        tool: req.tool.clone(),
        started_at: Some(util::time::now_rfc3339()),
    };
    let result = crate::tracer::hwlat::run(&cfg, &dir)?;
    let any = result.threads.iter().any(|t| t.hwlat.as_ref().is_some_and(|h| h.samples > 0));
    let verdict = if util::signal::interrupted() {
        Verdict::Interrupted
    } else if any {
        Verdict::ThresholdReached
    } else {
        Verdict::Passed
    };
    Ok(Outcome { result, verdict })
}

/// `CONFIG_HZ` of the running kernel, from `/boot/config-RELEASE` when it is there.
fn kernel_hz(root: &Root, host: &Host) -> Option<u32> {
    let release = host.kernel.release.as_deref()?;
    tick_test::config_hz(&root.read_string(&format!("boot/config-{release}")).ok()?)
}

/// Run the tick test.
pub fn ticks(req: &TicksRequest) -> Result<Outcome<TicksResult>, MeasureError> {
    util::signal::install();
    let (root, host) = live_host();
    let prefer = [CpuName::NohzFull, CpuName::Isolated];
    let cpus = select::measured(&host, req.cpus.as_ref(), req.main_cpu, &prefer)?;
    let locks = crate::cpulock::acquire(&crate::cpulock::dir(), &cpus, "measure ticks")?;
    let cfg = tick_test::TicksConfig {
        params: results::TicksParams {
            cpus: Some(list(&cpus)),
            duration_ns: Some(req.duration.as_nanos() as u64),
            main_cpu: req.main_cpu,
            ..results::TicksParams::default()
        },
        cpus,
        duration: req.duration,
        main_cpu: req.main_cpu,
        online: cpus_of(&host.online_cpus()),
        // What the kernel applied (sysfs), not what the command line asked for.
        nohz_full: host.cpus.nohz_full.as_ref().map(cpus_of).unwrap_or_default(),
        isolated: host.cpus.isolated.as_ref().map(cpus_of).unwrap_or_default(),
        hz: kernel_hz(&root, &host),
        host: HostContext::from_host(&host),
        tool: req.tool.clone(),
        started_at: Some(util::time::now_rfc3339()),
    };
    let mut result = tick_test::run(&cfg)?;
    result.notes.extend(locks.not_locked.clone());
    drop(locks);
    let verdict = if util::signal::interrupted() {
        Verdict::Interrupted
    } else if results::Evidence::no_evidence(&result).is_some() {
        Verdict::NoEvidence
    } else {
        Verdict::Passed
    };
    Ok(Outcome { result, verdict })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(kind: LatencyKind) -> LatencyRequest {
        LatencyRequest {
            kind,
            cpus: None,
            main_cpu: None,
            duration: None,
            threshold: None,
            stop_on_threshold: false,
            load: None,
            policy: None,
            priority: None,
            dma_latency: true,
            checkpoint: None,
            progress: false,
            tool: "lowlat test".into(),
            rt_cgroup: None,
            tracer: false,
            save_trace: None,
        }
    }

    fn fixture_host() -> Host {
        let mut h = Host::default();
        h.cpus.online = cpuset::CpuSet::parse_list("0-3").ok();
        h
    }

    #[test]
    fn timer_defaults_and_recorded_parameters() {
        let req = request(LatencyKind::Timer {
            interval: Duration::from_micros(1000),
            loops: None,
            histogram_us: None,
        });
        let c = common(&req, &fixture_host(), vec![1, 2], vec![0, 1, 2, 3], None);
        assert_eq!((c.policy, c.priority, c.duration), (Policy::Fifo, 95, Some(DEFAULT_DURATION)));
        assert_eq!(c.checkpoint_every, None);
        let p = &c.params;
        assert_eq!(p.cpus.as_deref(), Some("1-2"));
        assert_eq!(p.main_cpu, Some(0));
        assert_eq!((p.policy, p.priority), (Some(Policy::Fifo), Some(95)));
        assert_eq!((p.interval_ns, p.loops), (Some(1_000_000), None));
        assert_eq!(p.duration_ns, Some(10_000_000_000));
        assert_eq!(p.dma_latency, Some(true));
        assert_eq!(c.host.online.as_deref(), Some("0-3"));
    }

    #[test]
    fn loops_alone_bound_a_timer_run_and_noise_defaults_to_other() {
        let mut req = request(LatencyKind::Timer {
            interval: Duration::from_micros(100),
            loops: Some(200),
            histogram_us: None,
        });
        req.checkpoint = Some(PathBuf::from("t.json"));
        let c = common(&req, &fixture_host(), vec![3], vec![0, 1, 2, 3], None);
        assert_eq!(c.duration, None);
        assert_eq!(c.params.duration_ns, None);
        assert_eq!(c.checkpoint_every, Some(CHECKPOINT_EVERY));
        let noise = request(LatencyKind::Noise { threshold: Duration::from_micros(1) });
        let c = common(&noise, &fixture_host(), vec![3], vec![0, 1, 2, 3], None);
        assert_eq!(c.policy, Policy::Other);
        assert_eq!(c.params.priority, None);
        assert_eq!(c.params.noise_threshold_ns, Some(1000));
        let mut prio = noise.clone();
        prio.priority = Some(50);
        let c = common(&prio, &fixture_host(), vec![3], vec![0, 1, 2, 3], None);
        assert_eq!((c.policy, c.params.priority), (Policy::Fifo, Some(50)));
    }

    #[test]
    fn kernel_hz_comes_from_the_running_kernels_config() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("boot")).unwrap();
        std::fs::write(dir.path().join("boot/config-6.1.0-rt"), "CONFIG_HZ_250=y\nCONFIG_HZ=250\n")
            .unwrap();
        let root = Root::open(dir.path()).unwrap();
        let mut h = fixture_host();
        assert_eq!(kernel_hz(&root, &h), None, "release unknown");
        h.kernel.release = Some("6.1.0-rt".into());
        assert_eq!(kernel_hz(&root, &h), Some(250));
        h.kernel.release = Some("6.2.0".into());
        assert_eq!(kernel_hz(&root, &h), None, "no config for that release");
    }

    #[test]
    fn verdicts_map_to_the_documented_codes() {
        assert_eq!(Verdict::Passed.exit_code().code(), 0);
        assert_eq!(Verdict::ThresholdReached.exit_code().code(), 1);
        assert_eq!(Verdict::NoEvidence.exit_code().code(), 1, "no evidence is never a pass");
        assert_eq!(Verdict::Interrupted.exit_code().code(), 130);
    }

    #[test]
    fn housekeeping_is_where_this_process_may_run() {
        let set = |s: &str| cpuset::CpuSet::parse_list(s).unwrap();
        assert_eq!(housekeeping(&[0, 1, 2, 3], &[2, 3], None), (vec![0, 1], vec![]));
        assert_eq!(housekeeping(&[0, 1, 2, 3], &[2, 3], Some(&set("1-3"))), (vec![1], vec![0]));
        // a Guaranteed pod's container confined to its exclusive CPU 1
        assert_eq!(housekeeping(&[0, 1], &[1], Some(&set("1"))), (vec![], vec![0]));
    }

    #[test]
    fn the_main_cpu_is_never_measured() {
        let mut req = request(LatencyKind::Noise { threshold: Duration::from_micros(1) });
        req.cpus = Some("0".parse().unwrap());
        req.main_cpu = Some(0);
        let e = latency(&req).unwrap_err();
        assert!(matches!(e, MeasureError::MainCpuMeasured { cpu: 0 }), "{e}");
    }
}
