//! tracefs as the tracer modes use it: where it is (mounted for the run when it is not, and
//! unmounted after), whether a tracer is built in, a private instance (`instances/lowlat-PID`,
//! removed at the end; one left by a killed run is removed by the next), the global settings
//! changed for the run and put back as found ([`Settings`], on drop: the end, an error,
//! Ctrl-C), and the reader of `trace_pipe`.
//!
//! Reads that describe the host (`available_tracers`, other instances' tracers) go through
//! `host::Root`; the writes and the pipe are tracefs control files, written by this module
//! only, each restored by the guard that changed it (not `tune`'s journal: nothing here
//! outlives the run, like `--rt-cgroup` and the PM QoS hold).

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use host::Root;

use crate::error::MeasureError;

/// Where tracefs is looked for, in order (relative to `/`).
pub const LOCATIONS: &[&str] = &["sys/kernel/tracing", "sys/kernel/debug/tracing"];

/// The prefix of lowlat's instances; the rest is the owning process's pid.
pub const INSTANCE_PREFIX: &str = "lowlat-";

/// Why a tracer cannot be used here, in words for the result's notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// The tracefs directory of `root` (relative), when one is mounted: the directory that holds
/// `available_tracers`.
pub fn find(root: &Root) -> Option<&'static str> {
    LOCATIONS.iter().copied().find(|d| root.read_string(&format!("{d}/available_tracers")).is_ok())
}

/// The tracers `root`'s kernel offers, or why none can be known.
pub fn available(root: &Root) -> Result<(String, Vec<String>), Unavailable> {
    let Some(dir) = find(root) else {
        return Err(Unavailable(
            "tracefs is not mounted at /sys/kernel/tracing (nor debugfs's tracing): the kernel may lack CONFIG_TRACING, or run `mount -t tracefs nodev /sys/kernel/tracing`".into(),
        ));
    };
    let text = root
        .read_string(&format!("{dir}/available_tracers"))
        .map_err(|e| Unavailable(format!("/{dir}/available_tracers: {e}")))?;
    Ok((format!("/{dir}"), text.split_whitespace().map(str::to_string).collect()))
}

/// Whether `tracer` is available; the tracefs path when it is, else why not (naming the
/// kernel option that builds it and what the kernel offers instead).
pub fn check(root: &Root, tracer: &str) -> Result<String, Unavailable> {
    let (dir, tracers) = available(root)?;
    if tracers.iter().any(|t| t == tracer) {
        return Ok(dir);
    }
    let config = match tracer {
        "timerlat" => "CONFIG_TIMERLAT_TRACER",
        "osnoise" => "CONFIG_OSNOISE_TRACER",
        "hwlat" => "CONFIG_HWLAT_TRACER",
        _ => "its CONFIG_ option",
    };
    Err(Unavailable(format!(
        "this kernel has no {tracer} tracer ({config} is off; {dir}/available_tracers: {}): PREEMPT_RT and most distribution kernels build it",
        if tracers.is_empty() { "empty".to_string() } else { tracers.join(" ") }
    )))
}

/// Another user of the osnoise/timerlat machinery (an instance whose tracer is osnoise or
/// timerlat, rtla's for one): their global settings are shared, so a second user would change
/// the first's run. `own` is this run's instance name, if it exists already.
pub fn osnoise_user(root: &Root, dir: &str, own: Option<&str>) -> Option<String> {
    let dir = dir.trim_start_matches('/');
    let busy = |t: &str| matches!(t.trim(), "osnoise" | "timerlat");
    if root.read_string(&format!("{dir}/current_tracer")).is_ok_and(|t| busy(&t)) {
        return Some(format!("/{dir} (top level)"));
    }
    let names = root.list_dir(&format!("{dir}/instances")).unwrap_or_default();
    names.into_iter().filter(|n| Some(n.as_str()) != own).find_map(|n| {
        let t = root.read_string(&format!("{dir}/instances/{n}/current_tracer")).ok()?;
        busy(&t).then(|| format!("/{dir}/instances/{n} ({})", t.trim()))
    })
}

/// Write a value with a final newline: some tracefs parsers (osnoise/cpus in 6.1) read the
/// written bytes up to a newline and fail on a bare value (EINVAL).
fn write(path: &Path, value: &str) -> Result<(), MeasureError> {
    let text = if value.ends_with('\n') { value.to_string() } else { format!("{value}\n") };
    std::fs::write(path, text).map_err(|e| MeasureError::Tracer {
        path: path.display().to_string(),
        why: format!("writing {value:?}: {e}"),
    })
}

