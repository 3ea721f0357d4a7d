//! What a plan file must satisfy before anything uses it (issue 11: plans are not trusted).
//! A plan file is the user's input and reaches root-run scripts and host writes, so loading
//! one checks, in order: its nesting (a deeply nested file is refused before the YAML parser
//! sees it), its fields (unknown ones refused with the nearest valid name), its
//! `schema_version`, its sets (disjoint, housekeeping and isolated non-empty, the boot CPU
//! never isolated or offlined), its numbers (huge page counts and nodes bounded) and its names
//! (a safe character set, so no name can carry shell, newline or path syntax). Derived fields
//! are recomputed, not trusted: `kernel_args` comes from the sets and options
//! ([`crate::rules::derived_kernel_args`]). [`Plan::check_host`] adds the checks that need the
//! host the plan is used on.

use cpuset::CpuSet;
use host::Host;

use crate::model::{HugepageRequest, KernelArg, Plan, RuntimeItem, SCHEMA_VERSION};

/// The deepest `[`/`{` nesting a plan file may have (a plan written by lowlat has none
/// deeper than 1); the YAML parser is slow on deep flow nesting, so this is checked first.
pub const MAX_FLOW_DEPTH: usize = 16;

/// The most huge pages of one size a plan may ask for (2^32: far above any machine's memory
/// in 1G or 2M pages, far below an overflow).
pub const MAX_HUGEPAGE_COUNT: u64 = 1 << 32;

/// The highest NUMA node number (the kernel's `MAX_NUMNODES` with `NODES_SHIFT=10`).
pub const MAX_NUMA_NODE: usize = 1023;

/// One problem with a plan: the field, what is wrong, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub field: String,
    pub problem: String,
    pub fix: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}; {}", self.field, self.problem, self.fix)
    }
}

fn problem(
    field: impl Into<String>,
    problem: impl Into<String>,
    fix: impl Into<String>,
) -> Problem {
    Problem { field: field.into(), problem: problem.into(), fix: fix.into() }
}

/// Refuse text whose flow collections (`[`, `{`) nest deeper than [`MAX_FLOW_DEPTH`], outside
/// quoted scalars and comments. Cheap (one pass), run before the YAML parser.
pub fn check_nesting(text: &str) -> Result<(), String> {
    let mut depth = 0usize;
    for (n, line) in text.lines().enumerate() {
        let mut quote: Option<char> = None;
        let mut prev = ' ';
        for c in line.chars() {
            match (quote, c) {
                (Some('"'), '"') if prev != '\\' => quote = None,
                (Some('\''), '\'') => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') if prev.is_whitespace() || "[{,:".contains(prev) => {
                    quote = Some(c)
                }
                (None, '#') if prev.is_whitespace() => break,
                (None, '[' | '{') => {
                    depth += 1;
                    if depth > MAX_FLOW_DEPTH {
                        return Err(format!(
                            "line {}: `[`/`{{` nested deeper than {MAX_FLOW_DEPTH}; a plan file is a flat YAML mapping",
                            n + 1
                        ));
                    }
                }
                (None, ']' | '}') => depth = depth.saturating_sub(1),
                _ => {}
            }
            prev = c;
        }
    }
    Ok(())
}

/// The name in `names` nearest to `given`, when near enough to be a likely misspelling.
pub fn nearest<'a>(given: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .map(|n| (strsim::jaro_winkler(given, n), n))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (and "unknown variant"), with the
/// nearest valid name added: `did you mean `isolcpus_domain`?`.
pub fn suggest(message: &str) -> String {
    let Some(kind) =
        ["unknown field `", "unknown variant `"].into_iter().find(|k| message.contains(k))
    else {
        return message.to_string();
    };
    let Some((_, rest)) = message.split_once(kind) else { return message.to_string() };
    let Some((given, rest)) = rest.split_once('`') else { return message.to_string() };
    let valid: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    match nearest(given, valid.iter().copied()) {
        Some(n) => format!("{message} (did you mean `{n}`?)"),
        None => message.to_string(),
    }
}

