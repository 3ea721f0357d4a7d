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

    /// The exit code a lowlat child process ended with, read back (an agent passes its
    /// child's on); a status lowlat does not document is a runtime error.
    pub fn from_status(status: i32) -> Self {
        [
            Self::Ok,
            Self::CheckFailed,
            Self::Usage,
            Self::Runtime,
            Self::PartialApply,
            Self::Interrupted,
        ]
        .into_iter()
        .find(|c| c.code() == status)
        .unwrap_or(Self::Runtime)
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

#[cfg(test)]
mod tests {
    use super::ExitCode;

    #[test]
    fn a_status_reads_back_as_its_code_and_anything_else_as_runtime() {
        for c in [0, 1, 2, 3, 4, 130] {
            assert_eq!(ExitCode::from_status(c).code(), c);
        }
        assert_eq!(ExitCode::from_status(137), ExitCode::Runtime);
        assert_eq!(ExitCode::from_status(-1), ExitCode::Runtime);
    }
}
