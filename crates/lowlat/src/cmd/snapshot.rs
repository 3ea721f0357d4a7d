//! `lowlat snapshot -o FILE.tgz`: capture exactly the files `inspect` reads (same layout as a
//! must-gather `sysinfo.tgz`, symlinks kept) plus `lowlat-snapshot.json`, the manifest of
//! what could not be read and why (`host::snapshot`).

use anyhow::Context as _;
use cli::args::snapshot::Args;

use crate::exit::{usage, ExitCode};

/// Run `lowlat snapshot`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let to_stdout = args.output.is_stdout();
    if to_stdout && util::term::is_tty(util::term::Stream::Stdout) {
        return Err(usage(
            "-o -: stdout is a terminal; redirect it (`> node.tgz`, `| ssh …`) or give -o FILE.tgz",
        ));
    }
    let root = args.host.open_root()?;
    let opts = host::ReadOptions {
        max_processes: args.max_processes,
        skip_cmdline: args.no_cmdline,
        ..Default::default()
    };
    let snap = host::snapshot::capture(root, &opts).context("taking the snapshot")?;
    args.output.write(&snap.tgz)?;
    let summary = snap.summary(std::path::Path::new(&args.output.to_string()));
    util::term::say(to_stdout, &util::term::sanitize(&summary, true));
    Ok(ExitCode::Ok)
}
