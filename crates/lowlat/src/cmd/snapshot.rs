//! `lowlat snapshot -o FILE.tgz`: capture exactly the files `inspect` reads (same layout as a
//! must-gather `sysinfo.tgz`, symlinks kept) plus `lowlat-snapshot.json`, the manifest of
//! what could not be read and why.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;

use super::common::HostArgs;
use crate::exit::ExitCode;

/// Arguments of `lowlat snapshot`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tarball to write (gzip-compressed tar).
    #[arg(short, long, value_name = "FILE.tgz")]
    pub output: PathBuf,
    /// Capture the threads of at most this many processes (lowest PIDs first) to keep the
    /// file small; the snapshot still reads back to the same model.
    #[arg(long, value_name = "N")]
    pub max_processes: Option<usize>,
    #[command(flatten)]
    pub host: HostArgs,
}

/// Run `lowlat snapshot`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = args.host.open_root()?;
    let opts = host::ReadOptions { max_processes: args.max_processes, ..Default::default() };
    let snap = host::snapshot::capture(root, &opts).context("taking the snapshot")?;
    std::fs::write(&args.output, &snap.tgz)
        .with_context(|| format!("writing {}", args.output.display()))?;
    let m = &snap.manifest;
    let failed: Vec<&host::snapshot::Failure> =
        m.failures.iter().filter(|f| f.kind != host::snapshot::FailureKind::NotFound).collect();
    let mut out = String::new();
    writeln!(
        out,
        "wrote {} ({} KiB): {} files, {} directories, {} symlinks from {}",
        args.output.display(),
        snap.tgz.len().div_ceil(1024),
        m.files,
        m.dirs,
        m.symlinks,
        m.source
    )?;
    writeln!(
        out,
        "{} tasks, {} IRQs, {} CPUs captured; {} files absent, {} unreadable (listed in {})",
        snap.host.tasks.as_ref().map_or(0, Vec::len),
        snap.host.irqs.len(),
        snap.host.topology.cpus.len(),
        m.failures.len() - failed.len(),
        failed.len(),
        host::snapshot::MANIFEST
    )?;
    for f in failed.iter().take(5) {
        writeln!(out, "  {} {}: {}", f.op, f.path, f.reason)?;
    }
    writeln!(out, "read it with: lowlat inspect --root {}", args.output.display())?;
    // A closed pipe (`| head`) is not an error: the snapshot is written already.
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(ExitCode::Ok)
}
