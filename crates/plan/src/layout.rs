//! The machine as the planner sees it: NUMA nodes (by id) holding physical cores (by lowest
//! CPU), each core holding its online hardware threads (ascending), plus package / core_id /
//! last-level-cache of each core. Built once from the host model; every planner works on it.

use std::collections::BTreeMap;

use cpuset::CpuSet;
use host::Host;

/// One physical core and its online threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Core {
    /// Online hardware threads, ascending.
    pub cpus: Vec<usize>,
    pub numa: usize,
    pub package: i64,
    /// `core_id` as the kernel reports it (unique within a package only).
    pub core_id: i64,
    /// Identifier of the last-level cache this core sits in (the lowest CPU sharing it).
    pub llc: usize,
}

impl Core {
    pub fn first(&self) -> usize {
        self.cpus.first().copied().unwrap_or(0)
    }
    pub fn set(&self) -> CpuSet {
        self.cpus.iter().copied().collect()
    }
}

/// One NUMA node and its cores sorted by lowest CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub id: usize,
    pub cores: Vec<Core>,
}

impl Node {
    pub fn set(&self) -> CpuSet {
        self.cores.iter().flat_map(|c| c.cpus.iter().copied()).collect()
    }
}

/// The planner's view of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// NUMA nodes sorted by id.
    pub nodes: Vec<Node>,
    /// Online CPUs.
    pub online: CpuSet,
    /// Most threads seen on one core.
    pub threads_per_core: usize,
    /// The boot CPU (the lowest online CPU, normally 0).
    pub boot_cpu: usize,
}

impl Layout {
    /// Build the layout from the host model. CPUs with unknown NUMA node go to node 0; CPUs
    /// with unknown siblings are cores of their own.
    pub fn from_host(host: &Host) -> Self {
        let online = host.online_cpus();
        let numa_of = |cpu: usize| -> usize {
            host.cpu(cpu)
                .and_then(|t| t.numa_node)
                .or_else(|| host.numa_nodes.iter().find(|n| n.cpus.contains(cpu)).map(|n| n.id))
                .unwrap_or(0)
        };
        let llc_of = |cpu: usize| -> usize {
            host.caches
                .iter()
                .filter(|c| c.shared_cpus.contains(cpu) && c.kind != "Instruction")
                .max_by_key(|c| c.level)
                .and_then(|c| c.shared_cpus.first())
                .unwrap_or_else(|| {
                    // No cache data: treat the package as the LLC domain.
                    host.cpu(cpu)
                        .and_then(|t| t.package)
                        .map(|p| usize::try_from(p).unwrap_or(0) * 100_000)
                        .unwrap_or(0)
                })
        };
        // Group online CPUs into cores by their sibling set.
        let mut cores: BTreeMap<usize, Core> = BTreeMap::new();
        let mut seen = CpuSet::new();
        for cpu in online.iter() {
            if seen.contains(cpu) {
                continue;
            }
            let topo = host.cpu(cpu);
            let mut sibs = topo.map(|t| t.siblings.intersection(&online)).unwrap_or_default();
            sibs.insert(cpu);
            // Siblings must agree on NUMA node; a malformed tree must not merge nodes.
            let numa = numa_of(cpu);
            let cpus: Vec<usize> =
                sibs.iter().filter(|c| !seen.contains(*c) && numa_of(*c) == numa).collect();
            for c in &cpus {
                seen.insert(*c);
            }
            let core = Core {
                numa,
                package: topo.and_then(|t| t.package).unwrap_or(0),
                core_id: topo.and_then(|t| t.core).unwrap_or(cpu as i64),
                llc: llc_of(cpu),
                cpus,
            };
            cores.insert(core.first(), core);
        }
        let mut nodes: BTreeMap<usize, Node> = BTreeMap::new();
        for (_, core) in cores {
            nodes
                .entry(core.numa)
                .or_insert_with(|| Node { id: core.numa, cores: vec![] })
                .cores
                .push(core);
        }
        let nodes: Vec<Node> = nodes.into_values().collect();
        let threads_per_core =
            nodes.iter().flat_map(|n| n.cores.iter().map(|c| c.cpus.len())).max().unwrap_or(1);
        Layout { boot_cpu: online.first().unwrap_or(0), online, nodes, threads_per_core }
    }

    /// Every core, node by node.
    pub fn cores(&self) -> impl Iterator<Item = &Core> {
        self.nodes.iter().flat_map(|n| n.cores.iter())
    }

