//! Section plug-ins: each turns the input documents of the kinds it understands into report
//! sections. `build` runs them in report order, derives the overall verdict, the banners and
//! the system context. A document of a kind no plug-in knows still gets a small section
//! saying so (never an error), so new result kinds appear as they land.

mod context;
mod ctx;
mod fsync;
mod generic;
mod inspect;
pub(crate) mod latency;
mod ticks;
mod topology;
mod tracer;
pub(crate) mod verify;
mod watch;

use crate::input::{Body, Doc, Kind, Problem};
use crate::model::{Block, Headline, Note, Report, Section, Verdict};

pub use ctx::Options;
pub use latency::{bin_histogram, downsample_max};

use ctx::Ctx;

/// A section plug-in: the kinds it claims and how it builds sections from one document.
struct Plugin {
    kinds: &'static [Kind],
    build: fn(&Doc, &Ctx<'_>) -> Vec<Section>,
}

use results::Kind as R;

/// The plug-ins in report order.
const PLUGINS: &[Plugin] = &[
    Plugin { kinds: &[Kind::Verify], build: verify::build },
    Plugin { kinds: &[Kind::Result(R::Timer), Kind::Result(R::Noise)], build: latency::build },
    Plugin { kinds: &[Kind::Result(R::Ticks)], build: ticks::build },
    Plugin { kinds: &[Kind::Result(R::Fsync), Kind::Result(R::Etcd)], build: fsync::build },
    Plugin { kinds: &[Kind::Result(R::Watch)], build: watch::build },
    Plugin { kinds: &[Kind::Inspect], build: inspect::build },
];

/// Build the report model from the input documents.
pub fn build(docs: &[Doc], opts: &Options) -> Report {
    let virtualized = docs.iter().find_map(Doc::virtualization).map(String::from);
    let ctx = Ctx { opts, virtualized: virtualized.clone() };

    let mut sections = Vec::new();
    if let Some(s) = topology::build(docs, opts.timer_threshold_ns) {
        sections.push(s);
    }
    for plugin in PLUGINS {
        for kind in plugin.kinds {
            for doc in docs.iter().filter(|d| d.kind == *kind) {
                let mut built = match &doc.body {
                    Body::Unreadable(e) => vec![unreadable(doc, e)],
                    _ => (plugin.build)(doc, &ctx),
                };
                if let Some(why) = no_pass(doc) {
                    built.iter_mut().for_each(|s| cap_at_warn(s, &why));
                }
                sections.extend(built);
            }
        }
    }
    for doc in docs {
        match &doc.body {
            Body::Other(g) => sections.push(generic::build(doc, g)),
            // A plan only feeds the header and the topology.
            Body::Unreadable(e) if doc.kind == Kind::Plan => sections.push(unreadable(doc, e)),
            _ => {}
        }
    }
    unique_ids(&mut sections);

    let mut banners = Vec::new();
    if let Some(v) = &virtualized {
        banners.push(Note {
            verdict: Verdict::Warn,
            text: format!(
                "Virtualized ({v}): host noise included. The hypervisor's own scheduling adds \
                 latency that no tuning inside this guest can remove; judge the numbers on bare \
                 metal."
            ),
        });
    }
    if virtualized.is_none() {
        let unknown = docs.iter().find_map(|d| match &d.body {
            Body::Inspect(h) => h.virtualization_unknown.as_deref(),
            _ => None,
        });
        if let Some(why) = unknown {
            banners.push(Note {
                verdict: Verdict::Warn,
                text: format!(
                    "Virtualization unknown ({why}): bare metal cannot be told from a VM, whose \
                     hypervisor would add latency no tuning inside it can remove."
                ),
            });
        }
    }
    for doc in docs.iter().filter(|d| d.partial()) {
        banners.push(Note {
            verdict: Verdict::Warn,
            text: format!(
                "{} ({}) is partial: the run was cut short; its numbers cover only what ran and cannot pass.",
                doc.source, doc.kind
            ),
        });
    }
    for doc in docs {
        // A partial run has its own banner above.
        if let Some(p) = doc
            .problem()
            .filter(|p| !matches!(p, Problem::NoEvidence(results::NoEvidence::Partial(_))))
        {
            banners.push(Note {
                verdict: Verdict::Warn,
                text: format!("{} ({}): {p}.", doc.source, doc.kind),
            });
        }
    }
    banners.extend(opts.notes.iter().cloned());

    let headlines = header_lines(&sections);
    let verdict = overall(&sections);

    Report {
        title: opts.title.clone(),
        generator: opts.generator.clone(),
        verdict,
        headlines,
        banners,
        context: context::rows(docs),
        sections,
        inputs: docs.iter().map(|d| (d.source.clone(), d.kind.to_string())).collect(),
        next: opts.next.clone(),
    }
}

/// One set of documents judged on its own, as the single-set report judges it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judged {
    /// The worst verdict of the documents' sections (PASS capped where there is no evidence).
    pub verdict: Verdict,
    /// `source: why` for each document that may not pass.
    pub no_pass: Vec<String>,
}

