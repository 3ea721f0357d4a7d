//! Standalone injector for `bench/injection-vs-cyclictest.sh`: spin SPIN_US at SCHED_FIFO 99
//! on CPU every EVERY_MS for SECONDS. `cargo run -p measure --example inject -- 1 200 50 10`.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use measure::inject::{run, Injection};
use measure::sys::{Clock, Monotonic};

fn main() {
    let a: Vec<u64> = std::env::args().skip(1).filter_map(|s| s.parse().ok()).collect();
    let [cpu, spin_us, every_ms, secs] = a[..] else {
        eprintln!("usage: inject CPU SPIN_US EVERY_MS SECONDS");
        std::process::exit(2);
    };
    let now = Monotonic.now();
    let i = Injection {
        cpu: cpu as u32,
        priority: 99,
        spin: Duration::from_micros(spin_us),
        every: Duration::from_millis(every_ms),
        first_ns: now + 100_000_000,
        until_ns: now + 100_000_000 + secs * 1_000_000_000,
    };
    match run(&i, &AtomicBool::new(false)) {
        Ok(n) => println!("injected {n} spins of {spin_us} us every {every_ms} ms on CPU {cpu}"),
        Err(e) => {
            eprintln!("inject: {e}");
            std::process::exit(3);
        }
    }
}
