//! JUnit XML for CI: one writer (the `quick-junit` crate) for every command that judges —
//! `verify --junit` (a test case per check), `check --junit` and `report --strict --junit` (a
//! suite per report section, a case per verdict line), `cluster check --junit` (a suite per
//! node). Every suite carries the host's name, a timestamp and the run time, so the files of a
//! fleet do not collide in a CI dashboard. Untrusted text (host names, evidence) has its
//! control characters made visible first; what XML cannot hold at all is dropped by
//! `quick-junit`'s own filter.

use std::time::{Duration, SystemTime};

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

use crate::model::{Report, Verdict};

/// Where and when.
#[derive(Debug, Clone)]
pub struct Meta {
    /// The host judged (the `hostname` attribute of every suite).
    pub hostname: Option<String>,
    pub timestamp: SystemTime,
    pub time: Option<Duration>,
}

/// One test case: a verdict with its message and details.
#[derive(Debug, Clone)]
pub struct Case {
    /// The group (`boot`, `irq`, the section id).
    pub class: String,
    pub name: String,
    pub verdict: Verdict,
    /// One line: the failure's message.
    pub message: String,
    /// Everything else (evidence, the fix).
    pub detail: String,
}

/// One suite of cases.
#[derive(Debug, Clone)]
pub struct Suite {
    pub name: String,
    /// Overrides [`Meta::hostname`] (a fleet's per-node suites).
    pub hostname: Option<String>,
    pub cases: Vec<Case>,
}

