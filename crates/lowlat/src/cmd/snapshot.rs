//! `lowlat snapshot -o FILE.tgz`: capture exactly the files `inspect` reads (same layout as a
//! must-gather `sysinfo.tgz`, symlinks kept) plus `lowlat-snapshot.json`, the manifest of
//! what could not be read and why (`host::snapshot`).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;

use super::common::HostArgs;
use crate::exit::ExitCode;

/// Arguments of `lowlat snapshot`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  sudo lowlat snapshot -o node.tgz\n  \
lowlat inspect --root node.tgz            # read it back anywhere\n  \
lowlat plan --root node.tgz -o plan.yaml")]
pub struct Args {
    /// The tarball to write (gzip-compressed tar), atomically.
    #[arg(short, long, value_name = "FILE.tgz")]
    pub output: PathBuf,
    /// Capture the threads of at most this many processes (lowest PIDs first) to keep the
    /// file small; the snapshot still reads back to the same model.
    #[arg(long, value_name = "N")]
    pub max_processes: Option<usize>,
    /// Leave out every process's command line (/proc/PID/cmdline): they can hold passwords
    /// or tokens given as arguments. Without it the snapshot contains them, and says so.
    #[arg(long)]
    pub no_cmdline: bool,
    #[command(flatten)]
    pub host: HostArgs,
}

/// Run `lowlat snapshot`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = args.host.open_root()?;
    let opts = host::ReadOptions {
        max_processes: args.max_processes,
        skip_cmdline: args.no_cmdline,
        ..Default::default()
    };
    let snap = host::snapshot::capture(root, &opts).context("taking the snapshot")?;
    let out = args.output.display();
    util::fs::write_atomic(&args.output, &snap.tgz, 0o644)
        .with_context(|| format!("writing {out}"))?;
    let (m, h) = (&snap.manifest, &snap.host);
    let failed: Vec<_> =
        m.failures.iter().filter(|f| f.kind != host::snapshot::FailureKind::NotFound).collect();
    let kib = snap.tgz.len().div_ceil(1024);
    // Paths, the source and the failure reasons are the host's or the user's text: printed
    // through the escaping writer.
    let mut text = format!(
        "wrote {out} ({kib} KiB): {} files, {} directories, {} symlinks from {}\n",
        m.files, m.dirs, m.symlinks, m.source
    );
    let _ = writeln!(
        text,
        "{} tasks, {} IRQs, {} CPUs captured; {} files absent, {} unreadable (listed in {})",
        h.tasks.as_ref().map_or(0, Vec::len),
        h.irqs.len(),
        h.topology.cpus.len(),
        m.failures.len() - failed.len(),
        failed.len(),
        host::snapshot::MANIFEST
    );
    for f in failed.iter().take(5) {
        let _ = writeln!(text, "  {} {}: {}", f.op, f.path, util::term::sanitize(&f.reason, false));
    }
    text.push_str(if m.process_cmdlines {
        "note: it contains every process's command line (/proc/PID/cmdline), which can hold passwords or tokens given as arguments; share it with care, or take it again with --no-cmdline\n"
    } else {
        "process command lines left out (--no-cmdline)\n"
    });
    let _ = writeln!(text, "read it with: lowlat inspect --root {out}");
    super::common::print_view(text)?;
    Ok(ExitCode::Ok)
}
