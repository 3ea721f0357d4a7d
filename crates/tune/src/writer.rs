//! The one seam through which every host write goes: [`Writer`] reads a target's current
//! value and writes a new one. Errors are classified so the transaction can tell a refusal the
//! kernel is entitled to (managed IRQ, per-CPU kthread) from a real failure.

use util::exit::{Classify, ExitCode};

use crate::target::{Target, TargetClass};

/// Why a read or write did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The kernel refuses this change by design (managed or per-CPU IRQ, per-CPU kthread):
    /// classified, not a failure.
    Refused,
    /// The task exited, or its tid now belongs to another task (start time / comm differ).
    Gone,
    /// The file does not exist on this host.
    Missing,
    /// Anything else: a real failure.
    Failed,
}

/// A classified read/write error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{target}: {message}")]
pub struct WriteError {
    pub kind: ErrorKind,
    /// The target, as text.
    pub target: String,
    /// What happened (with errno text where there is one).
    pub message: String,
}

impl WriteError {
    /// An error of `kind` about `target`.
    pub fn new(kind: ErrorKind, target: &Target, message: impl Into<String>) -> Self {
        WriteError { kind, target: target.to_string(), message: message.into() }
    }

    /// Classify an errno from a write to `target`: EIO/EINVAL/EPERM on an IRQ means managed or
    /// per-CPU; EINVAL on a task means PF_NO_SETAFFINITY; ESRCH means the task is gone.
    pub fn from_errno(target: &Target, errno: i32, what: &str) -> Self {
        let text = std::io::Error::from_raw_os_error(errno).to_string();
        let kind = match (target.class(), errno) {
            (TargetClass::Irq, libc::EIO | libc::EINVAL | libc::EPERM) => ErrorKind::Refused,
            (TargetClass::Task, libc::EINVAL) => ErrorKind::Refused,
            (TargetClass::Task, libc::ESRCH) => ErrorKind::Gone,
            (_, libc::ENOENT) => ErrorKind::Missing,
            _ => ErrorKind::Failed,
        };
        let why = match (&kind, target.class()) {
            (ErrorKind::Refused, TargetClass::Irq) => {
                " (managed or per-CPU IRQ: the kernel owns its affinity)"
            }
            (ErrorKind::Refused, TargetClass::Task) => " (per-CPU kthread: PF_NO_SETAFFINITY)",
            _ => "",
        };
        WriteError::new(kind, target, format!("{what}: {text}{why}"))
    }
}

impl Classify for WriteError {
    /// A write to the host that did not happen is a runtime failure, whatever its kind (the
    /// transaction classifies refusals and vanished targets before they become errors).
    fn exit_code(&self) -> ExitCode {
        ExitCode::Runtime
    }
}

/// Read the current value of a target, write a new one. Implemented over the live `/proc` and
/// `/sys` ([`crate::real::RealWriter`]) and in memory ([`crate::fake::FakeWriter`]).
pub trait Writer {
    /// The current value, normalised (see [`crate::target::normalise`]). For a task, its
    /// affinity as a cpu-list; `Gone` when the tid no longer has the recorded start time/comm.
    fn read(&mut self, target: &Target) -> Result<String, WriteError>;
    /// Set the value. For a task, checks identity first (`Gone` on mismatch).
    fn write(&mut self, target: &Target, value: &str) -> Result<(), WriteError>;
    /// The kernel boot id (`/proc/sys/kernel/random/boot_id`), stamped on journal entries.
    fn boot_id(&mut self) -> String;
}
