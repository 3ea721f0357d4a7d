//! lowlat's own partitioner: whole cores only, the boot CPU's core always housekeeping, one
//! housekeeping core on every NUMA node that keeps isolated CPUs (unless told otherwise),
//! housekeeping packed into one last-level cache where it fits, and a one-line reason for
//! every choice. Also the validation every lowlat-style plan passes.

use std::collections::BTreeMap;

use cpuset::CpuSet;

use crate::error::PlanError;
use crate::layout::{plural, Core, Layout};

/// A count of CPUs or an explicit list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuRequest {
    Count(usize),
    List(CpuSet),
}

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRequest {
    /// `None`: one housekeeping core per NUMA node (or the complement of `isolated`).
    pub reserved: Option<CpuRequest>,
    pub isolated: Option<CpuSet>,
    pub offline: Option<CpuRequest>,
    pub no_smt: bool,
    pub split_reserved_across_numa: bool,
    /// Keep at least one housekeeping core on every NUMA node that has isolated CPUs.
    pub per_node_housekeeping: bool,
    /// NUMA node of `--near-device`: the bulk of housekeeping goes there.
    pub near_node: Option<usize>,
    /// Description of the device behind `near_node`, for the reason line.
    pub near_device: Option<String>,
}

impl Default for PartitionRequest {
    fn default() -> Self {
        PartitionRequest {
            reserved: None,
            isolated: None,
            offline: None,
            no_smt: false,
            split_reserved_across_numa: false,
            per_node_housekeeping: true,
            near_node: None,
            near_device: None,
        }
    }
}

/// The partition and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Partition {
    pub reserved: CpuSet,
    pub isolated: CpuSet,
    pub offlined: CpuSet,
    /// SMT siblings turned off by `nosmt` (no role; they disappear at boot).
    pub smt_disabled: CpuSet,
    pub rationale: Vec<String>,
}

