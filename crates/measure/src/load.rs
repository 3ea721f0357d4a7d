//! Load generators that run on the housekeeping CPUs while a measurement runs: built-in CPU,
//! memory and I/O stressors (threads pinned to the load CPUs), or an external command
//! (e.g. stress-ng) in its own process group, stopped at the end — or killed by a second
//! Ctrl-C (`util::signal::on_second_signal`).

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cpuset::CpuSet;
use results::{LoadEnd, LoadExit, LoadInfo};

use crate::error::MeasureError;
use crate::select::list;

/// Built-in stressor kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Cpu,
    Memory,
    Io,
}

/// A parsed load specification, `KIND[:CPUS]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadSpec {
    pub name: String,
    pub kinds: Vec<Kind>,
    /// Explicit CPUs, else the housekeeping CPUs.
    pub cpus: Option<Vec<u32>>,
}

impl FromStr for LoadSpec {
    type Err = MeasureError;

    fn from_str(s: &str) -> Result<Self, MeasureError> {
        Self::parse(s)
    }
}

impl LoadSpec {
    /// Parse `cpu|memory|io|all[:CPULIST]`.
    pub fn parse(s: &str) -> Result<Self, MeasureError> {
        let (name, cpus) = match s.split_once(':') {
            Some((n, c)) => (n, Some(c)),
            None => (s, None),
        };
        let kinds = match name {
            "cpu" => vec![Kind::Cpu],
            "memory" | "mem" => vec![Kind::Memory],
            "io" => vec![Kind::Io],
            "all" => vec![Kind::Cpu, Kind::Memory, Kind::Io],
            _ => {
                return Err(MeasureError::LoadSpec {
                    spec: s.to_string(),
                    why: "expected cpu, memory, io or all, optionally followed by :CPUS".into(),
                })
            }
        };
        let cpus = match cpus {
            Some(c) => Some(
                cpuset::CpuSet::parse_list(c)
                    .map_err(|e| MeasureError::LoadSpec {
                        spec: s.to_string(),
                        why: format!("bad cpu-list: {e}"),
                    })?
                    .iter()
                    .map(|c| c as u32)
                    .collect(),
            ),
            None => None,
        };
        Ok(Self { name: name.to_string(), kinds, cpus })
    }
}

/// Process group of the running external load (0 = none), for [`kill_load_group`].
static LOAD_PGID: AtomicI32 = AtomicI32::new(0);

/// The second Ctrl-C's action: kill the external load's process group. Async-signal-safe:
/// one atomic load and one `kill`.
fn kill_load_group() {
    let pgid = LOAD_PGID.load(Ordering::SeqCst);
    if pgid > 0 {
        // SAFETY: kill is async-signal-safe; the group is our own child's.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
}

/// A running load; stopped by [`RunningLoad::stop`] or on drop.
#[derive(Debug)]
pub struct RunningLoad {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    child: Option<Child>,
    files: Vec<PathBuf>,
    pub info: LoadInfo,
}

fn cpu_work(stop: &AtomicBool) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        std::hint::black_box(x);
    }
}

fn memory_work(stop: &AtomicBool) {
    let mut buf = vec![0u8; 32 << 20];
    let mut v = 0u8;
    while !stop.load(Ordering::Relaxed) {
        v = v.wrapping_add(1);
        for chunk in buf.chunks_mut(1 << 20) {
            chunk.fill(v);
            if stop.load(Ordering::Relaxed) {
                break;
            }
        }
        std::hint::black_box(&buf);
    }
}

fn io_work(stop: &AtomicBool, mut f: std::fs::File) {
    use std::io::{Seek, Write};
    let block = vec![0x5au8; 1 << 20];
    let mut written = 0;
    while !stop.load(Ordering::Relaxed) {
        if f.write_all(&block).is_err() {
            break;
        }
        let _ = f.sync_data();
        written += block.len();
        if written >= 64 << 20 {
            written = 0;
            let _ = f.rewind();
        }
    }
}

