//! Gathering the evidence a verify run looks at beyond the host model, all through a
//! [`host::Root`]: boot loader entries, irqbalance's configuration, cgroup-v1 RT budgets,
//! sysctl config files, planned files the model does not carry, the IRQs `apply` saw refused
//! (from its journal), and on the live host a short window of interrupt and idle counters.
//! [`run`] gathers it all and runs the checks.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use host::{Host, Root};
use plan::{Plan, RuntimeItem};

use crate::model::{Allow, BootEntry, Input, Irqbalance, Report, Window};

/// What one verify run is asked to do.
#[derive(Debug, Clone)]
pub struct Request {
    /// The plan to check against; `None`: the plan the host's own command line implies.
    pub plan: Option<Plan>,
    /// How fix hints name the plan (`--plan FILE`).
    pub plan_arg: String,
    /// Workload tasks allowed on the isolated CPUs.
    pub allow: Vec<Allow>,
    /// The `apply` journal, read on the live host only: IRQs whose affinity write the kernel
    /// refused there are managed (expected residue).
    pub journal: PathBuf,
    /// Live only: how long to watch interrupt and idle-state counters (zero skips it).
    pub window: Duration,
}

/// A finished verify run: the checks and what they were run against.
#[derive(Debug, Clone)]
pub struct Verified {
    pub report: Report,
    /// The plan checked against (the implied one when none was given).
    pub plan: Plan,
    /// Whether the host was the live one (else live-only checks are n.a.).
    pub live: bool,
    /// Where the host was read from, as shown to people.
    pub source: String,
}

/// Gather the evidence for `host` (read from `root`) and run every check.
pub fn run(root: &Root, mut host: Host, req: Request) -> Verified {
    let start = Instant::now();
    let live = root.is_live();
    let plan = req.plan.unwrap_or_else(|| crate::implied_plan(&host));
    let files = planned_files(root, &plan, &mut host);
    if live {
        mark_refused_irqs(&mut host, &req.journal);
        // The observer is not the observed: this verify process runs wherever the shell that
        // started it does, and is gone when the report is read.
        let me = std::process::id();
        if let Some(tasks) = host.tasks.as_mut() {
            tasks.retain(|t| t.pid != me);
        }
    }
    let window = if live && !req.window.is_zero() {
        std::thread::sleep(req.window.saturating_sub(start.elapsed()));
        window(&host, &host::read(root), start.elapsed())
    } else {
        None
    };
    let input = Input {
        host: &host,
        plan: &plan,
        live,
        boot_entries: boot_entries(root),
        irqbalance: irqbalance(root, &host),
        window,
        allow: req.allow,
        rt: host::rt::containers(root),
        files,
        sysctl_conf: sysctl_conf(root),
        plan_arg: req.plan_arg,
    };
    let report = crate::verify(&input);
    Verified { report, plan, live, source: root.to_string() }
}

/// The observation window between two reads of the live host; `None` when either lacks
/// `/proc/interrupts`.
fn window(before: &Host, after: &Host, duration: Duration) -> Option<Window> {
    Some(Window {
        duration,
        interrupts_before: before.interrupts.clone()?,
        interrupts_after: after.interrupts.clone()?,
        idle_before: before.power.cpus.clone(),
        idle_after: after.power.cpus.clone(),
    })
}

/// Boot loader command lines for the next boot: BLS entries and /etc/default/grub.
pub fn boot_entries(root: &Root) -> Vec<BootEntry> {
    let mut out = Vec::new();
    let dir = "boot/loader/entries";
    for name in root.list_dir(dir).unwrap_or_default().into_iter().filter(|n| n.ends_with(".conf"))
    {
        let path = format!("{dir}/{name}");
        if let Ok(text) = root.read_string(&path) {
            if let Some(opts) = text.lines().find_map(|l| l.trim().strip_prefix("options")) {
                out.push(BootEntry {
                    source: format!("/{path}"),
                    cmdline: opts.trim().to_string(),
                });
            }
        }
    }
    if let Ok(text) = root.read_string("etc/default/grub") {
        let mut line = String::new();
        for l in text.lines() {
            for key in ["GRUB_CMDLINE_LINUX=", "GRUB_CMDLINE_LINUX_DEFAULT="] {
                if let Some(v) = l.trim().strip_prefix(key) {
                    line.push(' ');
                    line.push_str(v.trim().trim_matches(['"', '\'']));
                }
            }
        }
        if !line.trim().is_empty() {
            out.push(BootEntry {
                source: "/etc/default/grub".into(),
                cmdline: line.trim().to_string(),
            });
        }
    }
    out
}

