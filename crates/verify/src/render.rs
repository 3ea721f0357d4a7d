//! Output of a verify run: the grouped terminal table and JUnit XML (JSON is the serde form of
//! [`Report`]).

use std::fmt::Write;

use crate::gather::Verified;
use crate::model::{Group, Report, Status};

/// The terminal view of a run: what was checked against what, then [`table`].
pub fn terminal(v: &Verified) -> String {
    let list = |s: &cpuset::CpuSet| if s.is_empty() { "-".to_string() } else { s.to_list() };
    let mut out = format!(
        "lowlat verify: {} against plan {:?} (isolated {}, housekeeping {}){}\n\n",
        v.source,
        v.plan.name,
        list(&v.plan.isolated),
        list(&v.plan.reserved),
        if v.live { "" } else { "; live-only checks are n.a." }
    );
    if v.plan.isolated.is_empty() {
        out.push_str("note: the plan isolates no CPU, so most checks have nothing to check; make one with `lowlat plan -o plan.yaml` and pass --plan\n\n");
    }
    out.push_str(&table(&v.report));
    out
}

/// The grouped table: one line per check, evidence indented below, fix after `→`.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    for g in Group::ALL {
        let checks: Vec<_> = report.checks.iter().filter(|c| c.group == g).collect();
        if checks.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}", g.as_str());
        for c in checks {
            let first = c.evidence.first().map(String::as_str).unwrap_or("");
            let _ = writeln!(out, "  {:<16} {:<30} {first}", c.status.as_str(), c.id);
            for e in c.evidence.iter().skip(1) {
                let _ = writeln!(out, "  {:<16} {:<30}   {e}", "", "");
            }
            if let Some(f) = &c.fix {
                let _ = writeln!(out, "  {:<16} {:<30} → {f}", "", "");
            }
        }
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "\n{} pass, {} fail, {} warn, {} expected residue, {} pending reboot, {} n.a.",
        s.pass, s.fail, s.warn, s.expected_residue, s.pending_reboot, s.not_applicable
    );
    out
}

/// Where escaped text goes: element content, or an attribute value (whose tabs and line breaks a
/// parser would turn into spaces unless they are character references).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Xml {
    Text,
    Attr,
}

/// Text from a host or a file made safe for XML 1.0: the markup characters become entities, and
/// characters XML 1.0 forbids even as references (C0 controls other than tab, newline and
/// carriage return; U+FFFE, U+FFFF) become a visible `\xNN` / `\u{NNNN}`. A Rust string cannot
/// hold a lone surrogate; bytes that were one arrive here as U+FFFD, which XML allows.
fn esc(s: &str, to: Xml) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' if to == Xml::Attr => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            '\t' | '\n' => out.push(c),
            '\0'..='\x1f' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            _ => out.push(c),
        }
    }
    out
}

/// JUnit XML: one testcase per check (classname = group); fail → `<failure>`, n.a. and
/// pending-reboot → `<skipped>`, the rest pass with their evidence in `<system-out>`.
pub fn junit(report: &Report) -> String {
    let s = &report.summary;
    let skipped = s.not_applicable + s.pending_reboot;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites><testsuite name=\"lowlat verify\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{skipped}\">",
        report.checks.len(),
        s.fail
    );
    for c in &report.checks {
        let evidence = esc(&c.evidence.join("\n"), Xml::Text);
        let _ = write!(
            out,
            "  <testcase classname=\"{}\" name=\"{}\">",
            esc(c.group.as_str(), Xml::Attr),
            esc(&c.id, Xml::Attr)
        );
        match c.status {
            Status::Fail => {
                let msg =
                    esc(c.evidence.first().map(String::as_str).unwrap_or("failed"), Xml::Attr);
                let fix = c
                    .fix
                    .as_deref()
                    .map(|f| format!("\nfix: {}", esc(f, Xml::Text)))
                    .unwrap_or_default();
                let _ = write!(out, "<failure message=\"{msg}\">{evidence}{fix}</failure>");
            }
            Status::NotApplicable | Status::PendingReboot => {
                let _ = write!(out, "<skipped message=\"{}\"/>", c.status.as_str());
            }
            Status::Pass | Status::Warn | Status::ExpectedResidue => {
                let _ = write!(out, "<system-out>{}: {evidence}</system-out>", c.status.as_str());
            }
        }
        out.push_str("</testcase>\n");
    }
    out.push_str("</testsuite></testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Check, Group};

    fn hostile(text: &str) -> Report {
        let check = |status| Check {
            id: format!("id {text}"),
            group: Group::ALL[0],
            status,
            evidence: vec![format!("first {text}"), format!("second {text}")],
            fix: Some(format!("fix {text}")),
        };
        Report::new(vec![check(Status::Fail), check(Status::Pass), check(Status::NotApplicable)])
    }

    /// Every C0 control, the markup characters, what a lone surrogate's bytes become, the
    /// noncharacters XML forbids.
    fn nasty() -> String {
        let mut s: String = (0u8..0x20).map(char::from).collect();
        s.push_str("<&\"'>]]>");
        s.push_str(&String::from_utf8_lossy(b"\xed\xa0\x80"));
        s.push_str("\u{fffe}\u{ffff}\u{7f}\u{85}");
        s
    }

    #[test]
    fn junit_is_well_formed_whatever_the_names_hold() {
        let x = junit(&hostile(&nasty()));
        let doc = roxmltree::Document::parse(&x).unwrap_or_else(|e| panic!("{e}\n{x}"));
        let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
        assert_eq!(cases.len(), 3);
        let name = cases[0].attribute("name").unwrap_or_default();
        // Markup survives as text; tab, newline and CR survive in attributes; the rest is visible.
        assert!(name.starts_with("id \\x00\\x01"), "{name:?}");
        assert!(name.contains("\\x08\t\n\\x0b\\x0c\r\\x0e"), "{name:?}");
        assert!(name.contains("<&\"'>]]>\u{fffd}"), "{name:?}");
        assert!(name.contains("\\u{fffe}\\u{ffff}\u{7f}\u{85}"), "{name:?}");
        let failure = cases[0].first_element_child().unwrap_or_else(|| panic!("{x}"));
        assert!(failure.has_tag_name("failure"));
        assert!(failure.attribute("message").is_some_and(|m| m.starts_with("first \\x00")));
        let text = failure.text().unwrap_or_default();
        assert!(text.contains("\nsecond "), "{text:?}");
        assert!(text.contains("\nfix: fix \\x00"), "{text:?}");
    }

    proptest::proptest! {
        #[test]
        fn junit_parses_for_any_text(s in "\\PC*|[\\x00-\\x1f<>&'\"\\u{fffe}\\u{ffff}]*") {
            let x = junit(&hostile(&s));
            proptest::prop_assert!(roxmltree::Document::parse(&x).is_ok(), "{}", x);
        }
    }
}
