//! Importers: other tools' outputs turned into lowlat's result model. cyclictest and oslat
//! (text, with `-h` histograms in both the rt-tests ≤2.6 and ≥2.7 layouts, and `--json` with
//! its literal `"cmdline:"` keys) become [`crate::latency::LatencyResult`]s; fio JSON becomes
//! a [`crate::fsync::FsyncResult`]. [`import`] picks the importer by [`Tool`].

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

/// The tools whose output lowlat imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    Cyclictest,
    Oslat,
    Fio,
}

impl Tool {
    /// The tool's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::Cyclictest => "cyclictest",
            Tool::Oslat => "oslat",
            Tool::Fio => "fio",
        }
    }
}

impl std::str::FromStr for Tool {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Tool::Cyclictest, Tool::Oslat, Tool::Fio]
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not cyclictest, oslat or fio"))
    }
}

/// An imported result: timer or noise (cyclictest, oslat), or fsync (fio). Serializes as the
/// result file itself.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Imported {
    Latency(Box<crate::LatencyResult>),
    Fsync(Box<crate::fsync::FsyncResult>),
}

impl Imported {
    /// The per-CPU table of a timer or noise result (`None` for fsync).
    pub fn table(&self) -> Option<String> {
        match self {
            Imported::Latency(r) => Some(crate::export::table::latency(r)),
            Imported::Fsync(_) => None,
        }
    }
}

/// Why a tool's output could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// cyclictest or oslat output (the tool named) that does not read.
    #[error("not valid {0} output")]
    RtTests(&'static str, #[source] ImportError),
    #[error("not valid fio JSON")]
    Fio(#[source] fio::FioImportError),
}

impl util::exit::Classify for Error {
    fn exit_code(&self) -> util::exit::ExitCode {
        util::exit::ExitCode::Usage
    }
}

/// Import `text` as `tool`'s output.
pub fn import(tool: Tool, text: &str) -> Result<Imported, Error> {
    match tool {
        Tool::Cyclictest => cyclictest::import(text)
            .map(|r| Imported::Latency(Box::new(r)))
            .map_err(|e| Error::RtTests("cyclictest", e)),
        Tool::Oslat => oslat::import(text)
            .map(|r| Imported::Latency(Box::new(r)))
            .map_err(|e| Error::RtTests("oslat", e)),
        Tool::Fio => fio::import(text).map(|r| Imported::Fsync(Box::new(r))).map_err(Error::Fio),
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