/// Controls as visible escapes (`\u{1b}`), and the two noncharacters XML 1.0 forbids
/// (U+FFFE, U+FFFF) too; tab and newline stay.
fn clean(s: &str) -> String {
    let s = util::term::sanitize(s, true);
    if !s.contains(['\u{fffe}', '\u{ffff}']) {
        return s.into_owned();
    }
    s.chars()
        .map(|c| match c {
            '\u{fffe}' | '\u{ffff}' => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The XML document: `name` for the `<testsuites>`, the suites in order.
pub fn write(name: &str, suites: &[Suite], meta: &Meta) -> String {
    let stamp = chrono::DateTime::<chrono::Utc>::from(meta.timestamp).fixed_offset();
    let mut report = quick_junit::Report::new(clean(name));
    report.set_timestamp(stamp);
    if let Some(t) = meta.time {
        report.set_time(t);
    }
    for s in suites {
        let mut suite = TestSuite::new(clean(&s.name));
        suite.set_timestamp(stamp);
        if let Some(t) = meta.time {
            suite.set_time(t);
        }
        if let Some(h) = s.hostname.as_ref().or(meta.hostname.as_ref()) {
            suite.extra.insert("hostname".into(), clean(h).into());
        }
        for c in &s.cases {
            let status = match c.verdict {
                Verdict::Fail => {
                    let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    st.set_message(clean(&c.message)).set_description(clean(&c.detail));
                    st
                }
                Verdict::Skipped => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(clean(&c.message));
                    st
                }
                Verdict::Info | Verdict::Pass | Verdict::Warn => TestCaseStatus::success(),
            };
            let mut case = TestCase::new(clean(&c.name), status);
            case.set_classname(clean(&c.class));
            if c.verdict != Verdict::Fail {
                let body = if c.detail.is_empty() { &c.message } else { &c.detail };
                case.set_system_out(clean(&format!("{}: {body}", c.verdict.label())));
            }
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    // Serializing owned strings into a Vec cannot fail; the error is kept out of every caller.
    report.to_string().unwrap_or_else(|e| {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- {} -->\n<testsuites/>\n",
            clean(&e.to_string()).replace("--", "- -")
        )
    })
}

/// `verify`'s checks: one case per check, its group as the class. Pending reboot and n.a. are
/// skipped; warnings and expected residue pass with their evidence in the output.
pub fn verify(report: &verify::Report, host: Option<&str>) -> Suite {
    use verify::Status;
    let cases = report
        .checks
        .iter()
        .map(|c| {
            let verdict = match c.status {
                Status::Fail => Verdict::Fail,
                Status::NotApplicable | Status::PendingReboot => Verdict::Skipped,
                Status::Warn => Verdict::Warn,
                Status::Pass | Status::ExpectedResidue => Verdict::Pass,
            };
            let mut detail = c.evidence.join("\n");
            if let Some(f) = &c.fix {
                detail.push_str(&format!("\nfix: {f}"));
            }
            Case {
                class: c.group.as_str().to_string(),
                name: c.id.clone(),
                verdict,
                message: c.evidence.first().cloned().unwrap_or_else(|| c.status.as_str().into()),
                detail,
            }
        })
        .collect();
    let name = match host {
        Some(h) => format!("lowlat verify: {h}"),
        None => "lowlat verify".into(),
    };
    Suite { name, hostname: host.map(str::to_string), cases }
}

/// A report model (`check`, `report --strict`): a suite per section, a case per verdict line
/// (the section's own verdict when it has none).
pub fn sections(model: &Report, host: Option<&str>) -> Vec<Suite> {
    model
        .sections
        .iter()
        .map(|s| {
            let cases = if s.headlines.is_empty() {
                vec![Case {
                    class: s.id.clone(),
                    name: s.title.clone(),
                    verdict: s.verdict,
                    message: s.title.clone(),
                    detail: String::new(),
                }]
            } else {
                s.headlines
                    .iter()
                    .enumerate()
                    .map(|(i, h)| Case {
                        class: s.id.clone(),
                        name: format!("{} #{}", s.title, i + 1),
                        verdict: h.verdict,
                        message: h.text.clone(),
                        detail: String::new(),
                    })
                    .collect()
            };
            let name = match host {
                Some(h) => format!("{}: {}", h, s.title),
                None => s.title.clone(),
            };
            Suite { name, hostname: host.map(str::to_string), cases }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use verify::{Check, Group, Status};

    fn hostile(text: &str) -> verify::Report {
        let check = |status| Check {
            id: format!("id {text}"),
            group: Group::ALL[0],
            status,
            evidence: vec![format!("first {text}"), format!("second {text}")],
            fix: Some(format!("fix {text}")),
        };
        verify::Report::new(vec![
            check(Status::Fail),
            check(Status::Pass),
            check(Status::NotApplicable),
        ])
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

    fn meta() -> Meta {
        Meta {
            hostname: Some(format!("node {}", nasty())),
            timestamp: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
            time: Some(Duration::from_millis(2500)),
        }
    }

    #[test]
    fn well_formed_whatever_the_names_hold() {
        let x = write(&nasty(), &[verify(&hostile(&nasty()), Some(&nasty()))], &meta());
        let doc = roxmltree::Document::parse(&x).unwrap_or_else(|e| panic!("{e}\n{x}"));
        let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
        assert_eq!(cases.len(), 3);
        let name = cases[0].attribute("name").unwrap_or_default();
        // Controls are visible escapes; markup survives as text.
        assert!(name.starts_with("id \\u{0}\\u{1}"), "{name:?}");
        assert!(name.contains("<&\"'>]]>"), "{name:?}");
        let failure = cases[0].first_element_child().unwrap_or_else(|| panic!("{x}"));
        assert!(failure.has_tag_name("failure"));
        assert!(failure.attribute("message").is_some_and(|m| m.starts_with("first \\u{0}")));
        let text = failure.text().unwrap_or_default();
        assert!(text.contains("\nsecond "), "{text:?}");
        assert!(text.contains("\nfix: fix \\u{0}"), "{text:?}");
        assert_eq!(cases[2].first_element_child().map(|n| n.tag_name().name()), Some("skipped"));
    }

    #[test]
    fn every_suite_names_its_host_time_and_counts() {
        let r = hostile("x");
        let x = write(
            "lowlat verify",
            &[verify(&r, Some("worker1"))],
            &Meta {
                hostname: None,
                timestamp: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
                time: Some(Duration::from_millis(2500)),
            },
        );
        let doc = roxmltree::Document::parse(&x).unwrap_or_else(|e| panic!("{e}\n{x}"));
        let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
        assert_eq!(suite.attribute("name"), Some("lowlat verify: worker1"));
        assert_eq!(suite.attribute("hostname"), Some("worker1"));
        assert_eq!(suite.attribute("timestamp"), Some("2027-01-15T08:00:00.000+00:00"));
        assert_eq!(suite.attribute("time"), Some("2.500"));
        assert_eq!(suite.attribute("tests"), Some("3"));
        assert_eq!(suite.attribute("failures"), Some(r.summary.fail.to_string().as_str()));
        assert_eq!(suite.attribute("skipped"), Some("1"));
    }

    proptest::proptest! {
        #[test]
        fn parses_for_any_text(s in "\\PC*|[\\x00-\\x1f<>&'\"\\u{fffe}\\u{ffff}]*") {
            let x = write(&s, &[verify(&hostile(&s), Some(&s))], &meta());
            proptest::prop_assert!(roxmltree::Document::parse(&x).is_ok(), "{}", x);
        }
    }
}