/// Read a control file with reads of 4 KiB, as `cat` does: some tracefs files refuse a read
/// shorter than their whole text (osnoise/cpus in 6.1 returns EINVAL when its text does not
/// fit the buffer), and `read_to_string` may ask for a few bytes at a time.
fn read(path: &Path) -> Result<String, MeasureError> {
    let err = |e: std::io::Error| MeasureError::Tracer {
        path: path.display().to_string(),
        why: e.to_string(),
    };
    let mut f = std::fs::File::open(path).map_err(err)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 4096];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(err(e)),
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Where a run records the tracefs values it is about to change, before changing them
/// (`tracefs-PID.json`, private): a run killed before it could put them back (SIGKILL, a
/// crash) is undone by the next run, which finds the owner gone ([`recover_stale`]).
pub const JOURNAL_DIR: &str = "/run/lowlat";

/// Most bytes of a journal read back (a few dozen short entries in practice).
const JOURNAL_MAX: u64 = 64 * 1024;

/// Settings changed for a run, each put back as found when this drops (last changed first).
#[derive(Debug, Default)]
pub struct Settings {
    saved: Vec<(PathBuf, String)>,
    /// The journal file, when the run keeps one.
    journal: Option<PathBuf>,
    /// Restores that failed (reported by [`Settings::restore`]).
    pub failed: Vec<String>,
}

impl Settings {
    /// Settings journaled in `dir` (`tracefs-PID.json`) before each change.
    pub fn journaled(dir: &Path) -> Self {
        Settings {
            saved: Vec::new(),
            journal: Some(dir.join(format!("tracefs-{}.json", std::process::id()))),
            failed: Vec::new(),
        }
    }

    fn persist(&self) -> Result<(), MeasureError> {
        let Some(j) = &self.journal else { return Ok(()) };
        let err = |e: std::io::Error| MeasureError::Tracer {
            path: j.display().to_string(),
            why: format!("journal: {e}"),
        };
        if let Some(dir) = j.parent() {
            util::fs::create_private_dir(dir).map_err(err)?;
        }
        let entries: Vec<(String, &str)> =
            self.saved.iter().map(|(p, v)| (p.display().to_string(), v.as_str())).collect();
        let text = serde_json::to_vec(&entries).map_err(|e| err(std::io::Error::other(e)))?;
        util::fs::write_atomic(j, &text, 0o600).map_err(err)
    }

    /// Set `path` to `value`, recording the old value first (in memory and in the journal).
    /// A value that reads back the same is left alone.
    pub fn set(&mut self, path: &Path, value: &str) -> Result<(), MeasureError> {
        let old = read(path)?;
        let old = old.trim_end_matches('\n').to_string();
        if old == value {
            return Ok(());
        }
        self.saved.push((path.to_path_buf(), old));
        if let Err(e) = self.persist() {
            self.saved.pop();
            return Err(e);
        }
        write(path, value)
    }

    /// Put every changed file back (last first); errors are kept in `failed`. The journal
    /// goes when everything is back.
    pub fn restore(&mut self) -> &[String] {
        while let Some((path, old)) = self.saved.pop() {
            if let Err(e) = std::fs::write(&path, format!("{old}\n")) {
                self.failed.push(format!("{}: could not put back {old:?}: {e}", path.display()));
            }
        }
        if let Some(j) = &self.journal {
            if self.failed.is_empty() {
                let _ = std::fs::remove_file(j);
            }
        }
        &self.failed
    }
}

/// Put back what killed runs left changed: every `tracefs-PID.json` in `dir` whose process is
/// gone is replayed (last change first) and removed; their instances are removed from
/// `tracefs`. Only files under a tracefs location are written. Returns what was done, for the
/// result's notes.
pub fn recover_stale(dir: &Path, tracefs: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix("tracefs-")
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            let Ok(bytes) = util::fs::read_private(&e.path(), JOURNAL_MAX) else { continue };
            let Ok(entries) = serde_json::from_slice::<Vec<(String, String)>>(&bytes) else {
                continue;
            };
            let mut put = 0;
            for (path, old) in entries.iter().rev() {
                let ok_path = LOCATIONS.iter().any(|l| path.starts_with(&format!("/{l}/")))
                    && !path.contains("/../");
                if ok_path
                    && !old.contains('\n')
                    && std::fs::write(path, format!("{old}\n")).is_ok()
                {
                    put += 1;
                }
            }
            let _ = std::fs::remove_file(e.path());
            notes.push(format!(
                "put back {put} tracefs value(s) that a killed lowlat run (pid {pid}) had changed"
            ));
        }
    }
    remove_stale(&tracefs.join("instances"));
    notes
}

