//! The noise loop's time source: the TSC (`lfence; rdtsc`) when the CPU says it is invariant
//! (`constant_tsc` and `nonstop_tsc` in `/proc/cpuinfo`), calibrated against
//! `CLOCK_MONOTONIC`; `CLOCK_MONOTONIC_RAW` elsewhere. Conversion to ns is a multiply-shift.

use crate::sys;

/// Which counter the noise loop reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Tsc,
    MonotonicRaw,
}

/// A calibrated counter.
#[derive(Debug, Clone, Copy)]
pub struct Counter {
    pub source: Source,
    /// Ticks per second.
    pub hz: u64,
    mult: u64,
}

/// Does this cpuinfo text advertise an invariant TSC?
pub fn invariant_tsc(cpuinfo: &str) -> bool {
    let flags = cpuinfo.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: lfence and rdtsc are available on every x86_64 CPU and have no memory effects.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn rdtsc() -> u64 {
    sys::clock_ns(libc::CLOCK_MONOTONIC_RAW)
}

impl Counter {
    /// Pick and calibrate the counter (takes ~200 ms for the TSC).
    pub fn detect(cpuinfo: &str) -> Self {
        if cfg!(target_arch = "x86_64") && invariant_tsc(cpuinfo) {
            let (t0, m0) = (rdtsc(), sys::clock_ns(libc::CLOCK_MONOTONIC));
            std::thread::sleep(std::time::Duration::from_millis(200));
            let (t1, m1) = (rdtsc(), sys::clock_ns(libc::CLOCK_MONOTONIC));
            let hz = ((t1 - t0) as u128 * 1_000_000_000 / (m1 - m0).max(1) as u128) as u64;
            if hz > 1_000_000 {
                return Self::with_hz(Source::Tsc, hz);
            }
        }
        Self::with_hz(Source::MonotonicRaw, 1_000_000_000)
    }

    /// A counter of `hz` ticks per second.
    pub fn with_hz(source: Source, hz: u64) -> Self {
        let mult = ((1_000_000_000u128 << 32) / hz.max(1) as u128) as u64;
        Self { source, hz, mult }
    }

    /// Read the counter.
    #[inline(always)]
    pub fn read(&self) -> u64 {
        match self.source {
            Source::Tsc => rdtsc(),
            Source::MonotonicRaw => sys::clock_ns(libc::CLOCK_MONOTONIC_RAW),
        }
    }

    /// The ticks → ns multiplier: `ns = ticks * mult >> 32`.
    pub fn mult(&self) -> u64 {
        self.mult
    }

    /// Ticks → ns.
    #[inline(always)]
    pub fn to_ns(&self, ticks: u64) -> u64 {
        ((ticks as u128 * self.mult as u128) >> 32) as u64
    }

    /// ns → ticks.
    pub fn ticks(&self, ns: u64) -> u64 {
        (ns as u128 * self.hz as u128 / 1_000_000_000) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invariant_tsc_needs_both_flags() {
        assert!(invariant_tsc("processor: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n"));
        assert!(!invariant_tsc("flags\t\t: fpu tsc constant_tsc\n"));
        assert!(!invariant_tsc(""));
    }

    #[test]
    fn conversion_is_exact_enough() {
        let c = Counter::with_hz(Source::Tsc, 2_445_000_000);
        assert_eq!(c.to_ns(2_445_000_000), 999_999_999);
        assert_eq!(c.to_ns(2_445), 999);
        assert_eq!(c.ticks(1_000_000_000), 2_445_000_000);
        let m = Counter::with_hz(Source::MonotonicRaw, 1_000_000_000);
        assert_eq!(m.to_ns(12_345), 12_345);
    }

    #[test]
    fn detect_reads_a_moving_counter() {
        let cpuinfo = host::Root::live().read_string("proc/cpuinfo").unwrap_or_default();
        let c = Counter::detect(&cpuinfo);
        let a = c.read();
        let b = c.read();
        assert!(b >= a);
    }
}
