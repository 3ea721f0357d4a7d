//! RFC 3339 UTC timestamps (through `humantime`).

use std::time::SystemTime;

/// `2026-11-22T02:51:58Z` (whole seconds): journals, result files.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// `2026-11-22T02:51:58.123Z` (milliseconds): per-second series, events.
pub fn rfc3339_millis(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// [`rfc3339`] of now.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// `HH:MM:SS` (UTC), for live progress lines.
pub fn hms(t: SystemTime) -> String {
    rfc3339(t).get(11..19).unwrap_or("").to_string()
}

/// Parse an RFC 3339 timestamp (as written by [`rfc3339`] or [`rfc3339_millis`]).
pub fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(s.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn shapes() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_315_918_123);
        assert_eq!(rfc3339(t), "2026-11-22T02:51:58Z");
        assert_eq!(rfc3339_millis(t), "2026-11-22T02:51:58.123Z");
        assert_eq!(hms(t), "02:51:58");
        assert_eq!(
            parse_rfc3339("2026-11-22T02:51:58Z"),
            Some(UNIX_EPOCH + Duration::from_secs(1_795_315_918))
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
    }
}
