//! The documented exit codes (README, `docs/CONTRACT.md`) and how a library error says which one
//! it means. Library crates implement [`Classify`] on their `thiserror` enums; the binary walks
//! an error's source chain and takes the first classification it finds, so a usage error stays
//! a usage error however much context is wrapped around it, and a runtime failure is never
//! flattened into one.

/// Process exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ExitCode {
    /// Success; every check passed, no threshold reached.
    Ok = 0,
    /// A check failed or a latency threshold was reached.
    CheckFailed = 1,
    /// Usage or input error (bad option, unreadable input, invalid plan).
    Usage = 2,
    /// Runtime error (a syscall, a write or the cluster API failed).
    Runtime = 3,
    /// Tuning partially applied and rollback failed: run `lowlat revert`.
    PartialApply = 4,
    /// Interrupted (Ctrl-C); partial results were written.
    Interrupted = 130,
}

impl ExitCode {
    /// The numeric status.
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// An error that knows which exit code it means.
pub trait Classify {
    /// The exit code this error should end the process with.
    fn exit_code(&self) -> ExitCode;
}

impl Classify for crate::duration::Error {
    fn exit_code(&self) -> ExitCode {
        ExitCode::Usage
    }
}
