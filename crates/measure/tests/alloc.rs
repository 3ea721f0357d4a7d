//! "The tool is not the noise": a counting global allocator proves the hot loops (timer
//! loop, noise loop, recorder) make no heap allocation once started, and a child process
//! under a seccomp filter that allows only `write` and `exit` (any other syscall, a
//! contended lock's `futex` included, kills it with SIGSYS) proves the noise loop makes no
//! syscall at all. (Strict seccomp would not do: it also disables `rdtsc`.)

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::AtomicBool;

use measure::counter::{Counter, Source};
use measure::noise::{noise_loop, NoiseBounds};
use measure::shared::Recorder;
use measure::sys::{Clock, Monotonic};
use measure::timer::{timer_loop, LoopBounds};
use results::HistogramConfig;

struct Counting;

thread_local! {
    static WATCH: Cell<bool> = const { Cell::new(false) };
    /// Per thread, so tests running in parallel do not count each other's allocations.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    if WATCH.with(Cell::get) {
        ALLOCS.with(|a| a.set(a.get() + 1));
    }
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn watched<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = ALLOCS.with(Cell::get);
    WATCH.with(|w| w.set(true));
    let out = f();
    WATCH.with(|w| w.set(false));
    (out, ALLOCS.with(Cell::get) - before)
}

#[test]
fn the_counter_sees_allocations() {
    let (_, n) = watched(|| vec![1u8; 10]);
    assert!(n >= 1, "the allocator must count, or the tests below prove nothing");
}

#[test]
fn timer_loop_allocates_nothing() {
    // with a threshold every sample breaches, and with -h 1 every one is an outlier: the
    // cold paths run too
    let rec = Recorder::new(HistogramConfig::LATENCY, 4, Some(1)).with_outliers(1, 100);
    let stop = AtomicBool::new(false);
    let start = Monotonic.now();
    let b = LoopBounds {
        interval_ns: 100_000,
        end_ns: None,
        loops: Some(500),
        stop_on_threshold: false,
    };
    let (n, allocs) = watched(|| timer_loop(&Monotonic, &rec, start, &b, &stop));
    assert_eq!(n, 500);
    assert_eq!(allocs, 0, "the timer hot loop allocated");
    assert_eq!(rec.count(), 500);
    assert_eq!(rec.outliers().map(|(c, n)| (c.len(), n)), Some((100, 500)));
}

#[test]
fn noise_loop_allocates_nothing() {
    let cpuinfo = host::Root::live().read_string("proc/cpuinfo").unwrap_or_default();
    for c in [Counter::detect(&cpuinfo), Counter::with_hz(Source::MonotonicRaw, 1_000_000_000)] {
        let rec = Recorder::new(HistogramConfig::LATENCY, 4, Some(1_000))
            .with_noise_series(4)
            .with_fast_table(c.ticks(1_000), c.mult());
        let b = NoiseBounds {
            seconds: Some(1),
            ticks_per_second: c.hz / 5,
            threshold_ticks: c.ticks(1_000).max(1),
            floor_ticks: 1,
            stop_on_threshold: false,
        };
        let (n, allocs) = watched(|| noise_loop(&c, &rec, &b, &AtomicBool::new(false)));
        assert!(n > 1000);
        assert_eq!(allocs, 0, "the noise hot loop allocated ({:?})", c.source);
    }
}

/// Allow `write` and `exit`; kill the process on any other syscall.
fn only_write_and_exit() {
    // Classic BPF opcodes (linux/filter.h).
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const ALLOW: u32 = 0x7fff_0000;
    let stmt = |code, k| libc::sock_filter { code, jt: 0, jf: 0, k };
    let jeq = |k: i64| libc::sock_filter { code: JEQ_K, jt: 0, jf: 1, k: k as u32 };
    let prog = [
        stmt(LD_W_ABS, 0), // seccomp_data.nr
        jeq(libc::SYS_write),
        stmt(RET_K, ALLOW),
        jeq(libc::SYS_exit),
        stmt(RET_K, ALLOW),
        stmt(RET_K, libc::SECCOMP_RET_KILL_PROCESS),
    ];
    let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_ptr().cast_mut() };
    // SAFETY: prctl with a filter that outlives the call (the kernel copies it).
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                &fprog as *const libc::sock_fprog,
            ) != 0
        {
            libc::syscall(libc::SYS_exit, 3);
        }
    }
}

/// Fork; the child installs [`only_write_and_exit`], runs `f`, writes its result through a
/// pipe and exits. Returns the result, or why the child did not finish.
fn in_sandbox(f: impl FnOnce() -> u64) -> Result<u64, String> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe writes two descriptors into the array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child only runs `f`, write and exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        only_write_and_exit();
        let bytes = f().to_ne_bytes();
        // SAFETY: writes 8 bytes from a live buffer, then ends this (only) thread.
        unsafe {
            libc::write(fds[1], bytes.as_ptr().cast(), bytes.len());
            libc::syscall(libc::SYS_exit, 0);
        }
        unreachable!();
    }
    // SAFETY: closing our copy of the write end; waiting for our own child.
    unsafe { libc::close(fds[1]) };
    let mut status = 0;
    // SAFETY: as above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let mut buf = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a live buffer.
    let got = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), 8) };
    // SAFETY: closing our read end.
    unsafe { libc::close(fds[0]) };
    if libc::WIFSIGNALED(status) {
        return Err(format!("killed by signal {} (SIGSYS: a syscall)", libc::WTERMSIG(status)));
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 || got != 8 {
        return Err(format!("child status {status}, read {got} bytes"));
    }
    Ok(u64::from_ne_bytes(buf))
}

/// Run the noise loop in a sandboxed child (see [`in_sandbox`]).
fn noise_loop_in_sandbox(c: Counter) -> Result<u64, String> {
    let rec = Recorder::new(HistogramConfig::LATENCY, 4, Some(1_000))
        .with_noise_series(4)
        .with_fast_table(c.ticks(1_000), c.mult());
    let b = NoiseBounds {
        seconds: Some(2),
        ticks_per_second: c.hz / 10,
        threshold_ticks: c.ticks(1_000).max(1),
        floor_ticks: 1,
        stop_on_threshold: false,
    };
    let stop = AtomicBool::new(false);
    in_sandbox(|| noise_loop(&c, &rec, &b, &stop))
}

#[test]
fn the_sandbox_kills_a_syscall() {
    // The harness must catch a syscall, or the test below proves nothing.
    let r = in_sandbox(|| {
        // SAFETY: getpid has no preconditions; it is forbidden in the sandbox.
        unsafe { libc::syscall(libc::SYS_getpid) as u64 }
    });
    assert!(r.as_ref().is_err_and(|e| e.contains("signal 31")), "{r:?}");
    assert_eq!(in_sandbox(|| 7), Ok(7), "write and exit are allowed");
}

#[test]
fn noise_loop_makes_no_syscall() {
    let cpuinfo = host::Root::live().read_string("proc/cpuinfo").unwrap_or_default();
    let c = Counter::detect(&cpuinfo);
    if c.source != Source::Tsc {
        // CLOCK_MONOTONIC_RAW goes through the vDSO where the clocksource allows it, else
        // through a syscall: say which, do not pretend.
        eprintln!("no invariant TSC here: testing the CLOCK_MONOTONIC_RAW loop");
    }
    let n = noise_loop_in_sandbox(c).expect("the noise loop ran without a syscall");
    assert!(n > 10_000, "{n} samples");
}