impl Drop for Settings {
    fn drop(&mut self) {
        self.restore();
    }
}

/// A tracefs instance of this run: created empty, removed when this drops (tracer set back
/// to `nop` first, which stops its kernel threads).
#[derive(Debug)]
pub struct Instance {
    pub name: String,
    pub dir: PathBuf,
}

impl Instance {
    /// `instances/lowlat-PID` under `tracefs`; instances of lowlat runs that are gone are
    /// removed first (a run killed with SIGKILL cannot remove its own).
    pub fn create(tracefs: &Path) -> Result<Self, MeasureError> {
        let instances = tracefs.join("instances");
        let name = format!("{INSTANCE_PREFIX}{}", std::process::id());
        let dir = instances.join(&name);
        if dir.exists() {
            let _ = remove(&dir);
        }
        std::fs::create_dir(&dir).map_err(|e| MeasureError::Tracer {
            path: dir.display().to_string(),
            why: format!("creating the instance: {e}"),
        })?;
        Ok(Instance { name, dir })
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn set(&self, name: &str, value: &str) -> Result<(), MeasureError> {
        write(&self.file(name), value)
    }
}

fn remove(dir: &Path) -> std::io::Result<()> {
    let _ = std::fs::write(dir.join("tracing_on"), "0");
    let _ = std::fs::write(dir.join("current_tracer"), "nop");
    let _ = std::fs::write(dir.join("events/enable"), "0");
    std::fs::remove_dir(dir)
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = remove(&self.dir);
    }
}

/// Remove `instances/lowlat-PID` whose process is gone.
fn remove_stale(instances: &Path) {
    let Ok(rd) = std::fs::read_dir(instances) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(INSTANCE_PREFIX).and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = remove(&e.path());
        }
    }
}

/// tracefs mounted by this run (it was not mounted), unmounted when this drops.
#[derive(Debug)]
pub struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Ok(p) = std::ffi::CString::new(self.0.as_os_str().as_encoded_bytes()) {
            // SAFETY: a valid NUL-terminated path; umount2 has no other memory effects.
            unsafe { libc::umount2(p.as_ptr(), 0) };
        }
    }
}

/// Mount tracefs at `/sys/kernel/tracing` when the kernel has it and nothing is mounted there
/// (a container or a minimal system). `None` when it was mounted already.
pub fn mount_if_needed() -> Result<Option<Mounted>, MeasureError> {
    let dir = Path::new("/sys/kernel/tracing");
    if dir.join("available_tracers").exists() || !dir.is_dir() {
        return Ok(None);
    }
    let (Ok(src), Ok(target), Ok(fs)) = (
        std::ffi::CString::new("nodev"),
        std::ffi::CString::new("/sys/kernel/tracing"),
        std::ffi::CString::new("tracefs"),
    ) else {
        return Ok(None);
    };
    // SAFETY: valid NUL-terminated strings; no data argument.
    let rc =
        unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    if rc != 0 {
        return Err(MeasureError::Tracer {
            path: "/sys/kernel/tracing".into(),
            why: format!("mounting tracefs: {}", std::io::Error::last_os_error()),
        });
    }
    Ok(Some(Mounted(dir.to_path_buf())))
}

