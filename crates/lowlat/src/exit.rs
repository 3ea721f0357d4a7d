//! From an error to the documented exit code (README, `docs/CONTRACT.md`). Library errors say
//! which code they mean through `util::exit::Classify`; the binary's own usage errors are
//! [`CodedError`]s. The first classification found walking the source chain wins, so context
//! added on the way up never changes the code; anything unclassified is a runtime error (3).

use std::any::Any;

use util::exit::Classify as _;
pub use util::exit::ExitCode;

/// An error raised by the binary itself that carries its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CodedError {
    pub code: ExitCode,
    pub message: String,
}

/// A usage / input error (exit 2) raised by the binary (argument combinations clap cannot
/// express).
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    CodedError { code: ExitCode::Usage, message: message.into() }.into()
}

/// The code a library error means, if it is one of the classified types.
fn library_code(e: &(dyn std::error::Error + 'static)) -> Option<ExitCode> {
    macro_rules! classified {
        ($($t:ty),* $(,)?) => {
            $(if let Some(x) = e.downcast_ref::<$t>() {
                return Some(x.exit_code());
            })*
        };
    }
    // One line per library error type that implements `util::exit::Classify`.
    classified!(
        util::duration::Error,
        plan::PlanError,
        plan::ppc::PpcError,
        render::RenderError,
        tune::journal::JournalError,
        tune::txn::ApplyError,
        tune::RevertError,
        tune::SiteError,
        tune::WriteError,
        report::Error,
        results::import::Error,
        results::import::ImportError,
        results::import::fio::FioImportError,
        check::Error,
        check::step::UnknownStep,
        storage::StorageError,
        measure::MeasureError,
        host::OpenError,
        host::NotAHost,
        host::root::TgzError,
        host::root::MustGatherError,
    );
    #[cfg(feature = "cluster")]
    classified!(cluster::Error);
    // A CPU list that does not parse always came from the user (cpuset stays dependency-free).
    if e.downcast_ref::<cpuset::ParseError>().is_some() {
        return Some(ExitCode::Usage);
    }
    None
}

/// The exit code for an error.
pub fn classify(err: &anyhow::Error) -> ExitCode {
    err.chain()
        .find_map(|e| match e.downcast_ref::<CodedError>() {
            Some(c) => Some(c.code),
            None => library_code(e),
        })
        .unwrap_or(ExitCode::Runtime)
}

/// Did the error come from writing to a closed pipe?
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Is a panic payload std's "failed printing to stdout: Broken pipe"?
pub fn is_broken_pipe_panic(payload: &(dyn Any + Send)) -> bool {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    msg.contains("Broken pipe") || msg.contains("os error 32")
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context as _;

    #[test]
    fn codes_survive_context() {
        let e = anyhow::Error::from(util::duration::parse_span("soon").unwrap_err())
            .context("reading --duration");
        assert_eq!(classify(&e), ExitCode::Usage);
        let e = Err::<(), _>(std::io::Error::other("disk on fire")).context("writing").unwrap_err();
        assert_eq!(classify(&e), ExitCode::Runtime);
        let e = usage("bad").context("outer");
        assert_eq!(classify(&e), ExitCode::Usage);
        let pipe = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&pipe.context("printing")));
    }
}
