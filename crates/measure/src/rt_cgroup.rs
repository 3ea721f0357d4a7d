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

use host::rt::CgroupPlace;
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

/// The `cgroup.procs` files of the current cgroup and of `target`, from `/proc/self/cgroup`.
fn plan(
    root: &Root,
    target: &RtCgroup,
) -> Result<(String, String, PathBuf, PathBuf), MeasureError> {
    let place = host::rt::gather(root, "self").cgroup.ok_or_else(|| MeasureError::RtCgroup {
        path: "/proc/self/cgroup".into(),
        why: "no cgroup with the cpu controller found in /proc/self/cgroup and /proc/mounts".into(),
    })?;
    let (mount, from) = match place {
        CgroupPlace::V1 { mount, path, .. } | CgroupPlace::V2 { mount, path, .. } => (mount, path),
    };
    let to = match target {
        RtCgroup::Root => "/".to_string(),
        RtCgroup::Path(p) => p.clone(),
    };
    let procs = |p: &str| PathBuf::from(format!("{mount}{}/cgroup.procs", p.trim_end_matches('/')));
    Ok((from.clone(), to.clone(), procs(&from), procs(&to)))
}

/// Move this process into `target` (live host only).
pub fn enter(target: &RtCgroup) -> Result<Moved, MeasureError> {
    let (from, to, back, into) = plan(&Root::live(), target)?;
    std::fs::write(&into, std::process::id().to_string()).map_err(|e| MeasureError::RtCgroup {
        path: into.display().to_string(),
        why: format!("{e} (needs root, and the cgroup must exist)"),
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
    }

    #[test]
    fn files_from_a_v2_tree() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../host/tests/fixtures/rt-v2-nonroot");
        let root = Root::open(&dir).unwrap_or_else(|e| panic!("{e}"));
        let (from, to, back, into) = plan(&root, &RtCgroup::Root).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((from.as_str(), to.as_str()), ("/process_api/61bd41210c3a", "/"));
        assert_eq!(back, PathBuf::from("/sys/fs/cgroup/process_api/61bd41210c3a/cgroup.procs"));
        assert_eq!(into, PathBuf::from("/sys/fs/cgroup/cgroup.procs"));
    }
}
