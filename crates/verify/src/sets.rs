//! Small helpers shared by the checks: the plan's housekeeping/isolated sets, kernel-argument
//! value comparison as sets, and short evidence lists.

use cpuset::CpuSet;
use host::Host;
use plan::Plan;

/// Housekeeping (HK) and isolated (ISO) CPUs of a plan on a host.
#[derive(Debug, Clone)]
pub struct Sets {
    pub hk: CpuSet,
    pub iso: CpuSet,
}

impl Sets {
    /// HK is the plan's reserved set, or online − isolated − offlined when that is empty.
    pub fn of(plan: &Plan, host: &Host) -> Self {
        let hk = if plan.reserved.is_empty() {
            host.online_cpus().difference(&plan.isolated).difference(&plan.offlined)
        } else {
            plan.reserved.clone()
        };
        Sets { hk, iso: plan.isolated.clone() }
    }
}

/// Kernel-argument values compared as sets: `apply` and `verify` share one rule.
pub use tune::changes::{flags_and_cpus, same_arg};

/// `key=value` or `key`.
pub fn token(key: &str, value: Option<&str>) -> String {
    value.map_or_else(|| key.to_string(), |v| format!("{key}={v}"))
}

/// The first `n` lines, then "… and K more".
pub fn capped(lines: Vec<String>, n: usize) -> Vec<String> {
    let total = lines.len();
    let mut out: Vec<String> = lines.into_iter().take(n).collect();
    if total > n {
        out.push(format!("… and {} more", total - n));
    }
    out
}

/// Split a command line into `(key, value)` tokens: the host reader's tokenizer, so
/// `/proc/cmdline` and boot-loader entries are read by the same rules.
pub use host::parse::cmdline::tokens;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_compare_as_sets() {
        assert!(same_arg(Some("managed_irq,domain,2-4"), Some("domain,managed_irq,2,3,4")));
        assert!(!same_arg(Some("managed_irq,2-4"), Some("domain,2-4")));
        assert!(same_arg(Some("1"), Some("1")));
        assert!(!same_arg(Some("on"), None));
        assert_eq!(tokens(r#"a=1 b "c=x y" d"#).len(), 4);
        assert_eq!(capped((0..5).map(|i| i.to_string()).collect(), 2).len(), 3);
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text tokenises without panicking; plain `k=v` words come back as written.
        #[test]
        fn tokens_never_panic_and_keep_plain_words(words in proptest::collection::vec("[a-z_.]{1,8}(=[a-z0-9,-]{0,8})?", 0..12), junk in ".{0,40}") {
            let line = words.join(" ");
            let toks = tokens(&line);
            prop_assert_eq!(toks.len(), words.len());
            for (w, (k, v)) in words.iter().zip(&toks) {
                prop_assert_eq!(w.clone(), token(k, v.as_deref()));
            }
            let _ = tokens(&junk);
            let _ = flags_and_cpus(&junk);
            let _ = same_arg(Some(&junk), Some(&line));
        }

        /// Set comparison ignores order and range spelling.
        #[test]
        fn same_arg_is_order_insensitive(mut cpus in proptest::collection::btree_set(0usize..64, 1..10)) {
            let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
            let forward = format!("managed_irq,domain,{}", list.join(","));
            let canon = format!("domain,managed_irq,{}", cpuset::CpuSet::from_cpus(std::mem::take(&mut cpus)).to_list());
            prop_assert!(same_arg(Some(&forward), Some(&canon)));
        }
    }
}
