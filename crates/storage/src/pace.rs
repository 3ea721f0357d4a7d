//! Waiting that a stop request (Ctrl-C) cuts short.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Sleep until `deadline`, in steps of at most `step`, returning early once `stop` is set.
pub(crate) fn sleep_until(deadline: Instant, step: Duration, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        std::thread::sleep((deadline - now).min(step));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_the_deadline_or_on_request() {
        let t = Instant::now();
        sleep_until(
            t + Duration::from_millis(30),
            Duration::from_millis(10),
            &AtomicBool::new(false),
        );
        assert!(t.elapsed() >= Duration::from_millis(30));
        let t = Instant::now();
        sleep_until(t + Duration::from_secs(60), Duration::from_millis(10), &AtomicBool::new(true));
        assert!(t.elapsed() < Duration::from_secs(1));
    }
}
