//! `lowlat plan`: arguments → `plan::Request` → `Request::plan` (reads the host, computes the
//! partition) → the plan file and the summary.

use cli::args::plan::Args;
use std::path::PathBuf;

use super::common::Output;
use crate::exit::ExitCode;

/// Run `lowlat plan`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.info {
        return info(args.host.must_gather.or(args.must_gather_dir_path), args.json);
    }
    let (output, yaml) = (args.output.clone(), args.yaml);
    let made = args.request().plan()?;
    let text = made.plan.to_yaml()?;
    if let Some(out) = &output {
        out.write(text.as_bytes())?;
    }
    if yaml {
        print!("{text}");
    } else if !output.as_ref().is_some_and(Output::is_stdout) && !util::term::quiet() {
        let color = util::term::color(util::term::Stream::Stdout);
        print!("{}", plan::summary::summary(&made.plan, &made.layout, color));
        print!("{}", plan::summary::next_step(output.map(|o| o.to_string()).as_deref()));
    }
    Ok(ExitCode::Ok)
}

/// `lowlat plan --info`: the cluster summary as text (PPC's layout) and/or JSON.
fn info(dir: Option<PathBuf>, json: Option<Output>) -> anyhow::Result<ExitCode> {
    let dir = dir.ok_or_else(|| crate::exit::usage("--info reads a cluster: --must-gather DIR"))?;
    let pools = plan::ppc::info::cluster_info(&dir)?;
    if let Some(out) = &json {
        // PPC's `info --json` prints one compact line
        let mut line = serde_json::to_vec(&pools)?;
        line.push(b'\n');
        out.write(&line)?;
    }
    if !json.as_ref().is_some_and(Output::is_stdout) {
        print!("{}", plan::ppc::info::text(&pools));
    }
    Ok(ExitCode::Ok)
}
