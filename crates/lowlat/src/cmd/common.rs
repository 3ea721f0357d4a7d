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
use std::str::FromStr;

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

/// Where a document goes: stdout (`-`) or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Standard output.
    Stdout,
    /// A file, replaced atomically (a temporary file beside it, then rename).
    File(PathBuf),
}

impl FromStr for Output {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(if s == "-" { Self::Stdout } else { Self::File(PathBuf::from(s)) })
    }
}

impl Output {
    /// Is this stdout?
    pub fn is_stdout(&self) -> bool {
        matches!(self, Self::Stdout)
    }

    /// Refuse (exit 2) a file that could not be written at the end — a missing directory, one
    /// without write permission, a directory named as the file — before anything runs: a
    /// measurement must not run for hours and then lose its result. `flag` names the option.
    pub fn check_writable(&self, flag: &str) -> anyhow::Result<()> {
        match self {
            Self::Stdout => Ok(()),
            Self::File(p) => check_writable(flag, p),
        }
    }

    /// Write a whole document.
    pub fn write(&self, bytes: &[u8]) -> anyhow::Result<()> {
        match self {
            Self::Stdout => {
                use std::io::Write as _;
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()?;
                Ok(())
            }
            Self::File(p) => util::fs::write_atomic(p, bytes, 0o644)
                .with_context(|| format!("writing {}", p.display())),
        }
    }

    /// Write a value as pretty JSON with a final newline. Stdout gets it as it is serialized:
    /// a big host's model (~50 MB at 512 CPUs / 50k threads) is not built in memory first.
    pub fn write_json<T: serde::Serialize>(&self, value: &T) -> anyhow::Result<()> {
        if let Self::Stdout = self {
            use std::io::Write as _;
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            serde_json::to_writer_pretty(&mut out, value).map_err(|e| {
                // An I/O error (a closed pipe) stays an I/O error, as from `write`.
                if e.is_io() {
                    anyhow::Error::from(std::io::Error::from(e))
                } else {
                    anyhow::Error::from(e).context("serializing JSON")
                }
            })?;
            out.write_all(b"\n")?;
            out.flush()?;
            return Ok(());
        }
        let mut text = serde_json::to_string_pretty(value).context("serializing JSON")?;
        text.push('\n');
        self.write(text.as_bytes())
    }
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdout => f.write_str("stdout"),
            Self::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// [`Output::check_writable`] for a path option (`--save-trace FILE`, `--fio-json FILE`).
pub fn check_writable(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    util::fs::check_writable(path).map_err(|e| {
        let what = match e.kind() {
            std::io::ErrorKind::NotFound => {
                "its directory does not exist: create it first".to_string()
            }
            std::io::ErrorKind::PermissionDenied => {
                "its directory is not writable by this user: choose a directory you can write"
                    .to_string()
            }
            std::io::ErrorKind::IsADirectory => "it is a directory: name a file in it".to_string(),
            _ => format!("it cannot be written there ({e}): choose another path"),
        };
        crate::exit::usage(format!(
            "{flag} {}: {what}; checked before measuring, so nothing ran",
            path.display()
        ))
    })
}

/// Print a plain-text view on stdout through `util::term::Escaping`: text that came from a host
/// or an input file (process names, paths, reasons) cannot send control sequences to the
/// terminal. Views that colour themselves (`inspect`, `plan`) escape their inputs instead.
pub fn print_view(text: impl std::fmt::Display) -> anyhow::Result<()> {
    if util::term::quiet() {
        return Ok(());
    }
    use std::io::Write as _;
    let mut out = util::term::Escaping::new(std::io::stdout().lock());
    write!(out, "{text}")?;
    out.flush()?;
    Ok(())
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

    /// The file the JSON goes to, when it is one.
    pub fn file(&self) -> Option<&std::path::Path> {
        match &self.json {
            Some(Output::File(p)) => Some(p),
            _ => None,
        }
    }

    /// Where the human view goes: stderr when the JSON takes stdout, stdout otherwise; through
    /// `util::term::Escaping`, so host text in it (process and cgroup names, paths, commands)
    /// cannot send control sequences.
    pub fn human_view(&self) -> Box<dyn std::io::Write> {
        if util::term::quiet() {
            Box::new(std::io::sink())
        } else {
            self.view_stream()
        }
    }

    /// Where the human view goes whatever `-q` says: stderr when the JSON takes stdout.
    pub fn view_stream(&self) -> Box<dyn std::io::Write> {
        if self.to_stdout() {
            Box::new(util::term::Escaping::new(std::io::stderr()))
        } else {
            Box::new(util::term::Escaping::new(std::io::stdout()))
        }
    }
}

impl HostArgs {
    /// Open the chosen root. Input problems (missing path, bad tarball, unknown node) are
    /// usage errors (exit 2); a path that exists but cannot be read is a runtime error (3):
    /// `host::OpenError` says which (`util::exit::Classify`).
    pub fn open_root(&self) -> anyhow::Result<host::Root> {
        if let Some(mg) = &self.must_gather {
            return Ok(host::Root::must_gather(mg, self.node.as_deref())?);
        }
        if let Some(r) = &self.root {
            return Ok(host::Root::open(r)?);
        }
        Ok(host::Root::live())
    }

    /// Read the whole host model.
    pub fn load(&self) -> anyhow::Result<host::Host> {
        let root = self.open_root()?;
        let h = host::read(&root);
        if h.topology.cpus.is_empty() && h.kernel.cmdline.is_none() {
            return Err(crate::exit::usage(format!(
                "{root}: found neither sys/devices/system/cpu nor proc/cmdline; is this a host snapshot?"
            )))
            .context("reading the host model");
        }
        Ok(h)
    }
}