/// Read `trace_pipe` until `stop` is set and the pipe is drained, calling `each` for every
/// complete line. Non-blocking reads with a short sleep when empty: a blocked read could not
/// see `stop`.
pub fn read_pipe(
    pipe: &Path,
    stop: &AtomicBool,
    mut each: impl FnMut(&str),
) -> Result<u64, MeasureError> {
    let mut f =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(pipe).map_err(
            |e| MeasureError::Tracer { path: pipe.display().to_string(), why: e.to_string() },
        )?;
    let mut buf = vec![0u8; 1 << 16];
    let mut pending: Vec<u8> = Vec::with_capacity(1 << 12);
    let mut bytes = 0u64;
    let mut draining = false;
    loop {
        match f.read(&mut buf) {
            Ok(0) => {}
            Ok(n) => {
                bytes += n as u64;
                pending.extend_from_slice(&buf[..n]);
                let mut start = 0;
                while let Some(nl) = pending[start..].iter().position(|&b| b == b'\n') {
                    if let Ok(l) = std::str::from_utf8(&pending[start..start + nl]) {
                        each(l);
                    }
                    start += nl + 1;
                }
                pending.drain(..start);
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(MeasureError::Tracer {
                    path: pipe.display().to_string(),
                    why: e.to_string(),
                })
            }
        }
        // Empty: stop once a read after `stop` found nothing more.
        if draining {
            break;
        }
        if stop.load(Ordering::SeqCst) {
            draining = true;
            continue;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Root) {
        let d = tempfile::tempdir().unwrap();
        for (p, t) in files {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        }
        let r = Root::open(d.path()).unwrap();
        (d, r)
    }

    #[test]
    fn availability_names_the_missing_tracer_and_its_config() {
        let (_d, r) = root_with(&[]);
        assert!(check(&r, "osnoise").unwrap_err().0.starts_with("tracefs is not mounted"));
        let (_d, r) = root_with(&[("sys/kernel/tracing/available_tracers", "blk function nop\n")]);
        let e = check(&r, "timerlat").unwrap_err().0;
        assert!(
            e.contains("no timerlat tracer")
                && e.contains("CONFIG_TIMERLAT_TRACER")
                && e.contains("blk function nop"),
            "{e}"
        );
        let (_d, r) = root_with(&[(
            "sys/kernel/debug/tracing/available_tracers",
            "timerlat osnoise hwlat nop\n",
        )]);
        assert_eq!(check(&r, "hwlat").unwrap(), "/sys/kernel/debug/tracing");
    }

    #[test]
    fn another_osnoise_user_is_found() {
        let (_d, r) = root_with(&[
            ("sys/kernel/tracing/available_tracers", "timerlat osnoise nop\n"),
            ("sys/kernel/tracing/current_tracer", "nop\n"),
            ("sys/kernel/tracing/instances/timerlat_top/current_tracer", "timerlat\n"),
            ("sys/kernel/tracing/instances/lowlat-9/current_tracer", "osnoise\n"),
        ]);
        let who = osnoise_user(&r, "/sys/kernel/tracing", Some("lowlat-9")).unwrap();
        assert!(who.contains("timerlat_top (timerlat)"), "{who}");
        let (_d, r) = root_with(&[("sys/kernel/tracing/current_tracer", "nop\n")]);
        assert_eq!(osnoise_user(&r, "/sys/kernel/tracing", None), None);
    }

    #[test]
    fn settings_are_put_back_as_found() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::fs::write(&a, "1000\n").unwrap();
        std::fs::write(&b, "0-7\n").unwrap();
        {
            let mut s = Settings::default();
            s.set(&a, "200").unwrap();
            s.set(&b, "0-7").unwrap(); // same value: not touched
            s.set(&b, "2-3").unwrap();
            assert_eq!(std::fs::read_to_string(&a).unwrap(), "200\n");
            assert_eq!(std::fs::read_to_string(&b).unwrap(), "2-3\n");
            assert!(s.set(&d.path().join("missing"), "1").is_err());
        }
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "1000\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "0-7\n");
    }

    /// A run killed after changing settings leaves its journal; the next run puts the values
    /// back. The journal entries outside tracefs are never written.
    #[test]
    fn a_killed_runs_journal_is_replayed() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        std::fs::write(&a, "1000\n").unwrap();
        let journal_dir = d.path().join("run");
        let mut s = Settings::journaled(&journal_dir);
        s.set(&a, "200").unwrap();
        let j = journal_dir.join(format!("tracefs-{}.json", std::process::id()));
        let text = std::fs::read_to_string(&j).unwrap();
        assert!(text.contains("1000"), "{text}");
        // As if killed: forget without restoring, and pretend the pid is a dead one.
        s.saved.clear();
        s.journal = None;
        drop(s);
        let dead = journal_dir.join("tracefs-4194999.json");
        std::fs::rename(&j, &dead).unwrap();
        // The value is outside a tracefs location: recovery reads it and refuses to write it.
        let notes = recover_stale(&journal_dir, d.path());
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("put back 0"), "{notes:?}");
        assert!(!dead.exists());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "200\n");
        // Restoring normally removes the journal.
        let mut s = Settings::journaled(&journal_dir);
        s.set(&a, "300").unwrap();
        assert!(j.exists());
        s.restore();
        assert!(!j.exists());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "200\n");
    }

    #[test]
    fn the_pipe_reader_gives_whole_lines_and_stops() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("trace_pipe");
        std::fs::write(&p, "one\ntwo\nthree-without-newline").unwrap();
        let stop = AtomicBool::new(true);
        let mut lines = Vec::new();
        let n = read_pipe(&p, &stop, |l| lines.push(l.to_string())).unwrap();
        assert_eq!(lines, ["one", "two"]);
        assert_eq!(n, "one\ntwo\nthree-without-newline".len() as u64);
    }
}
