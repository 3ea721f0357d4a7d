//! `/proc/interrupts` and `/proc/softirqs`: a CPU header, then rows of per-CPU counts.
//! Numbered rows carry a chip / hw-irq / trigger text and action names; named rows (`LOC`,
//! `RES`, `CAL`, `TLB`, …) a description; `ERR`/`MIS` a single total.

use super::LineIssue;
use crate::model::{InterruptRow, InterruptTable, SoftirqTable};

/// CPU numbers from a `CPU0 CPU1 …` header; `None` if the line is not one.
fn header(line: &str) -> Option<Vec<usize>> {
    let cols: Option<Vec<usize>> =
        line.split_whitespace().map(|w| w.strip_prefix("CPU")?.parse().ok()).collect();
    cols.filter(|c| !c.is_empty())
}

/// Split the text after the counts of a numbered row into (chip, names).
fn chip_and_name(rest: &[&str]) -> (Option<String>, Option<String>) {
    if rest.is_empty() {
        return (None, None);
    }
    let trig = rest
        .iter()
        .rposition(|t| t.ends_with("-edge") || t.ends_with("-level") || t.ends_with("-fasteoi"));
    let split = trig.map_or(1, |i| i + 1).min(rest.len());
    let chip = rest[..split].join(" ");
    let name = rest[split..].join(" ");
    (Some(chip), (!name.is_empty()).then_some(name))
}

/// Parse `/proc/interrupts`.
pub fn parse(text: &str) -> (InterruptTable, Vec<LineIssue>) {
    let mut issues = Vec::new();
    let mut table = InterruptTable::default();
    let mut lines = text.lines().enumerate().peekable();
    match lines.peek().map(|(_, l)| header(l)) {
        Some(Some(cpus)) => {
            table.cpus = cpus;
            lines.next();
        }
        Some(None) => super::note(
            &mut issues,
            LineIssue::new(1, "no `CPU0 CPU1 …` header; columns taken as CPUs 0..n"),
        ),
        None => {
            super::note(&mut issues, LineIssue::new(1, "empty file"));
            return (table, issues);
        }
    }
    let mut ncols = table.cpus.len();
    for (i, line) in lines {
        let ln = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let Some((id, rest)) = line.split_once(':') else {
            super::note(
                &mut issues,
                LineIssue::new(
                    ln,
                    format!("no `ID:` at the start of \"{}\"", util::term::excerpt(line, 60)),
                ),
            );
            continue;
        };
        let id = id.trim();
        if id.is_empty() || id.contains(char::is_whitespace) {
            super::note(
                &mut issues,
                LineIssue::new(ln, format!("bad row id \"{}\"", util::term::excerpt(id, 60))),
            );
            continue;
        }
        let toks: Vec<&str> = rest.split_whitespace().collect();
        if ncols == 0 {
            // No header: every leading number is a column.
            ncols = toks.iter().take_while(|t| t.parse::<u64>().is_ok()).count();
            table.cpus = (0..ncols).collect();
        }
        let mut counts = Vec::with_capacity(ncols);
        for t in toks.iter().take(ncols) {
            match t.parse::<u64>() {
                Ok(n) => counts.push(n),
                Err(_) => break,
            }
        }
        let after = &toks[counts.len()..];
        let numbered = id.bytes().all(|b| b.is_ascii_digit());
        if counts.len() < ncols && id != "ERR" && id != "MIS" {
            super::note(
                &mut issues,
                LineIssue::new(
                    ln,
                    format!("row {id}: {} counts for {ncols} CPUs (truncated?)", counts.len()),
                ),
            );
        }
        let (chip, name) = if numbered {
            chip_and_name(after)
        } else {
            (None, (!after.is_empty()).then(|| after.join(" ")))
        };
        table.rows.push(InterruptRow { id: id.to_string(), counts, chip, name });
    }
    (table, issues)
}

/// Parse `/proc/softirqs` (`HI:`, `TIMER:`, … with per-CPU counts).
pub fn parse_softirqs(text: &str) -> (SoftirqTable, Vec<LineIssue>) {
    let (t, issues) = parse(text);
    let rows = t.rows.into_iter().map(|r| (r.id, r.counts)).collect();
    (SoftirqTable { cpus: t.cpus, rows }, issues)
}

