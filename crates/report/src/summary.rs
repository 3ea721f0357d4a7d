//! The terminal summary: the same verdicts as the HTML header and sections, compact. Text
//! from the inputs (host names, IRQ names, file names) is made safe for a terminal.

use std::fmt::Write as _;

use crate::model::{Report, Verdict};

/// At most 160 characters of a line, with an ellipsis when cut, control characters escaped
/// (`util::term::sanitize`).
pub fn short(s: &str) -> String {
    let s = util::term::sanitize(s, false);
    if s.chars().count() <= 160 {
        return s.into_owned();
    }
    let mut out: String = s.chars().take(159).collect();
    out.push('…');
    out
}

/// A compact plain-text summary of the report (verdict, banners, each section's headlines).
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let title = util::term::sanitize(&report.title, false);
    let _ = writeln!(out, "{title}: {}", report.verdict.label());
    for b in &report.banners {
        let mark = if b.verdict >= Verdict::Warn { "!" } else { "-" };
        let _ = writeln!(out, "  {mark} {}", util::term::sanitize(&b.text, false));
    }
    for s in &report.sections {
        for l in &s.headlines {
            let _ = writeln!(out, "  {:<7} {}", l.verdict.label(), short(&l.text));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Headline, Note, Section};

    #[test]
    fn summary_lists_every_headline_under_the_verdict() {
        let r = Report {
            title: "lowlat report".into(),
            generator: "lowlat".into(),
            verdict: Verdict::Fail,
            headlines: Vec::new(),
            banners: vec![Note { verdict: Verdict::Warn, text: "virtualized".into() }],
            context: Vec::new(),
            sections: vec![Section::new(
                "t",
                "T",
                vec![Headline::new(Verdict::Fail, "worst 10 ms")],
                Vec::new(),
            )],
            inputs: Vec::new(),
            next: Vec::new(),
        };
        let s = render(&r);
        assert_eq!(s, "lowlat report: FAIL\n  ! virtualized\n  FAIL    worst 10 ms\n");
        assert_eq!(short("irq \x1b[2J"), "irq \\u{1b}[2J");
    }
}
