//! `/proc/cpuinfo`: per-processor model name, topology ids and the flags lowlat cares about.

use super::LineIssue;

/// Flags worth keeping per CPU (the rest are dropped to keep the model small).
pub const FLAGS_OF_INTEREST: &[&str] = &[
    "hypervisor",
    "constant_tsc",
    "nonstop_tsc",
    "tsc_known_freq",
    "tsc_deadline_timer",
    "ht",
    "monitor",
    "waitpkg",
    "rdt_a",
    "cat_l3",
    "avx512f",
    "hwp",
];

/// One `processor : N` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuInfo {
    pub processor: usize,
    pub model_name: Option<String>,
    /// `cpu family` and `model` (x86): the CPU generation.
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub physical_id: Option<i64>,
    pub core_id: Option<i64>,
    /// Flags from [`FLAGS_OF_INTEREST`] present on this CPU.
    pub flags: Vec<String>,
    pub vendor: Option<String>,
}

/// Parse the whole file. Blocks without a valid `processor` line are reported and skipped.
pub fn parse(text: &str) -> (Vec<CpuInfo>, Vec<LineIssue>) {
    let mut out = Vec::new();
    let mut issues = Vec::new();
    let mut cur: Option<CpuInfo> = None;
    for (i, line) in text.lines().enumerate() {
        let ln = i + 1;
        if line.trim().is_empty() {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            continue;
        }
        let Some((k, v)) = line.split_once(':') else {
            super::note(
                &mut issues,
                LineIssue::new(
                    ln,
                    format!("no `key : value` in \"{}\"", util::term::excerpt(line, 60)),
                ),
            );
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if k == "processor" {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            match v.parse() {
                Ok(n) => cur = Some(CpuInfo { processor: n, ..Default::default() }),
                Err(_) => super::note(
                    &mut issues,
                    LineIssue::new(
                        ln,
                        format!(
                            "processor number \"{}\" is not a number",
                            util::term::excerpt(v, 60)
                        ),
                    ),
                ),
            }
            continue;
        }
        // Keys before any valid processor line (arm/s390 preambles, a bad block) are skipped.
        let Some(c) = cur.as_mut() else { continue };
        match k {
            "model name" => c.model_name = Some(v.to_string()),
            "vendor_id" => c.vendor = Some(v.to_string()),
            "cpu family" => c.family = v.parse().ok(),
            "model" => c.model = v.parse().ok(),
            "physical id" => c.physical_id = v.parse().ok(),
            "core id" => c.core_id = v.parse().ok(),
            "flags" => {
                c.flags = v
                    .split_whitespace()
                    .filter(|f| FLAGS_OF_INTEREST.contains(f))
                    .map(str::to_string)
                    .collect()
            }
            _ => {}
        }
    }
    if let Some(c) = cur.take() {
        out.push(c);
    }
    (out, issues)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz\nphysical id\t: 0\ncore id\t\t: 3\nflags\t\t: fpu hypervisor constant_tsc sse\n\nprocessor\t: 1\nmodel name\t: X\nflags\t\t: fpu\n\n";

    #[test]
    fn parses_blocks() {
        let (cpus, issues) = parse(TWO);
        assert!(issues.is_empty());
        assert_eq!(cpus.len(), 2);
        assert_eq!(cpus[0].core_id, Some(3));
        assert_eq!(cpus[0].flags, vec!["hypervisor", "constant_tsc"]);
        assert_eq!(cpus[1].processor, 1);
        assert!(cpus[1].flags.is_empty());
    }

    #[test]
    fn truncated_and_garbage() {
        let cut = &TWO[..60];
        let (cpus, _) = parse(cut);
        assert_eq!(cpus.len(), 1);
        let (cpus, issues) = parse("processor : x\nflags : hypervisor\n\nno colon here\n");
        assert!(cpus.is_empty());
        assert_eq!(issues.len(), 2);
        assert_eq!(issues[0].line, 1);
        assert_eq!(parse("").0.len(), 0);
    }
}
