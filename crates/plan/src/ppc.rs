//! The Performance Profile Creator's CPU partitioning, reproduced exactly (reference notes
//! `nto-pao.md` §3.3, `profilecreator.go CalculateCPUSets`), quirks included: reserved CPUs
//! taken sequentially by NUMA node then core (or with the cumulative split-across-NUMA cap),
//! `--disable-ht` keeping only each core's first thread everywhere, offlining by socket then
//! `core_id`. Error texts are PPC's own.

pub mod args;
pub mod info;

use std::collections::BTreeMap;
use std::path::PathBuf;

use cpuset::CpuSet;

use crate::layout::Layout;

/// PPC's inputs that shape the partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PpcInput {
    pub reserved_cpu_count: i64,
    pub offlined_cpu_count: i64,
    pub split_reserved_cpus_across_numa: bool,
    pub disable_ht: bool,
    /// `--power-consumption-mode=ultra-low-latency` (no whole-socket offlining).
    pub high_power_consumption: bool,
}

/// PPC's result plus the log lines it would print (used as the plan's rationale).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PpcPartition {
    pub reserved: CpuSet,
    pub isolated: CpuSet,
    pub offlined: CpuSet,
    /// Threads dropped by `--disable-ht` (they go away with `nosmt`).
    pub smt_disabled: CpuSet,
    pub log: Vec<String>,
}

/// An error of the Performance Profile Creator or of its arguments file. The texts of `Cpus`
/// and `Args` are PPC's own (so they name PPC's flags, as PPC prints them).
#[derive(Debug, thiserror::Error)]
pub enum PpcError {
    /// `CalculateCPUSets` refused the counts.
    #[error("failed to compute the reserved and isolated CPUs: {0}")]
    Cpus(String),
    /// PPC's argument checks refused the combination.
    #[error("{0}")]
    Args(String),
    /// The arguments file cannot be read.
    #[error("cannot read the PPC arguments file {}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// The arguments file is not PPC's JSON.
    #[error("{}: not a PPC arguments file (expected PPC's JSON keys such as \"reserved-cpu-count\", \"mcp-name\", \"rt-kernel\")", path.display())]
    Parse { path: PathBuf, source: serde_json::Error },
}

impl util::exit::Classify for PpcError {
    fn exit_code(&self) -> util::exit::ExitCode {
        // PPC's refusals and its arguments file are the user's input.
        util::exit::ExitCode::Usage
    }
}

/// PPC's accumulator: adds threads core by core while `count < max`.
struct Acc {
    elems: CpuSet,
    count: usize,
}

impl Acc {
    fn new() -> Self {
        Acc { elems: CpuSet::new(), count: 0 }
    }
    fn add_cores(
        &mut self,
        max: Option<usize>,
        cores: &[Vec<usize>],
        filter: impl Fn(usize, usize) -> bool,
    ) -> usize {
        let initial = self.count;
        for core in cores {
            for (index, &lp) in core.iter().enumerate() {
                if max.is_none_or(|m| self.count < m) && filter(index, lp) {
                    if !self.elems.contains(lp) {
                        self.count += 1;
                    }
                    self.elems.insert(lp);
                }
            }
        }
        self.count - initial
    }
}

/// Sockets as ghw's `CPU().Processors`: by package id, cores by `core_id`, threads ascending.
fn sockets(layout: &Layout, keep_first_only: bool) -> Vec<(i64, Vec<Vec<usize>>)> {
    let mut by_pkg: BTreeMap<i64, BTreeMap<i64, Vec<usize>>> = BTreeMap::new();
    for core in layout.cores() {
        let entry = by_pkg.entry(core.package).or_default().entry(core.core_id).or_default();
        entry.extend(core.cpus.iter().copied());
    }
    by_pkg
        .into_iter()
        .map(|(pkg, cores)| {
            let cores = cores
                .into_values()
                .map(|mut c| {
                    c.sort_unstable();
                    if keep_first_only {
                        c.truncate(1);
                    }
                    c
                })
                .collect();
            (pkg, cores)
        })
        .collect()
}

