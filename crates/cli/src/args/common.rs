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

pub use util::output::Output;

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