/// Whether irqbalance runs and the CPUs its configuration bans; `None` without a task list.
fn irqbalance(root: &Root, host: &Host) -> Option<Irqbalance> {
    let tasks = host.tasks.as_ref()?;
    let running = tasks.iter().any(|t| t.comm == "irqbalance");
    let mut ban = None;
    for file in ["etc/sysconfig/irqbalance", "etc/default/irqbalance"] {
        let Ok(text) = root.read_string(file) else { continue };
        for l in text.lines().map(str::trim).filter(|l| !l.starts_with('#')) {
            for var in ["IRQBALANCE_BANNED_CPULIST", "IRQBALANCE_BANNED_CPUS"] {
                if let Some(v) = l.strip_prefix(var).and_then(|r| r.strip_prefix('=')) {
                    ban = Some((
                        format!("/{file}"),
                        var.to_string(),
                        v.trim_matches(['"', '\'']).to_string(),
                    ));
                }
            }
        }
    }
    Some(Irqbalance { running, ban })
}

/// `key = value` lines of the files `sysctl --system` reads, in its order: (file, key, value).
fn sysctl_conf(root: &Root) -> Vec<(String, String, String)> {
    let mut files = Vec::new();
    for dir in ["usr/lib/sysctl.d", "run/sysctl.d", "etc/sysctl.d"] {
        let mut names = root.list_dir(dir).unwrap_or_default();
        names.sort();
        files.extend(
            names.into_iter().filter(|n| n.ends_with(".conf")).map(|n| format!("{dir}/{n}")),
        );
    }
    files.push("etc/sysctl.conf".into());
    let mut out = Vec::new();
    for f in files {
        let Ok(text) = root.read_string(&f) else { continue };
        for line in text.lines().map(str::trim) {
            if line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some((k, v)) = line.split_once('=') {
                let key = k.trim().trim_start_matches('-').to_string();
                out.push((format!("/{f}"), key, v.trim().to_string()));
            }
        }
    }
    out
}

/// Values of planned knobs the host model may not carry, read through the root: planned
/// files and energy-perf-bias by absolute path (returned), planned sysctls (and
/// `kernel.sched_rt_runtime_us`) added to the model's sysctls when it lacks them.
fn planned_files(root: &Root, plan: &Plan, host: &mut Host) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut names: Vec<String> = vec!["kernel.sched_rt_runtime_us".into()];
    for item in &plan.runtime {
        match item {
            RuntimeItem::Sysctl { name, .. } => names.push(name.clone()),
            RuntimeItem::File { path, .. } => {
                let rel = path.trim_start_matches('/');
                if let Ok(v) = root.read_trimmed(rel) {
                    files.insert(format!("/{rel}"), v);
                }
            }
            RuntimeItem::EnergyPerfBias { cpus, .. } => {
                for cpu in cpus.iter() {
                    let rel = format!("sys/devices/system/cpu/cpu{cpu}/power/energy_perf_bias");
                    if let Ok(v) = root.read_trimmed(&rel) {
                        files.insert(format!("/{rel}"), v);
                    }
                }
            }
            _ => {}
        }
    }
    for name in names {
        let path = format!("proc/sys/{}", name.replace('.', "/"));
        if let Entry::Vacant(e) = host.sysctls.values.entry(name) {
            if let Ok(v) = root.read_trimmed(&path) {
                e.insert(v);
            }
        }
    }
    files
}

