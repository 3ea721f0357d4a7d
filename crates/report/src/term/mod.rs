//! Terminal helpers shared by the text views: the style to draw with (colour and width, from
//! `util::term`), ANSI styling that vanishes in plain mode, and a column-aligned
//! table writer.

mod table;

pub use table::Table;

use util::term::Stream;

/// How to draw: colour on or off, and the width to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
    pub width: usize,
}

impl Default for Style {
    fn default() -> Self {
        Self::plain(100)
    }
}

/// A text colour / emphasis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    Bold,
    Dim,
    Red,
    Yellow,
    Green,
    Cyan,
    Magenta,
}

impl Paint {
    fn code(self) -> &'static str {
        match self {
            Paint::Bold => "1",
            Paint::Dim => "2",
            Paint::Red => "31",
            Paint::Yellow => "33",
            Paint::Green => "32",
            Paint::Cyan => "36",
            Paint::Magenta => "35",
        }
    }
}

impl Style {
    /// No colour, fixed width (tests, pipes, files).
    pub fn plain(width: usize) -> Self {
        Self { color: false, width }
    }

    /// Follow stdout: colour only on a terminal with `NO_COLOR` unset (and `TERM` not
    /// `dumb`); width from `COLUMNS`, else the terminal, else 100 (`util::term`).
    pub fn detect() -> Self {
        Self { color: util::term::color(Stream::Stdout), width: util::term::width(100) }
    }

    /// `s` painted (plain text in plain mode).
    pub fn paint(&self, p: Paint, s: &str) -> String {
        if self.color && !s.is_empty() {
            format!("\x1b[{}m{s}\x1b[0m", p.code())
        } else {
            s.to_string()
        }
    }

    /// A section heading.
    pub fn heading(&self, s: &str) -> String {
        let line = format!("── {s} ");
        let fill = self.width.min(100).saturating_sub(display_width(&line));
        self.paint(Paint::Bold, &format!("{line}{}", "─".repeat(fill)))
    }
}

/// Printable width of `s`: ANSI escapes skipped, one column per char.
pub fn display_width(s: &str) -> usize {
    let mut w = 0;
    let mut esc = false;
    for c in s.chars() {
        if esc {
            if c == 'm' {
                esc = false;
            }
        } else if c == '\x1b' {
            esc = true;
        } else {
            w += 1;
        }
    }
    w
}

/// Cut `s` (plain text) to `max` columns with an ellipsis.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Wrap words to `width` columns, each line prefixed by `indent`.
pub fn wrap(s: &str, width: usize, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::from(indent);
    for word in s.split_whitespace() {
        if display_width(&cur) > indent.len()
            && display_width(&cur) + 1 + display_width(word) > width
        {
            lines.push(std::mem::replace(&mut cur, String::from(indent)));
        }
        if display_width(&cur) > indent.len() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if display_width(&cur) > indent.len() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_has_no_escapes_and_color_does() {
        let p = Style::plain(80);
        assert_eq!(p.paint(Paint::Red, "x"), "x");
        let c = Style { color: true, width: 80 };
        assert_eq!(c.paint(Paint::Red, "x"), "\x1b[31mx\x1b[0m");
        assert_eq!(display_width(&c.paint(Paint::Bold, "abc")), 3);
    }

    #[test]
    fn wrap_and_truncate() {
        assert_eq!(wrap("a bb ccc dddd", 8, "  "), vec!["  a bb", "  ccc", "  dddd"]);
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("ab", 4), "ab");
    }
}
