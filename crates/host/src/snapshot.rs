//! `lowlat snapshot`: read the host through a recording [`Root`], then write exactly the files
//! that were read into a tarball at their own paths (`proc/…`, `sys/…`, the layout of a
//! must-gather `sysinfo.tgz`), with symlinks kept as symlinks, listed directories present,
//! and a manifest (`lowlat-snapshot.json`) of what could not be read and why. Reading the
//! tarball back gives the same model (the manifest's failures are replayed).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;

use crate::model::Host;
use crate::read::{read_with, ReadOptions};
use crate::root::{lexical_target, Access, Kind, ReadError, Root};

pub use crate::root::manifest::{
    root_link_kept, Failure, FailureKind, Manifest, Op, MANIFEST, MAX_ROOT_LINKS,
};

/// A finished snapshot.
#[derive(Debug)]
pub struct Snapshot {
    /// The model as read while recording.
    pub host: Host,
    /// The `.tgz` bytes.
    pub tgz: Vec<u8>,
    pub manifest: Manifest,
}

impl Snapshot {
    /// What was written to `out` and what was left out, for people: the counts, the first
    /// unreadable files, whether command lines are in it, how to read it back. Paths, the
    /// source and the failure reasons are the host's or the user's text: print it through an
    /// escaping writer.
    pub fn summary(&self, out: &std::path::Path) -> String {
        use std::fmt::Write as _;
        let (m, h, out) = (&self.manifest, &self.host, out.display());
        let failed: Vec<_> =
            m.failures.iter().filter(|f| f.kind != FailureKind::NotFound).collect();
        let kib = self.tgz.len().div_ceil(1024);
        let mut text = format!(
            "wrote {out} ({kib} KiB): {} files, {} directories, {} symlinks from {}\n",
            m.files, m.dirs, m.symlinks, m.source
        );
        let _ = writeln!(
            text,
            "{} tasks, {} IRQs, {} CPUs captured; {} files absent, {} unreadable (listed in {MANIFEST})",
            h.tasks.as_ref().map_or(0, Vec::len),
            h.irqs.len(),
            h.topology.cpus.len(),
            m.failures.len() - failed.len(),
            failed.len(),
        );
        for f in failed.iter().take(5) {
            let reason = util::term::sanitize(&f.reason, false);
            let _ = writeln!(text, "  {} {}: {reason}", f.op, f.path);
        }
        text.push_str(if m.process_cmdlines {
            "note: it contains every process's command line (/proc/PID/cmdline), which can hold passwords or tokens given as arguments; share it with care, or take it again with --no-cmdline\n"
        } else {
            "process command lines left out (--no-cmdline)\n"
        });
        let _ = writeln!(text, "read it with: lowlat inspect --root {out}");
        text
    }
}

