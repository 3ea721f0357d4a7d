//! `/proc/cmdline`: tokens (quotes respected, init arguments after `--` dropped) and the
//! isolation-related parameters interpreted as CPU sets.

use cpuset::CpuSet;

use crate::model::{BootArgs, IsolCpus};

/// Split a command line into `(key, value)` tokens as the kernel does: whitespace separates,
/// double quotes group, `--` ends the kernel's part.
pub fn tokens(cmdline: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_quote = false;
    let mut have = false;
    let flush =
        |cur: &mut String, have: &mut bool, out: &mut Vec<(String, Option<String>)>| -> bool {
            if !*have {
                return true;
            }
            *have = false;
            let t = std::mem::take(cur);
            if t == "--" {
                return false;
            }
            match t.split_once('=') {
                Some((k, v)) => out.push((k.to_string(), Some(v.trim_matches('"').to_string()))),
                None => out.push((t, None)),
            }
            true
        };
    for c in cmdline.chars() {
        match c {
            '"' => {
                in_quote = !in_quote;
                have = true;
            }
            c if c.is_whitespace() && !in_quote => {
                if !flush(&mut cur, &mut have, &mut out) {
                    return out;
                }
            }
            c => {
                cur.push(c);
                have = true;
            }
        }
    }
    flush(&mut cur, &mut have, &mut out);
    out
}

/// Parse a cpu-list from the command line; `N` means the last CPU (`nr_cpus - 1`) when known.
pub fn cpu_list(v: &str, nr_cpus: Option<usize>) -> Result<CpuSet, String> {
    match CpuSet::parse_list(v) {
        Ok(s) => Ok(s),
        Err(e) => {
            if let (true, Some(n)) = (v.contains('N'), nr_cpus) {
                let last = n.saturating_sub(1).to_string();
                if let Ok(s) = CpuSet::parse_list(&v.replace('N', &last)) {
                    return Ok(s);
                }
            }
            Err(e.to_string())
        }
    }
}

/// `isolcpus=[flags,]list`: leading alphabetic items are flags.
pub fn isolcpus(v: &str, nr_cpus: Option<usize>) -> Result<IsolCpus, String> {
    let mut flags = Vec::new();
    let mut rest = Vec::new();
    for item in v.split(',') {
        if rest.is_empty() && item.starts_with(|c: char| c.is_ascii_alphabetic()) && item != "N" {
            flags.push(item.to_string());
        } else {
            rest.push(item);
        }
    }
    let cpus = cpu_list(&rest.join(","), nr_cpus)?;
    Ok(IsolCpus { flags, cpus })
}

/// Interpret the command line. `nr_cpus` (when known) resolves `N` in lists.
pub fn parse(cmdline: &str, nr_cpus: Option<usize>) -> BootArgs {
    let mut b = BootArgs { tokens: tokens(cmdline), ..Default::default() };
    let toks = b.tokens.clone();
    for (k, v) in &toks {
        let val = v.as_deref().unwrap_or("");
        let set = |slot: &mut Option<CpuSet>, errors: &mut Vec<(String, String)>| match cpu_list(
            val, nr_cpus,
        ) {
            Ok(s) => *slot = Some(s),
            Err(e) => errors.push((k.clone(), e)),
        };
        match k.as_str() {
            "isolcpus" => match isolcpus(val, nr_cpus) {
                Ok(i) => b.isolcpus = Some(i),
                Err(e) => b.errors.push((k.clone(), e)),
            },
            "nohz" => b.nohz = Some(val.to_string()),
            "nohz_full" => set(&mut b.nohz_full, &mut b.errors),
            "rcu_nocbs" => {
                if v.is_none() {
                    b.rcu_nocbs = Some(CpuSet::new());
                } else {
                    set(&mut b.rcu_nocbs, &mut b.errors)
                }
            }
            "irqaffinity" => set(&mut b.irqaffinity, &mut b.errors),
            "kthread_cpus" => set(&mut b.kthread_cpus, &mut b.errors),
            "systemd.cpu_affinity" => {
                // systemd accepts spaces or commas between items.
                match cpu_list(&val.replace(' ', ","), nr_cpus) {
                    Ok(s) => b.systemd_cpu_affinity = Some(s),
                    Err(e) => b.errors.push((k.clone(), e)),
                }
            }
            "hugepagesz" | "hugepages" | "default_hugepagesz" => {
                b.hugepages.push((k.clone(), val.to_string()))
            }
            _ => {}
        }
    }
    b
}

