//! Durations on the command line and in files. Two kinds, each with one meaning for a bare
//! number, as cyclictest has them (`-D 60` is a minute, `-i 1000` is a millisecond):
//!
//! - a **span** (how long to run or wait: `--duration`, `--window`, `--every`): `10s`, `10m`,
//!   `12h`, `1d`, `500ms`, `1h30m`; a bare number is **seconds**;
//! - a **latency** (an interval or threshold measured in the µs range: `--interval`,
//!   `--threshold`, `--breach`): `100us`, `100µs`, `1.5ms`, `250ns`; a bare number is
//!   **microseconds**.
//!
//! Both accept fractions (`1.5ms`) and compound forms (`1h30m`, via `humantime`).

use std::time::Duration;

/// A duration that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not a duration: {why} (examples: {examples})")]
pub struct Error {
    /// The text as given.
    pub value: String,
    /// What is wrong with it.
    pub why: String,
    /// Valid examples of this kind of duration.
    pub examples: &'static str,
}

/// What a bare number means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bare {
    Seconds,
    Micros,
}

const SPAN_EXAMPLES: &str = "30s, 10m, 12h, 500ms, 1h30m; a bare number is seconds";
const LATENCY_EXAMPLES: &str = "100us, 1.5ms, 250ns; a bare number is microseconds";

/// Parse a span (run length); a bare number is seconds. Zero is allowed (`--window 0`).
pub fn parse_span(s: &str) -> Result<Duration, Error> {
    parse(s, Bare::Seconds, SPAN_EXAMPLES)
}

/// Parse a span that must be longer than zero.
pub fn parse_positive_span(s: &str) -> Result<Duration, Error> {
    let d = parse_span(s)?;
    if d.is_zero() {
        return Err(err(s, "it must be longer than zero", SPAN_EXAMPLES));
    }
    Ok(d)
}

/// Parse a latency (interval, threshold); a bare number is microseconds.
pub fn parse_latency(s: &str) -> Result<Duration, Error> {
    parse(s, Bare::Micros, LATENCY_EXAMPLES)
}

fn err(s: &str, why: &str, examples: &'static str) -> Error {
    Error { value: s.to_string(), why: why.to_string(), examples }
}

fn unit_secs(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" | "nsec" => 1e-9,
        "us" | "µs" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "s" | "sec" | "secs" => 1.0,
        "m" | "min" | "mins" => 60.0,
        "h" | "hr" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86400.0,
        _ => return None,
    })
}

fn parse(s: &str, bare: Bare, examples: &'static str) -> Result<Duration, Error> {
    let t = s.trim();
    if t.is_empty() {
        return Err(err(s, "it is empty", examples));
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    // One number with one unit (fractions allowed): `1.5ms`, `10s`, `5`.
    if let (Ok(n), Some(mult)) = (
        num.parse::<f64>(),
        match unit.trim() {
            "" => Some(match bare {
                Bare::Seconds => 1.0,
                Bare::Micros => 1e-6,
            }),
            u => unit_secs(u),
        },
    ) {
        let secs = n * mult;
        if !(0.0..=1e12).contains(&secs) {
            return Err(err(s, "it is out of range", examples));
        }
        return Ok(Duration::from_nanos((secs * 1e9).round() as u64));
    }
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(s, "expected a number followed by a unit", examples));
    }
    // Compound forms: `1h30m`, `2m 10s`.
    humantime::parse_duration(&t.replace('µ', "u")).map_err(|e| err(s, &e.to_string(), examples))
}

/// A duration for people, in the form the parsers accept: `30s`, `1m 30s`, `250ms`, `50us`.
pub fn format(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans() {
        assert_eq!(parse_span("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_span("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_span("12h"), Ok(Duration::from_secs(43200)));
        assert_eq!(parse_span("1d"), Ok(Duration::from_secs(86400)));
        assert_eq!(parse_span("5"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_span("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_span("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_span("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_span("0"), Ok(Duration::ZERO));
        assert!(parse_positive_span("0s").is_err());
        assert!(parse_span("10x").is_err());
        assert!(parse_span("soon").is_err());
        assert!(parse_span("").is_err());
        assert!(parse_span("-1s").is_err());
        assert!(parse_span("1e400s").is_err());
    }

    #[test]
    fn latencies() {
        assert_eq!(parse_latency("1000"), Ok(Duration::from_micros(1000)));
        assert_eq!(parse_latency("200us"), Ok(Duration::from_micros(200)));
        assert_eq!(parse_latency("50µs"), Ok(Duration::from_micros(50)));
        assert_eq!(parse_latency("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(parse_latency("1.5ms"), Ok(Duration::from_micros(1500)));
        assert_eq!(parse_latency("500ns"), Ok(Duration::from_nanos(500)));
        assert_eq!(parse_latency("2s"), Ok(Duration::from_secs(2)));
    }

    #[test]
    fn errors_say_what_and_how() {
        let e = parse_span("10x").unwrap_err().to_string();
        assert!(e.contains("\"10x\"") && e.contains("12h"), "{e}");
        let e = parse_latency("abc").unwrap_err().to_string();
        assert!(e.contains("microseconds"), "{e}");
    }

    #[test]
    fn format_round_trips() {
        for d in [Duration::from_secs(90), Duration::from_millis(250), Duration::from_micros(50)] {
            assert_eq!(parse_span(&format(d)), Ok(d));
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in ".{0,24}") {
            let _ = parse_span(&s);
            let _ = parse_latency(&s);
        }
    }
}
