//! The syscalls of the measuring loops that no other crate makes: clocks, absolute sleeps,
//! mlockall, stack prefaulting and the PM QoS hold (affinity and policy are `util::sched`,
//! signals `util::signal`), so the loops and the orchestration above are plain logic testable
//! without root.

use std::fs::File;
use std::io::Write;

/// A clock the loops read and sleep on. The real one is `CLOCK_MONOTONIC`; tests use a fake.
pub trait Clock {
    /// Now, in ns.
    fn now(&self) -> u64;
    /// Sleep until the absolute time `t` (ns on this clock).
    fn sleep_until(&self, t: u64);
    /// Sleep until `t`, or less when a signal handler runs on this thread.
    fn sleep_until_or_signal(&self, t: u64) {
        self.sleep_until(t)
    }
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
        while abs_sleep(t) == libc::EINTR {}
    }

    fn sleep_until_or_signal(&self, t: u64) {
        abs_sleep(t);
    }
}

/// One `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` until `t`; its return code.
#[inline]
fn abs_sleep(t: u64) -> i32 {
    let ts = libc::timespec {
        tv_sec: (t / 1_000_000_000) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be null with
    // TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut())
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

/// Keep the memory this process frees in its heap instead of handing it back to the kernel
/// (glibc's malloc: no heap trimming, and blocks up to 32 MiB come from the heap, not from
/// their own mapping). Handing memory back is an munmap (or a brk shrink), which flushes the
/// TLB of every CPU running this process: an IPI into each measuring thread. Traced on a
/// 2-CPU VM: the main thread's checkpoints sent 8 such flushes in 11 s, 3 of which hit the
/// running noise thread. Lasts for the process (its footprint stays at its peak, which
/// `mlockall` pins anyway); a no-op where the C library is not glibc.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets malloc's tunables; the values are in their valid ranges (the
    // mmap threshold's maximum on 64-bit is 32 MiB).
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
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
