//! A real update command as the interferer (`ostree pull-local …`, `rpm-ostree upgrade`, the
//! seed's own script), measured the way the built-in bulk writer is: started after the bulk
//! delay, the probe running until it ends plus two windows. It runs through `sh -c` in the
//! directory under test, in its own process group (so the terminal's Ctrl-C reaches lowlat
//! only, and lowlat ends the whole group: at the end of the scenario, on Ctrl-C, and — from
//! the signal handler — on a second Ctrl-C), with `LOWLAT_SCRATCH` naming a directory on the
//! same filesystem that is removed afterwards. Its output goes to a log whose tail is kept
//! when it fails. The bytes it wrote are its `write_bytes` from `/proc/<pid>/io`, read before
//! it is reaped (so they include the children its shell reaped).

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::bulk::BulkStats;
use crate::restore::GroupGuard;

/// Longest command line accepted.
pub const MAX_COMMAND: usize = 4096;

/// How to run the command.
#[derive(Debug, Clone)]
pub struct CommandConfig {
    /// `sh -c` text.
    pub command: String,
    /// Working directory (the directory under test).
    pub cwd: PathBuf,
    /// Exported as `LOWLAT_SCRATCH` (removed after the scenario).
    pub scratch: PathBuf,
    /// Log of its stdout and stderr.
    pub log: PathBuf,
    /// I/O priority class idle for the command (inherited by its children).
    pub ioprio_idle: bool,
}

/// What the command did.
#[derive(Debug, Clone, Default)]
pub struct CommandRun {
    pub stats: BulkStats,
    /// Exit status; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// Last lines of its output when it failed.
    pub log_tail: Option<String>,
}

/// `write_bytes` of `/proc/<pid>/io`.
pub fn parse_write_bytes(io: &str) -> Option<u64> {
    io.lines().find_map(|l| l.strip_prefix("write_bytes:")?.trim().parse().ok())
}

fn kill_group(pgid: i32, sig: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals the group; no pointers.
    unsafe { libc::kill(-pgid, sig) };
}

/// Has `pid` exited? Looks without reaping (`WNOWAIT`), so `/proc/<pid>/io` stays readable.
fn exited(pid: i32) -> bool {
    // SAFETY: zeroed siginfo_t is a valid out-parameter for waitid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid writes only into `info`.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: si_pid is valid to read after a successful waitid.
    rc == 0 && unsafe { info.si_pid() } == pid
}

fn tail(path: &Path, lines: usize) -> Option<String> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let mut buf = Vec::new();
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(len.saturating_sub(4096))).ok()?;
    f.read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    let v: Vec<&str> = text.lines().collect();
    let t = v[v.len().saturating_sub(lines)..].join("\n");
    (!t.trim().is_empty()).then(|| util::term::sanitize(&t, true).into_owned())
}