impl RunningLoad {
    /// Start built-in stressors: one thread per kind per CPU.
    pub fn start_builtin(spec: &LoadSpec, housekeeping: &[u32]) -> Result<Self, MeasureError> {
        let cpus = spec.cpus.clone().unwrap_or_else(|| housekeeping.to_vec());
        if cpus.is_empty() {
            return Err(MeasureError::NoLoadCpus);
        }
        // The I/O stressors' files first, before any thread runs: each a new file (O_EXCL,
        // never through a symlink planted at a guessable name in the shared temp directory).
        let mut files = Vec::new();
        let mut io_files = Vec::new();
        if spec.kinds.contains(&Kind::Io) {
            for &cpu in &cpus {
                let name = std::env::temp_dir().join(format!("lowlat-load-io-{cpu}"));
                match util::fs::create_temp_beside(&name, 0o600) {
                    Ok((path, f)) => {
                        files.push(path);
                        io_files.push(Some(f));
                    }
                    Err(e) => {
                        for p in &files {
                            let _ = std::fs::remove_file(p);
                        }
                        return Err(MeasureError::LoadThread(e));
                    }
                }
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for (i, &cpu) in cpus.iter().enumerate() {
            for &k in &spec.kinds {
                let stop = stop.clone();
                let io_file =
                    if k == Kind::Io { io_files.get_mut(i).and_then(Option::take) } else { None };
                let h = std::thread::Builder::new()
                    .name(format!("lowlat-load-{cpu}"))
                    .spawn(move || {
                        let _ = util::sched::pin_current(cpu);
                        match k {
                            Kind::Cpu => cpu_work(&stop),
                            Kind::Memory => memory_work(&stop),
                            Kind::Io => {
                                if let Some(f) = io_file {
                                    io_work(&stop, f)
                                }
                            }
                        }
                    })
                    .map_err(MeasureError::LoadThread)?;
                threads.push(h);
            }
        }
        let info = LoadInfo {
            kind: spec.name.clone(),
            cpus: Some(list(&cpus)),
            command: None,
            exit: None,
        };
        Ok(Self { stop, threads, child: None, files, info })
    }

    /// Start `sh -c CMD` in its own process group, pinned to `cpus`. Until it is stopped, a
    /// second Ctrl-C kills the whole group.
    pub fn start_command(cmd: &str, cpus: &[u32]) -> Result<Self, MeasureError> {
        let set: CpuSet = cpus.iter().map(|&c| c as usize).collect();
        let mut command = Command::new("sh");
        command.arg("-c").arg(cmd).process_group(0);
        // SAFETY: the closure runs in the forked child before exec; `set` was built before the
        // fork, and set_affinity only fills a stack-allocated mask and makes one syscall (no
        // allocation, no lock), so it is async-signal-safe.
        unsafe {
            command.pre_exec(move || {
                if !set.is_empty() {
                    let _ = util::sched::set_affinity(0, &set);
                }
                Ok(())
            });
        }
        become_subreaper();
        let child = command
            .spawn()
            .map_err(|source| MeasureError::LoadCommand { command: cmd.to_string(), source })?;
        LOAD_PGID.store(child.id() as i32, Ordering::SeqCst);
        util::signal::on_second_signal(kill_load_group);
        let info = LoadInfo {
            kind: "external".into(),
            cpus: Some(list(cpus)),
            command: Some(cmd.to_string()),
            exit: None,
        };
        Ok(Self {
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            child: Some(child),
            files: Vec::new(),
            info,
        })
    }

    /// Did an external load exit already (it should run for the whole measurement)?
    pub fn exited_early(&mut self) -> Option<String> {
        let c = self.child.as_mut()?;
        match c.try_wait() {
            Ok(Some(status)) => {
                Some(format!("the --load-cmd exited during the measurement ({status})"))
            }
            _ => None,
        }
    }

    /// Stop everything: threads joined, the process group terminated (SIGTERM, then SIGKILL
    /// after 3 s), temporary files removed. Returns how an external command ended (the first
    /// call only); [`RunningLoad::info`]'s `exit` says the same.
    pub fn stop(&mut self) -> Option<LoadExit> {
        self.stop.store(true, Ordering::SeqCst);
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
        let exit = self.child.take().map(|mut c| {
            util::signal::forget_second_signal(kill_load_group);
            LOAD_PGID.store(0, Ordering::SeqCst);
            let pgid = c.id() as libc::pid_t;
            // Ended by itself already? (Its group may live on: it is stopped all the same.)
            let early = c.try_wait().ok().flatten();
            // SAFETY: signalling our own child's process group.
            unsafe { libc::kill(-pgid, libc::SIGTERM) };
            let mut ended_by = if early.is_some() { LoadEnd::Itself } else { LoadEnd::Sigterm };
            let deadline = Instant::now() + Duration::from_secs(3);
            // Wait for the whole group (the shell and what it started), not just the shell.
            // SAFETY: signal 0 only checks whether the group still has a member.
            let group_alive = || unsafe { libc::kill(-pgid, 0) } == 0;
            loop {
                // Once the shell is reaped (its status kept by `Child`), reap the group's
                // orphans too: this process is their subreaper, so an unreaped zombie would
                // otherwise keep the group "alive" until the SIGKILL deadline.
                if matches!(c.try_wait(), Ok(Some(_))) {
                    reap_orphans(pgid);
                }
                if !group_alive() {
                    break;
                }
                if Instant::now() >= deadline {
                    // SAFETY: as above.
                    unsafe { libc::kill(-pgid, libc::SIGKILL) };
                    if early.is_none() {
                        ended_by = LoadEnd::Sigkill;
                    }
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let status = early.or_else(|| c.wait().ok());
            use std::os::unix::process::ExitStatusExt as _;
            LoadExit {
                ended_by,
                code: status.and_then(|s| s.code()),
                signal: status.and_then(|s| s.signal()),
            }
        });
        for f in self.files.drain(..) {
            let _ = std::fs::remove_file(f);
        }
        if exit.is_some() {
            self.info.exit.clone_from(&exit);
        }
        exit
    }
}

/// Make this process the subreaper of its descendants (once; it lasts for the process). An
/// external load's grandchildren (`sh -c 'sleep 30'` forks `sleep`) are then reparented here
/// when the shell dies, not to PID 1: whether they have ended no longer depends on how soon
/// the system's init reaps zombies (a container's PID 1 may never do it), because
/// [`reap_orphans`] reaps them. Best effort: without it, a slow init only delays the stop.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: PR_SET_CHILD_SUBREAPER takes an integer flag and touches no memory of ours.
        let _ = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    });
}

/// Reap every ended member of process group `pgid` that is our child (the load's orphans,
/// reparented here by [`become_subreaper`]). Call only once the group's leader has been reaped
/// through its `Child`, so that its status is never taken from under it.
fn reap_orphans(pgid: libc::pid_t) {
    loop {
        let mut status = 0;
        // SAFETY: waitpid on our own children of one process group, without blocking.
        if unsafe { libc::waitpid(-pgid, &mut status, libc::WNOHANG) } <= 0 {
            break;
        }
    }
}

impl Drop for RunningLoad {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kinds_and_cpus() {
        let s = LoadSpec::parse("all:0").unwrap();
        assert_eq!(s.kinds.len(), 3);
        assert_eq!(s.cpus, Some(vec![0]));
        assert_eq!(LoadSpec::parse("cpu").unwrap().cpus, None);
        assert!(LoadSpec::parse("gpu").is_err());
        assert!(LoadSpec::parse("cpu:x").is_err());
    }

