//! The job on a terminal: a line per step as it goes, then the report's summary, the top
//! findings and the exact next commands.

use std::fmt::Write as _;
use std::time::Duration;

use util::term::sanitize;

use crate::{Event, Finished, Outcome};

fn span(d: Duration) -> String {
    util::duration::format(Duration::from_secs(d.as_secs()))
}

/// The progress text of one event (one or two lines, each ending in a newline).
pub fn event(e: &Event<'_>) -> String {
    match e {
        Event::Start { out, total, root } => format!(
            "lowlat check: evaluating this host (nothing is changed); results go to {}/\n  about {} in all{}\n",
            out.display(),
            span(*total),
            if *root { "" } else { " (not root: some steps degrade)" }
        ),
        Event::Step { index, count, step, skipped: true, .. } => {
            format!("  [{index}/{count}] {:<7} skipped (--skip)\n", step.name.as_str())
        }
        Event::Step { index, count, step, elapsed, total, skipped: false } => format!(
            "  [{index}/{count}] {:<7} {} ({} elapsed of ~{})…\n",
            step.name.as_str(),
            step.what,
            span(*elapsed),
            span(*total)
        ),
        Event::Running { step, elapsed, live } => format!("{}\n", running(step, *elapsed, *live)),
        Event::Ended { step, outcome, took } => match outcome {
            Outcome::Done => format!(
                "          done in {:.1}s → {}\n",
                took.as_secs_f64(),
                step.file.display()
            ),
            Outcome::Skipped(why) => format!("          skipped: {}\n", sanitize(why, false)),
            Outcome::Failed(why) => format!("          failed: {}\n", sanitize(why, false)),
            Outcome::Interrupted => "          interrupted\n".to_string(),
        },
    }
}

/// The live status of a running step, one line without its end: elapsed and remaining, and
/// for a measurement the samples and the worst value so far.
pub fn running(step: &crate::Step, elapsed: Duration, live: Option<crate::Live>) -> String {
    let left = step.expect.saturating_sub(elapsed);
    let mut s = format!(
        "          {:<7} {} of ~{} ({} left)",
        step.name.as_str(),
        span(elapsed),
        span(step.expect),
        span(left)
    );
    if let Some(l) = live {
        let _ = write!(
            s,
            " · {} samples · worst so far {}",
            report::model::fmt_count(l.samples),
            report::model::fmt_ns(l.worst_ns)
        );
    }
    s
}

/// The end: the report's summary, where it was written, the top findings, what to do next.
pub fn finished(f: &Finished) -> String {
    let mut out = format!("\n{}", report::summary::render(&f.report));
    let _ = writeln!(out, "wrote {} ({} KiB)", f.html.display(), f.html_bytes.div_ceil(1024));
    let top = crate::top_findings(&f.report);
    if !top.is_empty() {
        out.push_str("\ntop findings:\n");
        for h in top {
            let _ = writeln!(out, "  {:<5} {}", h.verdict.label(), report::summary::short(&h.text));
        }
    }
    out.push_str("\nnext:\n");
    for (cmd, why) in crate::next_commands(f) {
        let _ = writeln!(out, "  {cmd:<52} # {why}");
    }
    out
}
