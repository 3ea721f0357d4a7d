//! `--rt-cgroup`: run the measurement from a cgroup that has an RT budget, and move the
//! process back afterwards. On kernels with RT group scheduling a task in a cgroup without
//! budget cannot get SCHED_FIFO (cgroup v2: any non-root cgroup; v1: a 0 on the chain), so
//! the process writes its pid to the target's `cgroup.procs` before its threads start and
//! back to its own cgroup's when the [`Moved`] guard drops — at the end, on an error, and
//! after Ctrl-C (the run stops on the signal flag and returns normally). If the process dies
//! instead, nothing is left to restore: only this process was moved.
//!
//! The move is not journaled through `tune`: it changes nothing that outlives the process.

use std::path::PathBuf;

use host::rt::{CauseKind, CgroupPlace};
use host::Root;

use crate::MeasureError;

/// Where to move: the root cgroup of the cpu controller, or a cgroup path under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RtCgroup {
    /// The root cgroup (v2: the only one with an RT budget; v1: the budget of
    /// `kernel.sched_rt_runtime_us`).
    Root,
    /// A cgroup path under the cpu controller's mount (`/rt`), which must exist.
    Path(String),
}

impl std::str::FromStr for RtCgroup {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "root" || s == "/" {
            return Ok(RtCgroup::Root);
        }
        let ok = s.starts_with('/')
            && s.len() < 4096
            && s.split('/').all(|p| p != ".." && p != ".")
            && !s.contains(['\n', '\0']);
        if ok {
            Ok(RtCgroup::Path(s.trim_end_matches('/').to_string()))
        } else {
            Err(format!("{s:?}: give `root` or an absolute cgroup path such as /rt"))
        }
    }
}

impl std::fmt::Display for RtCgroup {
    /// As given on a command line: `root` or the path.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RtCgroup::Root => f.write_str("root"),
            RtCgroup::Path(p) => f.write_str(p),
        }
    }
}

/// The process while it sits in the RT cgroup; dropping it moves it back.
#[derive(Debug)]
pub struct Moved {
    back: PathBuf,
    /// The cgroup path moved into, as recorded in the result.
    pub to: String,
    /// The cgroup path it came from.
    pub from: String,
}

impl Drop for Moved {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(&self.back, std::process::id().to_string()) {
            // The cgroup's name is the host's text.
            eprintln!(
                "lowlat: could not move back to cgroup {} ({}: {e}); the process ends anyway",
                util::term::sanitize(&self.from, false),
                util::term::sanitize(&self.back.display().to_string(), false)
            );
        }
    }
}

/// The move [`check`] found possible: the cgroup paths and their `cgroup.procs` files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The process's own cgroup (for the cpu controller), where it goes back to.
    pub from: String,
    /// The cgroup it moves into.
    pub to: String,
    pub back: PathBuf,
    pub into: PathBuf,
}

fn refuse(path: impl Into<String>, why: impl Into<String>) -> MeasureError {
    MeasureError::RtCgroup { path: path.into(), why: why.into() }
}

