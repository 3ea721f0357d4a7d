//! Terminals: whether a stream is one, whether to colour, how wide it is.

use std::io::IsTerminal as _;

/// Which standard stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static STDOUT_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A document (`--junit -`, `--prometheus -`, …) goes to stdout: from now on every human
/// view of this process goes to stderr ([`say`], [`print_view`], [`view_stream`]).
pub fn take_stdout() {
    STDOUT_TAKEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a document took stdout ([`take_stdout`]).
pub fn stdout_taken() -> bool {
    STDOUT_TAKEN.load(std::sync::atomic::Ordering::Relaxed)
}

/// `-q, --quiet` for the whole process: no progress and no human summary (errors, and the
/// artifact a command exists to print, still go out). Set once by the binary.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `-q` was given.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Is the stream a terminal?
pub fn is_tty(stream: Stream) -> bool {
    match stream {
        Stream::Stdout => std::io::stdout().is_terminal(),
        Stream::Stderr => std::io::stderr().is_terminal(),
    }
}

/// Colour on this stream: a terminal, `NO_COLOR` unset or empty, `TERM` not `dumb`.
pub fn color(stream: Stream) -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    is_tty(stream) && !no_color && !dumb
}

/// Width in columns for laying out text on stdout: `COLUMNS` when set, else the terminal's
/// width when stdout is one, else `fallback`; clamped to 40..=400.
pub fn width(fallback: usize) -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .or_else(|| {
            is_tty(Stream::Stdout)
                .then(|| terminal_size::terminal_size_of(std::io::stdout()))
                .flatten()
                .map(|(w, _)| usize::from(w.0))
        })
        .unwrap_or(fallback)
        .clamp(40, 400)
}

/// Make text from a host or a file safe to print on a terminal: control characters (ESC, BEL,
/// C1, CR, …) become visible escapes (`\x1b`), so a hostile CPU model or node name cannot
/// move the cursor, recolour the screen or set the window title. Newlines and tabs are kept
/// when `keep_newlines` is set.
pub fn sanitize(s: &str, keep_newlines: bool) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && !(keep_newlines && (c == '\n' || c == '\t')))
            || ('\u{80}'..='\u{9f}').contains(&c)
            || c == '\u{202e}'
    };
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A short excerpt of untrusted text for a message: [`sanitize`]d, at most `max` characters,
/// cut with `…` and the original length in bytes when longer. Warnings and errors quote this,
/// never a whole line or file, so a 200 MB line cannot become 200 MB of output.
pub fn excerpt(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut cut = false;
    for (n, c) in s.chars().enumerate() {
        if n == max {
            cut = true;
            break;
        }
        out.push(c);
    }
    let mut out = sanitize(&out, false).into_owned();
    if cut {
        out.push_str(&format!("… ({} bytes)", s.len()));
    }
    out
}

/// A writer that passes text through [`sanitize`] line by line (newlines and tabs kept): the
/// sink of the plain-text views (`apply`, `revert`, `verify`, `watch`, `report`), so nothing a
/// host or an input file holds reaches the terminal as a control sequence. Valid JSON passes
/// unchanged (its strings escape control characters already). Bytes that are not UTF-8 are
/// replaced. Partial lines are held until a newline, `flush` or drop.
pub struct Escaping<W: std::io::Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: std::io::Write> Escaping<W> {
    /// Wrap `inner`.
    pub fn new(inner: W) -> Self {
        Self { inner, pending: Vec::new() }
    }

    /// Write the program's own control sequence (`"\r\x1b[K"`: back to the line's start and
    /// erase it), unescaped, after the text written so far. Only for constants: never text
    /// that came from elsewhere.
    pub fn control(&mut self, seq: &'static str) -> std::io::Result<()> {
        let n = self.pending.len();
        self.emit(n)?;
        self.inner.write_all(seq.as_bytes())
    }

