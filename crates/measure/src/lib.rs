//! Timer, noise and tick measurements with real-time threads, and load generators.
//!
//! - [`timer`]: cyclictest semantics (absolute-deadline sleeps, overruns counted).
//! - [`noise`]: oslat semantics (TSC busy loop, gaps, attribution from /proc counters).
//! - [`ticks`]: the "pig" test (LOC and interrupt rates on busy CPUs).
//! - [`load`]: built-in and external load on the housekeeping CPUs.
//! - [`sys`]: the Linux syscall seam; [`shared`]: the lock-free per-thread recorder;
//!   [`runner`]: orchestration; [`procstat`]: /proc/interrupts and /proc/softirqs.

pub mod counter;
pub mod inject;
pub mod load;
pub mod noise;
pub mod procstat;
pub mod runner;
pub mod shared;
pub mod sys;
pub mod ticks;
pub mod timer;

pub use runner::{Common, Live, Observer, Silent};
pub use sys::Policy;

/// Errors of a measurement.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The configuration cannot run on this host.
    #[error("{0}")]
    Config(String),
}