    /// Whether two machines have the same topology: the same CPUs in the same cores on the
    /// same NUMA nodes (what lets one plan serve every node of a pool).
    pub fn same_topology(&self, other: &Layout) -> bool {
        let cpus = |l: &Layout| -> Vec<Vec<Vec<usize>>> {
            l.nodes.iter().map(|n| n.cores.iter().map(|c| c.cpus.clone()).collect()).collect()
        };
        cpus(self) == cpus(other)
    }

    /// Whether SMT is on (some core has more than one online thread).
    pub fn smt(&self) -> bool {
        self.threads_per_core > 1
    }

    /// A one-line description: `2 NUMA nodes, 40 cores, 80 CPUs (2 threads/core)`.
    pub fn describe(&self) -> String {
        let cores = self.cores().count();
        format!(
            "{} NUMA node{}, {} core{}, {} CPU{} ({} thread{}/core)",
            self.nodes.len(),
            plural(self.nodes.len()),
            cores,
            plural(cores),
            self.online.len(),
            plural(self.online.len()),
            self.threads_per_core,
            plural(self.threads_per_core)
        )
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
pub(crate) mod testhost {
    //! Hand-built hosts for tests: `sockets × cores × threads`, one NUMA node per socket,
    //! sibling numbering `n`, `n + total_cores` (like the fixture worker), CPUs of a socket
    //! interleaved the way the fixture's BIOS numbers them when `interleave` is set.

    use cpuset::CpuSet;
    use host::{Cache, CpuTopo, Host, NumaNode};

    pub fn build(sockets: usize, cores: usize, threads: usize, interleave: bool) -> Host {
        let total_cores = sockets * cores;
        let mut host = Host::default();
        let mut topo = vec![];
        for t in 0..threads {
            for k in 0..total_cores {
                let cpu = t * total_cores + k;
                let (socket, core) =
                    if interleave { (k % sockets, k / sockets) } else { (k / cores, k % cores) };
                let siblings: CpuSet = (0..threads).map(|tt| tt * total_cores + k).collect();
                topo.push(CpuTopo {
                    cpu,
                    online: true,
                    package: Some(socket as i64),
                    die: Some(0),
                    core: Some(core as i64),
                    numa_node: Some(socket),
                    siblings,
                    model: Some("Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz".into()),
                    ..Default::default()
                });
            }
        }
        topo.sort_by_key(|c| c.cpu);
        for s in 0..sockets {
            let cpus: CpuSet =
                topo.iter().filter(|c| c.package == Some(s as i64)).map(|c| c.cpu).collect();
            host.numa_nodes.push(NumaNode { id: s, cpus: cpus.clone(), ..Default::default() });
            host.caches.push(Cache {
                level: 3,
                kind: "Unified".into(),
                size_kb: Some(28160),
                shared_cpus: cpus,
                id: Some(s as i64),
            });
        }
        host.cpus.online = Some(CpuSet::first_n(total_cores * threads));
        host.topology.threads_per_core = threads;
        host.topology.cpus = topo;
        host
    }

    /// The fixture worker1 (2× Gold 6230): 80 CPUs, node = CPU parity, siblings n/n+40,
    /// core_ids exactly as its sysfs reports them.
    pub fn worker1() -> Host {
        let core_ids: [i64; 40] = [
            0, 0, 4, 4, 1, 1, 3, 3, 2, 2, 12, 12, 8, 8, 11, 11, 9, 9, 10, 10, 16, 16, 20, 20, 17,
            17, 19, 19, 18, 18, 28, 28, 24, 24, 27, 27, 25, 25, 26, 26,
        ];
        let mut host = build(2, 20, 2, true);
        for c in &mut host.topology.cpus {
            c.core = Some(core_ids[c.cpu % 40]);
        }
        host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker1_layout_groups_siblings_by_node() {
        let l = Layout::from_host(&testhost::worker1());
        assert_eq!(l.nodes.len(), 2);
        assert_eq!(l.nodes[0].cores.len(), 20);
        assert_eq!(l.nodes[0].cores[0].cpus, vec![0, 40]);
        assert_eq!(l.nodes[0].cores[1].cpus, vec![2, 42]);
        assert_eq!(l.nodes[1].cores[0].cpus, vec![1, 41]);
        assert_eq!(l.threads_per_core, 2);
        assert_eq!(l.nodes[0].cores[1].core_id, 4);
        assert_eq!(l.describe(), "2 NUMA nodes, 40 cores, 80 CPUs (2 threads/core)");
    }

    #[test]
    fn empty_host_gives_empty_layout() {
        let l = Layout::from_host(&Host::default());
        assert!(l.nodes.is_empty());
        assert_eq!(l.threads_per_core, 1);
    }
}
