//! The containers view (`lowlat inspect --containers`): every container/pod cgroup found by
//! [`crate::rt::containers`] (Docker, Podman, CRI-O/containerd scopes, `kubepods` on v1 and
//! v2), with its CPU usage, CFS quota and throttling, cpuset, memory, PSI and RT readiness,
//! read through a [`Root`] (live, snapshot, must-gather) and parsed by the pure functions
//! below; and the latency-relevant issues of each, judged against the host's isolated CPUs
//! and SMT siblings ([`issues`]).

use cpuset::CpuSet;

pub use crate::cgroup::{Container, Runtime};
use crate::model::Host;
use crate::root::Root;
use crate::rt::{self, Tree};

/// Pure: the runtime and QoS class of a container cgroup path.
pub fn classify(path: &str) -> (Runtime, Option<String>) {
    let last = path.rsplit('/').next().unwrap_or("");
    let runtime = if last.starts_with("docker-") || path.contains("/docker/") {
        Runtime::Docker
    } else if last.starts_with("libpod-") || path.contains("libpod_parent") {
        Runtime::Podman
    } else if last.starts_with("crio-") {
        Runtime::Crio
    } else if last.starts_with("cri-containerd-") {
        Runtime::Containerd
    } else if path.contains("kubepods") {
        Runtime::Kubepods
    } else {
        Runtime::Other
    };
    let qos = path.contains("kubepods").then(|| {
        if path.contains("burstable") {
            "burstable"
        } else if path.contains("besteffort") {
            "besteffort"
        } else {
            "guaranteed"
        }
        .to_string()
    });
    (runtime, qos)
}

/// Pure: `key value` lines (`cpu.stat`) → the value of `key`.
pub fn stat_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// Pure: `cpu.max` (`max 100000` or `200000 100000`) → (quota, period).
pub fn parse_cpu_max(text: &str) -> (Option<u64>, Option<u64>) {
    let mut f = text.split_whitespace();
    let quota = f.next().and_then(|q| q.parse().ok());
    (quota, f.next().and_then(|p| p.parse().ok()))
}

/// Pure: `some avg10=…` of a PSI file.
pub fn psi_some_avg10(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace().find_map(|f| f.strip_prefix("avg10="))?.parse().ok()
}

/// Pure: a v1 `memory.limit_in_bytes` / v2 `memory.max` value; `max` or the v1 "unlimited"
/// (≥ 2^62) is no limit.
fn limit(text: &str) -> Option<u64> {
    text.trim().parse().ok().filter(|v: &u64| *v < (1 << 62))
}

/// Mount point of the v1 hierarchy holding `controller`.
fn v1_mount(mounts: &str, controller: &str) -> Option<String> {
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&"cgroup") && f.get(3)?.split(',').any(|o| o == controller))
            .then(|| f[1].trim_start_matches('/').to_string())
    })
}

