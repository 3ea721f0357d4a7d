//! Per-CPU interrupt and softirq counters: parsing `/proc/interrupts` and `/proc/softirqs`
//! (separate from reading them, tested on captured text) and the per-CPU deltas between two
//! samples that attribution and the tick test report.

/// One counter table: row names and, per row, one count per CPU column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// CPU number of each column (from the `CPU0 CPU1 …` header).
    pub cpus: Vec<u32>,
    /// (row name, counts per column).
    pub rows: Vec<(String, Vec<u64>)>,
}

impl Counters {
    /// Count of `row` on `cpu`.
    pub fn get(&self, row: &str, cpu: u32) -> Option<u64> {
        let col = self.cpus.iter().position(|c| *c == cpu)?;
        self.rows.iter().find(|(n, _)| n == row).and_then(|(_, v)| v.get(col).copied())
    }

    /// Rows that moved on `cpu` from `before` to `self`: (name, delta), largest first.
    pub fn delta_on(&self, before: &Counters, cpu: u32) -> Vec<(String, u64)> {
        let Some(col) = self.cpus.iter().position(|c| *c == cpu) else { return Vec::new() };
        let Some(bcol) = before.cpus.iter().position(|c| *c == cpu) else { return Vec::new() };
        let mut out: Vec<(String, u64)> = self
            .rows
            .iter()
            .filter_map(|(name, v)| {
                let now = *v.get(col)?;
                let prev = before
                    .rows
                    .iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, b)| b.get(bcol).copied())
                    .unwrap_or(0);
                let d = now.saturating_sub(prev);
                (d > 0).then(|| (name.clone(), d))
            })
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

fn header_cpus(line: &str) -> Vec<u32> {
    line.split_whitespace().filter_map(|t| t.strip_prefix("CPU")?.parse().ok()).collect()
}

/// Parse `/proc/interrupts`. Numbered IRQs are named by their device (the last word of the
/// description, e.g. `virtio3-input.0`) with the number: `24:virtio3-input.0`; named rows
/// keep their name (`LOC`, `RES`, `CAL`, …). Rows without per-CPU columns (`ERR`, `MIS`)
/// are skipped.
pub fn parse_interrupts(text: &str) -> Counters {
    let mut lines = text.lines();
    let cpus = lines.next().map(header_cpus).unwrap_or_default();
    let n = cpus.len();
    let mut rows = Vec::new();
    for line in lines {
        let Some((key, rest)) = line.split_once(':') else { continue };
        let key = key.trim();
        let toks: Vec<&str> = rest.split_whitespace().collect();
        let counts: Vec<u64> = toks.iter().take(n).map_while(|t| t.parse().ok()).collect();
        if counts.len() != n || n == 0 {
            continue;
        }
        let desc = &toks[n..];
        let name = if key.chars().all(|c| c.is_ascii_digit()) {
            match desc.last() {
                Some(dev) => format!("{key}:{dev}"),
                None => key.to_string(),
            }
        } else {
            key.to_string()
        };
        rows.push((name, counts));
    }
    Counters { cpus, rows }
}

/// Parse `/proc/softirqs` (`HI:`, `TIMER:`, `NET_RX:`, …).
pub fn parse_softirqs(text: &str) -> Counters {
    let mut lines = text.lines();
    let cpus = lines.next().map(header_cpus).unwrap_or_default();
    let n = cpus.len();
    let mut rows = Vec::new();
    for line in lines {
        let Some((key, rest)) = line.split_once(':') else { continue };
        let counts: Vec<u64> =
            rest.split_whitespace().take(n).map_while(|t| t.parse().ok()).collect();
        if counts.len() == n && n > 0 {
            rows.push((key.trim().to_string(), counts));
        }
    }
    Counters { cpus, rows }
}

/// Read and parse `/proc/interrupts` (empty when unreadable).
pub fn read_interrupts() -> Counters {
    std::fs::read_to_string("/proc/interrupts").map(|t| parse_interrupts(&t)).unwrap_or_default()
}

/// Read and parse `/proc/softirqs` (empty when unreadable).
pub fn read_softirqs() -> Counters {
    std::fs::read_to_string("/proc/softirqs").map(|t| parse_softirqs(&t)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTR: &str = "           CPU0       CPU1       \n  0:         45          0   IO-APIC   2-edge      timer\n 24:        100        207  PCI-MSI 49152-edge      virtio3-input.0\nNMI:          0          0   Non-maskable interrupts\nLOC:     123456      98765   Local timer interrupts\nRES:         10         20   Rescheduling interrupts\nERR:          0\nMIS:          0\n";

    #[test]
    fn interrupts_rows_and_deltas() {
        let a = parse_interrupts(INTR);
        assert_eq!(a.cpus, vec![0, 1]);
        assert_eq!(a.get("LOC", 1), Some(98765));
        assert_eq!(a.get("24:virtio3-input.0", 1), Some(207));
        assert!(a.get("ERR", 0).is_none());
        let b = parse_interrupts(
            &INTR.replace("98765", "98766").replace("     20   Res", "     22   Res"),
        );
        assert_eq!(b.delta_on(&a, 1), vec![("RES".to_string(), 2), ("LOC".to_string(), 1)]);
        assert!(b.delta_on(&a, 0).is_empty());
        assert!(b.delta_on(&a, 7).is_empty());
    }

    #[test]
    fn softirqs_and_malformed_input() {
        let s = parse_softirqs("                    CPU0       CPU1\n          HI:          1          2\n       TIMER:      100        200\n");
        assert_eq!(s.get("TIMER", 1), Some(200));
        assert_eq!(parse_interrupts(""), Counters::default());
        assert!(parse_interrupts("CPU0\n LOC: x y\n").rows.is_empty());
    }
}