/// Run the command until it exits, `halt` is set, or `max` passes (then its group gets
/// SIGTERM, and SIGKILL two seconds later). Whatever is left of its group is killed at the end.
pub fn run_command(
    cfg: &CommandConfig,
    root: &host::Root,
    halt: &AtomicBool,
    max: Duration,
) -> std::io::Result<CommandRun> {
    std::fs::create_dir_all(&cfg.scratch)?;
    let log = std::fs::File::create(&cfg.log)?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(&cfg.command)
        .current_dir(&cfg.cwd)
        .env("LOWLAT_SCRATCH", &cfg.scratch)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0);
    if cfg.ioprio_idle {
        // SAFETY: the closure only makes the ioprio_set syscall (async-signal-safe, no
        // allocation) in the forked child before exec.
        unsafe {
            cmd.pre_exec(crate::sys::set_ioprio_idle);
        }
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id() as i32;
    let guard = GroupGuard::register(pid);
    let mut interrupted = false;
    let mut term_at: Option<Instant> = None;
    while !exited(pid) {
        if term_at.is_none() && (halt.load(Ordering::Relaxed) || start.elapsed() > max) {
            interrupted = true;
            kill_group(pid, libc::SIGTERM);
            term_at = Some(Instant::now());
        }
        if term_at.is_some_and(|t| t.elapsed() > Duration::from_secs(2)) {
            kill_group(pid, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let duration = start.elapsed();
    let bytes = root
        .read_string(&format!("proc/{pid}/io"))
        .ok()
        .and_then(|t| parse_write_bytes(&t))
        .unwrap_or(0);
    // The leader is a zombie (not reaped): its pid, and so the group id, cannot be reused yet.
    kill_group(pid, libc::SIGKILL);
    let status = child.wait()?;
    drop(guard);
    let failed = !status.success();
    Ok(CommandRun {
        stats: BulkStats { bytes, files: 0, duration, sync: None, interrupted },
        exit_code: status.code(),
        signal: status.signal(),
        log_tail: if failed { tail(&cfg.log, 5) } else { None },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(d: &Path, command: &str) -> CommandConfig {
        CommandConfig {
            command: command.into(),
            cwd: d.to_path_buf(),
            scratch: d.join("scratch"),
            log: d.join("command.log"),
            ioprio_idle: true,
        }
    }

    #[test]
    fn write_bytes_from_proc_io() {
        let io = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 4096\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_write_bytes(io), Some(4096));
        assert_eq!(parse_write_bytes("rchar: 1\n"), None);
    }

    #[test]
    fn a_command_runs_in_the_directory_with_its_scratch_and_its_writes_are_counted() {
        let d = tempfile::tempdir().unwrap();
        let c = cfg(
            d.path(),
            "dd if=/dev/zero of=\"$LOWLAT_SCRATCH/f\" bs=64k count=32 conv=fsync 2>/dev/null && touch here && [ \"$(ionice -p $$ | cut -d: -f1)\" = idle ]",
        );
        let r =
            run_command(&c, &host::Root::live(), &AtomicBool::new(false), Duration::from_secs(30))
                .unwrap();
        assert_eq!(r.exit_code, Some(0), "{r:?}");
        assert!(d.path().join("here").exists() && d.path().join("scratch/f").exists());
        assert!(r.stats.bytes >= 2 << 20, "2 MiB written and fsynced: {r:?}");
        assert!(!r.stats.interrupted && r.log_tail.is_none());
    }

    #[test]
    fn a_failing_command_keeps_its_output_tail() {
        let d = tempfile::tempdir().unwrap();
        let r = run_command(
            &cfg(d.path(), "echo oops >&2; exit 3"),
            &host::Root::live(),
            &AtomicBool::new(false),
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!((r.exit_code, r.log_tail.as_deref()), (Some(3), Some("oops")));
    }

    #[test]
    fn halting_kills_the_whole_group() {
        let d = tempfile::tempdir().unwrap();
        // A background grandchild that would outlive its shell.
        let c = cfg(d.path(), "sleep 60 & echo $! > bg.pid; sleep 60");
        let halt = AtomicBool::new(false);
        let t0 = Instant::now();
        let r = std::thread::scope(|s| {
            let h =
                s.spawn(|| run_command(&c, &host::Root::live(), &halt, Duration::from_secs(60)));
            std::thread::sleep(Duration::from_millis(500));
            halt.store(true, Ordering::Relaxed);
            h.join().unwrap().unwrap()
        });
        assert!(t0.elapsed() < Duration::from_secs(10) && r.stats.interrupted, "{r:?}");
        assert_eq!(r.signal, Some(libc::SIGTERM), "{r:?}");
        let bg: i32 =
            std::fs::read_to_string(d.path().join("bg.pid")).unwrap().trim().parse().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let state = std::fs::read_to_string(format!("/proc/{bg}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting for init.
        assert!(state.is_empty() || state.contains(") Z "), "the grandchild survived: {state}");
    }
}