/// A name restricted to `[A-Za-z0-9._-]`, starting with a letter or digit, of at most `max`
/// characters: what plan, host, node and pool names may hold (no shell, path or newline
/// syntax can pass).
pub fn check_name(field: &str, value: &str, max: usize) -> Result<(), Problem> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let bad = value.chars().find(|c| !ok_char(*c));
    let why = if value.is_empty() {
        Some("is empty".to_string())
    } else if value.len() > max {
        Some(format!("is longer than {max} characters"))
    } else if let Some(c) = bad {
        Some(format!("holds {}", util::term::sanitize(&format!("`{c}`"), false)))
    } else if !value.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        Some("does not start with a letter or digit".to_string())
    } else if value.contains("..") {
        Some("holds `..`".to_string())
    } else {
        None
    };
    match why {
        Some(why) => Err(problem(
            field,
            format!("{} {why}", short(value)),
            format!("use letters, digits, `.`, `_` and `-` only (at most {max}), starting with a letter or digit"),
        )),
        None => Ok(()),
    }
}

/// A Kubernetes label key (`[prefix/]name`) and value.
fn check_label(field: &str, (key, value): &(String, String)) -> Result<(), Problem> {
    let (prefix, name) = key.rsplit_once('/').map_or((None, key.as_str()), |(p, n)| (Some(p), n));
    if let Some(p) = prefix {
        check_name(&format!("{field} key prefix"), p, 253)?;
    }
    check_name(&format!("{field} key"), name, 63)?;
    if !value.is_empty() {
        check_name(&format!("{field} value"), value, 63)?;
    }
    Ok(())
}

/// Free text (a reason, a rationale line): one line of printable characters.
fn check_text(field: &str, value: &str, max: usize) -> Result<(), Problem> {
    if value.len() > max {
        return Err(problem(field, format!("longer than {max} bytes"), "shorten it"));
    }
    if value.chars().any(char::is_control) {
        return Err(problem(
            field,
            format!("{} holds a control character (newline, tab, escape …)", short(value)),
            "keep it to one line of printable text",
        ));
    }
    Ok(())
}

/// A value written to a kernel file or a kernel argument: printable, no space, quote,
/// backslash, `$`, backquote or `;`.
fn check_value(field: &str, value: &str, max: usize) -> Result<(), Problem> {
    let bad = value.chars().find(|c| {
        c.is_control()
            || c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '\\' | '$' | '`' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '#'
            )
    });
    if value.len() > max {
        return Err(problem(field, format!("longer than {max} bytes"), "shorten it"));
    }
    match bad {
        Some(c) => Err(problem(
            field,
            format!("{} holds {}", short(value), util::term::sanitize(&format!("`{c}`"), false)),
            "a value holds no blanks, quotes, backslashes or shell syntax",
        )),
        None => Ok(()),
    }
}

/// A root-relative sysfs/procfs path or a dotted sysctl name.
fn check_path(field: &str, value: &str) -> Result<(), Problem> {
    let ok_char = |c: char| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | ',' | '+' | '@')
    };
    let why = if value.is_empty() || value.len() > 256 {
        Some("is empty or longer than 256 bytes")
    } else if value.starts_with('/') {
        Some("is absolute (paths are relative to the root: sys/…, proc/…)")
    } else if value.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        Some("has an empty, `.` or `..` component")
    } else if !value.chars().all(ok_char) {
        Some("holds characters outside letters, digits and `._-/:,+@`")
    } else {
        None
    };
    match why {
        Some(why) => Err(problem(
            field,
            format!("{} {why}", short(value)),
            "re-create the plan with `lowlat plan`",
        )),
        None => Ok(()),
    }
}

/// At most 60 characters of `value`, escaped for a terminal and quoted.
fn short(value: &str) -> String {
    let cut: String = value.chars().take(60).collect();
    let more = if cut.len() < value.len() { "…" } else { "" };
    format!("`{}{more}`", util::term::sanitize(&cut, false))
}

