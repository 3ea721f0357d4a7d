//! Pure parsers for kernel text files: no I/O, each tested on captured text including
//! malformed and truncated input. A parser returns what it understood plus line-numbered
//! problems; the reader turns problems into [`crate::Warning`]s naming the file.

pub mod cmdline;
pub mod cpuinfo;
pub mod interrupts;
pub mod kv;
pub mod task;

/// A problem on one line of a parsed file (1-based line number).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIssue {
    pub line: usize,
    pub message: String,
}

impl LineIssue {
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        Self { line, message: message.into() }
    }
}

/// The most problems listed per file: a hostile 16 MiB file of bad lines gives a short list,
/// not millions of warnings.
pub const MAX_ISSUES: usize = 50;

/// Add a problem, up to [`MAX_ISSUES`]; past that, one final note says the rest are left out.
pub fn note(issues: &mut Vec<LineIssue>, issue: LineIssue) {
    match issues.len().cmp(&MAX_ISSUES) {
        std::cmp::Ordering::Less => issues.push(issue),
        std::cmp::Ordering::Equal => issues.push(LineIssue::new(
            issue.line,
            format!("more than {MAX_ISSUES} problems; the rest of this file's are not listed"),
        )),
        std::cmp::Ordering::Greater => {}
    }
}

/// The first token of a sysfs value as an integer (`"1\n"` → 1); `None` on garbage.
pub fn int<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.split_whitespace().next()?.parse().ok()
}

/// The selected value of a sysfs choice file: `always [madvise] never` → `madvise`.
pub fn bracketed(s: &str) -> Option<String> {
    let start = s.find('[')?;
    let end = s[start..].find(']')? + start;
    Some(s[start + 1..end].to_string())
}

/// The choices of a sysfs choice file, brackets removed.
pub fn choices(s: &str) -> Vec<String> {
    s.split_whitespace().map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_values() {
        assert_eq!(bracketed("always [madvise] never\n").as_deref(), Some("madvise"));
        assert_eq!(bracketed("[none] mq-deadline").as_deref(), Some("none"));
        assert_eq!(bracketed("none mq-deadline"), None);
        assert_eq!(bracketed("[trunc"), None);
        assert_eq!(choices("[none] mq-deadline"), vec!["none", "mq-deadline"]);
    }

    #[test]
    fn ints() {
        assert_eq!(int::<u64>("42\n"), Some(42));
        assert_eq!(int::<u64>("x"), None);
        assert_eq!(int::<i64>("-1"), Some(-1));
        assert_eq!(int::<u64>(""), None);
    }
}
