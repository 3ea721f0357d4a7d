//! Fuzz the `/proc/interrupts` / `/proc/softirqs` parser: arbitrary text never panics, and a
//! parsed table formats back to text that parses to the same table when no line was rejected.
#![no_main]

use host::parse::interrupts;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (table, issues) = interrupts::parse(&text);
    let _ = interrupts::parse_softirqs(&text);
    if issues.is_empty() && !table.cpus.is_empty() && table.rows.iter().all(|r| r.counts.len() == table.cpus.len()) {
        let (again, _) = interrupts::parse(&interrupts::format(&table));
        assert_eq!(again.rows.len(), table.rows.len());
    }
});
