//! Storage units: sizes (`2300`, `4k`, `22m`, `1g`, binary multiples like fio) and latencies
//! for people (`412 µs`). Durations and timestamps are `util`'s.

/// A size that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: expected a size like 2300, 4k, 22m, 1g")]
pub struct SizeError(pub String);

/// Parse a size in bytes: `2300`, `4k`/`4KiB`, `22m`, `1g`, `1t` (powers of 1024, like fio).
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let err = || SizeError(s.to_string());
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| err())?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024f64.powi(4),
        _ => return Err(err()),
    };
    let b = v * mult;
    (0.0..1.8e19).contains(&b).then_some(b.round() as u64).ok_or_else(err)
}

/// A latency for people: `412 µs`, `3.10 ms`, `1.94 s`.
pub fn fmt_ns(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{} µs", (ns + 500) / 1000)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{:.2} s", ns as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("2300"), Ok(2300));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("22m"), Ok(22 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("0.5g"), Ok(512 << 20));
        for bad in ["", "k", "12q", "1e3", "1e30t"] {
            assert_eq!(parse_size(bad), Err(SizeError(bad.into())), "{bad}");
        }
        assert!(parse_size("4x").unwrap_err().to_string().contains("22m"));
    }

    #[test]
    fn human_latency() {
        assert_eq!(fmt_ns(412_300), "412 µs");
        assert_eq!(fmt_ns(3_100_000), "3.10 ms");
        assert_eq!(fmt_ns(1_940_000_000), "1.94 s");
    }
}