/// Compute a lowlat-style partition.
pub fn plan(layout: &Layout, req: &PartitionRequest) -> Result<Partition, PlanError> {
    if layout.nodes.is_empty() || layout.online.is_empty() {
        return Err(PlanError::invalid(
            "the host model has no online CPUs (topology could not be read)",
            "check that the snapshot holds sys/devices/system/cpu, or run on the live host",
        ));
    }
    let mut out = Partition::default();
    let mut why = vec![format!("host: {}", layout.describe())];
    let boot = layout.boot_cpu;

    // Cores as the planner may use them: SMT reduced, explicitly offlined threads removed.
    let mut cores: Vec<Core> = layout.cores().cloned().collect();
    if req.no_smt && layout.smt() {
        for c in &mut cores {
            for t in c.cpus.drain(1..) {
                out.smt_disabled.insert(t);
            }
        }
        why.push(format!(
            "SMT off (--no-smt): keep each core's first thread; siblings {} go away with `nosmt`",
            out.smt_disabled
        ));
    }
    let tpc = cores.iter().map(|c| c.cpus.len()).max().unwrap_or(1).max(1);

    // Explicit offline list first: it shapes what is left.
    if let Some(CpuRequest::List(off)) = &req.offline {
        let outside = off.difference(&layout.online);
        if !outside.is_empty() {
            return Err(PlanError::invalid(
                format!(
                    "--offline {off}: CPUs {outside} are not online CPUs of this host (online: {})",
                    layout.online
                ),
                "list only online CPUs",
            ));
        }
        if off.contains(boot) {
            return Err(PlanError::invalid(
                format!(
                    "--offline {off} includes the boot CPU {boot}, which cannot be taken offline"
                ),
                format!("remove {boot} from --offline"),
            ));
        }
        out.offlined = off.difference(&out.smt_disabled);
        for c in &mut cores {
            c.cpus.retain(|t| !off.contains(*t));
        }
        why.push(format!("offline {} (--offline list)", out.offlined));
    }
    cores.retain(|c| !c.cpus.is_empty());
    let usable: CpuSet = cores.iter().flat_map(|c| c.cpus.iter().copied()).collect();

    // Reserved.
    match (&req.reserved, &req.isolated) {
        (Some(CpuRequest::List(list)), _) => {
            check_inside(list, &usable, "--reserved-cpus")?;
            out.reserved = list.clone();
            why.push(format!("housekeeping {} (--reserved-cpus)", list));
        }
        (None, Some(iso)) => {
            check_inside(iso, &usable, "--isolated")?;
            out.reserved = usable.difference(iso);
            why.push(format!("housekeeping {}: every usable CPU not in --isolated", out.reserved));
        }
        (count, _) => {
            let n = match count {
                Some(CpuRequest::Count(n)) => *n,
                _ => {
                    let n = layout.nodes.len() * tpc;
                    why.push(format!(
                        "no --reserved given: one housekeeping core per NUMA node ({n} CPU{})",
                        plural(n)
                    ));
                    n
                }
            };
            let (set, lines) = pick_reserved(&cores, n, tpc, boot, req)?;
            out.reserved = set;
            why.extend(lines);
        }
    }
    if !out.reserved.contains(boot) {
        return Err(PlanError::invalid(
            if out.reserved.is_empty() {
                format!("no housekeeping CPU left: the boot CPU {boot} must stay housekeeping")
            } else {
                format!("housekeeping {} does not include the boot CPU {boot}", out.reserved)
            },
            format!("add CPU {boot} (and its siblings) to --reserved-cpus, or leave it out of --isolated"),
        ));
    }

    // Offline by count: whole cores from the far end of the isolated candidates.
    if let Some(CpuRequest::Count(n)) = &req.offline {
        let n = *n;
        if n > 0 {
            let want_cores = n.div_ceil(tpc);
            if n % tpc != 0 {
                why.push(format!(
                    "--offline {n} rounded up to {want_cores} whole core{} ({} CPUs) so no core keeps a lone online sibling",
                    plural(want_cores),
                    want_cores * tpc
                ));
            }
            let mut cand: Vec<&Core> = cores
                .iter()
                .filter(|c| c.cpus.iter().all(|t| !out.reserved.contains(*t)))
                .collect();
            cand.sort_by_key(|c| c.first());
            if let Some(iso) = &req.isolated {
                cand.retain(|c| c.cpus.iter().all(|t| !iso.contains(*t)));
            }
            if cand.len() < want_cores {
                return Err(PlanError::invalid(
                    format!("--offline {n} needs {want_cores} whole cores but only {} cores are neither housekeeping nor isolated-by-request", cand.len()),
                    "offline fewer CPUs or reserve fewer",
                ));
            }
            let picked: Vec<&Core> = cand.iter().rev().take(want_cores).copied().collect();
            let set: CpuSet = picked.iter().flat_map(|c| c.cpus.iter().copied()).collect();
            why.push(format!(
                "offline {set}: whole cores from the top of the CPU range, so the isolated set stays contiguous"
            ));
            out.offlined = out.offlined.union(&set);
        }
    }

    // Isolated: what is left, or the explicit list.
    let rest = usable.difference(&out.reserved).difference(&out.offlined);
    match &req.isolated {
        Some(iso) => {
            check_inside(iso, &usable, "--isolated")?;
            let overlap = iso.intersection(&out.reserved);
            if !overlap.is_empty() {
                return Err(PlanError::invalid(
                    format!("--isolated {iso} overlaps housekeeping on CPUs {overlap}"),
                    "choose disjoint --reserved-cpus and --isolated lists",
                ));
            }
            let unassigned = rest.difference(iso);
            if !unassigned.is_empty() {
                return Err(PlanError::invalid(
                    format!("CPUs {unassigned} are neither housekeeping, isolated nor offline"),
                    format!("add them to --isolated or --reserved-cpus, or offline them with --offline {unassigned}"),
                ));
            }
            out.isolated = iso.clone();
            why.push(format!("isolated {} (--isolated)", iso));
        }
        None => {
            out.isolated = rest;
            why.push(format!("isolated {}: every remaining CPU", out.isolated));
        }
    }
    validate(layout, &out)?;
    out.rationale = why;
    Ok(out)
}

