//! "The tool is not the noise": a counting global allocator proves the hot loops (timer
//! loop, noise loop, recorder) make no heap allocation once started.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use measure::counter::{Counter, Source};
use measure::noise::{noise_loop, NoiseBounds};
use measure::shared::Recorder;
use measure::sys::{Clock, Monotonic};
use measure::timer::{timer_loop, LoopBounds};
use results::HistogramConfig;

struct Counting;

thread_local! {
    static WATCH: Cell<bool> = const { Cell::new(false) };
}
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if WATCH.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        if WATCH.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn watched<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = ALLOCS.load(Ordering::SeqCst);
    WATCH.with(|w| w.set(true));
    let out = f();
    WATCH.with(|w| w.set(false));
    (out, ALLOCS.load(Ordering::SeqCst) - before)
}

#[test]
fn the_counter_sees_allocations() {
    let (_, n) = watched(|| vec![1u8; 10]);
    assert!(n >= 1, "the allocator must count, or the tests below prove nothing");
}

#[test]
fn timer_loop_allocates_nothing() {
    let rec = Recorder::new(HistogramConfig::LATENCY, 4, Some(1));
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
}

#[test]
fn noise_loop_allocates_nothing() {
    let cpuinfo = host::Root::live().read_string("proc/cpuinfo").unwrap_or_default();
    for c in [Counter::detect(&cpuinfo), Counter::with_hz(Source::MonotonicRaw, 1_000_000_000)] {
        let rec = Recorder::new(HistogramConfig::LATENCY, 4, Some(1_000)).with_noise_series(4);
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
