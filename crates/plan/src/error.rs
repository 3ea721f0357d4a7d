//! Planner errors: each names the problem and what to do about it.

use crate::ppc::PpcError;

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The request cannot be satisfied on this host.
    #[error("{problem}; {fix}")]
    Invalid { problem: String, fix: String },
    /// The Performance Profile Creator's own error (text as PPC prints it).
    #[error(transparent)]
    Ppc(#[from] PpcError),
    /// A plan file that cannot be used.
    #[error("{0}")]
    File(String),
    /// The host to plan for cannot be opened (snapshot, must-gather node).
    #[error(transparent)]
    Host(#[from] host::OpenError),
}

impl PlanError {
    pub(crate) fn invalid(problem: impl Into<String>, fix: impl Into<String>) -> Self {
        PlanError::Invalid { problem: problem.into(), fix: fix.into() }
    }

    /// A host model without CPUs: nothing to partition.
    pub(crate) fn no_cpus() -> Self {
        PlanError::invalid(
            "the host model has no online CPUs (topology could not be read)",
            "check that the snapshot holds sys/devices/system/cpu, or run on the live host",
        )
    }
}

impl util::exit::Classify for PlanError {
    fn exit_code(&self) -> util::exit::ExitCode {
        // Every plan error is about the request, the host it names or the plan file: the
        // user's input.
        util::exit::ExitCode::Usage
    }
}

/// A name outside a closed set (a style, a power mode, a topology policy, …).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} '{value}' is invalid. Valid values come from the set [{}]", .valid.join(" "))]
pub struct UnknownName {
    /// What the name is for (`power consumption mode`).
    pub what: &'static str,
    /// The name as given.
    pub value: String,
    /// The valid names.
    pub valid: Vec<&'static str>,
}

impl UnknownName {
    pub(crate) fn new(
        what: &'static str,
        value: &str,
        valid: impl IntoIterator<Item = &'static str>,
    ) -> Self {
        UnknownName { what, value: value.to_string(), valid: valid.into_iter().collect() }
    }
}
