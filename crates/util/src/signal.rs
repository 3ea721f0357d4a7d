//! SIGINT and SIGTERM, handled once for every command (through `signal-hook`).
//!
//! - [`install`]: the first signal asks the running work to stop ([`interrupted`] turns true;
//!   measurements then write their partial result and undo what they changed). A second signal
//!   runs the actions registered with [`on_second_signal`] — async-signal-safe undo such as
//!   writing back a block-device setting or killing an external load's process group — and
//!   exits at once with status 130.
//! - [`install_flag_only`]: every signal only sets the flag. For `apply`, where dying between
//!   two writes would be worse than finishing the current one and rolling back.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

static STOP: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicUsize = AtomicUsize::new(0);
static SECOND_EXITS: AtomicBool = AtomicBool::new(true);
static INSTALLED: Once = Once::new();

const SLOTS: usize = 8;
/// Emergency actions (`fn()` pointers as usize; 0 = empty), run newest first.
static ACTIONS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

/// Has a SIGINT/SIGTERM arrived (or [`request_stop`] been called)? One atomic load: cheap
/// enough for a measurement loop's exit check.
#[inline]
pub fn interrupted() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// The flag itself, for code that takes `&AtomicBool`.
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

/// Ask the running work to stop, as a first signal would.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Register an action for the second signal. It runs inside the signal handler, so it must be
/// async-signal-safe: no allocation, no locks, only atomics and raw syscalls (`open`, `write`,
/// `kill`, `rmdir`). Returns false when the table (8 slots) is full.
pub fn on_second_signal(action: fn()) -> bool {
    let p = action as *const () as usize;
    ACTIONS.iter().any(|s| s.compare_exchange(0, p, Ordering::SeqCst, Ordering::SeqCst).is_ok())
}

/// Remove an action registered with [`on_second_signal`].
pub fn forget_second_signal(action: fn()) {
    let p = action as *const () as usize;
    for s in &ACTIONS {
        let _ = s.compare_exchange(p, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

fn handle() {
    STOP.store(true, Ordering::SeqCst);
    if COUNT.fetch_add(1, Ordering::SeqCst) >= 1 && SECOND_EXITS.load(Ordering::SeqCst) {
        for s in ACTIONS.iter().rev() {
            let p = s.swap(0, Ordering::SeqCst);
            if p != 0 {
                // SAFETY: every non-zero slot holds a `fn()` stored by `on_second_signal`.
                let f: fn() = unsafe { std::mem::transmute::<usize, fn()>(p) };
                f();
            }
        }
        signal_hook::low_level::exit(130);
    }
}

fn register() {
    INSTALLED.call_once(|| {
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // SAFETY: `handle` only touches atomics, calls registered actions that are
            // async-signal-safe by contract, and `_exit`s; it never allocates or locks.
            // Registration fails only for forbidden signals, which these are not.
            let _ = unsafe { signal_hook::low_level::register(sig, handle) };
        }
    });
}

/// Block SIGINT and SIGTERM in the calling thread (threads it spawns inherit the mask), so that
/// they are delivered to a thread that does not block them: a measuring thread's loop is never
/// interrupted by the handler, and the thread that waits for the run (sleeping until its next
/// sample) is woken at once. Returns false if the mask could not be changed.
pub fn block_in_this_thread() -> bool {
    // SAFETY: the set is initialised by sigemptyset before use; pthread_sigmask only reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) == 0
    }
}

/// Install the handlers: first signal stops, second runs the emergency actions and exits 130.
pub fn install() {
    SECOND_EXITS.store(true, Ordering::SeqCst);
    register();
}

/// Install the handlers so that every signal only sets the flag.
pub fn install_flag_only() {
    SECOND_EXITS.store(false, Ordering::SeqCst);
    register();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop() {}

    #[test]
    fn actions_register_and_forget() {
        assert!(on_second_signal(noop));
        forget_second_signal(noop);
        assert!(ACTIONS.iter().all(|s| s.load(Ordering::SeqCst) != noop as *const () as usize));
    }

    #[test]
    fn a_blocking_thread_leaves_the_signals_pending() {
        std::thread::spawn(|| {
            assert!(block_in_this_thread());
            // SAFETY: a zeroed sigset_t is valid for sigpending to fill.
            let mut pending: libc::sigset_t = unsafe { std::mem::zeroed() };
            // SAFETY: raise targets this thread, where SIGINT is blocked: it stays pending.
            assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
            // SAFETY: `pending` is a valid, writable sigset_t.
            assert_eq!(unsafe { libc::sigpending(&mut pending) }, 0);
            // SAFETY: `pending` was filled by sigpending.
            assert_eq!(unsafe { libc::sigismember(&pending, libc::SIGINT) }, 1);
            // Consume it here, so that it never reaches the test harness.
            // SAFETY: a zeroed sigset_t is valid; sigemptyset initialises it below.
            let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
            // SAFETY: `set` is initialised by sigemptyset; sigwait blocks until SIGINT, pending.
            unsafe {
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGINT);
                let mut sig = 0;
                assert_eq!(libc::sigwait(&set, &mut sig), 0);
                assert_eq!(sig, libc::SIGINT);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn flag_only_signal_sets_the_flag() {
        install_flag_only();
        // SAFETY: raise delivers to this thread; the handler only stores atomics here.
        assert_eq!(unsafe { libc::raise(libc::SIGTERM) }, 0);
        assert!(interrupted());
        // SAFETY: as above.
        assert_eq!(unsafe { libc::raise(libc::SIGTERM) }, 0, "a second signal does not exit");
    }
}