/// Read every container cgroup through `root`, with the RT evidence of [`rt::containers`].
pub fn read(root: &Root, rt: &rt::Containers) -> Vec<Container> {
    let text = |p: String| root.read_string(&p).ok();
    let num = |p: String| root.read_trimmed(&p).ok().and_then(|v| v.parse::<u64>().ok());
    let cpus = |p: String| root.read_trimmed(&p).ok().and_then(|v| CpuSet::parse_list(&v).ok());
    let enforced = rt.budgets_enforced();
    match &rt.tree {
        Tree::V1 { mount, containers } => {
            let mounts = root.read_string("proc/mounts").unwrap_or_default();
            let cpu = mount.trim_start_matches('/').to_string();
            let acct = v1_mount(&mounts, "cpuacct").unwrap_or_else(|| cpu.clone());
            let cpuset = v1_mount(&mounts, "cpuset");
            let memory = v1_mount(&mounts, "memory");
            containers
                .iter()
                .map(|c| {
                    let p = &c.path;
                    let stat = text(format!("{cpu}{p}/cpu.stat")).unwrap_or_default();
                    let (runtime, qos) = classify(p);
                    let quota = root
                        .read_trimmed(&format!("{cpu}{p}/cpu.cfs_quota_us"))
                        .ok()
                        .and_then(|v| v.parse::<i64>().ok());
                    let zero = c.first_zero();
                    Container {
                        path: p.clone(),
                        runtime,
                        qos,
                        cpu_usage_ns: num(format!("{acct}{p}/cpuacct.usage")),
                        cfs_quota_us: quota.and_then(|q| u64::try_from(q).ok()),
                        cfs_period_us: num(format!("{cpu}{p}/cpu.cfs_period_us")),
                        nr_periods: stat_value(&stat, "nr_periods"),
                        nr_throttled: stat_value(&stat, "nr_throttled"),
                        throttled_ns: stat_value(&stat, "throttled_time"),
                        cpuset: cpuset.as_ref().and_then(|m| cpus(format!("{m}{p}/cpuset.cpus"))),
                        memory_bytes: memory
                            .as_ref()
                            .and_then(|m| num(format!("{m}{p}/memory.usage_in_bytes"))),
                        memory_limit_bytes: memory
                            .as_ref()
                            .and_then(|m| text(format!("{m}{p}/memory.limit_in_bytes")))
                            .and_then(|t| limit(&t)),
                        cpu_pressure_avg10: text(format!("{cpu}{p}/cpu.pressure"))
                            .and_then(|t| psi_some_avg10(&t)),
                        memory_pressure_avg10: None,
                        rt_ready: Some(!enforced || zero.is_none()),
                        rt_blocker: zero.filter(|_| enforced).map(|z| format!("{} = 0", z.file)),
                        recognised: rt.recognised(p),
                        nested_containers: rt.nested(p),
                    }
                })
                .collect()
        }
        Tree::V2 { mount, containers } => {
            let base = mount.trim_start_matches('/').to_string();
            let blocked = enforced && rt.rt_group_sched == Some(true);
            containers
                .iter()
                .map(|p| {
                    let d = format!("{base}{p}");
                    let stat = text(format!("{d}/cpu.stat")).unwrap_or_default();
                    let (quota, period) =
                        text(format!("{d}/cpu.max")).map_or((None, None), |t| parse_cpu_max(&t));
                    let (runtime, qos) = classify(p);
                    Container {
                        path: p.clone(),
                        runtime,
                        qos,
                        cpu_usage_ns: stat_value(&stat, "usage_usec").map(|v| v * 1000),
                        cfs_quota_us: quota,
                        cfs_period_us: period,
                        nr_periods: stat_value(&stat, "nr_periods"),
                        nr_throttled: stat_value(&stat, "nr_throttled"),
                        throttled_ns: stat_value(&stat, "throttled_usec").map(|v| v * 1000),
                        cpuset: cpus(format!("{d}/cpuset.cpus.effective")),
                        memory_bytes: num(format!("{d}/memory.current")),
                        memory_limit_bytes: text(format!("{d}/memory.max")).and_then(|t| limit(&t)),
                        cpu_pressure_avg10: text(format!("{d}/cpu.pressure"))
                            .and_then(|t| psi_some_avg10(&t)),
                        memory_pressure_avg10: text(format!("{d}/memory.pressure"))
                            .and_then(|t| psi_some_avg10(&t)),
                        rt_ready: rt.rt_group_sched.map(|_| !blocked),
                        rt_blocker: blocked.then(|| {
                            "cgroup v2 with RT group scheduling: no RT budget outside the root"
                                .to_string()
                        }),
                        recognised: rt.recognised(p),
                        nested_containers: rt.nested(p),
                    }
                })
                .collect()
        }
        Tree::Unknown => Vec::new(),
    }
}

