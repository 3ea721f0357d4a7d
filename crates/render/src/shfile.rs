//! `/etc/default/grub` read the way grub-mkconfig's shell reads it, enough to edit one
//! variable safely: statements split at unquoted newlines (a `\`-newline continues one, a
//! quote spans lines), comments found, and one assignment's value decoded from its quotes.
//! Anything this reader cannot decide (an expansion in the value, a command after it) is
//! refused by the caller with the line and the reason, never guessed.

/// One statement: the bytes `start..end` of the text (`end` at its newline or the end of
/// the text), from line `line` to `last_line` (1-based), its code before any comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Statement {
    pub start: usize,
    pub end: usize,
    pub code_end: usize,
    pub line: usize,
    pub last_line: usize,
}

/// The file cannot be split into statements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LexError {
    pub line: usize,
    pub problem: &'static str,
}

/// The statements of a shell file, and whether it ends inside a `\`-newline continuation
/// (text appended to it would join its last statement).
pub(crate) fn statements(text: &str) -> Result<(Vec<Statement>, bool), LexError> {
    #[derive(PartialEq)]
    enum St {
        Code,
        Single,
        Double,
        Comment,
    }
    let b = text.as_bytes();
    let mut out = vec![];
    let mut st = St::Code;
    let mut line = 1;
    let mut quote_line = 0;
    let mut start = 0;
    let mut start_line = 1;
    let mut code_end = None;
    let mut continued = false;
    // Whether a `#` here starts a comment (it does at the start of a word).
    let mut word_start = true;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match st {
            St::Code => match c {
                b'\\' => {
                    if b.get(i + 1) == Some(&b'\n') {
                        line += 1;
                        continued = i + 2 == b.len();
                    }
                    word_start = false;
                    i += 2;
                    continue;
                }
                b'\'' => {
                    st = St::Single;
                    quote_line = line;
                }
                b'"' => {
                    st = St::Double;
                    quote_line = line;
                }
                b'#' if word_start => {
                    st = St::Comment;
                    code_end = Some(i);
                }
                b'\n' => {
                    out.push(Statement {
                        start,
                        end: i,
                        code_end: code_end.take().unwrap_or(i),
                        line: start_line,
                        last_line: line,
                    });
                    line += 1;
                    start = i + 1;
                    start_line = line;
                }
                _ => {}
            },
            St::Single => match c {
                b'\'' => st = St::Code,
                b'\n' => line += 1,
                _ => {}
            },
            St::Double => match c {
                b'\\' => {
                    if b.get(i + 1) == Some(&b'\n') {
                        line += 1;
                    }
                    i += 2;
                    continue;
                }
                b'"' => st = St::Code,
                b'\n' => line += 1,
                _ => {}
            },
            St::Comment => {
                if c == b'\n' {
                    st = St::Code;
                    continue; // the newline ends the statement in Code
                }
            }
        }
        word_start =
            matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')') && st == St::Code;
        i += 1;
    }
    match st {
        St::Single | St::Double => {
            return Err(LexError {
                line: quote_line,
                problem: "a quote opened here is never closed",
            })
        }
        St::Code | St::Comment => {}
    }
    if start < b.len() {
        out.push(Statement {
            start,
            end: b.len(),
            code_end: code_end.unwrap_or(b.len()),
            line: start_line,
            last_line: line,
        });
    }
    Ok((out, continued))
}

/// Why a shell word's value cannot be known without running the shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WordError {
    /// `$…` or a backquote: the value depends on the shell's state.
    Expansion,
    /// The text ends inside the word (a trailing `\`).
    Unterminated,
}

/// A word starting at `text[at..]`: its value as the shell sees it, where it ends, and
/// whether it was one single-quoted string (`'…'`, written back the same way).
pub(crate) fn word(text: &str, at: usize) -> Result<(String, usize, bool), WordError> {
    let mut value = String::new();
    let mut it = text[at..].char_indices().map(|(i, c)| (i + at, c)).peekable();
    let mut segments = 0;
    let mut single = false;
    while let Some(&(i, c)) = it.peek() {
        match c {
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                return Ok((value, i, segments == 1 && single));
            }
            '\\' => {
                it.next();
                match it.next() {
                    Some((_, '\n')) => {}
                    Some((_, e)) => value.push(e),
                    None => return Err(WordError::Unterminated),
                }
                segments += 2;
                continue;
            }
            '\'' => {
                it.next();
                loop {
                    match it.next() {
                        Some((_, '\'')) => break,
                        Some((_, e)) => value.push(e),
                        None => return Err(WordError::Unterminated),
                    }
                }
                segments += 1;
                single = true;
                continue;
            }
            '"' => {
                it.next();
                loop {
                    match it.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match it.next() {
                            Some((_, '\n')) => {}
                            Some((_, e @ ('$' | '`' | '"' | '\\'))) => value.push(e),
                            Some((_, e)) => {
                                value.push('\\');
                                value.push(e);
                            }
                            None => return Err(WordError::Unterminated),
                        },
                        Some((_, '$' | '`')) => return Err(WordError::Expansion),
                        Some((_, e)) => value.push(e),
                        None => return Err(WordError::Unterminated),
                    }
                }
                segments += 2;
                continue;
            }
            '$' | '`' => return Err(WordError::Expansion),
            c => {
                value.push(c);
                segments += 2;
                it.next();
            }
        }
    }
    Ok((value, text.len(), segments == 1 && single))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_follow_quotes_continuations_and_comments() {
        let t = "A=1 # c \\\nB=\"x\ny\" \\\n  z\n# only 'a comment\nC='q\n'";
        let (s, cont) = statements(t).unwrap();
        assert!(!cont);
        let lines: Vec<(usize, usize, &str)> =
            s.iter().map(|s| (s.line, s.last_line, &t[s.start..s.code_end])).collect();
        assert_eq!(
            lines,
            [(1, 1, "A=1 "), (2, 4, "B=\"x\ny\" \\\n  z"), (5, 5, ""), (6, 7, "C='q\n'")]
        );
        assert_eq!(statements("A='x\n").unwrap_err().line, 1);
        assert!(statements("A=1 \\\n").unwrap().1);
    }

    #[test]
    fn words_decode_like_the_shell() {
        assert_eq!(word("'a b' x", 0), Ok(("a b".into(), 5, true)));
        assert_eq!(word("\"a \\\"b\\\\ \\q\"x; y", 0), Ok(("a \"b\\ \\qx".into(), 13, false)));
        assert_eq!(word("a\\\nb\"c\\\nd\"", 0), Ok(("abcd".into(), 10, false)));
        assert_eq!(word("\"$X y\"", 0), Err(WordError::Expansion));
        assert_eq!(word("'a", 0), Err(WordError::Unterminated));
        assert_eq!(word("", 0), Ok((String::new(), 0, false)));
    }
}
