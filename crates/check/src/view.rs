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

/// The progress as it goes, for one output stream: on a terminal a running step is one live
/// line rewritten about once a second; in a log a line a minute (a 12 h run still shows it is
/// alive and its worst value so far).
#[derive(Debug, Default)]
pub struct Progress {
    tty: bool,
    live_shown: bool,
    logged: Duration,
}

impl Progress {
    /// For a stream that is a terminal (`tty`) or not.
    pub fn new(tty: bool) -> Self {
        Self { tty, ..Self::default() }
    }

    /// What to print for an event now (often nothing while a step runs).
    pub fn text(&mut self, e: &Event<'_>) -> String {
        match e {
            Event::Running { step, elapsed, live } if self.tty => {
                self.live_shown = true;
                format!("\r\x1b[2K{}", running(step, *elapsed, *live))
            }
            Event::Running { elapsed, .. } => {
                if *elapsed < self.logged + Duration::from_secs(60) {
                    return String::new();
                }
                self.logged = *elapsed;
                event(e)
            }
            _ => {
                let clear = if std::mem::take(&mut self.live_shown) { "\r\x1b[2K" } else { "" };
                self.logged = Duration::ZERO;
                format!("{clear}{}", event(e))
            }
        }
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

/// The end: the verdict and its banners, the top findings (the verdict lines that matter
/// most, once — every other line is in the report), where the report is, what to do next.
pub fn finished(f: &Finished) -> String {
    let r = &f.report;
    let mut out = format!("\n{}: {}\n", sanitize(&r.title, false), r.verdict.label());
    for b in &r.banners {
        let mark = if b.verdict >= report::Verdict::Warn { "!" } else { "-" };
        let _ = writeln!(out, "  {mark} {}", sanitize(&b.text, false));
    }
    let top = crate::top_findings(r);
    if !top.is_empty() {
        out.push_str("\ntop findings:\n");
        for h in &top {
            let _ = writeln!(out, "  {:<5} {}", h.verdict.label(), report::summary::short(&h.text));
        }
    }
    let lines = r.sections.iter().map(|s| s.headlines.len()).sum::<usize>();
    let more = lines.saturating_sub(top.len());
    let _ = writeln!(
        out,
        "{}wrote {} ({} KiB){}",
        if top.is_empty() { "\n" } else { "" },
        f.html.display(),
        f.html_bytes.div_ceil(1024),
        if more > 0 { format!(": {more} more verdict line(s) there") } else { String::new() }
    );
    out.push_str("\nnext:\n");
    for (cmd, why) in crate::next_commands(f) {
        let _ = writeln!(out, "  {cmd:<52} # {why}");
    }
    out
}