fn check_hugepages(pages: &[HugepageRequest]) -> Result<(), Problem> {
    for (i, p) in pages.iter().enumerate() {
        let field = format!("options.hugepages[{i}]");
        if crate::rules::size_kb(&p.size).is_none()
            || !p.size.chars().all(|c| c.is_ascii_alphanumeric())
        {
            return Err(problem(
                format!("{field}.size"),
                format!("{} is not a page size", short(&p.size)),
                "write 2M, 1G or 64k",
            ));
        }
        if p.count > MAX_HUGEPAGE_COUNT {
            return Err(problem(
                format!("{field}.count"),
                format!("{} pages is more than any machine holds", p.count),
                format!("ask for at most {MAX_HUGEPAGE_COUNT}"),
            ));
        }
        if let Some(n) = p.node.filter(|n| *n > MAX_NUMA_NODE) {
            return Err(problem(
                format!("{field}.node"),
                format!("NUMA node {n} is above the kernel's limit ({MAX_NUMA_NODE})"),
                "name a node the host has (`lowlat inspect` lists them)",
            ));
        }
    }
    Ok(())
}

fn check_sets(plan: &Plan) -> Result<(), Problem> {
    if plan.reserved.is_empty() {
        return Err(problem(
            "reserved",
            "no housekeeping CPUs: the kernel, IRQs and every service need at least one",
            "list housekeeping CPUs (CPU 0's core at least), or re-create the plan with `lowlat plan`",
        ));
    }
    if plan.isolated.is_empty() {
        return Err(problem(
            "isolated",
            "no isolated CPUs: the plan would isolate nothing",
            "list the CPUs for the latency-critical work, or re-create the plan with `lowlat plan`",
        ));
    }
    let sets: [(&str, &CpuSet); 4] = [
        ("reserved", &plan.reserved),
        ("isolated", &plan.isolated),
        ("offlined", &plan.offlined),
        ("smt_disabled", &plan.smt_disabled),
    ];
    for (i, (a, sa)) in sets.iter().enumerate() {
        for (b, sb) in &sets[i + 1..] {
            let both = sa.intersection(sb);
            if !both.is_empty() {
                return Err(problem(
                    format!("{a}/{b}"),
                    format!("CPUs {both} are in both"),
                    "give each CPU one role",
                ));
            }
        }
    }
    for (field, set) in [("isolated", &plan.isolated), ("offlined", &plan.offlined)] {
        if set.contains(0) {
            return Err(problem(
                field,
                "CPU 0, the boot CPU, keeps timekeeping and boot-time kernel threads",
                "keep CPU 0 (and its SMT siblings) in reserved",
            ));
        }
    }
    Ok(())
}

fn check_runtime(i: usize, item: &RuntimeItem) -> Result<(), Problem> {
    let field = format!("runtime[{i}]");
    let (reason, cpus) = match item {
        RuntimeItem::IrqAffinity { cpus, reason }
        | RuntimeItem::WorkqueueMask { cpus, reason }
        | RuntimeItem::KthreadAffinity { cpus, reason }
        | RuntimeItem::IdleLimit { cpus, reason, .. } => (reason, Some(cpus)),
        RuntimeItem::Sysctl { name, value, reason } => {
            check_path(&format!("{field}.name"), name)?;
            check_value(&format!("{field}.value"), value, 4096)?;
            (reason, None)
        }
        RuntimeItem::File { path, value, reason } => {
            check_path(&format!("{field}.path"), path)?;
            check_value(&format!("{field}.value"), value, 4096)?;
            (reason, None)
        }
        RuntimeItem::Governor { cpus, governor, reason } => {
            check_name(&format!("{field}.governor"), governor, 32)?;
            (reason, Some(cpus))
        }
        RuntimeItem::EnergyPerfBias { cpus, value, reason } => {
            check_name(&format!("{field}.value"), value, 32)?;
            (reason, Some(cpus))
        }
    };
    check_text(&format!("{field}.reason"), reason, 4096)?;
    if cpus.is_some_and(CpuSet::is_empty) {
        return Err(problem(
            format!("{field}.cpus"),
            "the CPU set is empty",
            "list the CPUs it applies to",
        ));
    }
    Ok(())
}

