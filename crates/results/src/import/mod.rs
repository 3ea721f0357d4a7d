//! Importers: other tools' outputs turned into lowlat's result model. cyclictest and oslat
//! (text, with `-h` histograms in both the rt-tests ≤2.6 and ≥2.7 layouts, and `--json` with
//! its literal `"cmdline:"` keys) become [`crate::latency::LatencyResult`]s.

pub mod cyclictest;
pub mod fio;
pub mod oslat;
mod rtjson;

/// Why an input could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("line {line}: {message} (got {value:?})")]
    Line { line: usize, message: String, value: String },
    #[error("not valid rt-tests JSON: {0}; expected the file written by --json=FILE")]
    Json(String),
    #[error("no results found: {0}")]
    NoData(String),
}

impl util::exit::Classify for ImportError {
    fn exit_code(&self) -> util::exit::ExitCode {
        // The input file is not what its tool writes: the user's input.
        util::exit::ExitCode::Usage
    }
}

/// Parse an unsigned decimal field, naming the line on failure.
pub(crate) fn num<T: std::str::FromStr>(
    s: &str,
    line: usize,
    what: &str,
) -> Result<T, ImportError> {
    s.trim().parse().map_err(|_| ImportError::Line {
        line,
        message: format!("{what} is not a number"),
        value: s.to_string(),
    })
}

/// Is this text JSON (first non-blank character `{`)?
pub(crate) fn looks_like_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}
