//! `lowlat measure …`: timer/noise/ticks arguments → a `measure` request → one
//! `measure::session` call → the JSON and the table (`results::export`). fsync/etcd: `fsync.rs`.

use std::io::Write as _;

use anyhow::Result;
use cli::args::measure::{Command, Shown};
use measure::session::{self, LatencyKind, LatencyRequest, Load, Outcome, TicksRequest};
use measure::{Input, MeasureError};
use results::export::{cyclictest, table};
use serde::Serialize;

use super::common::Output;
use crate::exit::ExitCode;

/// Run `lowlat measure …`.
pub fn run(cmd: Command) -> Result<ExitCode> {
    let tool = format!("lowlat {}", super::VERSION);
    check_outputs(&cmd)?;
    let (run, kind, cyclictest, tracer, save_trace) = match cmd {
        Command::Timer(mut a) => {
            if let Some(n) = a.threads.filter(|n| *n > 0) {
                return Err(crate::exit::usage(format!(
                    "-t {n}: cyclictest's N unpinned threads have no lowlat equivalent; lowlat \
                     runs one thread pinned to each measured CPU: choose them with -a/--cpus \
                     (e.g. -a 1-{n})"
                )));
            }
            if let Some(b) = a.breaktrace {
                (a.run.threshold, a.run.stop_on_threshold) = (Some(b), true);
            }
            let kind = LatencyKind::Timer {
                interval: a.interval,
                loops: a.loops,
                histogram_us: a.histogram,
            };
            let text = a.cyclictest || a.histogram.is_some();
            (a.run, kind, text.then_some(a.histogram), a.tracer, a.save_trace)
        }
        Command::Noise(a) => {
            let kind = LatencyKind::Noise { threshold: a.noise_threshold };
            (a.run, kind, None, a.tracer, a.save_trace)
        }
        Command::Hwlat(a) => {
            let req = measure::session::HwlatRequest {
                cpus: a.cpus,
                duration: a.duration,
                width: a.width,
                window: a.window,
                threshold: a.threshold,
                tool,
            };
            let out = session::hwlat(&req).map_err(flagged)?;
            return show(
                &a.shown,
                out,
                table::latency,
                !util::term::quiet(),
                report::prom::latency,
            );
        }
        Command::Ticks(a) => {
            let req =
                TicksRequest { cpus: a.cpus, main_cpu: a.main_cpu, duration: a.duration, tool };
            let out = session::ticks(&req).map_err(flagged)?;
            return show(&a.shown, out, table::ticks, !util::term::quiet(), report::prom::ticks);
        }
        Command::Fsync(a) => return super::fsync::run(*a),
        Command::Etcd(a) => return super::fsync::run_etcd(a),
    };
    let Shown { json, .. } = &run.shown;
    let quiet = util::term::quiet();
    let checkpoint = if let Some(Output::File(p)) = &json.json { Some(p.clone()) } else { None };
    let req = LatencyRequest {
        kind,
        cpus: run.cpus,
        main_cpu: run.main_cpu,
        duration: run.duration,
        threshold: run.threshold,
        stop_on_threshold: run.stop_on_threshold,
        load: run.load.map(Load::Builtin).or(run.load_cmd.map(Load::Command)),
        policy: run.policy,
        priority: run.priority,
        dma_latency: !run.no_dma_latency,
        checkpoint,
        progress: !quiet,
        tool,
        rt_cgroup: run.rt_cgroup,
        tracer,
        save_trace,
    };
    let out = session::latency(&req).map_err(flagged)?;
    let view = |r: &_| match cyclictest {
        Some(hist) => cyclictest::to_text(r, hist),
        None => table::latency(r),
    };
    // cyclictest's -q silences the live lines, not the summary it ends with.
    show(&run.shown, out, view, !quiet || cyclictest.is_some(), report::prom::latency)
}

/// Every file the run will write, checked before it measures (issue 21, item 7): a result
/// lost after a 12 h run to a missing directory is refused before the run instead.
fn check_outputs(cmd: &Command) -> Result<()> {
    let (json, prometheus, save_trace, fio_json) = match cmd {
        Command::Timer(a) => {
            (&a.run.shown.json, a.run.shown.prometheus.as_ref(), a.save_trace.as_ref(), None)
        }
        Command::Noise(a) => {
            (&a.run.shown.json, a.run.shown.prometheus.as_ref(), a.save_trace.as_ref(), None)
        }
        Command::Hwlat(a) => (&a.shown.json, a.shown.prometheus.as_ref(), None, None),
        Command::Ticks(a) => (&a.shown.json, a.shown.prometheus.as_ref(), None, None),
        Command::Fsync(a) => (&a.json, a.prometheus.as_ref(), None, a.fio_json.as_ref()),
        Command::Etcd(a) => (&a.json, a.prometheus.as_ref(), None, None),
    };
    super::common::documents(&[("--json", json.json.as_ref()), ("--prometheus", prometheus)])?;
    if let Some(p) = save_trace {
        super::common::check_writable("--save-trace", p)?;
    }
    if let Some(p) = fio_json {
        super::common::check_writable("--fio-json", p)?;
    }
    Ok(())
}

/// An input error in the words of the command line: the option it is about first.
fn flagged(e: MeasureError) -> anyhow::Error {
    let flag = match e.input() {
        Some(Input::Cpus) => "--cpus",
        Some(Input::MainCpu) => "--main-cpu",
        Some(Input::Load) => "--load",
        Some(Input::LoadCommand) => "--load-cmd",
        Some(Input::RtCgroup) => "--rt-cgroup",
        None => return e.into(),
    };
    anyhow::Error::from(e).context(flag)
}

/// The JSON where `--json` says, and the view (when `print`) on stdout, or on stderr when the
/// JSON takes stdout.
fn show<R: Serialize>(
    shown: &Shown,
    out: Outcome<R>,
    view: impl Fn(&R) -> String,
    print: bool,
    prometheus: impl Fn(&R) -> util::prom::Metrics,
) -> Result<ExitCode> {
    if let Some(p) = &shown.prometheus {
        super::common::write_prometheus(p, &prometheus(&out.result))?;
    }
    if let Some(o) = &shown.json.json {
        o.write_json(&out.result)?;
    }
    if print {
        let mut w = shown.json.view_stream();
        w.write_all(view(&out.result).as_bytes()).and_then(|()| w.flush())?;
    }
    Ok(out.verdict.exit_code())
}