/// Why a snapshot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("building the tarball: {0}")]
    Tar(#[from] std::io::Error),
    #[error("writing the manifest: {0}")]
    Json(#[from] serde_json::Error),
}

/// What goes in the tarball.
#[derive(Debug, Default)]
struct Plan {
    files: BTreeMap<String, Vec<u8>>,
    dirs: BTreeSet<String>,
    links: BTreeMap<String, String>,
    /// Root links (`proc/<pid>/root`), kept in the manifest: absolute targets.
    root_links: BTreeMap<String, String>,
    failures: Vec<Failure>,
}

impl Plan {
    fn failure(&mut self, path: String, op: Op, e: &ReadError) {
        self.failures.push(Failure { path, op, kind: FailureKind::of(e), reason: e.reason() });
    }

    fn link(&mut self, path: &str, target: &str) {
        if lexical_target(path, target).is_some() {
            self.links.insert(path.to_string(), target.to_string());
        } else if root_link_kept(path, target) && self.root_links.len() < MAX_ROOT_LINKS {
            self.root_links.insert(path.to_string(), target.to_string());
        } else {
            self.failures.push(Failure {
                path: path.into(),
                op: Op::Link,
                kind: FailureKind::Refused,
                reason: format!("symlink to {target:?} leaves the tree; not captured"),
            });
        }
    }

    /// The real path of `rel`, recording the links crossed.
    fn place(&mut self, root: &Root, rel: &str) -> Option<String> {
        match root.resolve_links(rel) {
            Ok(r) => {
                for (l, t) in &r.links {
                    self.link(l, t);
                }
                Some(r.path)
            }
            Err(e) => {
                self.failures.push(Failure {
                    path: rel.into(),
                    op: Op::Resolve,
                    kind: FailureKind::of(&e),
                    reason: e.reason(),
                });
                None
            }
        }
    }
}

/// Read `root` while recording, then pack what was read.
pub fn capture(root: Root, opts: &ReadOptions) -> Result<Snapshot, SnapshotError> {
    let source = root.to_string();
    let (root, rec) = root.recording();
    let host = read_with(&root, opts);
    let mut plan = Plan::default();
    for a in rec.accesses() {
        match a {
            Access::Read { path, result: Ok(bytes) } => {
                if let Some(real) = plan.place(&root, &path) {
                    plan.files.insert(real, bytes);
                }
            }
            Access::List { path, result: Ok(names) } => {
                let Some(real) = plan.place(&root, &path) else { continue };
                plan.dirs.insert(real.clone());
                for n in names {
                    let child = if real.is_empty() { n.clone() } else { format!("{real}/{n}") };
                    match root.kind(&child) {
                        Some(Kind::Dir) => {
                            plan.dirs.insert(child);
                        }
                        Some(Kind::Link(t)) => plan.link(&child, &t),
                        // Files listed but never read are not needed to read the model back.
                        _ => {}
                    }
                }
            }
            Access::Link { path, result: Ok(target) } => {
                let (dir, name) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
                if let Some(real) = plan.place(&root, dir) {
                    let p =
                        if real.is_empty() { name.to_string() } else { format!("{real}/{name}") };
                    plan.link(&p, &target);
                }
            }
            Access::Read { path, result: Err(e) } => plan.failure(path, Op::Read, &e),
            Access::List { path, result: Err(e) } => plan.failure(path, Op::List, &e),
            Access::Link { path, result: Err(e) } => plan.failure(path, Op::Readlink, &e),
        }
    }
    let manifest = Manifest {
        schema_version: crate::model::SCHEMA_VERSION,
        tool: format!("lowlat {}", env!("CARGO_PKG_VERSION")),
        source,
        hostname: host.hostname.clone(),
        taken_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        files: plan.files.len(),
        dirs: plan.dirs.len(),
        symlinks: plan.links.len(),
        max_processes: opts.max_processes,
        process_cmdlines: !opts.skip_tasks && !opts.skip_cmdline,
        failures: plan.failures.clone(),
        root_links: plan.root_links.clone(),
    };
    let tgz = pack(&plan, &manifest)?;
    Ok(Snapshot { host, tgz, manifest })
}

fn pack(plan: &Plan, manifest: &Manifest) -> Result<Vec<u8>, SnapshotError> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut b = tar::Builder::new(gz);
    let header = |kind: tar::EntryType, size: u64, mode: u32| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(mode);
        h.set_mtime(manifest.taken_at);
        h.set_uid(0);
        h.set_gid(0);
        h
    };
    for d in plan.dirs.iter().filter(|d| !d.is_empty() && !plan.links.contains_key(*d)) {
        let mut h = header(tar::EntryType::Directory, 0, 0o755);
        b.append_data(&mut h, format!("{d}/"), std::io::empty())?;
    }
    for (p, target) in &plan.links {
        let mut h = header(tar::EntryType::Symlink, 0, 0o777);
        b.append_link(&mut h, p, target)?;
    }
    for (p, data) in plan.files.iter().filter(|(p, _)| !plan.links.contains_key(*p)) {
        let mut h = header(tar::EntryType::Regular, data.len() as u64, 0o644);
        b.append_data(&mut h, p, data.as_slice())?;
    }
    let m = serde_json::to_vec_pretty(manifest)?;
    let mut h = header(tar::EntryType::Regular, m.len() as u64, 0o644);
    b.append_data(&mut h, MANIFEST, m.as_slice())?;
    let mut gz = b.into_inner()?;
    gz.flush()?;
    Ok(gz.finish()?)
}
