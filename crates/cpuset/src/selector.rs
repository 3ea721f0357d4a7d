//! A CPU-set argument as users type it: an explicit set, or a name the host resolves.

use std::fmt;
use std::str::FromStr;

use crate::{CpuSet, ParseError};

/// A set of CPUs named by role, resolved against a host (`host::Host::resolve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuName {
    /// Every online CPU (`all` or `online`).
    Online,
    /// The CPUs the kernel isolates (`isolated`: `isolcpus`/`nohz_full`, or the plan's).
    Isolated,
    /// The housekeeping CPUs (`reserved` or `housekeeping`): online and not isolated.
    Reserved,
    /// The `nohz_full` CPUs.
    NohzFull,
}

impl CpuName {
    /// The names users may type, for help texts and errors.
    pub const ALL: &'static str = "isolated, reserved (housekeeping), nohz_full, all (online)";

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "all" | "online" => Self::Online,
            "isolated" => Self::Isolated,
            "reserved" | "housekeeping" => Self::Reserved,
            "nohz_full" | "nohz-full" => Self::NohzFull,
            _ => return None,
        })
    }

    /// The canonical name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Online => "all",
            Self::Isolated => "isolated",
            Self::Reserved => "reserved",
            Self::NohzFull => "nohz_full",
        }
    }
}

/// A CPU-set argument: a cpu-list (`1-3,5`), a hex mask (`0x1f`, `ff,ffffffff`) or a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CpuSelector {
    /// An explicit set.
    Set(CpuSet),
    /// A named set, resolved against a host.
    Named(CpuName),
}

impl FromStr for CpuSelector {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match CpuName::parse(s.trim()) {
            Some(n) => Ok(Self::Named(n)),
            None => CpuSet::parse_any(s).map(Self::Set),
        }
    }
}

impl fmt::Display for CpuSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Set(s) => f.write_str(&s.to_list()),
            Self::Named(n) => f.write_str(n.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sets_and_errors() {
        assert_eq!("isolated".parse::<CpuSelector>(), Ok(CpuSelector::Named(CpuName::Isolated)));
        assert_eq!("all".parse::<CpuSelector>(), Ok(CpuSelector::Named(CpuName::Online)));
        assert_eq!(
            "housekeeping".parse::<CpuSelector>(),
            Ok(CpuSelector::Named(CpuName::Reserved))
        );
        let s: CpuSelector = "1-3,5".parse().unwrap();
        assert_eq!(s.to_string(), "1-3,5");
        assert!("abc".parse::<CpuSelector>().is_err());
        assert!("isolatd".parse::<CpuSelector>().is_err());
    }
}
