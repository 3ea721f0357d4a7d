//! Fuzz the cpu-list and mask parsers: never panic, and whatever parses formats back to a
//! string that parses to the same set.
#![no_main]

use cpuset::CpuSet;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    for parsed in [CpuSet::parse_list(s), CpuSet::parse_mask(s), CpuSet::parse_any(s)] {
        if let Ok(set) = parsed {
            let list = set.to_list();
            assert_eq!(CpuSet::parse_list(&list).ok(), Some(set.clone()), "list round trip of {list:?}");
            let width = set.last().map_or(1, |l| l + 1);
            let mask = set.to_mask(width);
            assert_eq!(CpuSet::parse_mask(&mask).ok(), Some(set), "mask round trip of {mask:?}");
        }
    }
});
