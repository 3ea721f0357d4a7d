//! Linux CPU sets: the cpu-list syntax (`0-3,8,10-11`, stride form `0-15:2/4` as the kernel
//! accepts it), the hex mask syntax of `/proc/irq/*/smp_affinity` (comma-separated 32-bit
//! words, most significant first), canonical formatting and set algebra.
//!
//! A [`CpuSet`] holds up to [`MAX_CPUS`] CPUs in a fixed bitmap; parsing never panics and
//! reports the byte position and the offending text on error.

mod parse;
mod selector;

use std::fmt;

pub use parse::ParseError;
pub use selector::{CpuName, CpuSelector};

/// The largest number of CPUs a set can hold (the kernel's `NR_CPUS` ceiling on x86_64).
pub const MAX_CPUS: usize = 8192;
const WORDS: usize = MAX_CPUS / 64;

/// A set of CPU numbers `0..MAX_CPUS`.
///
/// The bitmap holds only the words up to the highest CPU in the set (none when empty), so a
/// set of a 512-CPU host is 64 bytes, not a 1 KiB `MAX_CPUS` bitmap: a big host's model holds
/// one per thread (50 000 on a 512-CPU machine). No trailing word is zero, so equal sets have
/// equal bitmaps (the derived `PartialEq` and `Hash` compare sets).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CpuSet {
    bits: Vec<u64>,
}

impl Default for CpuSet {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuSet {
    /// The empty set.
    pub fn new() -> Self {
        Self { bits: Vec::new() }
    }

    /// Word `i` of the bitmap (zero past its end).
    fn word(&self, i: usize) -> u64 {
        self.bits.get(i).copied().unwrap_or(0)
    }

    /// Drop trailing zero words (the invariant equality relies on).
    fn trim(&mut self) {
        while self.bits.last() == Some(&0) {
            self.bits.pop();
        }
    }

    /// Parse a Linux cpu-list such as `0-3,8,10-11` or `0-31:2/8`. Whitespace around the
    /// list (a trailing newline from sysfs) is ignored; an empty list is the empty set.
    pub fn parse_list(s: &str) -> Result<Self, ParseError> {
        parse::list(s)
    }

    /// Parse a hex mask such as `ff,ffffffff` (as in `/proc/irq/N/smp_affinity`).
    pub fn parse_mask(s: &str) -> Result<Self, ParseError> {
        parse::mask(s)
    }