/// IRQs whose `smp_affinity` write `apply` saw refused (EIO/EPERM/EINVAL) in this boot are
/// managed or per-CPU: mark them so, since `/proc` does not say. A missing or unreadable
/// journal marks nothing.
fn mark_refused_irqs(host: &mut Host, journal: &std::path::Path) {
    let Some(boot) = host.kernel.boot_id.clone() else { return };
    let Ok(refused) = tune::journal::refused_irqs(journal, &boot) else { return };
    for i in host.irqs.iter_mut().filter(|i| refused.contains(&i.irq) && i.managed.is_none()) {
        i.managed = Some(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
        fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
    }

    fn tree() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let r = dir.path();
        write(r, "boot/loader/entries/a.conf", "title x\noptions root=/dev/vda nohz_full=1\n");
        write(r, "boot/loader/entries/notes.txt", "options ignored\n");
        write(
            r,
            "etc/default/grub",
            "GRUB_CMDLINE_LINUX=\"quiet\"\nGRUB_CMDLINE_LINUX_DEFAULT='isolcpus=1'\n",
        );
        write(
            r,
            "etc/sysconfig/irqbalance",
            "# IRQBALANCE_BANNED_CPUS=ff\nIRQBALANCE_BANNED_CPULIST=\"1-3\"\n",
        );
        write(r, "usr/lib/sysctl.d/50-default.conf", "kernel.timer_migration = 1\n; note\n");
        write(r, "etc/sysctl.d/99-lowlat.conf", "# c\n-kernel.timer_migration=0\n");
        write(r, "etc/sysctl.conf", "vm.stat_interval = 10\n");
        write(r, "proc/sys/vm/stat_interval", "10\n");
        write(r, "proc/sys/kernel/sched_rt_runtime_us", "-1\n");
        write(r, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
        write(r, "sys/devices/system/cpu/cpu1/power/energy_perf_bias", "0\n");
        let root = Root::open(r).unwrap_or_else(|e| panic!("{e}"));
        (dir, root)
    }

    #[test]
    fn boot_entries_from_bls_and_grub() {
        let (_dir, root) = tree();
        let e = boot_entries(&root);
        assert_eq!(
            e,
            vec![
                BootEntry {
                    source: "/boot/loader/entries/a.conf".into(),
                    cmdline: "root=/dev/vda nohz_full=1".into()
                },
                BootEntry {
                    source: "/etc/default/grub".into(),
                    cmdline: "quiet isolcpus=1".into()
                },
            ]
        );
    }

    #[test]
    fn irqbalance_ban_and_running() {
        let (_dir, root) = tree();
        assert_eq!(irqbalance(&root, &Host::default()), None, "no task list, no answer");
        let mut host = Host::default();
        host.tasks = Some(vec![host::Task { comm: "irqbalance".into(), ..Default::default() }]);
        let ib = irqbalance(&root, &host).unwrap_or_else(|| panic!("irqbalance"));
        assert!(ib.running);
        assert_eq!(
            ib.ban,
            Some((
                "/etc/sysconfig/irqbalance".into(),
                "IRQBALANCE_BANNED_CPULIST".into(),
                "1-3".into()
            ))
        );
    }

    #[test]
    fn sysctl_conf_in_sysctl_system_order() {
        let (_dir, root) = tree();
        let keys: Vec<(String, String)> =
            sysctl_conf(&root).into_iter().map(|(f, k, v)| (f, format!("{k}={v}"))).collect();
        assert_eq!(
            keys,
            vec![
                ("/usr/lib/sysctl.d/50-default.conf".into(), "kernel.timer_migration=1".into()),
                ("/etc/sysctl.d/99-lowlat.conf".into(), "kernel.timer_migration=0".into()),
                ("/etc/sysctl.conf".into(), "vm.stat_interval=10".into()),
            ]
        );
    }

    #[test]
    fn planned_files_and_missing_sysctls() {
        let (_dir, root) = tree();
        let mut host = Host::default();
        host.sysctls.values.insert("vm.stat_interval".into(), "1".into());
        let plan = Plan {
            runtime: vec![
                RuntimeItem::Sysctl {
                    name: "vm.stat_interval".into(),
                    value: "10".into(),
                    reason: String::new(),
                },
                RuntimeItem::File {
                    path: "sys/kernel/mm/transparent_hugepage/enabled".into(),
                    value: "never".into(),
                    reason: String::new(),
                },
                RuntimeItem::EnergyPerfBias {
                    cpus: cpuset::CpuSet::from_cpus([1, 2]),
                    value: "0".into(),
                    reason: String::new(),
                },
            ],
            ..crate::implied_plan(&Host::default())
        };
        let files = planned_files(&root, &plan, &mut host);
        assert_eq!(files.len(), 2, "{files:?}");
        assert_eq!(files["/sys/kernel/mm/transparent_hugepage/enabled"], "always [madvise] never");
        assert_eq!(files["/sys/devices/system/cpu/cpu1/power/energy_perf_bias"], "0");
        assert_eq!(host.sysctls.values["vm.stat_interval"], "1", "the model's value wins");
        assert_eq!(host.sysctls.values["kernel.sched_rt_runtime_us"], "-1");
    }

    #[test]
    fn refused_irqs_of_this_boot_are_managed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let journal = dir.path().join("j.jsonl");
        let line = |seq: u32, irq: u32, boot: &str| {
            format!(
                r#"{{"type":"change","seq":{seq},"kind":"file","path":"/proc/irq/{irq}/smp_affinity_list","format":"cpu-list","old":"0-1","new":"0","why":"","time":"","boot_id":"{boot}"}}"#
            )
        };
        let text = [
            line(1, 24, "b"),
            r#"{"type":"outcome","seq":1,"outcome":"refused","message":"EIO"}"#.into(),
            line(2, 25, "b"),
            r#"{"type":"outcome","seq":2,"outcome":"applied","message":null}"#.into(),
            line(3, 26, "old"),
            r#"{"type":"outcome","seq":3,"outcome":"refused","message":"EIO"}"#.into(),
        ]
        .join("\n")
            + "\n";
        fs::write(&journal, text).unwrap_or_else(|e| panic!("{e}"));
        let mut host = Host::default();
        host.kernel.boot_id = Some("b".into());
        host.irqs =
            [24, 25, 26].into_iter().map(|irq| host::Irq { irq, ..Default::default() }).collect();
        mark_refused_irqs(&mut host, &journal);
        let managed: Vec<(u32, Option<bool>)> =
            host.irqs.iter().map(|i| (i.irq, i.managed)).collect();
        assert_eq!(managed, vec![(24, Some(true)), (25, None), (26, None)]);
        // No journal: nothing marked, no error.
        mark_refused_irqs(&mut host, &dir.path().join("none.jsonl"));
    }
}