fn check_inside(set: &CpuSet, usable: &CpuSet, flag: &str) -> Result<(), PlanError> {
    let outside = set.difference(usable);
    if outside.is_empty() {
        Ok(())
    } else {
        Err(PlanError::invalid(
            format!(
                "{flag} {set}: CPUs {outside} are not usable CPUs of this host (usable: {usable})"
            ),
            "list only online CPUs that are not offlined or turned off by --no-smt",
        ))
    }
}

/// Choose `n` reserved CPUs as whole cores.
fn pick_reserved(
    cores: &[Core],
    n: usize,
    tpc: usize,
    boot: usize,
    req: &PartitionRequest,
) -> Result<(CpuSet, Vec<String>), PlanError> {
    let mut why = vec![];
    let total = cores.iter().map(|c| c.cpus.len()).sum::<usize>();
    if n == 0 {
        return Err(PlanError::invalid(
            "--reserved 0: housekeeping needs at least one CPU",
            "use --reserved 1 or more",
        ));
    }
    let mut want = n.div_ceil(tpc);
    if !n.is_multiple_of(tpc) {
        why.push(format!(
            "--reserved {n} rounded up to {want} whole core{} ({} CPUs): SMT siblings share a core's caches and pipeline, so splitting one between housekeeping and isolated work lets housekeeping noise reach the isolated sibling",
            plural(want),
            want * tpc
        ));
    }
    let mut by_node: BTreeMap<usize, Vec<&Core>> = BTreeMap::new();
    for c in cores {
        by_node.entry(c.numa).or_default().push(c);
    }
    let boot_node = cores.iter().find(|c| c.cpus.contains(&boot)).map(|c| c.numa).unwrap_or(0);
    let home = req.near_node.filter(|n| by_node.contains_key(n)).unwrap_or(boot_node);
    let nnodes = by_node.len();
    if req.per_node_housekeeping && nnodes > 1 && want < nnodes {
        why.push(format!(
            "--reserved {n} raised to {nnodes} cores: one housekeeping core per NUMA node keeps each node's RCU callbacks, kworkers and IRQs node-local (--no-per-node-housekeeping to keep them on node {home})"
        ));
        want = nnodes;
    }
    if want >= cores.len() {
        return Err(PlanError::invalid(
            format!("--reserved {n} needs {want} of the {} usable cores ({total} CPUs), leaving nothing to isolate", cores.len()),
            format!("reserve at most {} CPUs", (cores.len() - 1) * tpc),
        ));
    }

    // Quota per node.
    let mut quota: BTreeMap<usize, usize> = by_node.keys().map(|k| (*k, 0)).collect();
    let order: Vec<usize> =
        std::iter::once(home).chain(by_node.keys().copied().filter(|k| *k != home)).collect();
    if req.split_reserved_across_numa {
        let base = want / nnodes;
        let rem = want % nnodes;
        for (i, node) in order.iter().enumerate() {
            quota.insert(*node, base + usize::from(i < rem));
        }
        why.push(format!(
            "housekeeping split evenly across {nnodes} NUMA nodes (--split-reserved-across-numa)"
        ));
    } else {
        let mut left = want;
        if req.per_node_housekeeping && nnodes > 1 {
            for node in order.iter().skip(1) {
                quota.insert(*node, 1);
                left -= 1;
            }
        }
        if boot_node != home && left > 0 && quota.get(&boot_node) == Some(&0) {
            quota.insert(boot_node, 1);
            left -= 1;
        }
        *quota.entry(home).or_default() += left;
    }
    // The boot node always holds the boot core.
    if quota.get(&boot_node).copied().unwrap_or(0) == 0 {
        if let Some(q) = quota.get_mut(&home) {
            *q = q.saturating_sub(1);
        }
        quota.insert(boot_node, 1);
    }
    // Overflow: a node asked for more cores than it has hands the rest on, in node order.
    let mut spill = 0;
    for node in &order {
        let have = by_node.get(node).map_or(0, Vec::len);
        let q = quota.entry(*node).or_default();
        *q += spill;
        if *q > have {
            spill = *q - have;
            *q = have;
        } else {
            spill = 0;
        }
    }

    let mut reserved = CpuSet::new();
    for node in &order {
        let q = quota.get(node).copied().unwrap_or(0);
        if q == 0 {
            continue;
        }
        let node_cores = by_node.get(node).cloned().unwrap_or_default();
        let anchor = node_cores
            .iter()
            .find(|c| c.cpus.contains(&boot))
            .or_else(|| node_cores.first())
            .map(|c| c.llc);
        let mut ranked: Vec<&Core> = node_cores.clone();
        ranked.sort_by_key(|c| (!c.cpus.contains(&boot), Some(c.llc) != anchor, c.llc, c.first()));
        for (i, c) in ranked.iter().take(q).enumerate() {
            let set = c.set();
            reserved = reserved.union(&set);
            let reason = if c.cpus.contains(&boot) {
                format!("housekeeping {set}: the boot CPU's core (CPU {boot} keeps timekeeping and boot-time kernel threads; it is never isolated)")
            } else if Some(*node) == req.near_node && i == 0 {
                format!(
                    "housekeeping {set}: NUMA node {node}, local to {} so its interrupts and softirqs run next to it",
                    req.near_device.as_deref().unwrap_or("the device")
                )
            } else if *node != home && !req.split_reserved_across_numa && q == 1 {
                format!("housekeeping {set}: one core on NUMA node {node} so that node's isolated CPUs offload RCU callbacks and kworkers to a local CPU")
            } else if Some(c.llc) == anchor {
                format!("housekeeping {set}: NUMA node {node}, same last-level cache as the other housekeeping cores")
            } else {
                format!("housekeeping {set}: NUMA node {node}, next core by number (no free core shares the other housekeeping cores' last-level cache)")
            };
            why.push(reason);
        }
    }
    Ok((reserved, why))
}