/// Judge the documents of `kinds` in `docs` on their own, with the same plug-ins and the same
/// evidence rule as [`build`]; `None` when there is no such document.
pub(crate) fn judge(docs: &[Doc], kinds: &[Kind], opts: &Options) -> Option<Judged> {
    let virtualized = docs.iter().find_map(Doc::virtualization).map(String::from);
    let ctx = Ctx { opts, virtualized };
    let mut sections = Vec::new();
    let mut no_pass_docs = Vec::new();
    let mut any = false;
    for plugin in PLUGINS {
        for kind in plugin.kinds.iter().filter(|k| kinds.contains(k)) {
            for doc in docs.iter().filter(|d| d.kind == *kind) {
                any = true;
                let mut built = match &doc.body {
                    Body::Unreadable(e) => vec![unreadable(doc, e)],
                    _ => (plugin.build)(doc, &ctx),
                };
                if let Some(why) = no_pass(doc) {
                    built.iter_mut().for_each(|s| cap_at_warn(s, &why));
                    no_pass_docs.push(format!("{}: {why}", doc.source));
                }
                sections.extend(built);
            }
        }
    }
    any.then(|| Judged { verdict: overall(&sections), no_pass: no_pass_docs })
}

/// Why a document's sections may not say PASS: it cannot be judged, or it holds no evidence
/// (`results::evidence`: nothing measured, unusable numbers, a failed producer, partial).
fn no_pass(doc: &Doc) -> Option<String> {
    match doc.problem() {
        Some(p) => Some(p.to_string()),
        None => doc.partial().then(|| "partial: the run was cut short".to_string()),
    }
}

/// A section that may not pass: each PASS line becomes WARN and says why; a section that
/// judged nothing (INFO only) gets a WARN line saying why there is no verdict.
fn cap_at_warn(s: &mut Section, why: &str) {
    for h in s.headlines.iter_mut().filter(|h| h.verdict == Verdict::Pass) {
        h.verdict = Verdict::Warn;
        h.text = format!("{} (not a pass: {why})", h.text);
    }
    if s.headlines.iter().all(|h| h.verdict < Verdict::Warn) {
        s.headlines
            .insert(0, Headline::new(Verdict::Warn, format!("{}: no verdict: {why}", s.title)));
    }
    s.verdict = s.headlines.iter().map(|h| h.verdict).max().unwrap_or(Verdict::Info);
}

/// The section of a document of a known kind that does not read.
fn unreadable(doc: &Doc, error: &str) -> Section {
    Section::new(
        doc.kind.as_str(),
        &format!("Result: {}", doc.kind),
        vec![Headline::new(
            Verdict::Warn,
            format!("{} ({}): unreadable result: {error}", doc.source, doc.kind),
        )],
        Vec::new(),
    )
}

/// The header's verdict lines: each section's first line, then further failures, at most 8,
/// worst first (the sections hold the rest).
pub fn header_lines(sections: &[Section]) -> Vec<Headline> {
    let mut out: Vec<Headline> =
        sections.iter().filter_map(|s| s.headlines.first().cloned()).collect();
    for h in sections.iter().flat_map(|s| s.headlines.iter().skip(1)) {
        if h.verdict == Verdict::Fail && out.len() < 8 {
            out.push(h.clone());
        }
    }
    out.sort_by_key(|h| std::cmp::Reverse(h.verdict));
    out
}

/// The overall verdict: the worst judged section; Info when nothing was judged.
pub fn overall(sections: &[Section]) -> Verdict {
    sections.iter().map(|s| s.verdict).max().unwrap_or(Verdict::Info)
}

/// Make section ids unique (`timer`, `timer-2`, …).
fn unique_ids(sections: &mut [Section]) {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for s in sections.iter_mut() {
        let n = seen.entry(s.id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            s.id = format!("{}-{}", s.id, n);
        }
    }
    let ids: Vec<String> = sections.iter().map(|s| s.id.clone()).collect();
    for (s, id) in sections.iter_mut().zip(ids) {
        for b in &mut s.blocks {
            match b {
                Block::Chart(c) => c.id = format!("{id}-{}", c.id),
                Block::Heatmap(m) => m.id = format!("{id}-{}", m.id),
                _ => {}
            }
        }
    }
}
