//! `lowlat inspect`: read the host (live, snapshot or must-gather node) and show it, or print
//! the full model with `--json`.

use std::io::Write as _;

use super::common::HostArgs;
use crate::exit::ExitCode;

/// Arguments of `lowlat inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub host: HostArgs,
    /// Print the full host model as JSON (the stable contract for scripts).
    #[arg(long)]
    pub json: bool,
    /// Focus on one CPU: every thread that ran or may run there, its IRQs, its power state.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
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
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&h)?;
        s.push('\n');
        s
    } else {
        let st = report::term::Style::detect();
        report::inspect_view::render(&h, &report::inspect_view::ViewOptions { cpu: args.cpu }, &st)
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()) {
        // `lowlat inspect | head` is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::Ok),
        r => r.map(|()| ExitCode::Ok).map_err(Into::into),
    }
}
