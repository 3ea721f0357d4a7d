//! Known-latency injection for proving the measurements: a thread pinned to the measured CPU
//! at a higher real-time priority that spins for a fixed time at fixed instants. Whatever
//! the measuring thread was due to do in that window waits until the spin ends.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use util::sched::{self, Policy};

use crate::sys::{Clock, Monotonic};

/// Where and when to spin.
#[derive(Debug, Clone, Copy)]
pub struct Injection {
    pub cpu: u32,
    pub priority: u32,
    pub spin: Duration,
    pub every: Duration,
    /// First spin start on `CLOCK_MONOTONIC` (ns).
    pub first_ns: u64,
    /// Stop after this time on `CLOCK_MONOTONIC` (ns).
    pub until_ns: u64,
}

/// Run the injector on the calling thread; returns how many spins it made, or the reason
/// it could not take its CPU or priority.
pub fn run(i: &Injection, stop: &AtomicBool) -> Result<u64, String> {
    sched::pin_current(i.cpu).map_err(|e| format!("pin to CPU {}: {e}", i.cpu))?;
    sched::set_policy(0, Policy::Fifo, i.priority)
        .map_err(|e| format!("SCHED_FIFO {}: {e} (needs root)", i.priority))?;
    let clock = Monotonic;
    let spin = i.spin.as_nanos() as u64;
    let every = i.every.as_nanos() as u64;
    let mut t = i.first_ns;
    let mut n = 0;
    while t < i.until_ns && !stop.load(Relaxed) {
        clock.sleep_until(t);
        let end = clock.now().max(t) + spin;
        while clock.now() < end {
            std::hint::spin_loop();
        }
        n += 1;
        t += every;
    }
    let _ = sched::set_policy(0, Policy::Other, 0);
    Ok(n)
}
