//! Reading a host through a [`Root`]: each area's files are read in exactly one module here,
//! parsed with `crate::parse`, and assembled into a [`Host`]. Missing files become
//! [`Unknown`] entries, garbage becomes [`Warning`]s; nothing here panics on input.

mod devices;
mod irqs;
mod kernel;
mod memory;
mod power;
mod system;
mod tasks;
mod topology;

use std::collections::HashSet;

use cpuset::CpuSet;

use crate::model::{Host, Unknown, Warning, SCHEMA_VERSION};
use crate::parse::LineIssue;
use crate::root::{OpenDir, ReadError, Root};

/// What to read.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Read at most this many processes' threads (lowest PIDs first); `None` = all.
    pub max_processes: Option<usize>,
    /// Skip `/proc/*/task/*` entirely.
    pub skip_tasks: bool,
    /// Leave every process's command line (`/proc/PID/cmdline`) unread: they can hold
    /// secrets passed as arguments (`lowlat snapshot --no-cmdline`).
    pub skip_cmdline: bool,
}

/// Read everything lowlat knows how to read.
pub fn read(root: &Root) -> Host {
    read_with(root, &ReadOptions::default())
}

/// Read with options.
pub fn read_with(root: &Root, opts: &ReadOptions) -> Host {
    let mut cx = Ctx::new(root);
    let mut host = Host {
        schema_version: SCHEMA_VERSION,
        source: root.source().clone(),
        ..Default::default()
    };
    let read_tasks = |cx: &mut Ctx| tasks::read(cx, opts.max_processes, opts.skip_cmdline);
    if opts.skip_tasks || root.is_recording() {
        // In order: a snapshot's recorded accesses (and so its manifest) stay deterministic.
        topology::read(&mut cx, &mut host);
        kernel::read(&mut cx, &mut host);
        power::read(&mut cx, &mut host);
        irqs::read(&mut cx, &mut host);
        if !opts.skip_tasks {
            host.tasks = read_tasks(&mut cx);
        }
        system::read(&mut cx, &mut host);
        memory::read(&mut cx, &mut host);
        devices::read(&mut cx, &mut host);
    } else {
        // Tasks (most of the files on a big host) are read on their own threads while this one
        // reads every other area, then helps with what is left of them; nothing else depends
        // on them. Unknowns and warnings are merged in the sequential order above, so the
        // model is the same either way.
        let mut tcx = Ctx::new(root);
        let mut after = Ctx::new(root);
        let work = tasks::Work::new(&mut tcx, opts.max_processes, opts.skip_cmdline);
        std::thread::scope(|s| {
            if let Some(w) = &work {
                for _ in 0..w.helpers() {
                    s.spawn(|| w.help());
                }
            }
            topology::read(&mut cx, &mut host);
            kernel::read(&mut cx, &mut host);
            power::read(&mut cx, &mut host);
            irqs::read(&mut cx, &mut host);
            system::read(&mut after, &mut host);
            memory::read(&mut after, &mut host);
            devices::read(&mut after, &mut host);
            if let Some(w) = &work {
                w.help();
            }
        });
        host.tasks = work.map(|w| w.finish(&mut tcx));
        cx.absorb(tcx);
        cx.absorb(after);
    }
    host.unknown = cx.unknown;
    host.warnings = cx.warnings;
    host.findings = crate::findings::evaluate(&host);
    host
}

/// Read state: the root plus the unknown/warning lists being built.
pub(crate) struct Ctx<'a> {
    pub root: &'a Root,
    pub unknown: Vec<Unknown>,
    pub warnings: Vec<Warning>,
    seen_unknown: HashSet<String>,
    /// A directory held open ([`Ctx::hold`]).
    held: Option<OpenDir<'a>>,
}

impl<'a> Ctx<'a> {
    fn new(root: &'a Root) -> Self {
        Self {
            root,
            unknown: Vec::new(),
            warnings: Vec::new(),
            seen_unknown: HashSet::new(),
            held: None,
        }
    }

    /// Hold the directory `dir` open until the next `hold` or [`Ctx::release`]: the files
    /// and directories beneath it are then opened from it by their path inside it, so the
    /// kernel walks only that (`cpuidle/state3/latency`, not the 8 components from the root,
    /// for each of the ~30k per-CPU sysfs files of a 512-CPU host). Results, messages and
    /// recorded accesses are those of the full path ([`OpenDir`]).
    pub fn hold(&mut self, dir: &str) {
        self.held = Some(self.root.open_dir(dir));
    }

    /// Close the directory held by [`Ctx::hold`].
    pub fn release(&mut self) {
        self.held = None;
    }

