//! Per-CPU interrupt and softirq counters, the measuring threads' context switches and the
//! tool's own peak memory, read through a `host::Root` (on the main thread, once a second:
//! never in a measuring thread) and parsed by host's parsers (`host::parse`). Here: the
//! per-CPU deltas between two samples that attribution and the tick test report.

use host::parse::{interrupts, kv, task};
use host::{InterruptTable, Root, SoftirqTable};

/// One counter table: row names and, per row, one count per CPU column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// CPU number of each column (from the `CPU0 CPU1 …` header).
    pub cpus: Vec<u32>,
    /// (row name, counts per column).
    pub rows: Vec<(String, Vec<u64>)>,
}

impl Counters {
    /// The rows of `/proc/interrupts` that have a count for every CPU. Numbered IRQs are named
    /// by their device (the last word of the description, e.g. `virtio3-input.0`) with the
    /// number: `24:virtio3-input.0`; named rows keep their name (`LOC`, `RES`, `CAL`, …).
    /// Rows without per-CPU columns (`ERR`, `MIS`) are left out.
    pub fn from_interrupts(t: InterruptTable) -> Self {
        let n = t.cpus.len();
        let rows = t
            .rows
            .into_iter()
            .filter(|r| n > 0 && r.counts.len() == n)
            .map(|r| {
                let numbered = r.id.bytes().all(|b| b.is_ascii_digit());
                let device = [&r.name, &r.chip]
                    .into_iter()
                    .find_map(|t| t.as_deref().and_then(|t| t.split_whitespace().last()));
                let name = match device {
                    Some(dev) if numbered => format!("{}:{dev}", r.id),
                    _ => r.id,
                };
                (name, r.counts)
            })
            .collect();
        Self { cpus: columns(&t.cpus), rows }
    }

    /// The rows of `/proc/softirqs` (`HI`, `TIMER`, `NET_RX`, …).
    pub fn from_softirqs(t: SoftirqTable) -> Self {
        let n = t.cpus.len();
        let rows = t.rows.into_iter().filter(|(_, c)| n > 0 && c.len() == n).collect();
        Self { cpus: columns(&t.cpus), rows }
    }

    /// Count of `row` on `cpu`.
    #[cfg(test)]
    fn get(&self, row: &str, cpu: u32) -> Option<u64> {
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

fn columns(cpus: &[usize]) -> Vec<u32> {
    cpus.iter().map(|&c| c as u32).collect()
}

/// Parse `/proc/interrupts` text into counters.
pub fn parse_interrupts(text: &str) -> Counters {
    Counters::from_interrupts(interrupts::parse(text).0)
}

/// Parse `/proc/softirqs` text into counters.
pub fn parse_softirqs(text: &str) -> Counters {
    Counters::from_softirqs(interrupts::parse_softirqs(text).0)
}

/// Read `/proc/interrupts` (empty when unreadable).
pub fn read_interrupts(root: &Root) -> Counters {
    root.read_string("proc/interrupts").map(|t| parse_interrupts(&t)).unwrap_or_default()
}

/// Read `/proc/softirqs` (empty when unreadable).
pub fn read_softirqs(root: &Root) -> Counters {
    root.read_string("proc/softirqs").map(|t| parse_softirqs(&t)).unwrap_or_default()
}

/// Voluntary + involuntary context switches in a `/proc/…/status` text.
pub fn context_switches_in(status: &str) -> Option<u64> {
    let s = task::status(status);
    match (s.voluntary_ctxt_switches, s.nonvoluntary_ctxt_switches) {
        (None, None) => None,
        (v, n) => Some(v.unwrap_or(0) + n.unwrap_or(0)),
    }
}

/// Context switches of thread `tid` of this process, if readable.
pub fn context_switches(root: &Root, tid: u32) -> Option<u64> {
    let text = root.read_record_string(&format!("proc/self/task/{tid}/status")).ok()?;
    context_switches_in(&text)
}

/// Peak resident set (`VmHWM`) in a `/proc/…/status` text, in bytes.
pub fn peak_rss_in(status: &str) -> Option<u64> {
    kv::kb(status, "VmHWM").map(|kib| kib * 1024)
}

/// Peak resident set of this process so far, in bytes.
pub fn peak_rss_bytes(root: &Root) -> Option<u64> {
    peak_rss_in(&root.read_record_string("proc/self/status").ok()?)
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
        assert_eq!(a.get("0:timer", 0), Some(45));
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

    #[test]
    fn status_fields() {
        let st = "Name:\tlowlat\nVmHWM:\t    4212 kB\nvoluntary_ctxt_switches:\t7\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(context_switches_in(st), Some(10));
        assert_eq!(peak_rss_in(st), Some(4212 * 1024));
        assert_eq!(context_switches_in("Name:\tx\n"), None);
        assert_eq!(peak_rss_in(""), None);
    }

    #[test]
    fn live_reads_go_through_the_root() {
        let root = Root::live();
        assert!(!read_interrupts(&root).rows.is_empty(), "/proc/interrupts has rows");
        assert!(peak_rss_bytes(&root).is_some_and(|b| b > 0));
        assert!(context_switches(&root, util::sched::gettid()).is_some());
    }
}
