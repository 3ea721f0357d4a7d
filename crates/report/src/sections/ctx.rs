//! What every section plug-in shares: the judgement thresholds ([`Options`]), the context a
//! plug-in may look at besides its own document ([`Ctx`]), and the run-conditions note.

use crate::model::{Block, Note, Verdict};

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
    /// The commands to run next (a "Next steps" section).
    pub next: Vec<crate::model::NextStep>,
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
            next: Vec::new(),
        }
    }
}

/// What a plug-in may look at besides its own document.
pub(crate) struct Ctx<'a> {
    pub opts: &'a Options,
    pub virtualized: Option<String>,
}

/// The run conditions of a result (tool, start, duration, partial flag, every parameter), as
/// rteval prints them: a number is never shown without how it was measured.
pub(crate) fn run_conditions(source: &str, env: &results::Envelope, load: Option<String>) -> Block {
    let mut rows = vec![("source".to_string(), source.to_string())];
    rows.push(("tool".into(), env.tool.clone()));
    if let Some(s) = &env.started_at {
        rows.push(("started".into(), s.clone()));
    }
    rows.push((
        "duration".into(),
        if env.duration_ns == 0 {
            "unknown".into()
        } else {
            crate::model::fmt_duration_s(env.duration_ns / 1_000_000_000)
        },
    ));
    if let Some(why) = &env.failed {
        rows.push(("failed".into(), why.clone()));
    }
    if env.partial {
        rows.push(("partial".into(), "yes: the run was cut short".into()));
    }
    for (k, v) in env.params.entries().into_iter().filter(|(_, v)| !v.is_null()) {
        let text = crate::input::value_text(&v);
        rows.push((k, text));
    }
    if let Some(l) = load {
        rows.push(("load".into(), l));
    }
    let text = rows.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(" · ");
    Block::Note(Note { verdict: Verdict::Info, text: format!("Run conditions — {text}") })
}
