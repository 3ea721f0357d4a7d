//! Exit codes (documented in the README): one enum, one mapping from errors.

/// Process exit status.
#[allow(dead_code, reason = "every variant is part of the documented contract")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ExitCode {
    /// Success; every check passed, no threshold reached.
    Ok = 0,
    /// A check failed or a latency threshold was reached.
    CheckFailed = 1,
    /// Usage or input error (bad option, unreadable input, invalid plan).
    Usage = 2,
    /// Runtime error (a syscall or write failed).
    Runtime = 3,
    /// Tuning partially applied and rollback failed: run `lowlat revert`.
    PartialApply = 4,
    /// Interrupted (Ctrl-C); partial results were written.
    Interrupted = 130,
}

/// An error that carries its exit code; anything else is a runtime error.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CodedError {
    pub code: ExitCode,
    pub message: String,
}

/// A usage / input error (exit 2).
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    CodedError { code: ExitCode::Usage, message: message.into() }.into()
}

/// The exit code for an error: a [`CodedError`] anywhere in the chain wins.
pub fn classify(err: &anyhow::Error) -> ExitCode {
    err.chain()
        .find_map(|e| e.downcast_ref::<CodedError>().map(|c| c.code))
        .unwrap_or(ExitCode::Runtime)
}