/// The value of the last `key=` token.
pub fn value<'a>(b: &'a BootArgs, key: &str) -> Option<&'a str> {
    b.tokens.iter().rev().find(|(k, _)| k == key).and_then(|(_, v)| v.as_deref())
}

/// The kernel release named in `BOOT_IMAGE=…/vmlinuz-<release>`, when present.
pub fn release_from_boot_image(b: &BootArgs) -> Option<String> {
    let img = value(b, "BOOT_IMAGE")?;
    let name = img.rsplit('/').next()?;
    name.strip_prefix("vmlinuz-").filter(|r| !r.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKER1: &str =
        "BOOT_IMAGE=(hd0,gpt1)/ostree/rhcos-ade/vmlinuz-4.18.0-193.28.1.rt13.77.el8_2.x86_64 \
        skew_tick=1 nohz=on rcu_nocbs=5-10 isolcpus=managed_irq,5-10 \
        systemd.cpu_affinity=0,1,2,3,4,11,12 default_hugepagesz=1G hugepagesz=2M hugepages=128 \
        nmi_watchdog=0 idle=poll\n";

    #[test]
    fn worker1_cmdline() {
        let b = parse(WORKER1, Some(80));
        let iso = b.isolcpus.clone().unwrap();
        assert_eq!(iso.flags, vec!["managed_irq"]);
        assert_eq!(iso.cpus.to_list(), "5-10");
        assert_eq!(b.rcu_nocbs.as_ref().map(|s| s.to_list()).as_deref(), Some("5-10"));
        assert_eq!(b.nohz.as_deref(), Some("on"));
        assert_eq!(
            b.systemd_cpu_affinity.as_ref().map(|s| s.to_list()).as_deref(),
            Some("0-4,11-12")
        );
        assert_eq!(b.hugepages.len(), 3);
        assert!(b.errors.is_empty());
        assert_eq!(
            release_from_boot_image(&b).as_deref(),
            Some("4.18.0-193.28.1.rt13.77.el8_2.x86_64")
        );
        assert_eq!(value(&b, "idle"), Some("poll"));
    }

    #[test]
    fn quotes_and_double_dash() {
        let t = tokens("a=\"x y\" b -- init=1 c");
        assert_eq!(t, vec![("a".into(), Some("x y".into())), ("b".into(), None)]);
    }

    #[test]
    fn flags_only_and_n() {
        let b = parse("isolcpus=nohz,domain,2-N nohz_full=2-N rcu_nocbs", Some(8));
        let iso = b.isolcpus.unwrap();
        assert_eq!(iso.flags, vec!["nohz", "domain"]);
        assert_eq!(iso.cpus.to_list(), "2-7");
        assert_eq!(b.nohz_full.unwrap().to_list(), "2-7");
        assert_eq!(b.rcu_nocbs.unwrap().to_list(), "");
    }

    #[test]
    fn malformed_values_become_errors() {
        let b = parse("nohz_full=1-x isolcpus=domain,3-x irqaffinity=", None);
        assert_eq!(b.errors.len(), 2, "{:?}", b.errors);
        assert!(b.nohz_full.is_none());
        assert_eq!(b.irqaffinity.map(|s| s.len()), Some(0));
        // Truncated / empty input.
        assert!(parse("", None).tokens.is_empty());
        assert_eq!(tokens("a=\"unterminated").len(), 1);
    }
}
