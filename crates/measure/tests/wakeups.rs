//! The run's own footprint on the housekeeping CPU: the main thread wakes once per second
//! (to sample counters), not in 100 ms steps. Each wake-up of an otherwise idle housekeeping
//! CPU changes where the kernel expires timers (an idle CPU hands its timers to a busy
//! measured one through timer migration), so a measurement that wakes it often measures a
//! quieter system than the one deployed (docs/benchmarks/measure.md, "the >= 31 µs band").

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::time::Duration;

use measure::noise::{self, NoiseConfig};
use measure::runner::{Common, Observer};
use results::HostContext;
use util::sched::Policy;

struct Quiet;
impl Observer for Quiet {}

/// This thread's voluntary context switches: each is one sleep that ended in a wake-up.
fn voluntary_switches() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap()
}

#[test]
fn the_main_thread_wakes_about_once_a_second() {
    let online: Vec<u32> =
        host::read(&host::Root::live()).online_cpus().iter().map(|c| c as u32).collect();
    let cpu = *online.last().unwrap();
    let secs = 4;
    let cfg = NoiseConfig {
        common: Common {
            cpus: vec![cpu],
            main_cpu: None,
            online: online.clone(),
            duration: Some(Duration::from_secs(secs)),
            policy: Policy::Other,
            priority: 0,
            threshold_ns: None,
            stop_on_threshold: false,
            dma_latency: false,
            host: HostContext::default(),
            tool: "lowlat test".into(),
            started_at: None,
            params: results::LatencyParams::default(),
            load: None,
            checkpoint_every: None,
            histogram_us: None,
        },
        noise_threshold: Duration::from_micros(1),
        tracer_note: true,
    };
    let before = voluntary_switches();
    let r = noise::run(&cfg, &mut Quiet).unwrap();
    let woke = voluntary_switches() - before;
    assert!(r.threads[0].stats.count > 1_000_000, "it measured: {}", r.threads[0].stats.count);
    // One wake-up per second plus the start (waiting for the threads, a few ms) and the end;
    // 100 ms steps would be 40 and more.
    assert!(woke <= 3 * secs + 10, "the main thread woke {woke} times in a {secs} s run");
}