    /// The held directory and `path` inside it, when `path` lies beneath it.
    fn beneath<'p>(&self, path: &'p str) -> Option<(&OpenDir<'a>, &'p str)> {
        let d = self.held.as_ref()?;
        let rest = path.strip_prefix(d.path())?.strip_prefix('/')?;
        Some((d, rest))
    }

    fn read_string(&self, path: &str) -> Result<String, ReadError> {
        match self.beneath(path) {
            Some((d, rest)) => d.read_string(rest),
            None => self.root.read_string(path),
        }
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, ReadError> {
        match self.beneath(path) {
            Some((d, rest)) => d.list_dir(rest),
            None => self.root.list_dir(path),
        }
    }

    /// Take over what another reader noted, in order after this one's (the same lists as if
    /// its reads had been made here).
    fn absorb(&mut self, other: Ctx<'_>) {
        for u in other.unknown {
            self.unknown(&u.field, &u.path, u.reason);
        }
        self.warnings.extend(other.warnings);
    }

    /// Note that `field` is unknown (once per field).
    pub fn unknown(&mut self, field: &str, path: &str, reason: String) {
        if self.seen_unknown.insert(field.to_string()) {
            self.unknown.push(Unknown { field: field.into(), path: path.into(), reason });
        }
    }

    pub fn warn(&mut self, path: &str, line: Option<usize>, message: impl Into<String>) {
        self.warnings.push(Warning { path: path.into(), line, message: message.into() });
    }

    pub fn issues(&mut self, path: &str, issues: Vec<LineIssue>) {
        for i in issues {
            self.warn(path, Some(i.line), i.message);
        }
    }

    /// Read a file's text; a failure marks `field` unknown.
    pub fn text(&mut self, field: &str, path: &str) -> Option<String> {
        match self.read_string(path) {
            Ok(s) => Some(s),
            Err(e) => {
                self.unknown(field, path, e.reason());
                None
            }
        }
    }

    /// Read a file's text; a missing file is silently `None` (optional files), other
    /// failures mark `field` unknown.
    pub fn opt_text(&mut self, field: &str, path: &str) -> Option<String> {
        match self.read_string(path) {
            Ok(s) => Some(s),
            Err(ReadError::NotFound { .. }) => None,
            Err(e) => {
                self.unknown(field, path, e.reason());
                None
            }
        }
    }

    /// A trimmed one-line value (`None` when missing or empty).
    pub fn value(&mut self, field: &str, path: &str) -> Option<String> {
        self.text(field, path).map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    }

    /// A trimmed optional one-line value.
    pub fn opt_value(&mut self, field: &str, path: &str) -> Option<String> {
        self.opt_text(field, path).map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    }

    /// An integer file.
    pub fn opt_int<T: std::str::FromStr>(&mut self, field: &str, path: &str) -> Option<T> {
        let v = self.opt_value(field, path)?;
        match crate::parse::int(&v) {
            Some(n) => Some(n),
            None => {
                self.warn(
                    path,
                    Some(1),
                    format!("expected a number, found \"{}\"", util::term::excerpt(&v, 60)),
                );
                None
            }
        }
    }

    /// A cpu-list file; garbage gives a warning. `mask` reads the hex form instead.
    pub fn cpus(&mut self, field: &str, path: &str, optional: bool) -> Option<CpuSet> {
        let v = if optional { self.opt_text(field, path)? } else { self.text(field, path)? };
        self.parse_cpus(
            path,
            &v,
            path.ends_with("affinity") || path.ends_with("cpumask") || path.ends_with("_map"),
        )
    }

    pub fn parse_cpus(&mut self, path: &str, v: &str, mask: bool) -> Option<CpuSet> {
        let r = if mask { CpuSet::parse_mask(v) } else { CpuSet::parse_list(v) };
        match r {
            Ok(s) => Some(s),
            Err(e) => {
                self.warn(
                    path,
                    Some(1),
                    format!("not a CPU {}: {e}", if mask { "mask" } else { "list" }),
                );
                None
            }
        }
    }

    /// A directory listing; missing → `None` silently, other errors mark `field` unknown.
    pub fn list(&mut self, field: &str, path: &str) -> Option<Vec<String>> {
        match self.list_dir(path) {
            Ok(v) => Some(v),
            Err(ReadError::NotFound { .. }) => None,
            Err(e) => {
                self.unknown(field, path, e.reason());
                None
            }
        }
    }
}

/// Names `prefixN` in a listing, as numbers, sorted.
pub(crate) fn numbered(names: &[String], prefix: &str) -> Vec<usize> {
    let mut v: Vec<usize> =
        names.iter().filter_map(|n| n.strip_prefix(prefix)?.parse().ok()).collect();
    v.sort_unstable();
    v
}