/// Whether moving this process into `target` can give it an RT budget, read through `root`
/// (live, or a fixture tree in tests), and the files of the move. Refused before any move:
/// a `target` that is not a directory under the cpu controller's mount (with a hint when it
/// was given as a file-system path), a v1 target with `cpu.rt_runtime_us` = 0 at any level
/// from the root down to it (the file and the fix named), and any non-root v2 target on a
/// kernel with RT group scheduling (no v2 cgroup but the root can hold RT tasks). Causes
/// moving cannot fix (no CAP_SYS_NICE) are left to the measurement, which reports them.
pub fn check(root: &Root, target: &RtCgroup) -> Result<Plan, MeasureError> {
    let ev = host::rt::gather(root, "self");
    let place = ev.cgroup.clone().ok_or_else(|| {
        refuse(
            "/proc/self/cgroup",
            "no cgroup with the cpu controller found in /proc/self/cgroup and /proc/mounts",
        )
    })?;
    let (v1, mount, from) = match place {
        CgroupPlace::V1 { mount, path, .. } => (true, mount, path),
        CgroupPlace::V2 { mount, path, .. } => (false, mount, path),
    };
    let to = match target {
        RtCgroup::Root => "/".to_string(),
        RtCgroup::Path(p) => p.clone(),
    };
    let dir = |p: &str| format!("{mount}{}", p.trim_end_matches('/'));
    if let RtCgroup::Path(p) = target {
        let rel = dir(p);
        if root.kind(&rel) != Some(host::root::Kind::Dir) {
            // A file-system path given with the mount in front (`/sys/fs/cgroup/cpu/rt`).
            if let Some(r) = p.strip_prefix(&mount).filter(|r| r.starts_with('/')) {
                let why = format!(
                    "not a cgroup path: the path is taken under the cgroup mount {mount}, so \
                     give {r}"
                );
                return Err(refuse(p.clone(), why));
            }
            let why = format!(
                "no such cgroup under the cpu controller's mount {mount}: create it first \
                 (mkdir {rel}) and give it an RT budget, or use `root`"
            );
            return Err(refuse(rel, why));
        }
        let at = host::rt::place_at(root, v1, &mount, p);
        let zero = match &at {
            CgroupPlace::V1 { chain, .. } => host::rt::budget_writes(chain),
            CgroupPlace::V2 { .. } => None,
        }
        .map(|(z, w)| (z.file.clone(), w));
        let ev = host::rt::Evidence { cgroup: Some(at), ..ev };
        let cause = host::rt::diagnose(&ev, 1, false).map(|c| c.kind);
        match (cause, zero) {
            (Some(CauseKind::CgroupV1NoBudget), Some((file, writes))) => {
                let why = format!(
                    "{file} is 0, so a task in {p} cannot get SCHED_FIFO: give every level an \
                     RT budget, parents first ({}), or use `root`",
                    writes.join(" && ")
                );
                return Err(refuse(rel, why));
            }
            (Some(CauseKind::CgroupV2NonRoot), _) => {
                let why = format!(
                    "cgroup v2 with RT group scheduling ({}): no cgroup but the root can hold \
                     real-time tasks, so moving to {p} would not help; use `root`",
                    ev.rt_group_sched_evidence.as_deref().unwrap_or("CONFIG_RT_GROUP_SCHED=y")
                );
                return Err(refuse(rel, why));
            }
            _ => {}
        }
    }
    let procs = |p: &str| PathBuf::from(format!("{}/cgroup.procs", dir(p)));
    Ok(Plan { back: procs(&from), into: procs(&to), from, to })
}

