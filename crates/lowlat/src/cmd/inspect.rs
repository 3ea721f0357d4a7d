//! `lowlat inspect`: read the host (live, snapshot or must-gather node) and show it; `--json`
//! writes the full model (to stdout, or to a file while the view still goes to stdout).

use super::common::{HostArgs, JsonArg};
use crate::exit::ExitCode;

/// Arguments of `lowlat inspect`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat inspect\n  lowlat inspect --cpu 3                       # \
everything that runs or may run on CPU 3\n  lowlat inspect --json > host.json\n  \
lowlat inspect --must-gather must-gather/ --node worker1\n  lowlat inspect --root node.tgz"
)]
pub struct Args {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub json: JsonArg,
    /// Focus on one CPU: every thread that ran or may run there, its IRQs, its power state.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Show the container/pod cgroups: CPU usage, CFS quota and throttling, cpuset, memory,
    /// PSI, RT readiness, and their latency issues (`--json` writes the whole model).
    #[arg(long, conflicts_with = "cpu")]
    pub containers: bool,
}

/// Run `lowlat inspect`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let h = args.host.load()?;
    if let Some(cpu) = args.cpu {
        if h.cpu(cpu).is_none() {
            return Err(crate::exit::usage(format!(
                "--cpu {cpu}: no such CPU on this host (CPUs: {})",
                h.online_cpus()
            )));
        }
    }
    if let Some(out) = &args.json.json {
        out.write_json(&h)?;
    }
    if !args.json.to_stdout() && !util::term::quiet() {
        let st = report::term::Style::detect();
        let view = report::inspect_view::ViewOptions { cpu: args.cpu, containers: args.containers };
        super::common::Output::Stdout
            .write(report::inspect_view::render(&h.for_terminal(), &view, &st).as_bytes())?;
    }
    Ok(ExitCode::Ok)
}
