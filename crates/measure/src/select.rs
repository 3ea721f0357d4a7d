//! Which CPUs a measurement runs on, chosen on the host model: a CPU-set argument resolved by
//! `host::Host::resolve`, or the default (the first non-empty preferred named set, else every
//! online CPU but the main thread's).

use cpuset::{CpuName, CpuSelector, CpuSet};
use host::Host;

use crate::error::MeasureError;

/// The CPUs of a set, as the measurement's thread list.
pub fn cpus_of(set: &CpuSet) -> Vec<u32> {
    set.iter().map(|c| c as u32).collect()
}

/// A canonical cpu-list of `cpus` (`1-3,5`).
pub fn list(cpus: &[u32]) -> String {
    cpus.iter().map(|&c| c as usize).collect::<CpuSet>().to_list()
}

/// The CPUs to measure: `sel` resolved on `host` (every one online, a named set non-empty),
/// or by default the first non-empty set of `prefer`, else every online CPU but `main_cpu`
/// (or the first online CPU), else every online CPU.
pub fn measured(
    host: &Host,
    sel: Option<&CpuSelector>,
    main_cpu: Option<u32>,
    prefer: &[CpuName],
) -> Result<Vec<u32>, MeasureError> {
    let online = cpus_of(&host.online_cpus());
    let Some(sel) = sel else {
        for &name in prefer {
            let v = cpus_of(&host.resolve(&CpuSelector::Named(name)));
            if !v.is_empty() {
                return Ok(v);
            }
        }
        let main = main_cpu.or_else(|| online.first().copied());
        let v: Vec<u32> = online.iter().copied().filter(|c| Some(*c) != main).collect();
        return Ok(if v.is_empty() { online } else { v });
    };
    let v = cpus_of(&host.resolve(sel));
    match sel {
        CpuSelector::Named(name) if v.is_empty() => {
            Err(MeasureError::NoNamedCpus { name: name.as_str() })
        }
        _ => match v.iter().find(|c| !online.contains(c)) {
            Some(&cpu) => Err(MeasureError::CpuOffline { cpu, online: list(&online) }),
            None => Ok(v),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(online: &str, isolated: &str, nohz_full: Option<&str>) -> Host {
        let set = |s: &str| CpuSet::parse_list(s).ok();
        let mut h = Host::default();
        h.cpus.online = set(online);
        h.cpus.isolated = set(isolated);
        h.cpus.nohz_full = nohz_full.and_then(set);
        h
    }

    fn sel(s: &str) -> CpuSelector {
        s.parse().unwrap()
    }

    #[test]
    fn defaults_prefer_named_sets_then_all_but_the_main_cpu() {
        let iso = host("0-3", "2-3", Some("3"));
        assert_eq!(measured(&iso, None, None, &[CpuName::Isolated]).unwrap(), vec![2, 3]);
        let pref = [CpuName::NohzFull, CpuName::Isolated];
        assert_eq!(measured(&iso, None, None, &pref).unwrap(), vec![3]);
        let plain = host("0-3", "", None);
        assert_eq!(measured(&plain, None, None, &pref).unwrap(), vec![1, 2, 3]);
        assert_eq!(measured(&plain, None, Some(2), &pref).unwrap(), vec![0, 1, 3]);
        let one = host("0", "", None);
        assert_eq!(measured(&one, None, None, &pref).unwrap(), vec![0]);
    }

    #[test]
    fn explicit_and_named_sets_are_checked() {
        let h = host("0-3", "", None);
        assert_eq!(measured(&h, Some(&sel("1,3")), None, &[]).unwrap(), vec![1, 3]);
        assert_eq!(measured(&h, Some(&sel("all")), None, &[]).unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(measured(&h, Some(&sel("reserved")), None, &[]).unwrap(), vec![0, 1, 2, 3]);
        let e = measured(&h, Some(&sel("4095")), None, &[]).unwrap_err();
        assert_eq!(e.to_string(), "CPU 4095 is not online (online: 0-3)");
        let e = measured(&h, Some(&sel("isolated")), None, &[]).unwrap_err();
        assert!(matches!(e, MeasureError::NoNamedCpus { name: "isolated" }), "{e}");
    }

    #[test]
    fn lists_are_canonical() {
        assert_eq!(list(&[3, 1, 2, 5]), "1-3,5");
        assert_eq!(list(&[]), "");
    }
}
