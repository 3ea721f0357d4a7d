//! System knobs: workqueue cpumasks (global unbound, writeback, per-workqueue), the sysctls
//! that matter for latency, and the cgroup version with v2 cpuset partitions.

use super::Ctx;
use crate::model::{CpusetPartition, Host};

const WQ: &str = "sys/devices/virtual/workqueue";

/// Sysctls read, by dotted name.
pub const SYSCTLS: &[&str] = &[
    "kernel.sched_rt_runtime_us",
    "kernel.sched_rt_period_us",
    "kernel.timer_migration",
    "kernel.nmi_watchdog",
    "kernel.watchdog",
    "kernel.watchdog_cpumask",
    "kernel.numa_balancing",
    "kernel.hung_task_timeout_secs",
    "kernel.sched_autogroup_enabled",
    "vm.stat_interval",
    "vm.swappiness",
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.dirty_bytes",
    "vm.dirty_background_bytes",
    "vm.dirty_expire_centisecs",
    "vm.dirty_writeback_centisecs",
    "net.core.busy_read",
    "net.core.busy_poll",
];

pub(super) fn read(cx: &mut Ctx, host: &mut Host) {
    host.workqueues.cpumask = cx.cpus("workqueues.cpumask", &format!("{WQ}/cpumask"), true);
    host.workqueues.writeback =
        cx.cpus("workqueues.writeback", "sys/bus/workqueue/devices/writeback/cpumask", true);
    host.workqueues.writeback_numa =
        cx.opt_value("workqueues.writeback_numa", "sys/bus/workqueue/devices/writeback/numa");
    host.workqueues.writeback_affinity_scope = cx.opt_value(
        "workqueues.writeback_affinity_scope",
        "sys/bus/workqueue/devices/writeback/affinity_scope",
    );
    if let Some(names) = cx.list("workqueues.per_workqueue", WQ) {
        for n in names {
            if matches!(n.as_str(), "cpumask" | "power" | "uevent" | "subsystem") {
                continue;
            }
            // Only WQ_SYSFS workqueues are directories with a cpumask (unbound ones).
            let Some(v) = cx.opt_text("workqueues.per_workqueue", &format!("{WQ}/{n}/cpumask"))
            else {
                continue;
            };
            if let Some(s) = cx.parse_cpus(&format!("{WQ}/{n}/cpumask"), &v, true) {
                host.workqueues.per_workqueue.insert(n, s);
            }
        }
    }
    for name in SYSCTLS {
        let path = format!("proc/sys/{}", name.replace('.', "/"));
        if let Some(v) = cx.opt_value(&format!("sysctls.{name}"), &path) {
            host.sysctls.values.insert(name.to_string(), v);
        }
    }
    cgroup(cx, host);
}

fn cgroup(cx: &mut Ctx, host: &mut Host) {
    host.cgroup.rt = crate::rt::containers(cx.root);
    host.cgroup.containers = crate::containers::read(cx.root, &host.cgroup.rt);
    let Some(mounts) = cx.opt_text("cgroup.version", "proc/mounts") else {
        cx.unknown("cgroup.version", "proc/mounts", "not present".into());
        return;
    };
    let (version, v2) = cgroup_version(&mounts);
    host.cgroup.version = version;
    let Some(mount) = v2 else { return };
    let mount = mount.trim_start_matches('/').to_string();
    let mut stack = vec![(mount.clone(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Some(names) = cx.list("cgroup.partitions", &dir) else { continue };
        if names.iter().any(|n| n == "cpuset.cpus.partition") {
            if let Some(p) =
                cx.opt_value("cgroup.partitions", &format!("{dir}/cpuset.cpus.partition"))
            {
                if p != "member" {
                    let cpus =
                        cx.cpus("cgroup.partitions", &format!("{dir}/cpuset.cpus.effective"), true);
                    let rel = dir.strip_prefix(&mount).unwrap_or(&dir);
                    let path = if rel.is_empty() { "/".to_string() } else { rel.to_string() };
                    host.cgroup.partitions.push(CpusetPartition {
                        path,
                        partition: p,
                        cpus_effective: cpus,
                    });
                }
            }
        }
        if depth < 3 && names.iter().any(|n| n == "cgroup.procs") {
            for n in names.iter().rev().filter(|n| !is_interface_file(n)) {
                stack.push((format!("{dir}/{n}"), depth + 1));
            }
        }
    }
}

/// cgroup v2 interface files are `<controller>.<knob>`; everything else is a child cgroup.
fn is_interface_file(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "cgroup.", "cpu.", "cpuset.", "memory.", "io.", "pids.", "hugetlb.", "rdma.", "misc.",
        "irq.", "dmem.",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// cgroup version from `/proc/mounts`: `v1`, `v2`, `hybrid` (both mounted) or `None`, and the
/// first cgroup2 mount point.
pub(crate) fn cgroup_version(mounts: &str) -> (Option<String>, Option<String>) {
    let (v1, v2) = mounts.lines().fold((false, None), |(v1, v2), l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.get(2) {
            Some(&"cgroup") => (true, v2),
            Some(&"cgroup2") => (v1, v2.or_else(|| f.get(1).map(|m| m.to_string()))),
            _ => (v1, v2),
        }
    });
    let version = match (v1, &v2) {
        (true, Some(_)) => Some("hybrid".into()),
        (true, None) => Some("v1".into()),
        (false, Some(_)) => Some("v2".into()),
        (false, None) => None,
    };
    (version, v2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_versions() {
        let hybrid = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\ncgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
        assert_eq!(
            cgroup_version(hybrid),
            (Some("hybrid".into()), Some("/sys/fs/cgroup/unified".into()))
        );
        assert_eq!(
            cgroup_version("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n").0.as_deref(),
            Some("v2")
        );
        assert_eq!(
            cgroup_version("cgroup /sys/fs/cgroup/cpu cgroup rw 0 0\n").0.as_deref(),
            Some("v1")
        );
        assert_eq!(cgroup_version("garbage\n\n"), (None, None));
        assert!(is_interface_file("cpuset.cpus.partition"));
        assert!(!is_interface_file("kubepods.slice"));
    }
}