    #[test]
    fn builtin_and_external_loads_start_and_stop() {
        let mut l = RunningLoad::start_builtin(&LoadSpec::parse("cpu:0").unwrap(), &[]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        l.stop();
        assert_eq!(l.info.cpus.as_deref(), Some("0"));
        assert_eq!(l.stop(), None, "no command");
        let mut e = RunningLoad::start_command("sleep 30", &[0]).unwrap();
        assert!(e.exited_early().is_none());
        // Ended by the SIGTERM, not the SIGKILL that follows 3 s later: no clock needed.
        let exit = e.stop().unwrap();
        assert_eq!(exit.ended_by, LoadEnd::Sigterm);
        assert_eq!((exit.code, exit.signal), (None, Some(libc::SIGTERM)), "{exit}");
        assert_eq!(e.info.exit.as_ref(), Some(&exit));
        assert_eq!(e.stop(), None, "once");
        // One that ends by itself says so, with its code.
        let mut e = RunningLoad::start_command("exit 3", &[0]).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(e.exited_early().is_some());
        let exit = e.stop().unwrap();
        assert_eq!((exit.ended_by, exit.code), (LoadEnd::Itself, Some(3)), "{exit}");
        // A group whose members outlive the shell: the orphans are reparented to this
        // process (its subreaper) and reaped here, so the stop does not wait for PID 1 to reap
        // them, nor wrongly reaches for SIGKILL.
        let mut e = RunningLoad::start_command("(sleep 30 &); sleep 30 & wait", &[0]).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let exit = e.stop().unwrap();
        assert_eq!(exit.ended_by, LoadEnd::Sigterm, "{exit}");
        // One that ignores SIGTERM is killed.
        let mut e =
            RunningLoad::start_command("trap '' TERM; while :; do sleep 0.05; done", &[0]).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let exit = e.stop().unwrap();
        assert_eq!(exit.ended_by, LoadEnd::Sigkill, "{exit}");
    }

    /// The I/O stressor writes a file of its own (new, private, not a planted symlink) and
    /// removes it when stopped.
    #[test]
    fn io_load_files_are_new_private_and_removed() {
        use std::os::unix::fs::PermissionsExt as _;
        let mut l = RunningLoad::start_builtin(&LoadSpec::parse("io:0").unwrap(), &[]).unwrap();
        assert_eq!(l.files.len(), 1);
        let f = l.files[0].clone();
        let meta = std::fs::symlink_metadata(&f).unwrap();
        assert!(meta.is_file(), "{}", f.display());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert!(f.file_name().unwrap().to_string_lossy().contains("lowlat-load-io-0"));
        std::thread::sleep(Duration::from_millis(50));
        l.stop();
        assert!(!f.exists(), "removed on stop");
    }
}
