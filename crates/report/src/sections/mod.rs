//! Section plug-ins: each turns the input documents of the kinds it understands into report
//! sections. `build` runs them in report order, derives the overall verdict, the banners and
//! the system context. A document of a kind no plug-in knows still gets a small section
//! saying so (never an error), so new result kinds appear as they land.

mod context;
mod fsync;
mod generic;
mod inspect;
mod latency;
mod ticks;
mod topology;
mod verify;
mod watch;

use crate::input::Doc;
use crate::model::{Headline, Note, Report, Section, Verdict};

pub use latency::{bin_histogram, downsample_max};

/// Judgement thresholds and presentation limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub title: String,
    /// Tool and version written into the report.
    pub generator: String,
    /// Timer wake-up latency a CPU must stay below (strict `<`), unless the result's
    /// `params.threshold_ns` says otherwise.
    pub timer_threshold_ns: u64,
    /// Largest single noise gap allowed (strict `<`).
    pub noise_threshold_ns: u64,
    /// fsync p99 targets: etcd's (pass below) and OpenShift's (warn below, fail at or above).
    pub fsync_p99_pass_ns: u64,
    pub fsync_p99_warn_ns: u64,
    /// Most points per chart series (time series are downsampled by max, histograms rebinned).
    pub max_points: usize,
    /// Notes from the caller (steps skipped, privileges missing), shown as banners.
    pub notes: Vec<Note>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            title: "lowlat report".to_string(),
            generator: format!("lowlat {}", env!("CARGO_PKG_VERSION")),
            timer_threshold_ns: 100_000,
            noise_threshold_ns: 100_000,
            fsync_p99_pass_ns: 10_000_000,
            fsync_p99_warn_ns: 20_000_000,
            max_points: 600,
            notes: Vec::new(),
        }
    }
}

/// A section plug-in: the kinds it claims and how it builds sections from one document.
struct Plugin {
    kinds: &'static [&'static str],
    build: fn(&Doc, &Ctx<'_>) -> Vec<Section>,
}

/// What a plug-in may look at besides its own document.
pub(crate) struct Ctx<'a> {
    pub opts: &'a Options,
    pub virtualized: Option<String>,
}

const PLUGINS: &[Plugin] = &[
    Plugin { kinds: &["verify"], build: verify::build },
    Plugin { kinds: &["timer", "noise"], build: latency::build },
    Plugin { kinds: &["ticks"], build: ticks::build },
    Plugin { kinds: &["fsync", "etcd"], build: fsync::build },
    Plugin { kinds: &["watch"], build: watch::build },
    Plugin { kinds: &["inspect"], build: inspect::build },
];

/// Kinds that feed the header/topology only.
const CONTEXT_KINDS: &[&str] = &["plan"];

/// Build the report model from the input documents.
pub fn build(docs: &[Doc], opts: &Options) -> Report {
    let virtualized = context::virtualization(docs);
    let ctx = Ctx { opts, virtualized: virtualized.clone() };

    let mut sections = Vec::new();
    if let Some(s) = topology::build(docs) {
        sections.push(s);
    }
    for plugin in PLUGINS {
        for kind in plugin.kinds {
            for doc in docs.iter().filter(|d| d.kind == *kind) {
                sections.extend((plugin.build)(doc, &ctx));
            }
        }
    }
    let known =
        |k: &str| PLUGINS.iter().any(|p| p.kinds.contains(&k)) || CONTEXT_KINDS.contains(&k);
    for doc in docs.iter().filter(|d| !known(&d.kind)) {
        sections.push(generic::build(doc));
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
    for doc in docs.iter().filter(|d| d.envelope().partial) {
        banners.push(Note {
            verdict: Verdict::Warn,
            text: format!("{} ({}) is partial: the run was cut short.", doc.source, doc.kind),
        });
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
        inputs: docs.iter().map(|d| (d.source.clone(), d.kind.clone())).collect(),
    }
}

/// The run conditions of a result (tool, start, duration, partial flag, every parameter), as
/// rteval prints them: a number is never shown without how it was measured.
pub(crate) fn run_conditions(doc: &Doc) -> crate::model::Block {
    let rows = run_rows(doc);
    let text = rows.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(" · ");
    crate::model::Block::Note(Note {
        verdict: Verdict::Info,
        text: format!("Run conditions — {text}"),
    })
}

fn run_rows(doc: &Doc) -> Vec<(String, String)> {
    let env = doc.envelope();
    let mut rows = vec![("source".to_string(), doc.source.clone())];
    if let Some(t) = env.tool {
        rows.push(("tool".into(), t));
    }
    if let Some(s) = env.started_at {
        rows.push(("started".into(), s));
    }
    if let Some(d) = env.duration_ns {
        rows.push(("duration".into(), crate::model::fmt_duration_s(d / 1_000_000_000)));
    }
    if env.partial {
        rows.push(("partial".into(), "yes: the run was cut short".into()));
    }
    if let Some(o) = env.params.as_object() {
        for (k, v) in o.iter().filter(|(_, v)| !v.is_null()) {
            rows.push((k.clone(), crate::input::value_text(v)));
        }
    }
    if let Some(l) = doc.value.get("load").filter(|l| !l.is_null()) {
        rows.push(("load".into(), crate::input::value_text(l)));
    }
    rows
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
            if let crate::model::Block::Chart(c) = b {
                c.id = format!("{id}-{}", c.id);
            }
        }
    }
}
