//! Who are we: effective root, effective capabilities.

/// `CAP_SYS_NICE`: real-time policies and priorities, affinity of other users' tasks.
pub const CAP_SYS_NICE: u32 = 23;
/// `CAP_SYS_RESOURCE`: negative `oom_score_adj`, raising hard limits.
pub const CAP_SYS_RESOURCE: u32 = 24;
/// `CAP_SYS_ADMIN`.
pub const CAP_SYS_ADMIN: u32 = 21;

/// Is the effective user root?
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// The `CapEff:` mask of a `/proc/<pid>/status` text.
pub fn parse_cap_eff(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    u64::from_str_radix(line.trim(), 16).ok()
}

/// Does a capability mask hold `cap`?
pub fn has_cap(mask: u64, cap: u32) -> bool {
    cap < 64 && mask & (1u64 << cap) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_from_status() {
        let st = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n";
        let m = parse_cap_eff(st).unwrap();
        assert!(has_cap(m, CAP_SYS_NICE));
        assert!(!has_cap(m, CAP_SYS_RESOURCE));
        assert_eq!(parse_cap_eff("Name: x\n"), None);
    }
}
