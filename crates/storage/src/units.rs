//! Command-line units: durations (`500ms`, `10s`, `10m`, `12h`, bare seconds), sizes
//! (`2300`, `4k`, `22m`, `1g`, binary multiples like fio), and RFC 3339 UTC timestamps.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parse a duration; `None` on anything else.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return None,
    };
    let secs = v * mult;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

/// Parse a size in bytes: `2300`, `4k`/`4KiB`, `22m`, `1g`, `1t` (powers of 1024, like fio).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().ok()?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024f64.powi(4),
        _ => return None,
    };
    let b = v * mult;
    (0.0..1.8e19).contains(&b).then_some(b.round() as u64)
}

/// Days since 1970-01-01 → (year, month, day) (Howard Hinnant's civil_from_days).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// RFC 3339 UTC with milliseconds: `2026-11-22T02:51:58.123Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (y, m, day) = civil(secs.div_euclid(86400));
    let sod = secs.rem_euclid(86400);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        d.subsec_millis()
    )
}

/// `HH:MM:SS` (UTC) of a time, for live lines and cliff messages.
pub fn hms(t: SystemTime) -> String {
    rfc3339(t).get(11..19).unwrap_or("").to_string()
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
    fn durations() {
        assert_eq!(parse_duration("10s"), Some(Duration::from_secs(10)));
        assert_eq!(parse_duration("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse_duration("12h"), Some(Duration::from_secs(43200)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5"), Some(Duration::from_millis(1500)));
        for bad in ["", "s", "10x", "-1s", "1..2s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("2300"), Some(2300));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("22m"), Some(22 << 20));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("0.5g"), Some(512 << 20));
        for bad in ["", "k", "12q", "1e3"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn timestamps() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_315_918_123);
        assert_eq!(rfc3339(t), "2026-11-22T02:51:58.123Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(hms(t), "02:51:58");
    }

    #[test]
    fn human_latency() {
        assert_eq!(fmt_ns(412_300), "412 µs");
        assert_eq!(fmt_ns(3_100_000), "3.10 ms");
        assert_eq!(fmt_ns(1_940_000_000), "1.94 s");
    }
}