/// Move this process into `target` (live host only), after [`check`].
pub fn enter(target: &RtCgroup) -> Result<Moved, MeasureError> {
    let Plan { from, to, back, into } = check(&Root::live(), target)?;
    std::fs::write(&into, std::process::id().to_string()).map_err(|e| {
        refuse(into.display().to_string(), format!("could not move there: {e} (needs root)"))
    })?;
    Ok(Moved { back, to, from })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        assert_eq!("root".parse(), Ok(RtCgroup::Root));
        assert_eq!("/rt/".parse(), Ok(RtCgroup::Path("/rt".into())));
        assert!("rt".parse::<RtCgroup>().is_err());
        assert!("/a/../b".parse::<RtCgroup>().is_err());
        for t in ["root", "/rt/a"] {
            assert_eq!(t.parse::<RtCgroup>().map(|c| c.to_string()).as_deref(), Ok(t));
        }
    }

    #[test]
    fn files_from_a_v2_tree() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../host/tests/fixtures/rt-v2-nonroot");
        let root = Root::open(&dir).unwrap_or_else(|e| panic!("{e}"));
        let p = check(&root, &RtCgroup::Root).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((p.from.as_str(), p.to.as_str()), ("/process_api/61bd41210c3a", "/"));
        assert_eq!(p.back, PathBuf::from("/sys/fs/cgroup/process_api/61bd41210c3a/cgroup.procs"));
        assert_eq!(p.into, PathBuf::from("/sys/fs/cgroup/cgroup.procs"));
    }

    fn fixture(name: &str) -> Root {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../host/tests/fixtures")
            .join(name);
        Root::open(&dir).unwrap_or_else(|e| panic!("{e}"))
    }

    fn refused(root: &Root, target: &str) -> String {
        let t: RtCgroup = target.parse().unwrap_or_else(|e| panic!("{e}"));
        match check(root, &t) {
            Err(e) => e.to_string(),
            Ok(p) => panic!("{target} accepted: {p:?}"),
        }
    }

    #[test]
    fn v1_target_with_a_zero_on_its_chain_is_refused_naming_the_file() {
        let root = fixture("rt-v1-docker");
        let base = "/sys/fs/cgroup/cpu,cpuacct";
        // The leaf is 0 under a budgeted parent (seed 001's Docker scope).
        let e = refused(&root, "/system.slice/docker-4f1e2d.scope");
        let leaf = format!("{base}/system.slice/docker-4f1e2d.scope/cpu.rt_runtime_us");
        assert!(e.contains(&format!("{leaf} is 0")), "{e}");
        assert!(e.contains(&format!("echo 100000 > {leaf}")), "{e}");
        assert!(e.contains("or use `root`"), "{e}");
        // A 0 higher up: the topmost zero is named, and every zero level gets a write, parent
        // first.
        let e = refused(&root, "/user.slice/user-1000.slice");
        let (top, low) = (
            format!("{base}/user.slice/cpu.rt_runtime_us"),
            format!("{base}/user.slice/user-1000.slice/cpu.rt_runtime_us"),
        );
        assert!(e.contains(&format!("{top} is 0")), "{e}");
        assert!(e.contains(&format!("echo 100000 > {top} && echo 100000 > {low}")), "{e}");
        assert!(!e.contains("--"), "a library error names no flag: {e}");
        // Budget on every level: accepted, with the files of the move.
        let p = check(&root, &"/kubepods/burstable".parse().unwrap_or(RtCgroup::Root))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.from, "/system.slice/docker-4f1e2d.scope");
        assert_eq!(p.into, PathBuf::from(format!("{base}/kubepods/burstable/cgroup.procs")));
        assert!(check(&root, &RtCgroup::Root).is_ok());
    }

    #[test]
    fn missing_or_file_system_paths_are_refused_clearly() {
        let root = fixture("rt-v1-docker");
        let e = refused(&root, "/nope");
        assert!(e.contains("no such cgroup under the cpu controller's mount"), "{e}");
        assert!(e.contains("mkdir /sys/fs/cgroup/cpu,cpuacct/nope"), "{e}");
        let e = refused(&root, "/sys/fs/cgroup/cpu,cpuacct/kubepods");
        assert!(
            e.starts_with("RT cgroup /sys/fs/cgroup/cpu,cpuacct/kubepods: not a cgroup path"),
            "{e}"
        );
        assert!(e.ends_with("so give /kubepods"), "{e}");
        // A file is not a cgroup.
        let e = refused(&root, "/kubepods/cpu.rt_runtime_us");
        assert!(e.contains("no such cgroup"), "{e}");
    }

    #[test]
    fn v2_non_root_target_is_refused_with_rt_group_sched() {
        let root = fixture("rt-v2-nonroot");
        let e = refused(&root, "/system.slice");
        assert!(e.contains("cgroup v2 with RT group scheduling"), "{e}");
        assert!(e.contains("no cgroup but the root can hold real-time tasks"), "{e}");
        assert!(e.contains("use `root`"), "{e}");
        assert!(check(&root, &RtCgroup::Root).is_ok());
    }
}
