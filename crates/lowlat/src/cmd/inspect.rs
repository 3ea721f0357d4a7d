//! `lowlat inspect`: read the host (live, snapshot or must-gather node) and show it, or print
//! the full model with `--json`.

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
    /// Focus on one CPU: what runs there, its IRQs, its power state.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
}

/// Run `lowlat inspect`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let h = args.host.load()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&h)?);
        return Ok(ExitCode::Ok);
    }
    println!(
        "{} CPUs online ({}), {} NUMA nodes, kernel {}",
        h.online_cpus().len(),
        h.online_cpus(),
        h.numa_nodes.len(),
        h.kernel.release.as_deref().unwrap_or("?")
    );
    for f in &h.findings {
        println!("[{:?}] {}: {}", f.severity, f.id, f.message);
    }
    Ok(ExitCode::Ok)
}