    /// Parse user input in either form. A hex mask must say so: a `0x` prefix (`0x1f`), or the
    /// kernel's comma-separated 32-bit words (`ff,ffffffff`: every word after the first has 8
    /// hex digits). Anything else is a cpu-list, so `abc` is an error (with a hint to write
    /// `0xabc`), never silently the mask 0xabc.
    pub fn parse_any(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            return parse::mask(hex).map_err(|e| e.shifted(2));
        }
        let hex = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_hexdigit());
        let mut words = t.split(',');
        let kernel_mask = t.contains(',')
            && words.next().is_some_and(|w| hex(w) && w.len() <= 8)
            && words.all(|w| hex(w) && w.len() == 8);
        if kernel_mask {
            return parse::mask(t);
        }
        parse::list(t).map_err(|e| {
            if hex(t) {
                e.with_hint("a hex mask needs the 0x prefix (e.g. 0x1f)")
            } else {
                e
            }
        })
    }

    /// A set holding `0..n`.
    pub fn first_n(n: usize) -> Self {
        let mut s = Self::new();
        for c in 0..n.min(MAX_CPUS) {
            s.insert(c);
        }
        s
    }

    /// Build from CPU numbers; numbers `>= MAX_CPUS` are ignored.
    pub fn from_cpus<I: IntoIterator<Item = usize>>(cpus: I) -> Self {
        let mut s = Self::new();
        for c in cpus {
            s.insert(c);
        }
        s
    }

    /// Add a CPU; returns false (and does nothing) when `cpu >= MAX_CPUS`.
    pub fn insert(&mut self, cpu: usize) -> bool {
        if cpu >= MAX_CPUS {
            return false;
        }
        let w = cpu / 64;
        if w >= self.bits.len() {
            self.bits.resize(w + 1, 0);
        }
        self.bits[w] |= 1 << (cpu % 64);
        true
    }

    /// Remove a CPU.
    pub fn remove(&mut self, cpu: usize) {
        if let Some(w) = self.bits.get_mut(cpu / 64) {
            *w &= !(1 << (cpu % 64));
            self.trim();
        }
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: usize) -> bool {
        self.word(cpu / 64) & (1 << (cpu % 64)) != 0
    }

    /// Number of CPUs in the set.
    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// The lowest CPU in the set.
    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// The highest CPU in the set.
    pub fn last(&self) -> Option<usize> {
        let i = self.bits.len().checked_sub(1)?;
        Some(i * 64 + 63 - self.bits[i].leading_zeros() as usize)
    }

    /// CPUs in ascending order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { set: self, word: 0, cur: self.word(0) }
    }

    /// CPUs in ascending order, collected.
    pub fn to_vec(&self) -> Vec<usize> {
        self.iter().collect()
    }

    fn zip(&self, other: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        let n = self.bits.len().max(other.bits.len());
        let mut out = Self { bits: (0..n).map(|i| f(self.word(i), other.word(i))).collect() };
        out.trim();
        out
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &Self) -> Self {
        self.zip(other, |a, b| a | b)
    }

    /// `self ∩ other`.
    pub fn intersection(&self, other: &Self) -> Self {
        self.zip(other, |a, b| a & b)
    }

    /// `self \ other`.
    pub fn difference(&self, other: &Self) -> Self {
        self.zip(other, |a, b| a & !b)
    }

    /// `self △ other`.
    pub fn symmetric_difference(&self, other: &Self) -> Self {
        self.zip(other, |a, b| a ^ b)
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &Self) -> bool {
        self.bits.iter().enumerate().all(|(i, a)| a & !other.word(i) == 0)
    }

    /// Whether the sets share no CPU.
    pub fn is_disjoint(&self, other: &Self) -> bool {
        self.bits.iter().zip(other.bits.iter()).all(|(a, b)| a & b == 0)
    }

    /// Canonical cpu-list: ascending, ranges of 3+ CPUs as `a-b`, pairs as `a,b`... the
    /// kernel's own `%*pbl` style, where any run of 2+ is written `a-b`.
    pub fn to_list(&self) -> String {
        use std::fmt::Write as _;
        // Runs found a word at a time (a 450-CPU run is a few word scans, not 450 steps):
        // this runs once per thread when a big host's model is written out.
        let mut out = String::new();
        let mut from = 0;
        while let Some(start) = self.next_from(from, true) {
            let end = self.next_from(start, false).unwrap_or(MAX_CPUS) - 1;
            if !out.is_empty() {
                out.push(',');
            }
            // Writing to a String cannot fail.
            let _ =
                if start == end { write!(out, "{start}") } else { write!(out, "{start}-{end}") };
            from = end + 1;
        }
        out
    }

    /// The first CPU at or after `from` that is in the set (`member`), or not in it (below
    /// [`MAX_CPUS`]).
    fn next_from(&self, from: usize, member: bool) -> Option<usize> {
        let pick = |w: u64| if member { w } else { !w };
        // Past the bitmap every word is zero: no member there, every CPU a non-member.
        let end = if member { self.bits.len() } else { WORDS };
        let mut i = from / 64;
        if i >= end {
            return None;
        }
        let mut w = pick(self.word(i)) & (!0u64 << (from % 64));
        loop {
            if w != 0 {
                return Some(i * 64 + w.trailing_zeros() as usize);
            }
            i += 1;
            if i >= end {
                return None;
            }
            w = pick(self.word(i));
        }
    }

    /// Hex mask in the kernel's `%*pb` style: 32-bit words, most significant first, separated
    /// by commas, each word 8 digits except the leading one which is as short as
    /// `nr_words` allows. `width` is the number of CPUs the mask covers (e.g. `nr_cpu_ids`);
    /// the output has `ceil(width / 32)` words (at least one).
    pub fn to_mask(&self, width: usize) -> String {
        let width = width.max(self.last().map_or(1, |l| l + 1));
        let nwords = width.div_ceil(32).max(1);
        let mut parts = Vec::with_capacity(nwords);
        for w in (0..nwords).rev() {
            let word = ((self.word(w / 2) >> ((w % 2) * 32)) & 0xffff_ffff) as u32;
            if w == nwords - 1 {
                // The kernel prints the top word only as wide as the CPUs it covers.
                let top_bits = width - w * 32;
                let digits = top_bits.div_ceil(4).clamp(1, 8);
                parts.push(format!("{word:0digits$x}"));
            } else {
                parts.push(format!("{word:08x}"));
            }
        }
        parts.join(",")
    }
}

/// Iterator over the CPUs of a [`CpuSet`] in ascending order.
#[derive(Debug)]
pub struct Iter<'a> {
    set: &'a CpuSet,
    word: usize,
    cur: u64,
}

impl Iterator for Iter<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.cur != 0 {
                let bit = self.cur.trailing_zeros() as usize;
                self.cur &= self.cur - 1;
                return Some(self.word * 64 + bit);
            }
            self.word += 1;
            if self.word >= self.set.bits.len() {
                return None;
            }
            self.cur = self.set.bits[self.word];
        }
    }
}

impl<'a> IntoIterator for &'a CpuSet {
    type Item = usize;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        Self::from_cpus(iter)
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({})", self.to_list())
    }
}

impl std::str::FromStr for CpuSet {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        Self::parse_any(s)
    }
}

impl PartialOrd for CpuSet {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CpuSet {
    /// Orders by the sorted CPU lists, lexicographically (so `{0,1} < {0,2} < {1}`).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.iter().cmp(other.iter())
    }
}

/// Serialized as the canonical cpu-list string (the JSON contract: `"0-3,8"`).
impl serde::Serialize for CpuSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_list())
    }
}

/// In JSON a CPU set is its canonical cpu-list string (`"0-3,8"`; `""` for the empty set).
impl schemars::JsonSchema for CpuSet {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CpuSet".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A CPU list: comma-separated CPUs and ranges (\"0-3,8\"), \"\" for none.",
            "pattern": "^([0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)?$"
        })
    }
}

impl<'de> serde::Deserialize<'de> for CpuSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CpuSet::parse_list(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