/// The latency-relevant issues of one container on `host`, in words.
pub fn issues(c: &Container, host: &Host) -> Vec<String> {
    let mut out = Vec::new();
    let iso = host.isolated_cpus();
    if let Some(set) = &c.cpuset {
        let on_iso = set.intersection(&iso);
        if !on_iso.is_empty() && c.cfs_quota_us.is_some() {
            out.push(format!(
                "cpuset on isolated CPUs {on_iso} with a CFS quota ({} µs per {} µs): the quota throttles it there",
                c.cfs_quota_us.unwrap_or(0),
                c.cfs_period_us.unwrap_or(0)
            ));
        }
        if c.qos.as_deref() == Some("guaranteed") && !iso.is_empty() {
            let mut shared = CpuSet::new();
            for cpu in set.iter() {
                if let Some(t) = host.cpu(cpu) {
                    shared = shared.union(&t.siblings.difference(set).difference(&iso));
                }
            }
            if !shared.is_empty() {
                out.push(format!(
                    "guaranteed pod whose CPUs {set} share cores with housekeeping CPUs {shared}"
                ));
            }
        }
    }
    if let (Some(t), Some(n)) = (c.nr_throttled, c.nr_periods) {
        if t > 0 {
            out.push(format!(
                "CFS-throttled in {t} of {n} periods ({} ms in all)",
                c.throttled_ns.unwrap_or(0) / 1_000_000
            ));
        }
    }
    if c.rt_ready == Some(false) {
        out.push(format!(
            "cannot run SCHED_FIFO: {}",
            c.rt_blocker.as_deref().unwrap_or("no RT budget")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers() {
        assert_eq!(parse_cpu_max("max 100000\n"), (None, Some(100_000)));
        assert_eq!(parse_cpu_max("200000 100000\n"), (Some(200_000), Some(100_000)));
        let psi = "some avg10=1.50 avg60=0.20 avg300=0.00 total=12\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(psi_some_avg10(psi), Some(1.5));
        assert_eq!(stat_value("usage_usec 42\nnr_throttled 3\n", "nr_throttled"), Some(3));
        assert_eq!(limit("max\n"), None);
        assert_eq!(limit("9223372036854771712\n"), None);
        assert_eq!(limit("1073741824\n"), Some(1 << 30));
        assert_eq!(classify("/system.slice/docker-ab.scope"), (Runtime::Docker, None));
        assert_eq!(
            classify("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-ab.scope"),
            (Runtime::Containerd, Some("burstable".into()))
        );
        assert_eq!(classify("/kubepods/pod1/abc"), (Runtime::Kubepods, Some("guaranteed".into())));
    }

    fn fixture(name: &str) -> Root {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
        Root::open(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
    }

    fn host_with_isolated(iso: &str, siblings: &[(usize, &str)]) -> Host {
        let mut h = Host::default();
        h.cpus.isolated = CpuSet::parse_list(iso).ok();
        h.topology.cpus = siblings
            .iter()
            .map(|(cpu, s)| crate::model::CpuTopo {
                cpu: *cpu,
                online: true,
                siblings: CpuSet::parse_list(s).unwrap_or_default(),
                ..Default::default()
            })
            .collect();
        h
    }

    #[test]
    fn v1_tree_counters_and_issues() {
        let h = crate::read(&fixture("rt-v1-docker"));
        let cs = &h.cgroup.containers;
        assert_eq!(cs.len(), 2, "{cs:?}");
        let d = &cs[1];
        assert_eq!(d.path, "/system.slice/docker-4f1e2d.scope");
        assert_eq!(d.runtime, Runtime::Docker);
        assert_eq!((d.cfs_quota_us, d.cfs_period_us), (Some(50_000), Some(100_000)));
        assert_eq!(
            (d.nr_throttled, d.nr_periods, d.throttled_ns),
            (Some(37), Some(1200), Some(2_500_000_000))
        );
        assert_eq!(d.cpu_usage_ns, Some(81_234_567_890));
        assert_eq!(d.cpuset.as_ref().map(CpuSet::to_list).as_deref(), Some("2-3"));
        assert_eq!((d.memory_bytes, d.memory_limit_bytes), (Some(256 << 20), None));
        assert_eq!(d.rt_ready, Some(false));
        let k = &cs[0];
        assert_eq!(
            (k.runtime, k.qos.as_deref(), k.cfs_quota_us, k.rt_ready),
            (Runtime::Kubepods, Some("burstable"), None, Some(true))
        );
        let host = host_with_isolated("2-3", &[(0, "0,2"), (1, "1,3"), (2, "0,2"), (3, "1,3")]);
        let i = issues(d, &host);
        assert!(
            i.iter().any(|x| x.starts_with(
                "cpuset on isolated CPUs 2-3 with a CFS quota (50000 µs per 100000 µs)"
            )),
            "{i:?}"
        );
        assert!(
            i.iter().any(|x| x.starts_with("CFS-throttled in 37 of 1200 periods (2500 ms")),
            "{i:?}"
        );
        assert!(i.iter().any(|x| x.contains("docker-4f1e2d.scope/cpu.rt_runtime_us = 0")), "{i:?}");
        assert!(issues(k, &host).is_empty(), "no quota, budget on the chain, burstable");
    }

    #[test]
    fn v2_tree_counters_and_issues() {
        let h = crate::read(&fixture("rt-v2-nonroot"));
        let cs = &h.cgroup.containers;
        let paths: Vec<&str> = cs.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab12.scope",
                "/system.slice/docker-77aa.scope"
            ]
        );
        let (k, d) = (&cs[0], &cs[1]);
        assert_eq!(
            (d.cfs_quota_us, d.cfs_period_us, d.cpu_usage_ns),
            (None, Some(100_000), Some(1_500_000_000))
        );
        assert_eq!(
            (d.memory_bytes, d.memory_limit_bytes, d.cpu_pressure_avg10),
            (Some(100 << 20), None, Some(0.5))
        );
        assert_eq!((k.runtime, k.qos.as_deref()), (Runtime::Containerd, Some("guaranteed")));
        assert_eq!(
            (k.cfs_quota_us, k.throttled_ns, k.memory_limit_bytes),
            (Some(200_000), Some(400_000_000), Some(1 << 30))
        );
        assert_eq!(k.rt_ready, Some(false));
        let host = host_with_isolated("2-3", &[(0, "0,2"), (1, "1,3"), (2, "0,2"), (3, "1,3")]);
        let i = issues(k, &host);
        assert!(
            i.iter().any(
                |x| x == "guaranteed pod whose CPUs 2-3 share cores with housekeeping CPUs 0-1"
            ),
            "{i:?}"
        );
        assert!(
            i.iter().any(|x| x.starts_with("cpuset on isolated CPUs 2-3 with a CFS quota")),
            "{i:?}"
        );
        assert!(i.iter().any(|x| x.starts_with("cannot run SCHED_FIFO: cgroup v2")), "{i:?}");
    }
}