/// Compute PPC's reserved / isolated / offlined sets.
pub fn calculate(layout: &Layout, input: &PpcInput) -> Result<PpcPartition, PpcError> {
    let mut log = vec![];
    let ht_enabled = layout.smt();
    let reduce = ht_enabled && input.disable_ht;
    if reduce {
        log.push(
            "Updating Topology info because currently hyperthreading is enabled and the performance profile will disable it"
                .into(),
        );
    }
    // Topology view: nodes by id, cores by lowest CPU (Layout's order already).
    let nodes: Vec<Vec<Vec<usize>>> =
        layout
            .nodes
            .iter()
            .map(|n| {
                n.cores
                    .iter()
                    .map(|c| {
                        if reduce {
                            c.cpus.iter().take(1).copied().collect()
                        } else {
                            c.cpus.clone()
                        }
                    })
                    .collect()
            })
            .collect();
    let socks = sockets(layout, reduce);
    let total_threads: i64 =
        socks.iter().map(|(_, c)| c.iter().map(|t| t.len() as i64).sum::<i64>()).sum();
    let smt_disabled = if reduce {
        let kept: CpuSet = nodes.iter().flatten().flatten().copied().collect();
        layout.online.difference(&kept)
    } else {
        CpuSet::new()
    };

    let (r, o) = (input.reserved_cpu_count, input.offlined_cpu_count);
    if r <= 0 || r >= total_threads {
        return Err(PpcError::Cpus(format!(
            "please specify the reserved CPU count in the range [1,{}]",
            total_threads - 1
        )));
    }
    if o < 0 || o >= total_threads {
        return Err(PpcError::Cpus(format!(
            "please specify the offlined CPU count in the range [0,{}]",
            total_threads - 1
        )));
    }
    if r + o >= total_threads {
        return Err(PpcError::Cpus(format!(
            "please ensure that reserved-cpu-count plus offlined-cpu-count should be in the range [0,{}]",
            total_threads - 1
        )));
    }
    let (r, o) = (r as usize, o as usize);
    let ht = ht_enabled && !reduce;

    // Reserved.
    log.push(format!("NUMA cell(s): {}", nodes.len()));
    for (id, n) in nodes.iter().enumerate() {
        let list: Vec<String> = n.iter().flatten().map(|c| c.to_string()).collect();
        log.push(format!("NUMA cell {id} : [{}]", list.join(" ")));
    }
    let mut acc = Acc::new();
    if input.split_reserved_cpus_across_numa {
        let num = nodes.len().max(1);
        let per = r / num;
        let mut rem = r % num;
        if rem != 0 {
            log.push("The reserved CPUs cannot be split equally across NUMA Nodes".into());
        }
        let mut max = 0usize;
        for (id, n) in nodes.iter().enumerate() {
            if rem != 0 {
                max = (id + 1) * per + (num - rem);
                rem -= 1;
            } else {
                max += per;
            }
            if !max.is_multiple_of(2) && ht {
                return Err(PpcError::Cpus(
                    "can't allocate odd number of CPUs from a NUMA Node".into(),
                ));
            }
            acc.add_cores(Some(max), n, |_, _| true);
        }
    } else {
        if r % 2 != 0 && ht {
            return Err(PpcError::Cpus(
                "can't allocate odd number of CPUs from a NUMA Node".into(),
            ));
        }
        for n in &nodes {
            acc.add_cores(Some(r), n, |_, _| true);
        }
    }
    let reserved = acc.elems;

    // Offlined.
    let used_per_socket = |pkg_cores: &[Vec<usize>]| {
        pkg_cores.iter().flatten().filter(|c| reserved.contains(**c)).count()
    };
    let mut off = Acc::new();
    let mut done = 0usize;
    if !input.high_power_consumption {
        for (_, cores) in &socks {
            let threads: usize = cores.iter().map(Vec::len).sum();
            if threads <= o.saturating_sub(done) && o >= done && used_per_socket(cores) == 0 {
                done += off.add_cores(Some(o), cores, |_, _| true);
            }
        }
    }
    if done < o {
        for (_, cores) in &socks {
            done += off.add_cores(Some(o), cores, |index, lp| index != 0 && !reserved.contains(lp));
        }
    }
    if done < o {
        for (_, cores) in &socks {
            done += off.add_cores(Some(o), cores, |_, lp| !reserved.contains(lp));
        }
    }
    if done < o {
        log.push(format!(
            "could not offline enough logical processors (required:{o}, offlined:{done})"
        ));
    }
    let offlined = off.elems;
    let total: CpuSet = nodes.iter().flatten().flatten().copied().collect();
    let isolated = total.difference(&reserved.union(&offlined));
    log.push(format!("{} reserved CPUs allocated: {}", reserved.len(), reserved));
    log.push(format!("{} isolated CPUs allocated: {}", isolated.len(), isolated));
    if !offlined.is_empty() {
        log.push(format!("{} offlined CPUs allocated: {}", offlined.len(), offlined));
    }
    Ok(PpcPartition { reserved, isolated, offlined, smt_disabled, log })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::testhost;

    fn w1() -> Layout {
        Layout::from_host(&testhost::worker1())
    }

    /// PPC's own text of a `CalculateCPUSets` refusal.
    fn refused(e: PpcError) -> String {
        match e {
            PpcError::Cpus(text) => text,
            other => panic!("not a CalculateCPUSets refusal: {other}"),
        }
    }

    fn run(l: &Layout, r: i64, o: i64, split: bool, dht: bool) -> Result<PpcPartition, PpcError> {
        calculate(
            l,
            &PpcInput {
                reserved_cpu_count: r,
                offlined_cpu_count: o,
                split_reserved_cpus_across_numa: split,
                disable_ht: dht,
                high_power_consumption: false,
            },
        )
    }

    #[test]
    fn profile1_sequential_ht() {
        let p = run(&w1(), 4, 0, false, false).unwrap();
        assert_eq!(p.reserved.to_list(), "0,2,40,42");
        assert_eq!(p.isolated.to_list(), "1,3-39,41,43-79");
    }

    #[test]
    fn profile3_split_disable_ht() {
        let p = run(&w1(), 5, 0, true, true).unwrap();
        assert_eq!(p.reserved.to_list(), "0-4");
        assert_eq!(p.isolated.to_list(), "5-39");
        assert_eq!(p.smt_disabled.to_list(), "40-79");
    }

    #[test]
    fn profile4_sequential_disable_ht() {
        let p = run(&w1(), 12, 0, false, true).unwrap();
        assert_eq!(p.reserved.to_list(), "0,2,4,6,8,10,12,14,16,18,20,22");
        assert_eq!(p.isolated.to_list(), "1,3,5,7,9,11,13,15,17,19,21,23-39");
    }

    #[test]
    fn profile5_split_ht() {
        let p = run(&w1(), 4, 0, true, false).unwrap();
        assert_eq!(p.reserved.to_list(), "0-1,40-41");
        assert_eq!(p.isolated.to_list(), "2-39,42-79");
    }

    #[test]
    fn odd_count_with_ht_is_refused_with_ppcs_text() {
        let e = run(&w1(), 3, 0, false, false).unwrap_err();
        assert_eq!(refused(e), "can't allocate odd number of CPUs from a NUMA Node");
        let e = run(&w1(), 2, 0, true, false).unwrap_err();
        assert_eq!(refused(e), "can't allocate odd number of CPUs from a NUMA Node");
    }

    #[test]
    fn range_errors() {
        assert_eq!(
            refused(run(&w1(), 0, 0, false, false).unwrap_err()),
            "please specify the reserved CPU count in the range [1,79]"
        );
        assert_eq!(
            refused(run(&w1(), 80, 0, false, false).unwrap_err()),
            "please specify the reserved CPU count in the range [1,79]"
        );
        assert_eq!(
            refused(run(&w1(), 2, 80, false, false).unwrap_err()),
            "please specify the offlined CPU count in the range [0,79]"
        );
        assert_eq!(
            refused(run(&w1(), 40, 40, false, false).unwrap_err()),
            "please ensure that reserved-cpu-count plus offlined-cpu-count should be in the range [0,79]"
        );
    }

    #[test]
    fn offlining_follows_core_id_order() {
        // Siblings first (index != 0), socket 0 in core_id order: 40, 44, 48, 46 ... CPU 40 is
        // reserved (core 0), so the first two are 44 (core_id 1) and 48 (core_id 2).
        let p = run(&w1(), 2, 2, false, false).unwrap();
        assert_eq!(p.reserved.to_list(), "0,40");
        assert_eq!(p.offlined.to_list(), "44,48");
        // With disable-ht the siblings are gone: first threads by core_id, 4 then 8.
        let p = run(&w1(), 2, 2, false, true).unwrap();
        assert_eq!(p.reserved.to_list(), "0,2");
        assert_eq!(p.offlined.to_list(), "4,8");
    }

    #[test]
    fn whole_socket_offlined_when_it_fits() {
        let p = run(&w1(), 2, 40, false, false).unwrap();
        assert_eq!(p.offlined.to_list(), "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43,45,47,49,51,53,55,57,59,61,63,65,67,69,71,73,75,77,79");
        // Ultra-low-latency skips whole-socket offlining and takes siblings first.
        let p = calculate(
            &w1(),
            &PpcInput {
                reserved_cpu_count: 2,
                offlined_cpu_count: 2,
                high_power_consumption: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.offlined.to_list(), "44,48");
    }

    #[test]
    fn no_smt_host_takes_single_cpus() {
        let l = Layout::from_host(&testhost::build(1, 12, 1, false));
        let p = run(&l, 1, 0, false, false).unwrap();
        assert_eq!(p.reserved.to_list(), "0");
        assert_eq!(p.isolated.to_list(), "1-11");
    }
}
