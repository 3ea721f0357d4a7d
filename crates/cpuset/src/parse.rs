//! Parsers for the cpu-list and hex-mask syntaxes. Pure functions over `&str`; errors carry
//! the byte offset into the original input and the offending token.

use crate::{CpuSet, MAX_CPUS};

/// A cpu-list or mask that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} at position {pos}: `{text}` ({hint})")]
pub struct ParseError {
    /// Byte offset of the offending text in the input.
    pub pos: usize,
    /// The offending text.
    pub text: String,
    /// What is wrong with it.
    pub what: &'static str,
    /// What to write instead.
    pub hint: &'static str,
}

const HINT: &str = "cpu-lists look like `0-3,8,10-11`; masks like `ff,ffffffff` or `0x1f`";

impl ParseError {
    fn new(pos: usize, text: &str, what: &'static str) -> Self {
        let text: String = text.chars().take(40).collect();
        Self { pos, text, what, hint: HINT }
    }

    pub(crate) fn with_hint(mut self, hint: &'static str) -> Self {
        self.hint = hint;
        self
    }

    pub(crate) fn shifted(mut self, by: usize) -> Self {
        self.pos += by;
        self
    }
}

fn number(tok: &str, pos: usize) -> Result<usize, ParseError> {
    if tok.is_empty() {
        return Err(ParseError::new(pos, tok, "missing CPU number"));
    }
    if !tok.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::new(pos, tok, "not a CPU number"));
    }
    match tok.parse::<usize>() {
        Ok(n) if n < MAX_CPUS => Ok(n),
        _ => Err(ParseError::new(pos, tok, "CPU number beyond the 8192-CPU limit")),
    }
}

/// Parse a cpu-list: comma-separated items, each `N`, `A-B` or `A-B:USED/GROUP`.
pub(crate) fn list(input: &str) -> Result<CpuSet, ParseError> {
    let lead = input.len() - input.trim_start().len();
    let body = input.trim();
    let mut set = CpuSet::new();
    if body.is_empty() {
        return Ok(set);
    }
    let mut pos = lead;
    for item in body.split(',') {
        item_into(item, pos, &mut set)?;
        pos += item.len() + 1;
    }
    Ok(set)
}

fn item_into(item: &str, pos: usize, set: &mut CpuSet) -> Result<(), ParseError> {
    if item.is_empty() {
        return Err(ParseError::new(pos, item, "empty item (doubled or trailing comma)"));
    }
    let (range, stride) = match item.split_once(':') {
        Some((r, s)) => (r, Some((s, pos + r.len() + 1))),
        None => (item, None),
    };
    let (a, b) = match range.split_once('-') {
        Some((a, b)) => (number(a, pos)?, number(b, pos + a.len() + 1)?),
        None => {
            if stride.is_some() {
                return Err(ParseError::new(pos, item, "a stride needs a range `A-B:USED/GROUP`"));
            }
            let n = number(range, pos)?;
            (n, n)
        }
    };
    if a > b {
        return Err(ParseError::new(pos, item, "range start is above its end"));
    }
    let (used, group) = match stride {
        None => (1, 1),
        Some((s, spos)) => {
            let Some((u, g)) = s.split_once('/') else {
                return Err(ParseError::new(spos, s, "stride must be `USED/GROUP`"));
            };
            let used = number(u, spos)?;
            let group = number(g, spos + u.len() + 1)?;
            if used == 0 || group == 0 || used > group {
                return Err(ParseError::new(spos, s, "stride needs 0 < USED <= GROUP"));
            }
            (used, group)
        }
    };
    let mut start = a;
    while start <= b {
        for c in start..(start + used).min(b + 1) {
            set.insert(c);
        }
        start += group;
    }
    Ok(())
}

/// Parse a hex mask: comma-separated 32-bit words, most significant first. An optional
/// trailing newline is ignored. Words may be shorter than 8 digits (the leading one usually is).
pub(crate) fn mask(input: &str) -> Result<CpuSet, ParseError> {
    let lead = input.len() - input.trim_start().len();
    let body = input.trim();
    if body.is_empty() {
        return Err(ParseError::new(lead, body, "empty mask"));
    }
    let words: Vec<&str> = body.split(',').collect();
    if words.len() > MAX_CPUS / 32 {
        return Err(ParseError::new(lead, body, "mask wider than 8192 CPUs"));
    }
    let mut set = CpuSet::new();
    let mut pos = lead;
    let n = words.len();
    for (i, w) in words.iter().enumerate() {
        if w.is_empty() || w.len() > 8 || !w.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ParseError::new(pos, w, "not a hex word of 1-8 digits"));
        }
        let val = u32::from_str_radix(w, 16)
            .map_err(|_| ParseError::new(pos, w, "not a hex word of 1-8 digits"))?;
        let base = (n - 1 - i) * 32;
        for bit in 0..32 {
            if val & (1 << bit) != 0 {
                set.insert(base + bit);
            }
        }
        pos += w.len() + 1;
    }
    Ok(set)
}
