//! The command-line conventions every command shares, defined once (the README's "Options
//! every command shares" section documents them):
//!
//! - where the host model comes from: [`HostArgs`] (`--root DIR|FILE.tgz`, `--must-gather DIR
//!   --node NAME`, or the live host);
//! - `--json [FILE]`: [`JsonArg`] — alone it writes the JSON form to stdout (the human view then
//!   goes to stderr or is left out), with a value it writes that file, replaced atomically;
//! - `-o, --output PATH`: the command's main artifact, [`Output`] (`-` = stdout where the
//!   artifact is text), written atomically;
//! - `-q, --quiet`: no progress or human summary; errors still go to stderr;
//! - durations: `util::duration::parse_span` (run lengths; bare number = seconds) and
//!   `util::duration::parse_latency` (intervals/thresholds; bare number = µs) as clap value
//!   parsers;
//! - CPU sets: `cpuset::CpuSelector` (cpu-list, `0x` mask or kernel mask, or a name), resolved
//!   with `host::Host::resolve`.

use std::path::PathBuf;

use anyhow::Context as _;

/// Where to read the host from. Flatten into a command's `Args` with `#[command(flatten)]`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HostArgs {
    /// Read a snapshot instead of the live host: a directory holding proc/ and sys/, or a
    /// .tgz made by `lowlat snapshot` (or a must-gather sysinfo.tgz).
    #[arg(long, value_name = "DIR|FILE.tgz", conflicts_with = "must_gather")]
    pub root: Option<PathBuf>,
    /// Read a node of an OpenShift must-gather directory (use with --node).
    #[arg(long, value_name = "DIR")]
    pub must_gather: Option<PathBuf>,
    /// The must-gather node to read (without it, the nodes found are listed).
    #[arg(long, value_name = "NAME", requires = "must_gather")]
    pub node: Option<String>,
}

pub use util::output::Output;

/// A directory option (`--out DIR`, `cluster snapshot -o DIR`): `-` is refused, since a tree
/// of files cannot go to a stream and a directory named `-` is a trap.
pub fn out_dir(s: &str) -> Result<PathBuf, String> {
    if s == "-" {
        return Err("a directory of files is written here: `-` (stdout) cannot hold it; give a \
                    directory"
            .into());
    }
    Ok(PathBuf::from(s))
}
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

/// `--json [FILE]`, the same on every command. Flatten with `#[command(flatten)]`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct JsonArg {
    /// Write the machine-readable form (docs/CONTRACT.md): to FILE, or to stdout when no FILE
    /// (or `-`) is given — the human view then moves to stderr.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<Output>,
}

impl JsonArg {
    /// Is JSON going to stdout (so people's output must not)?
    pub fn to_stdout(&self) -> bool {
        self.json.as_ref().is_some_and(Output::is_stdout)
    }

    /// Where the human view goes (`util::term::human_view`): stderr when the JSON takes
    /// stdout, nowhere with `-q`.
    pub fn human_view(&self) -> Box<dyn std::io::Write> {
        util::term::human_view(self.to_stdout())
    }

    /// Where the human view goes whatever `-q` says: stderr when the JSON takes stdout.
    pub fn view_stream(&self) -> Box<dyn std::io::Write> {
        util::term::view_stream(self.to_stdout())
    }
}

impl HostArgs {
    /// Open the chosen root. Input problems (missing path, bad tarball, unknown node) are
    /// usage errors (exit 2); a path that exists but cannot be read is a runtime error (3):
    /// `host::OpenError` says which (`util::exit::Classify`).
    pub fn open_root(&self) -> anyhow::Result<host::Root> {
        let (mg, node, root) = (&self.must_gather, self.node.as_deref(), &self.root);
        Ok(host::Root::choose(mg.as_deref(), node, root.as_deref())?)
    }

    /// Read the whole host model.
    pub fn load(&self) -> anyhow::Result<host::Host> {
        host::read_checked(&self.open_root()?).context("reading the host model")
    }
}
