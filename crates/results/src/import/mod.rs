//! Importers: other tools' outputs turned into lowlat's result model. cyclictest and oslat
//! (text, with `-h` histograms in both the rt-tests ≤2.6 and ≥2.7 layouts, and `--json` with
//! its literal `"cmdline:"` keys) become [`crate::latency::LatencyResult`]s; fio (its JSON, its
//! normal text, and the mixed `--output-format=normal,json`) becomes a
//! [`crate::fsync::FsyncResult`]. [`import`] picks the importer by [`Tool`].
//!
//! An importer never turns what it cannot read into a number: an input cut short (no summary
//! where the tool always prints one) imports as `partial` with a note saying what is missing,
//! a statistic the input does not carry (a percentile without a histogram) is `None`, and
//! numbers that contradict each other (a maximum below the histogram's highest bucket, counts
//! that do not add up, a negative or absurd value, a CPU that is not a number) are errors.

pub mod cyclictest;
pub mod fio;
pub mod oslat;
mod rtjson;

use crate::histogram::{Bucket, Summary};

/// Why an input could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("line {line}: {message} (got {value:?})")]
    Line { line: usize, message: String, value: String },
    #[error("not valid rt-tests JSON: {0}; expected the file written by --json=FILE")]
    Json(String),
    #[error("no results found: {0}")]
    NoData(String),
    /// Numbers that contradict each other or cannot be true.
    #[error("{0}")]
    Inconsistent(String),
}

impl util::exit::Classify for ImportError {
    fn exit_code(&self) -> util::exit::ExitCode {
        // The input file is not what its tool writes: the user's input.
        util::exit::ExitCode::Usage
    }
}

/// A latency above this is not a measurement but a broken input (one day, in ns).
pub(crate) const MAX_PLAUSIBLE_NS: u64 = 86_400 * 1_000_000_000;

/// `us` microseconds in ns, refusing values no tool measures.
pub(crate) fn us_to_ns(us: u64, what: &str) -> Result<u64, ImportError> {
    us.checked_mul(1000).filter(|ns| *ns <= MAX_PLAUSIBLE_NS).ok_or_else(|| {
        ImportError::Inconsistent(format!("{what} of {us} µs is not a plausible latency"))
    })
}

/// A latency already in ns, when plausible (a bound that also keeps `lo + width` of a bucket
/// from overflowing).
pub(crate) fn plausible_ns(ns: u64, what: &str) -> Result<u64, ImportError> {
    (ns <= MAX_PLAUSIBLE_NS).then_some(ns).ok_or_else(|| {
        ImportError::Inconsistent(format!("{what} of {ns} ns is not a plausible latency"))
    })
}

/// A fractional latency `x` in `unit_ns` units as ns: finite, not negative, plausible.
pub(crate) fn float_to_ns(x: f64, unit_ns: f64, what: &str) -> Result<u64, ImportError> {
    let ns = x * unit_ns;
    if !ns.is_finite() || ns < 0.0 || ns > MAX_PLAUSIBLE_NS as f64 {
        return Err(ImportError::Inconsistent(format!("{what} {x} is not a plausible latency")));
    }
    Ok(ns.round() as u64)
}

/// How a tool prints the latency of a sample that falls in a histogram bucket `[lo, hi)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Printed {
    /// As `lo` (cyclictest: whole µs, truncated): min and max are bucket lower bounds.
    Lower,
    /// As `hi` (oslat: `index + 1` µs); its minimum is not checked (`-B` biases the
    /// buckets but not the minimum).
    Upper,
}

/// Check one thread's statistics against each other and against its histogram: min ≤ avg ≤
/// max, the maximum at or above the highest non-empty bucket, the minimum within the lowest
/// one. Nothing is checked for a thread that took no samples.
pub(crate) fn check_thread(
    who: &str,
    s: &Summary,
    buckets: &[Bucket],
    printed: Printed,
) -> Result<(), ImportError> {
    let bad = |m: String| Err(ImportError::Inconsistent(format!("{who}: {m}")));
    if s.count == 0 {
        return Ok(());
    }
    if s.max_ns > MAX_PLAUSIBLE_NS {
        return bad(format!("a maximum of {} ns is not a plausible latency", s.max_ns));
    }
    if s.min_ns > s.max_ns {
        return bad(format!(
            "the minimum ({} ns) is above the maximum ({} ns)",
            s.min_ns, s.max_ns
        ));
    }
    // 1 ns of slack: averages are rounded to whole ns.
    let check_min = printed == Printed::Lower;
    if s.avg_ns > s.max_ns + 1 || (check_min && s.avg_ns + 1 < s.min_ns) {
        return bad(format!(
            "the average ({} ns) is outside the minimum and maximum ({} .. {} ns)",
            s.avg_ns, s.min_ns, s.max_ns
        ));
    }
    let mut nonempty = buckets.iter().filter(|b| b.count > 0);
    if let Some(first) = nonempty.next() {
        let last = nonempty.next_back().unwrap_or(first);
        let floor = if check_min { last.lo_ns } else { last.hi_ns };
        if s.max_ns < floor {
            return bad(format!(
                "the maximum ({} ns) is below the histogram's highest sample ({} .. {} ns)",
                s.max_ns, last.lo_ns, last.hi_ns
            ));
        }
        if check_min && s.min_ns > first.lo_ns {
            return bad(format!(
                "the minimum ({} ns) is above the histogram's lowest sample ({} .. {} ns)",
                s.min_ns, first.lo_ns, first.hi_ns
            ));
        }
    }
    Ok(())
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
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Imported {
    Latency(Box<crate::LatencyResult>),
    Fsync(Box<crate::fsync::FsyncResult>),
}

impl Imported {
    /// Why the import is `partial` (the input was cut short), for a warning; `None` when it
    /// is whole.
    pub fn cut_short(&self) -> Option<&str> {
        let (partial, notes): (bool, &[String]) = match self {
            Imported::Latency(r) => (r.envelope.partial, &r.notes),
            Imported::Fsync(r) => {
                (r.envelope.partial, r.scenarios.first().map_or(&[][..], |s| &s.notes))
            }
        };
        partial.then(|| {
            notes.iter().find(|n| n.starts_with("CUT SHORT")).map_or("cut short", String::as_str)
        })
    }

    /// Why the imported numbers cannot support a PASS (`results::evidence`: the tool
    /// reported a failure, nothing was measured, the input was cut short); `None` when they
    /// can.
    pub fn no_evidence(&self) -> Option<crate::NoEvidence> {
        use crate::Evidence as _;
        match self {
            Imported::Latency(r) => r.no_evidence(),
            Imported::Fsync(r) => r.no_evidence(),
        }
    }

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
    #[error("not valid fio output")]
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
