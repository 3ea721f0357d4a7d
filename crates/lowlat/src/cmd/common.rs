//! What every command does with its documents at run time, once: outputs checked before
//! anything runs, at most one document on stdout, JUnit and Prometheus written atomically. The
//! shared options themselves (`--root`/`--must-gather`, `--json [FILE]`, `-o`) are defined in
//! `cli::args::common`; the README's "Options every command shares" documents them.

use anyhow::Context as _;

pub use util::output::Output;
pub use util::term::print_view;

/// Refuse (exit 2) an output file that could not be written at the end — a missing directory,
/// one without write permission, a directory named as the file — before anything runs: a
/// measurement must not run for hours and then lose its result. `flag` names the option.
pub fn check_writable(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    util::fs::check_writable(path).map_err(|e| {
        crate::exit::usage(format!(
            "{flag} {}: {}; checked before measuring, so nothing ran",
            path.display(),
            util::fs::unwritable_hint(&e)
        ))
    })
}

/// The documents a command will write (`--json`, `--junit`, `--prometheus`, `-o`), before
/// anything runs: each file must be writable, at most one may be `-` (stdout), and when one
/// is, every human view of the run goes to stderr (`util::term::take_stdout`).
pub fn documents(list: &[(&str, Option<&Output>)]) -> anyhow::Result<()> {
    let mut on_stdout = Vec::new();
    for (flag, out) in list {
        match out {
            Some(Output::File(p)) => check_writable(flag, p)?,
            Some(Output::Stdout) => on_stdout.push(*flag),
            None => {}
        }
    }
    if on_stdout.len() > 1 {
        return Err(crate::exit::usage(format!(
            "{} would all write to stdout (`-`): one document per stream — give the others a file",
            on_stdout.join(" and ")
        )));
    }
    if !on_stdout.is_empty() {
        util::term::take_stdout();
    }
    Ok(())
}

/// Write `--junit FILE` (atomically) or `--junit -` (stdout).
pub fn write_junit(out: &Output, xml: &str) -> anyhow::Result<()> {
    out.write(xml.as_bytes()).with_context(|| format!("writing JUnit XML to {out}"))
}

/// Write `--prometheus FILE` (atomically, for the textfile collector) or `-` (stdout, e.g.
/// for a Pushgateway: `--prometheus - | curl --data-binary @- …`).
pub fn write_prometheus(out: &Output, m: &util::prom::Metrics) -> anyhow::Result<()> {
    out.write(m.text().as_bytes()).with_context(|| format!("writing --prometheus {out}"))
}
