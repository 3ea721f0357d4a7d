//! Findings with evidence and fixes, and what could not be read.

use std::fmt::Write as _;

use host::{Host, Severity};

use crate::term::{truncate, wrap, Paint, Style};

pub(super) fn findings(out: &mut String, h: &Host, st: &Style, cpu: Option<usize>) {
    // Findings are about the host as a whole (a sibling of CPU N, an IRQ that may reach it…):
    // the focused view shows them all rather than guess which concern CPU N.
    let title = if cpu.is_some() { "Findings (whole host)" } else { "Findings" };
    let _ = writeln!(out, "{}", st.heading(title));
    let list: Vec<&host::Finding> = h.findings.iter().collect();
    if list.is_empty() {
        let _ = writeln!(out, "  none\n");
        return;
    }
    for f in list {
        let sev = match f.severity {
            Severity::Error => st.paint(Paint::Red, "error"),
            Severity::Warn => st.paint(Paint::Yellow, "warn "),
            Severity::Info => st.paint(Paint::Cyan, "info "),
        };
        let head = format!("{sev} {} ", st.paint(Paint::Bold, &f.id));
        let lines = wrap(&f.message, st.width.saturating_sub(4), "");
        let _ = writeln!(out, "  {head}{}", lines.first().map(String::as_str).unwrap_or(""));
        for l in lines.iter().skip(1) {
            let _ = writeln!(out, "        {l}");
        }
        for e in &f.evidence {
            let _ = writeln!(
                out,
                "        {} {}",
                st.paint(Paint::Dim, "·"),
                truncate(e, st.width.saturating_sub(10))
            );
        }
        if let Some(fix) = &f.fix {
            for (i, l) in wrap(fix, st.width.saturating_sub(14), "").into_iter().enumerate() {
                let _ = writeln!(
                    out,
                    "        {} {l}",
                    if i == 0 { st.paint(Paint::Green, "fix:") } else { "    ".into() }
                );
            }
        }
    }
    out.push('\n');
}

pub(super) fn unknowns(out: &mut String, h: &Host, st: &Style) {
    if h.unknown.is_empty() && h.warnings.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", st.heading("Not known"));
    for u in &h.unknown {
        let _ = writeln!(out, "  {:<28} {} ({})", u.field, st.paint(Paint::Dim, &u.path), u.reason);
    }
    for w in h.warnings.iter().take(20) {
        let line = w.line.map_or(String::new(), |l| format!(":{l}"));
        let _ = writeln!(
            out,
            "  {} {}{line}: {}",
            st.paint(Paint::Yellow, "warning"),
            w.path,
            w.message
        );
    }
    if h.warnings.len() > 20 {
        let _ = writeln!(out, "  … {} more warnings (see --json)", h.warnings.len() - 20);
    }
}
