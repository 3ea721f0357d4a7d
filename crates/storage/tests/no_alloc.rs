//! The probe's hot loop does not allocate: a counting global allocator sees zero allocations
//! between `Probe::new` (which does them all) and the end of `Probe::run`.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use storage::probe::{Probe, ProbeConfig, Stop};
use storage::sys::SyncMode;

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    // Only the probing thread counts: the test harness allocates on its own threads.
    static COUNTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn count() {
    if COUNTING.try_with(|c| c.get()).unwrap_or(false) {
        count();
    }
}

// SAFETY: delegates to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn probe_loop_allocates_nothing() {
    let d = tempfile::tempdir().unwrap();
    for sync in [SyncMode::Fdatasync, SyncMode::Dsync] {
        let p = Probe::new(ProbeConfig {
            file: d.path().join("p.dat"),
            bs: 2300,
            sync,
            stop: Stop::Duration(Duration::from_millis(400)),
            file_size: 1 << 20,
            rate: Some(2000.0),
            window: Duration::from_millis(20),
            max_duration: Duration::from_secs(5),
        })
        .unwrap();
        let (stop, keep) = (AtomicBool::new(false), AtomicBool::new(false));
        let before = ALLOCS.load(Ordering::SeqCst);
        COUNTING.with(|c| c.set(true));
        let out = p.run(&stop, &keep);
        COUNTING.with(|c| c.set(false));
        let after = ALLOCS.load(Ordering::SeqCst);
        let out = out.unwrap();
        assert!(
            out.ops > 10 && out.windows.len() >= 15,
            "{} ops, {} windows",
            out.ops,
            out.windows.len()
        );
        assert_eq!(after - before, 0, "{sync:?}: allocations in the hot loop");
    }
}