fn check_kernel_arg(i: usize, a: &KernelArg) -> Result<(), Problem> {
    let field = format!("kernel_args[{i}]");
    check_name(&format!("{field}.key"), &a.key, 64)?;
    if let Some(v) = &a.value {
        check_value(&format!("{field}.value"), v, 64 * 1024)?;
    }
    check_text(&format!("{field}.reason"), &a.reason, 4096)
}

impl Plan {
    /// Every rule a plan file must satisfy on its own (without a host). A plan `lowlat plan`
    /// made always passes.
    pub fn validate(&self) -> Result<(), Problem> {
        if self.schema_version == 0 || self.schema_version > SCHEMA_VERSION {
            return Err(problem(
                "schema_version",
                format!(
                    "{} is not a plan schema this lowlat reads (1 to {SCHEMA_VERSION})",
                    self.schema_version
                ),
                "re-create the plan with `lowlat plan`",
            ));
        }
        check_name("name", &self.name, 63)?;
        if let Some(h) = &self.host {
            check_name("host", h, 253)?;
        }
        check_sets(self)?;
        let o = &self.options;
        check_hugepages(&o.hugepages)?;
        if let Some(m) = &o.mcp_name {
            check_name("options.mcp_name", m, 253)?;
        }
        if let Some(d) = &o.near_device {
            let plain: String = d.chars().map(|c| if c == ':' { '-' } else { c }).collect();
            check_name("options.near_device", &plain, 64)?;
        }
        if let Some(l) = &o.node_selector {
            check_label("options.node_selector", l)?;
        }
        if let Some(l) = &o.mcp_selector {
            check_label("options.mcp_selector", l)?;
        }
        for (i, a) in self.kernel_args.iter().enumerate() {
            check_kernel_arg(i, a)?;
        }
        for (i, r) in self.runtime.iter().enumerate() {
            check_runtime(i, r)?;
        }
        for (i, r) in self.rationale.iter().enumerate() {
            check_text(&format!("rationale[{i}]"), r, 4096)?;
        }
        Ok(())
    }