    fn emit(&mut self, upto: usize) -> std::io::Result<()> {
        let chunk: Vec<u8> = self.pending.drain(..upto).collect();
        let text = String::from_utf8_lossy(&chunk);
        self.inner.write_all(sanitize(&text, true).as_bytes())
    }
}

impl<W: std::io::Write> std::io::Write for Escaping<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(i) = self.pending.iter().rposition(|&b| b == b'\n') {
            self.emit(i + 1)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let n = self.pending.len();
        self.emit(n)?;
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for Escaping<W> {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

/// Progress or a summary for people, as it is (already escaped): nothing with `-q`, on stderr
/// when a document takes stdout (`to_stderr`), else on stdout.
pub fn say(to_stderr: bool, text: &str) {
    match (quiet(), to_stderr || stdout_taken()) {
        (true, _) => {}
        (false, true) => eprint!("{text}"),
        (false, false) => print!("{text}"),
    }
}

/// Print a plain-text view on stdout through [`Escaping`] (nothing with `-q`): text that came
/// from a host or an input file (process names, paths, reasons) cannot send control sequences
/// to the terminal. Views that colour themselves (`inspect`, `plan`) escape their inputs instead.
pub fn print_view(text: impl std::fmt::Display) -> std::io::Result<()> {
    if quiet() {
        return Ok(());
    }
    use std::io::Write as _;
    let mut out = view_stream(false);
    write!(out, "{text}")?;
    out.flush()
}

/// Where a human view goes whatever `-q` says: stderr when a document takes stdout
/// (`to_stderr`), stdout otherwise; through [`Escaping`], so host text in it (process and
/// cgroup names, paths, commands) cannot send control sequences.
pub fn view_stream(to_stderr: bool) -> Box<dyn std::io::Write> {
    if to_stderr || stdout_taken() {
        Box::new(Escaping::new(std::io::stderr()))
    } else {
        Box::new(Escaping::new(std::io::stdout()))
    }
}

/// [`view_stream`], or nowhere with `-q`.
pub fn human_view(to_stderr: bool) -> Box<dyn std::io::Write> {
    if quiet() {
        Box::new(std::io::sink())
    } else {
        view_stream(to_stderr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_escapes_controls() {
        assert_eq!(sanitize("AMD EPYC", false), "AMD EPYC");
        assert_eq!(sanitize("x\x1b[31mred", false), "x\\u{1b}[31mred");
        assert_eq!(sanitize("a\nb", true), "a\nb");
        assert_eq!(sanitize("a\nb", false), "a\\nb");
        assert_eq!(sanitize("\x1b]0;title\x07", false), "\\u{1b}]0;title\\u{7}");
    }

    #[test]
    fn escaping_writer_escapes_controls_keeps_lines() {
        use std::io::Write as _;
        let mut out = Vec::new();
        {
            let mut w = Escaping::new(&mut out);
            write!(w, "cpu: AMD \x1b[31mred").unwrap();
            writeln!(w, "\x1b]0;t\x07 end").unwrap();
            write!(w, "{{\"a\":\"\\u001b\"}}\ttail").unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "cpu: AMD \\u{1b}[31mred\\u{1b}]0;t\\u{7} end\n{\"a\":\"\\u001b\"}\ttail"
        );
    }

    #[test]
    fn own_control_sequences_pass_host_text_does_not() {
        use std::io::Write as _;
        let mut out = Vec::new();
        {
            let mut w = Escaping::new(&mut out);
            w.control("\r\x1b[K").unwrap();
            write!(w, "1s  cgroup \x1b[2J").unwrap();
            w.control("\r\x1b[K").unwrap();
            write!(w, "\r2s").unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "\r\x1b[K1s  cgroup \\u{1b}[2J\r\x1b[K\\r2s");
    }

    #[test]
    fn excerpt_is_short_and_escaped() {
        assert_eq!(excerpt("abc", 10), "abc");
        assert_eq!(excerpt("\x1b[31mred", 4), "\\u{1b}[31… (8 bytes)");
        let big = "\0".repeat(1 << 20);
        assert!(excerpt(&big, 40).len() < 300);
    }
}
