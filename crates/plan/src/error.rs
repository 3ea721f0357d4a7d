//! Planner errors: each names the problem and what to do about it.

/// Why a plan could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The request cannot be satisfied on this host.
    #[error("{problem}; {fix}")]
    Invalid { problem: String, fix: String },
    /// The Performance Profile Creator's own error (text as PPC prints it).
    #[error("failed to compute the reserved and isolated CPUs: {0}")]
    Ppc(String),
    /// A plan file that cannot be used.
    #[error("{0}")]
    File(String),
}

impl PlanError {
    pub(crate) fn invalid(problem: impl Into<String>, fix: impl Into<String>) -> Self {
        PlanError::Invalid { problem: problem.into(), fix: fix.into() }
    }
}

impl util::exit::Classify for PlanError {
    fn exit_code(&self) -> util::exit::ExitCode {
        // Every plan error is about the request or the plan file: the user's input.
        util::exit::ExitCode::Usage
    }
}