/// The invariants of a lowlat plan: reserved ∪ isolated ∪ offlined ∪ smt_disabled = online,
/// no overlap, no core split between housekeeping and isolated, boot CPU not isolated.
pub fn validate(layout: &Layout, p: &Partition) -> Result<(), PlanError> {
    let sets = [
        ("reserved", &p.reserved),
        ("isolated", &p.isolated),
        ("offlined", &p.offlined),
        ("smt-disabled", &p.smt_disabled),
    ];
    for (i, (an, a)) in sets.iter().enumerate() {
        for (bn, b) in sets.iter().skip(i + 1) {
            let both = a.intersection(b);
            if !both.is_empty() {
                return Err(PlanError::invalid(
                    format!("CPUs {both} are both {an} and {bn}"),
                    "give each CPU one role",
                ));
            }
        }
    }
    let all = p.reserved.union(&p.isolated).union(&p.offlined).union(&p.smt_disabled);
    let missing = layout.online.difference(&all);
    if !missing.is_empty() {
        return Err(PlanError::invalid(
            format!("CPUs {missing} have no role (reserved ∪ isolated ∪ offlined must be every online CPU)"),
            "add them to --reserved-cpus, --isolated or --offline",
        ));
    }
    let extra = all.difference(&layout.online);
    if !extra.is_empty() {
        return Err(PlanError::invalid(
            format!("CPUs {extra} are not online on this host (online: {})", layout.online),
            "list only online CPUs",
        ));
    }
    if p.reserved.is_empty() {
        return Err(PlanError::invalid(
            "no housekeeping CPUs",
            "reserve at least the boot CPU's core",
        ));
    }
    if p.isolated.is_empty() {
        return Err(PlanError::invalid("no CPUs left to isolate", "reserve or offline fewer CPUs"));
    }
    if p.isolated.contains(layout.boot_cpu) {
        return Err(PlanError::invalid(
            format!("the boot CPU {} is in the isolated set", layout.boot_cpu),
            format!("keep CPU {} housekeeping", layout.boot_cpu),
        ));
    }
    for core in layout.cores() {
        let s = core.set();
        let r = s.intersection(&p.reserved);
        let i = s.intersection(&p.isolated);
        if !r.is_empty() && !i.is_empty() {
            return Err(PlanError::invalid(
                format!("core {s} is split: {r} housekeeping, {i} isolated (SMT siblings share the core, so housekeeping noise reaches the isolated thread)"),
                format!("put all of {s} in one role, or pass --no-smt"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::testhost;

    fn w1() -> Layout {
        Layout::from_host(&testhost::worker1())
    }

    fn req(n: usize) -> PartitionRequest {
        PartitionRequest { reserved: Some(CpuRequest::Count(n)), ..Default::default() }
    }

    #[test]
    fn default_is_one_core_per_node() {
        let p = plan(&w1(), &PartitionRequest::default()).unwrap();
        assert_eq!(p.reserved.to_list(), "0-1,40-41");
        assert_eq!(p.isolated.to_list(), "2-39,42-79");
        assert!(p.rationale.iter().any(|l| l.contains("boot CPU's core")));
    }

    #[test]
    fn odd_count_rounds_up_with_a_note() {
        let p = plan(&w1(), &req(5)).unwrap();
        // 3 cores: node 1 gets one, node 0 (boot) gets two in the same LLC.
        assert_eq!(p.reserved.to_list(), "0-2,40-42");
        assert!(p.rationale.iter().any(|l| l.contains("rounded up to 3 whole cores")));
        validate(&w1(), &p).unwrap();
    }

    #[test]
    fn small_count_raised_to_one_core_per_node() {
        let p = plan(&w1(), &req(1)).unwrap();
        assert_eq!(p.reserved.to_list(), "0-1,40-41");
        let p = plan(&w1(), &PartitionRequest { per_node_housekeeping: false, ..req(1) }).unwrap();
        assert_eq!(p.reserved.to_list(), "0,40");
    }

    #[test]
    fn split_across_numa() {
        let p =
            plan(&w1(), &PartitionRequest { split_reserved_across_numa: true, ..req(8) }).unwrap();
        assert_eq!(p.reserved.to_list(), "0-3,40-43");
    }

    #[test]
    fn near_device_moves_bulk() {
        let p = plan(
            &w1(),
            &PartitionRequest { near_node: Some(1), near_device: Some("ens1f0".into()), ..req(6) },
        )
        .unwrap();
        // boot core on node 0, two cores on node 1.
        assert_eq!(p.reserved.to_list(), "0-1,3,40-41,43");
        assert!(p.rationale.iter().any(|l| l.contains("ens1f0")));
    }

    #[test]
    fn no_smt_drops_siblings() {
        let p = plan(&w1(), &PartitionRequest { no_smt: true, ..req(2) }).unwrap();
        assert_eq!(p.reserved.to_list(), "0-1");
        assert_eq!(p.smt_disabled.to_list(), "40-79");
        assert_eq!(p.isolated.to_list(), "2-39");
    }

    #[test]
    fn explicit_lists() {
        let l = w1();
        let p = plan(
            &l,
            &PartitionRequest {
                reserved: Some(CpuRequest::List(CpuSet::parse_list("0,40").unwrap())),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.isolated.len(), 78);
        let e = plan(
            &l,
            &PartitionRequest {
                reserved: Some(CpuRequest::List(CpuSet::parse_list("0").unwrap())),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("core 0,40 is split"), "{e}");
        let e = plan(
            &l,
            &PartitionRequest {
                reserved: Some(CpuRequest::List(CpuSet::parse_list("0-1,200").unwrap())),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("CPUs 200 are not usable"), "{e}");
        let e = plan(
            &l,
            &PartitionRequest {
                reserved: Some(CpuRequest::List(CpuSet::parse_list("2,42").unwrap())),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("boot CPU 0"), "{e}");
        // Isolated only: reserved is the complement.
        let p = plan(
            &l,
            &PartitionRequest {
                isolated: Some(CpuSet::parse_list("2-39,42-79").unwrap()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.reserved.to_list(), "0-1,40-41");
        // Both, not covering.
        let e = plan(
            &l,
            &PartitionRequest {
                reserved: Some(CpuRequest::List(CpuSet::parse_list("0,40").unwrap())),
                isolated: Some(CpuSet::parse_list("2-39,42-79").unwrap()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("CPUs 1,41 are neither"), "{e}");
    }

    #[test]
    fn offline_count_takes_whole_cores_from_the_top() {
        let p = plan(&w1(), &PartitionRequest { offline: Some(CpuRequest::Count(3)), ..req(4) })
            .unwrap();
        assert_eq!(p.offlined.to_list(), "38-39,78-79");
        assert!(p.rationale.iter().any(|l| l.contains("rounded up to 2 whole cores")));
        let p = plan(
            &w1(),
            &PartitionRequest {
                offline: Some(CpuRequest::List(CpuSet::parse_list("39,79").unwrap())),
                ..req(4)
            },
        )
        .unwrap();
        assert_eq!(p.offlined.to_list(), "39,79");
        let e = plan(
            &w1(),
            &PartitionRequest {
                offline: Some(CpuRequest::List(CpuSet::parse_list("0").unwrap())),
                ..req(4)
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("boot CPU"), "{e}");
    }

    #[test]
    fn too_many_reserved() {
        let e = plan(&w1(), &req(80)).unwrap_err();
        assert!(e.to_string().contains("leaving nothing to isolate"), "{e}");
        let tiny = Layout::from_host(&testhost::build(1, 1, 2, false));
        assert!(plan(&tiny, &PartitionRequest::default()).is_err());
    }

    #[test]
    fn two_cpu_vm() {
        let l = Layout::from_host(&testhost::build(1, 2, 1, false));
        let p = plan(&l, &PartitionRequest::default()).unwrap();
        assert_eq!(p.reserved.to_list(), "0");
        assert_eq!(p.isolated.to_list(), "1");
    }

    /// Every count on a range of machine shapes either gives a plan that passes `validate`
    /// with whole cores and the boot CPU housekept, or an error; never a panic.
    #[test]
    fn invariants_hold_for_every_count_and_shape() {
        for (sockets, cores, threads, interleave) in [
            (1, 1, 1, false),
            (1, 2, 1, false),
            (1, 4, 2, false),
            (2, 4, 2, true),
            (2, 3, 2, false),
            (4, 2, 4, true),
            (2, 5, 1, true),
        ] {
            let l = Layout::from_host(&testhost::build(sockets, cores, threads, interleave));
            let total = sockets * cores * threads;
            for n in 0..=total + 1 {
                for (split, per_node, no_smt) in [
                    (false, true, false),
                    (true, true, false),
                    (false, false, false),
                    (false, true, true),
                ] {
                    let req = PartitionRequest {
                        reserved: Some(CpuRequest::Count(n)),
                        split_reserved_across_numa: split,
                        per_node_housekeeping: per_node,
                        no_smt,
                        offline: (n % 3 == 0).then_some(CpuRequest::Count(threads)),
                        ..Default::default()
                    };
                    let Ok(p) = plan(&l, &req) else { continue };
                    validate(&l, &p).unwrap();
                    assert!(p.reserved.contains(0));
                    let tpc = if no_smt { 1 } else { threads };
                    assert_eq!(
                        p.reserved.len() % tpc,
                        0,
                        "{sockets}x{cores}x{threads} n={n}: not whole cores"
                    );
                    assert!(p.reserved.len() >= n.min(total), "fewer reserved than asked");
                    if per_node && !split && !no_smt {
                        for node in &l.nodes {
                            if !node.set().intersection(&p.isolated).is_empty() {
                                assert!(
                                    !node.set().intersection(&p.reserved).is_empty(),
                                    "node {} has isolated CPUs but no housekeeping",
                                    node.id
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
