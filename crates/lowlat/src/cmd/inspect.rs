//! `lowlat inspect`: read the host (live, snapshot or must-gather node) and show it; `--json`
//! writes the full model (to stdout, or to a file while the view still goes to stdout).

use cli::args::inspect::Args;

use crate::exit::ExitCode;

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
