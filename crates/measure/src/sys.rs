//! The Linux seam: every syscall the measurements make (affinity, scheduling policy,
//! mlockall, stack prefaulting, clocks, absolute sleeps, the PM QoS hold, signals) lives here,
//! so the loops and the orchestration above are plain logic testable without root.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Scheduling policy of the measuring threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Fifo,
    Rr,
    Other,
}

impl Policy {
    fn raw(self) -> libc::c_int {
        match self {
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
            Policy::Other => libc::SCHED_OTHER,
        }
    }

    /// Real-time policy?
    pub fn is_realtime(self) -> bool {
        !matches!(self, Policy::Other)
    }
}

/// A clock the loops read and sleep on. The real one is `CLOCK_MONOTONIC`; tests use a fake.
pub trait Clock {
    /// Now, in ns.
    fn now(&self) -> u64;
    /// Sleep until the absolute time `t` (ns on this clock).
    fn sleep_until(&self, t: u64);
}

/// `CLOCK_MONOTONIC` through the vDSO, with `clock_nanosleep(TIMER_ABSTIME)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Monotonic;

/// Read a POSIX clock in ns.
#[inline]
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime only writes it.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Clock for Monotonic {
    #[inline]
    fn now(&self) -> u64 {
        clock_ns(libc::CLOCK_MONOTONIC)
    }

    #[inline]
    fn sleep_until(&self, t: u64) {
        let ts = libc::timespec {
            tv_sec: (t / 1_000_000_000) as libc::time_t,
            tv_nsec: (t % 1_000_000_000) as libc::c_long,
        };
        loop {
            // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be null with
            // TIMER_ABSTIME.
            let rc = unsafe {
                libc::clock_nanosleep(
                    libc::CLOCK_MONOTONIC,
                    libc::TIMER_ABSTIME,
                    &ts,
                    std::ptr::null_mut(),
                )
            };
            if rc != libc::EINTR {
                return;
            }
        }
    }
}

/// Pin the calling thread to `cpu`.
pub fn pin_current(cpu: u32) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is its empty value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes inside `set`; cpu is bounds-checked against CPU_SETSIZE.
    unsafe {
        if cpu as usize >= libc::CPU_SETSIZE as usize {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        libc::CPU_SET(cpu as usize, &mut set);
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Set the calling thread's policy and priority.
pub fn set_policy(policy: Policy, priority: u32) -> std::io::Result<()> {
    let prio = if policy.is_realtime() { priority as libc::c_int } else { 0 };
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: `param` is valid for the call; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, policy.raw(), &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `mlockall(MCL_CURRENT | MCL_FUTURE)`.
pub fn lock_memory() -> std::io::Result<()> {
    // SAFETY: mlockall takes flags only.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Undo [`lock_memory`].
pub fn unlock_memory() {
    // SAFETY: munlockall takes no arguments.
    unsafe { libc::munlockall() };
}

/// Touch 128 KiB of the current thread's stack so the hot loop never page-faults on it.
#[inline(never)]
pub fn prefault_stack() {
    let mut buf = [0u8; 128 * 1024];
    for i in (0..buf.len()).step_by(4096) {
        // SAFETY: `i` is in bounds; the volatile write keeps the compiler from eliding it.
        unsafe { std::ptr::write_volatile(buf.as_mut_ptr().add(i), 1) };
    }
    std::hint::black_box(&buf);
}

/// Kernel thread id of the caller.
pub fn gettid() -> u32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() as u32 }
}

/// A held `/dev/cpu_dma_latency` request: the target stays in force until dropped.
#[derive(Debug)]
pub struct DmaLatencyHold {
    _file: File,
}

/// Open `/dev/cpu_dma_latency` and request `us` (0 = no deep C-states) while held.
pub fn hold_dma_latency(us: i32) -> std::io::Result<DmaLatencyHold> {
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open("/dev/cpu_dma_latency")?;
    f.write_all(&us.to_ne_bytes())?;
    Ok(DmaLatencyHold { _file: f })
}

/// Is stdout/stderr a terminal?
pub fn is_tty(fd: i32) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(fd) == 1 }
}

/// Set by the first SIGINT/SIGTERM: the measurement stops and writes a partial result.
pub static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);
/// Process group of a running external load (0 = none), killed by a second Ctrl-C.
pub static LOAD_PGID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn on_signal(_sig: libc::c_int) {
    if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
        let pgid = LOAD_PGID.load(Ordering::SeqCst);
        // SAFETY: kill and _exit are async-signal-safe; the second Ctrl-C takes the external
        // load down with it (it runs in its own process group) and exits at once.
        unsafe {
            if pgid > 0 {
                libc::kill(-pgid, libc::SIGKILL);
            }
            libc::_exit(130)
        };
    }
    STOP.store(true, Ordering::SeqCst);
}

/// Install SIGINT/SIGTERM handlers: first sets [`STOP`], second exits 130 at once.
pub fn install_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is zero-initialisable; the handler only touches atomics and _exit.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Was the run interrupted by a signal?
pub fn interrupted() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// Voluntary + involuntary context switches of thread `tid` of this process, if readable.
pub fn context_switches(tid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    let mut total = 0;
    let mut seen = false;
    for line in text.lines() {
        if let Some(v) = line
            .strip_prefix("voluntary_ctxt_switches:")
            .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
        {
            total += v.trim().parse::<u64>().ok()?;
            seen = true;
        }
    }
    seen.then_some(total)
}

/// Online CPUs from `/sys/devices/system/cpu/online` (falls back to 0..available_parallelism).
pub fn online_cpus() -> Vec<u32> {
    if let Ok(s) = std::fs::read_to_string("/sys/devices/system/cpu/online") {
        if let Ok(set) = cpuset::CpuSet::parse_list(s.trim()) {
            return set.iter().map(|c| c as u32).collect();
        }
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n as u32).collect()
}

/// Read a small kernel file, trimmed; `None` when missing.
pub fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Peak resident set of this process so far (`VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 =
        line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}
