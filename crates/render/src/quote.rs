//! Quoting at the sinks: every value that reaches a generated file is quoted for the language
//! that file is read in, whatever was checked where it came from (a plan file is validated
//! when read, but render also takes options and a host's names). One function per language.

/// POSIX shell: one single-quoted word (`'` written as `'\''`). Safe for any text, newlines
/// included: the shell takes it literally.
pub fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Inside a double-quoted shell string (GRUB's `/etc/default/grub` and its drop-ins are
/// sourced by `grub-mkconfig`'s shell): `\`, `"`, `$` and backquotes escaped, newlines and
/// other control characters made spaces (a kernel command line is one line).
pub fn sh_double_inner(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '"' | '$' | '`' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text for a `#` comment line (shell, INI, TuneD, systemd, YAML): one line, control
/// characters shown as escapes, so nothing after a newline becomes a statement.
pub fn comment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A systemd unit-file value (`Description=`): one line, `%` specifiers and `\` escaped.
pub fn systemd(s: &str) -> String {
    comment(s).replace('\\', "\\\\").replace('%', "%%")
}

/// A name used as one path component (a TuneD profile directory): anything but
/// `[A-Za-z0-9._-]` becomes `_`, and a leading `.` too, so it can hold no `/` or `..`.
pub fn path_component(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect();
    if out.starts_with('.') || out.is_empty() {
        out.insert(0, '_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_literal() {
        assert_eq!(sh("a b"), "'a b'");
        assert_eq!(sh("it's"), "'it'\\''s'");
        assert_eq!(sh_double_inner("a \"$(id)\" `x` \\\nb"), "a \\\"\\$(id)\\\" \\`x\\` \\\\ b");
    }

    #[test]
    fn comments_stay_on_one_line() {
        assert_eq!(comment("a\nb\rc"), "a\\nb\\rc");
        assert_eq!(systemd("50% \\ x\ny"), "50%% \\\\ x\\\\ny");
        assert_eq!(path_component("x/../../E"), "x_.._.._E");
        assert_eq!(path_component(".."), "_..");
        assert_eq!(path_component(""), "_");
    }
}
