//! CPU affinity and scheduling policy: the syscalls every crate that pins or prioritises a
//! thread makes, once. Affinity goes through `rustix`; the policy through `libc` (rustix has
//! no `sched_setscheduler`).

use cpuset::CpuSet;
use rustix::process::Pid;
use rustix::thread::CpuSet as RawSet;

/// Scheduling policy of a thread we start.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// `SCHED_FIFO`.
    Fifo,
    /// `SCHED_RR`.
    Rr,
    /// `SCHED_OTHER`.
    Other,
}

impl Policy {
    fn raw(self) -> libc::c_int {
        match self {
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
            Policy::Other => libc::SCHED_OTHER,
        }
    }

    /// A real-time policy?
    pub fn is_realtime(self) -> bool {
        !matches!(self, Policy::Other)
    }

    /// The kernel's name: `SCHED_FIFO`, `SCHED_RR`, `SCHED_OTHER`.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Other => "SCHED_OTHER",
        }
    }

    /// `fifo`, `rr`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Other => "other",
        }
    }
}

impl std::str::FromStr for Policy {
    type Err = String;

    /// The inverse of [`Policy::as_str`] (and of the serialized form).
    fn from_str(s: &str) -> Result<Self, String> {
        [Policy::Fifo, Policy::Rr, Policy::Other]
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not a scheduling policy (fifo, rr or other)"))
    }
}

/// The largest CPU number the affinity calls can express (+1).
pub const MAX_CPUS: usize = RawSet::MAX_CPU;

fn pid(tid: u32) -> Option<Pid> {
    Pid::from_raw(tid as i32)
}

/// The CPUs thread `tid` may run on (0 = the calling thread).
pub fn get_affinity(tid: u32) -> std::io::Result<CpuSet> {
    let raw = rustix::thread::sched_getaffinity(pid(tid))?;
    Ok((0..MAX_CPUS).filter(|&c| raw.is_set(c)).collect())
}

/// Let thread `tid` (0 = the calling thread) run on `cpus` only. CPUs at or above
/// [`MAX_CPUS`] are refused with `EINVAL` rather than silently dropped.
pub fn set_affinity(tid: u32, cpus: &CpuSet) -> std::io::Result<()> {
    let mut raw = RawSet::new();
    for c in cpus.iter() {
        if c >= MAX_CPUS {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        raw.set(c);
    }
    rustix::thread::sched_setaffinity(pid(tid), &raw)?;
    Ok(())
}

/// Pin the calling thread to one CPU.
pub fn pin_current(cpu: u32) -> std::io::Result<()> {
    set_affinity(0, &std::iter::once(cpu as usize).collect())
}

/// Set thread `tid`'s (0 = the calling thread) policy and priority (ignored for `Other`).
pub fn set_policy(tid: u32, policy: Policy, priority: u32) -> std::io::Result<()> {
    let prio = if policy.is_realtime() { priority as libc::c_int } else { 0 };
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: `param` is a valid sched_param for the duration of the call; the kernel only
    // reads it.
    let rc = unsafe { libc::sched_setscheduler(tid as libc::pid_t, policy.raw(), &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Kernel thread id of the caller.
pub fn gettid() -> u32 {
    rustix::thread::gettid().as_raw_nonzero().get() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_affinity_round_trips() {
        let mine = get_affinity(0).unwrap();
        assert!(!mine.is_empty());
        set_affinity(0, &mine).unwrap();
        assert_eq!(get_affinity(0).unwrap(), mine);
        let too_big: CpuSet = std::iter::once(MAX_CPUS).collect();
        assert!(set_affinity(0, &too_big).is_err());
        assert!(gettid() > 0);
    }

    #[test]
    fn policy_names_round_trip() {
        for p in [Policy::Fifo, Policy::Rr, Policy::Other] {
            assert_eq!(p.as_str().parse::<Policy>(), Ok(p));
        }
        assert!("batch".parse::<Policy>().is_err());
    }
}