    /// The checks that need the host the plan is used on: every CPU the plan names exists
    /// there (present, or online/offline when presence is unknown), and every huge page node
    /// is one of its NUMA nodes. A host model that knows no CPUs (or no nodes) skips that check.
    pub fn check_host(&self, host: &Host) -> Result<(), crate::PlanError> {
        let known =
            host.cpus.present.clone().or_else(|| host.cpus.possible.clone()).unwrap_or_else(|| {
                let mut s = host.online_cpus();
                if let Some(off) = &host.cpus.offline {
                    s = s.union(off);
                }
                s.union(&host.topology.cpus.iter().map(|c| c.cpu).collect())
            });
        let name = host.hostname.clone().or_else(|| host.source.node.clone());
        let on = name.map(|n| format!(" {}", util::term::sanitize(&n, false))).unwrap_or_default();
        if !known.is_empty() {
            for (field, set) in [
                ("reserved", &self.reserved),
                ("isolated", &self.isolated),
                ("offlined", &self.offlined),
                ("smt_disabled", &self.smt_disabled),
            ] {
                let missing = set.difference(&known);
                if !missing.is_empty() {
                    return Err(crate::PlanError::invalid(
                        format!("plan {field} names CPUs {missing} that the host{on} does not have (its CPUs: {known})"),
                        "use a plan made for this host (`lowlat plan` on it, or on its snapshot)",
                    ));
                }
            }
        }
        if !host.numa_nodes.is_empty() {
            for p in &self.options.hugepages {
                if let Some(n) = p.node.filter(|n| !host.numa_nodes.iter().any(|x| x.id == *n)) {
                    let ids: Vec<String> =
                        host.numa_nodes.iter().map(|x| x.id.to_string()).collect();
                    return Err(crate::PlanError::invalid(
                        format!(
                            "plan huge pages {}:{}:{n}: the host{on} has no NUMA node {n}",
                            p.size, p.count
                        ),
                        format!("use one of the nodes {}", ids.join(", ")),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_bounded_outside_quotes() {
        assert!(check_nesting("a: [1, [2, {b: 3}]]\n").is_ok());
        let deep = format!("a: {}{}\n", "[".repeat(100), "]".repeat(100));
        assert!(check_nesting(&deep).unwrap_err().contains("line 1"));
        let quoted = format!(
            "a: '{}'\nb: \"{}\"\n# {}\n",
            "[".repeat(100),
            "{".repeat(100),
            "[".repeat(100)
        );
        assert!(check_nesting(&quoted).is_ok());
    }

    #[test]
    fn suggestions_name_the_nearest_field() {
        let m = "options: unknown field `isolcpus_domian`, expected one of `style`, `isolcpus_domain`, `power` at line 3";
        assert!(suggest(m).ends_with("(did you mean `isolcpus_domain`?)"), "{}", suggest(m));
        let m = "unknown field `zzz`, expected one of `style`, `power`";
        assert_eq!(suggest(m), m);
        assert_eq!(suggest("other"), "other");
    }

    #[test]
    fn names_are_restricted() {
        for ok in ["performance", "worker-cnf", "a.b_c-1", "N1"] {
            assert!(check_name("name", ok, 63).is_ok(), "{ok}");
        }
        for bad in
            ["", "../../x", "x/y", "a b", "n1;touch PWNED;#", "a\nb", "-x", ".x", "a..b", "$(id)"]
        {
            assert!(check_name("name", bad, 63).is_err(), "{bad:?}");
        }
        assert!(check_name("name", &"a".repeat(64), 63).is_err());
        let e = check_name("host", "a\u{1b}[31m", 63).unwrap_err().to_string();
        assert!(!e.contains('\u{1b}'), "{e}");
    }

    #[test]
    fn values_and_paths() {
        assert!(check_value("v", "managed_irq,1-3", 100).is_ok());
        for bad in ["a b", "\"x", "$(x)", "a;b", "`x`", "a\nb"] {
            assert!(check_value("v", bad, 100).is_err(), "{bad:?}");
        }
        assert!(check_path("p", "sys/kernel/mm/transparent_hugepage/enabled").is_ok());
        assert!(check_path("p", "kernel.timer_migration").is_ok());
        for bad in ["/etc/passwd", "sys/../etc", "a//b", "a b", ""] {
            assert!(check_path("p", bad).is_err(), "{bad:?}");
        }
    }

    const PLAN: &str = "schema_version: 1
name: t
host: n1
reserved: '0'
isolated: 1-3
offlined: ''
options:
  style: lowlat
  power: default
  rt_kernel: false
  no_smt: false
  split_reserved_across_numa: false
  topology_policy: null
  per_pod_power_management: false
  hugepages: []
  near_device: null
runtime:
- kind: sysctl
  name: kernel.timer_migration
  value: '0'
  reason: keep timers where they were armed
rationale: []
";

    fn load(text: &str) -> Result<Plan, String> {
        Plan::from_yaml(text, "p.yaml").map_err(|e| e.to_string())
    }

    #[test]
    fn a_plan_file_is_checked_when_read() {
        let p = load(PLAN).unwrap();
        assert!(p.kernel_args.iter().any(|a| a.token() == "nohz_full=1-3"));
        let bad = |from: &str, to: &str, want: &str| {
            assert!(PLAN.contains(from), "{from}");
            let e = load(&PLAN.replacen(from, to, 1)).unwrap_err();
            assert!(e.contains(want), "{from} -> {to}: {e}");
        };
        bad("  near_device: null", "  isolcpus_domian: true", "did you mean `isolcpus_domain`?");
        bad("rationale: []", "rationale: []\nrationales: []", "did you mean `rationale`?");
        bad("kind: sysctl", "kind: sysctll", "did you mean `sysctl`?");
        bad("  reason: keep", "  extra: 1\n  reason: keep", "unknown field `extra`");
        bad("schema_version: 1", "schema_version: 0", "schema_version: 0 is not a plan schema");
        bad("isolated: 1-3", "isolated: ''", "no isolated CPUs");
        bad("reserved: '0'", "reserved: ''", "no housekeeping CPUs");
        bad("isolated: 1-3", "isolated: 0-3", "CPUs 0 are in both");
        let e = load(
            &PLAN
                .replace("reserved: '0'", "reserved: '4'")
                .replace("isolated: 1-3", "isolated: 0-3"),
        );
        assert!(e.unwrap_err().contains("CPU 0, the boot CPU"));
        bad("offlined: ''", "offlined: '3'", "CPUs 3 are in both");
        bad(
            "hugepages: []",
            "hugepages: [{size: 1G, count: 18446744073709551615, node: null}]",
            "more than any machine",
        );
        bad("hugepages: []", "hugepages: [{size: 1G, count: 1, node: 99999}]", "NUMA node 99999");
        bad(
            "hugepages: []",
            "hugepages: [{size: '1G;x', count: 1, node: null}]",
            "not a page size",
        );
        bad("name: t", "name: x/../../ESCAPED", "name: `x/../../ESCAPED` holds `/`");
        bad("host: n1", "host: 'n1;touch PWNED;#'", "host: `n1;touch PWNED;#` holds `;`");
        bad("name: kernel.timer_migration", "name: ../../etc/passwd", "`..` component");
        bad("value: '0'", "value: '0 $(id)'", "holds ` `");
        bad("reason: keep timers where they were armed", "reason: \"a\\nb\"", "control character");
        bad("near_device: null", "near_device: null\n  mcp_name: ../../x", "options.mcp_name");
        bad(
            "near_device: null",
            "near_device: null\n  node_selector: [\"node-role.kubernetes.io/x y\", '']",
            "node_selector key",
        );
        // Stored kernel arguments are not trusted: they are derived from the sets.
        let lying = PLAN.replace(
            "rationale: []",
            "rationale: []\nkernel_args:\n- key: nohz_full\n  value: '9'\n  reason: r",
        );
        let p = load(&lying).unwrap();
        assert!(p.kernel_args.iter().any(|a| a.token() == "nohz_full=1-3"));
        assert!(!p.kernel_args.iter().any(|a| a.token() == "nohz_full=9"));
    }

    fn deeply_nested() -> String {
        format!("schema_version: 1\nname: {}{}\n", "[".repeat(100_000), "]".repeat(100_000))
    }

    #[test]
    fn a_deeply_nested_file_is_refused() {
        let e = load(&deeply_nested()).unwrap_err();
        assert!(e.contains("nested deeper than"), "{e}");
    }

    #[test]
    #[ignore = "timing: a wall-clock bound (CI's timing lane)"]
    fn timing_a_deeply_nested_file_is_refused_at_once() {
        let t = std::time::Instant::now();
        assert!(load(&deeply_nested()).is_err());
        assert!(t.elapsed() < std::time::Duration::from_secs(1), "{:?}", t.elapsed());
    }

    #[test]
    fn host_check_names_missing_cpus_and_nodes() {
        let p = load(PLAN).unwrap();
        let mut host = Host::default();
        assert!(p.check_host(&host).is_ok(), "an unknown host is not checked");
        host.cpus.present = Some(CpuSet::parse_list("0-1").unwrap());
        host.hostname = Some("n1".into());
        let e = p.check_host(&host).unwrap_err().to_string();
        assert!(e.contains("isolated names CPUs 2-3 that the host n1 does not have"), "{e}");
        host.cpus.present = Some(CpuSet::parse_list("0-7").unwrap());
        assert!(p.check_host(&host).is_ok());
        let mut p = p;
        p.options.hugepages = vec![HugepageRequest { size: "1G".into(), count: 1, node: Some(3) }];
        host.numa_nodes = vec![host::NumaNode { id: 0, ..Default::default() }];
        let e = p.check_host(&host).unwrap_err().to_string();
        assert!(e.contains("no NUMA node 3"), "{e}");
    }
}