/// Render a table back in the kernel's layout (used by tests and the synthetic generator).
pub fn format(t: &InterruptTable) -> String {
    let mut out = String::from("    ");
    for c in &t.cpus {
        out.push_str(&format!(" {:>10}", format!("CPU{c}")));
    }
    out.push('\n');
    for r in &t.rows {
        out.push_str(&format!("{:>4}:", r.id));
        for n in &r.counts {
            out.push_str(&format!(" {n:>10}"));
        }
        if let Some(c) = &r.chip {
            out.push_str(&format!("  {c}"));
        }
        if let Some(n) = &r.name {
            out.push_str(&format!("   {n}"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const VM: &str = "           CPU0       CPU1       \n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n 31:          0        199 PCI-MSIX-0000:00:01.0   3-edge      virtio0-stats\n  0:         35          0   IO-APIC   2-edge      timer\nNMI:          0          0   Non-maskable interrupts\nLOC:     142000     149050   Local timer interrupts\nRES:      17919      15702   Rescheduling interrupts\nCAL:     101122      80559   Function call interrupts\nTLB:      51512      51727   TLB shootdowns\nERR:          0\nMIS:          0\n";

    #[test]
    fn parses_vm_capture() {
        let (t, issues) = parse(VM);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(t.cpus, vec![0, 1]);
        assert_eq!(t.rows.len(), 10);
        let r = &t.rows[1];
        assert_eq!(r.id, "31");
        assert_eq!(r.counts, vec![0, 199]);
        assert_eq!(r.chip.as_deref(), Some("PCI-MSIX-0000:00:01.0 3-edge"));
        assert_eq!(r.name.as_deref(), Some("virtio0-stats"));
        let loc = t.rows.iter().find(|r| r.id == "LOC").unwrap();
        assert_eq!(loc.counts, vec![142000, 149050]);
        assert_eq!(loc.name.as_deref(), Some("Local timer interrupts"));
        let err = t.rows.iter().find(|r| r.id == "ERR").unwrap();
        assert_eq!(err.counts, vec![0]);
    }

    #[test]
    fn truncated_and_garbage() {
        let cut = &VM[..VM.find("LOC:").unwrap() + 12];
        let (t, issues) = parse(cut);
        assert_eq!(t.rows.last().unwrap().id, "LOC");
        assert_eq!(issues.len(), 1, "{issues:?}");
        let (t, issues) = parse("garbage\n 1: 2 3 x\nno colon\n");
        assert_eq!(t.rows.len(), 1);
        assert_eq!(issues.len(), 3, "{issues:?}");
        let (t, issues) = parse("");
        assert!(t.rows.is_empty());
        assert_eq!(issues.len(), 1);
    }

    #[test]
    fn softirqs() {
        let (t, issues) = parse_softirqs("                    CPU0       CPU1\n          HI:          0          1\n       TIMER:      24427      23344\n");
        assert!(issues.is_empty());
        assert_eq!(t.rows[1], ("TIMER".to_string(), vec![24427, 23344]));
    }

    fn row_strategy(ncols: usize) -> impl Strategy<Value = InterruptRow> {
        (
            prop_oneof![
                (0u32..5000).prop_map(|n| n.to_string()),
                prop::sample::select(vec!["LOC", "RES", "CAL", "TLB", "NMI"])
                    .prop_map(str::to_string)
            ],
            prop::collection::vec(any::<u32>().prop_map(u64::from), ncols),
            "[a-z][a-z0-9:.]{0,12}",
        )
            .prop_map(|(id, counts, name)| {
                let numbered = id.bytes().all(|b| b.is_ascii_digit());
                InterruptRow {
                    chip: numbered.then(|| "IR-PCI-MSI 524288-edge".to_string()),
                    name: Some(name),
                    id,
                    counts,
                }
            })
    }

    proptest! {
        #[test]
        fn format_then_parse_is_identity(
            (ncols, rows) in (1usize..40).prop_flat_map(|n| (Just(n), prop::collection::vec(row_strategy(n), 0..20)))
        ) {
            let t = InterruptTable { cpus: (0..ncols).collect(), rows };
            let (back, issues) = parse(&format(&t));
            prop_assert!(issues.is_empty(), "{:?}", issues);
            prop_assert_eq!(back, t);
        }

        #[test]
        fn never_panics(s in "\\PC{0,400}") {
            let _ = parse(&s);
        }
    }
}
