//! Terminal views and the self-contained HTML report.
//!
//! Flow: result files → [`input::Doc`] (each read with its producer's type: `results`,
//! `verify`, `host`, `plan`) → section plug-ins ([`sections::build`]) → the report model
//! ([`model::Report`]) → HTML ([`html::render`], charts via [`chart`]) and a terminal summary
//! ([`summary::render`]). [`compare`] builds a before/after report from two sets of documents.

pub mod chart;
pub mod compare;
pub mod heatmap;
pub mod html;
pub mod input;
pub mod inspect_view;
pub mod junit;
mod markup;
pub mod model;
pub mod prom;
pub mod sections;
pub mod summary;
pub mod term;

use std::path::Path;

pub use input::{Body, Doc, Error, Kind, Problem};
pub use model::{Report, Verdict};
pub use sections::Options;

/// Load result files (each must be a lowlat document or a tool output the importers read).
/// `-` (standard input) may be one of them, once.
pub fn load_all(paths: &[impl AsRef<Path>]) -> Result<Vec<Doc>, Error> {
    if paths.iter().filter(|p| p.as_ref().as_os_str() == "-").count() > 1 {
        return Err(Error::Parse {
            path: "-".into(),
            message: "is given more than once: standard input can be read only once".into(),
        });
    }
    paths.iter().map(|p| Doc::load(p.as_ref())).collect()
}

/// Build the report model from documents.
pub fn build(docs: &[Doc], opts: &Options) -> Report {
    sections::build(docs, opts)
}

/// Strict mode (a CI gate) over a report and every document it was built from: a document
/// that cannot support a verdict (unreadable, newer schema, unknown kind, nothing measured,
/// unusable numbers) is an input error ([`Error::Unusable`]); otherwise `Ok(true)` when the
/// gate fails: the verdict is FAIL, or a result is partial or its producer failed (a run
/// that did not complete proves nothing).
pub fn strict<'a>(
    docs: impl IntoIterator<Item = &'a Doc>,
    verdict: Verdict,
) -> Result<bool, Error> {
    let mut unusable = Vec::new();
    let mut partial = false;
    for d in docs {
        match d.problem() {
            Some(p) if p.is_failed_run() => partial = true,
            Some(p) => unusable.push(format!("{} ({}): {p}", d.source, d.kind)),
            None => {}
        }
        partial |= d.partial();
    }
    if !unusable.is_empty() {
        return Err(Error::Unusable(unusable));
    }
    Ok(verdict == Verdict::Fail || partial)
}
