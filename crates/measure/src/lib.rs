//! Timer, noise and tick measurements with real-time threads, and load generators.
//!
//! - [`session`]: a measurement as a command runs it ([`session::latency`],
//!   [`session::ticks`]), from a typed request to a result and a verdict: the host read
//!   through `host::Root`, the CPUs chosen (`select`), the load started and stopped,
//!   progress and checkpoints (`progress`), signals.
//! - [`timer`]: cyclictest semantics (absolute-deadline sleeps, overruns counted).
//! - [`noise`]: oslat semantics (TSC busy loop, gaps, attribution from /proc counters).
//! - [`ticks`]: the "pig" test (LOC and interrupt rates on busy CPUs).
//! - [`load`]: built-in and external load on the housekeeping CPUs.
//! - [`sys`]: the syscalls of the measuring loops (clocks, sleeps, mlockall, the PM QoS hold);
//!   [`shared`]: the lock-free per-thread recorder; [`runner`]: orchestration;
//!   [`series`]: the result's per-second series, bounded by a step chosen per run;
//!   `procstat`: per-second counters (`/proc/interrupts`, `/proc/softirqs`, context
//!   switches) read through `host::Root` and parsed by host's parsers.
//! - [`rt_cgroup`]: `--rt-cgroup`, the run moved into a cgroup with an RT budget and back.
//! - [`tracer`]: the kernel's timerlat, osnoise and hwlat tracers as measuring engines (the
//!   kernel's threads measure; lowlat reads `trace_pipe` into the same recorders and model).

pub mod counter;
pub mod cpulock;
mod error;
pub mod inject;
pub mod load;
pub mod noise;
mod procstat;
mod progress;
pub mod rt_cgroup;
pub mod runner;
mod select;
pub mod series;
pub mod session;
pub mod shared;
pub mod sys;
pub mod ticks;
pub mod timer;
pub mod tracer;

pub use error::{Input, MeasureError};
