//! From a plan and the host model to the list of runtime changes `apply` makes (pure): which
//! file or task, the new value, and why; plus notes on what is left alone on purpose
//! (per-CPU kthreads, kubepods tasks, the allowlisted workload, knobs this host lacks) and the
//! boot-tier arguments that wait for a reboot.

use cpuset::CpuSet;
use host::{Host, Task};
use plan::{KernelArg, Plan, RuntimeItem};

use crate::target::{Format, NotAllowed, Target};

/// One change to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub target: Target,
    pub new: String,
    pub why: String,
}

/// Something deliberately not changed, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Note {
    pub what: String,
    pub why: String,
}

/// A workload task to leave where it is (`--allow`): a pid or a comm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allow {
    Pid(u32),
    Comm(String),
}

impl Allow {
    /// `1234` is a pid, anything else a comm.
    pub fn parse(s: &str) -> Self {
        s.parse().map_or_else(|_| Allow::Comm(s.to_string()), Allow::Pid)
    }

    /// Whether `task` is this workload.
    pub fn matches(&self, task: &Task) -> bool {
        match self {
            Allow::Pid(p) => task.pid == *p || task.tid == *p,
            Allow::Comm(c) => task.comm == *c,
        }
    }
}

impl std::str::FromStr for Allow {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self::parse(s))
    }
}

/// What `apply` may touch beyond the plan's own items.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Also move user tasks (never those in kubepods cgroups or allowlisted).
    pub move_tasks: bool,
    pub allow: Vec<Allow>,
}

/// The runtime changes of a plan on a host.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub changes: Vec<Change>,
    pub notes: Vec<Note>,
}

/// Whether a task sits in a Kubernetes pod cgroup (never re-pinned: the kubelet owns it).
pub fn in_kubepods(task: &Task) -> bool {
    task.cgroup.as_deref().is_some_and(|c| c.contains("kubepods"))
}

/// Mask width for hex writes: the highest CPU the host knows of, plus one.
fn width(host: &Host) -> usize {
    let from = |s: &Option<CpuSet>| s.as_ref().and_then(CpuSet::last).map(|l| l + 1);
    from(&host.cpus.possible)
        .or_else(|| from(&host.cpus.present))
        .or_else(|| host.online_cpus().last().map(|l| l + 1))
        .unwrap_or(1)
}

/// `current ∩ target`, or all of `target` when that is empty (TuneD's rule: keep a
/// deliberate placement on housekeeping CPUs, move everything else to all of them).
fn narrowed(current: &CpuSet, target: &CpuSet) -> CpuSet {
    let inter = current.intersection(target);
    if inter.is_empty() {
        target.clone()
    } else {
        inter
    }
}

/// Host path of a dotted sysctl name.
pub fn sysctl_path(name: &str) -> String {
    format!("/proc/sys/{}", name.replace('.', "/"))
}

/// Files that hold a `[selected]` word.
fn format_of(path: &str) -> Format {
    if path.ends_with("transparent_hugepage/enabled")
        || path.ends_with("transparent_hugepage/defrag")
    {
        Format::Selector
    } else if path.ends_with("_list") || path.ends_with("watchdog_cpumask") {
        // kernel.watchdog_cpumask is a cpu-list despite its name.
        Format::CpuList
    } else if path.ends_with("cpumask") || path.ends_with("smp_affinity") {
        Format::CpuMask
    } else {
        Format::Text
    }
}

/// Compute the changes of `plan` on `host`. Refused when one would write something `apply`
/// never writes ([`Target::check`]: a plan `file` item or sysctl naming `/etc/passwd`, `..`,
/// `kernel.core_pattern`…): nothing of such a plan is applied.
pub fn plan_changes(plan: &Plan, host: &Host, opts: &Options) -> Result<Changes, NotAllowed> {
    let mut out = Changes::default();
    let w = width(host);
    for item in &plan.runtime {
        match item {
            RuntimeItem::IrqAffinity { cpus, reason } => irqs(host, cpus, reason, w, &mut out),
            RuntimeItem::WorkqueueMask { cpus, reason } => {
                workqueues(host, cpus, reason, w, &mut out)
            }
            RuntimeItem::KthreadAffinity { cpus, reason } => {
                tasks(host, cpus, reason, true, opts, &mut out)
            }
            RuntimeItem::Sysctl { name, value, reason } => out.changes.push(Change {
                target: Target::file(sysctl_path(name), format_of(name)),
                new: value.clone(),
                why: reason.clone(),
            }),
            RuntimeItem::File { path, value, reason } => {
                let abs = format!("/{}", path.trim_start_matches('/'));
                out.changes.push(Change {
                    target: Target::file(&abs, format_of(&abs)),
                    new: value.clone(),
                    why: reason.clone(),
                });
            }
            RuntimeItem::Governor { cpus, governor, reason } => per_cpu_file(
                host,
                cpus,
                "cpufreq/scaling_governor",
                governor,
                reason,
                |p| p.governor.is_some(),
                &mut out,
            ),
            RuntimeItem::EnergyPerfBias { cpus, value, reason } => per_cpu_file(
                host,
                cpus,
                "power/energy_perf_bias",
                value,
                reason,
                |_| true,
                &mut out,
            ),
            RuntimeItem::IdleLimit { cpus, max_latency_us, reason, disable_states } => {
                idle(host, cpus, *max_latency_us, reason, *disable_states, &mut out)
            }
        }
    }
    if opts.move_tasks {
        tasks(
            host,
            &plan.reserved,
            "user tasks off the isolated CPUs (--move-tasks)",
            false,
            opts,
            &mut out,
        );
    }
    for c in &out.changes {
        c.target.check()?;
    }
    Ok(out)
}

fn irqs(host: &Host, cpus: &CpuSet, reason: &str, w: usize, out: &mut Changes) {
    for irq in &host.irqs {
        let Some(aff) = &irq.affinity else { continue };
        if aff.is_subset(cpus) {
            continue;
        }
        if irq.managed == Some(true) {
            out.notes.push(Note {
                what: format!("IRQ {} ({})", irq.irq, irq.name.as_deref().unwrap_or("?")),
                why: "managed IRQ: the kernel owns its affinity (isolcpus=managed_irq keeps it off isolated CPUs)".into(),
            });
            continue;
        }
        out.changes.push(Change {
            target: Target::file(
                format!("/proc/irq/{}/smp_affinity_list", irq.irq),
                Format::CpuList,
            ),
            new: narrowed(aff, cpus).to_list(),
            why: reason.to_string(),
        });
    }
    let new =
        host.default_smp_affinity.as_ref().map_or_else(|| cpus.clone(), |d| narrowed(d, cpus));
    out.changes.push(Change {
        target: Target::file("/proc/irq/default_smp_affinity", Format::CpuMask),
        new: new.to_mask(w),
        why: format!("{reason} (IRQs activated later)"),
    });
}

fn workqueues(host: &Host, cpus: &CpuSet, reason: &str, w: usize, out: &mut Changes) {
    let mask = cpus.to_mask(w);
    let mut push = |path: String, why: String| {
        out.changes.push(Change {
            target: Target::file(path, Format::CpuMask),
            new: mask.clone(),
            why,
        })
    };
    // The global mask first: per-workqueue masks are limited by it on recent kernels.
    if host.workqueues.cpumask.is_some() {
        push(
            "/sys/devices/virtual/workqueue/cpumask".into(),
            format!("{reason} (all unbound workqueues)"),
        );
    }
    for name in host.workqueues.per_workqueue.keys() {
        push(
            format!("/sys/devices/virtual/workqueue/{name}/cpumask"),
            format!("{reason} (workqueue {name})"),
        );
    }
    if host.workqueues.writeback.is_some()
        && !host.workqueues.per_workqueue.contains_key("writeback")
    {
        push(
            "/sys/bus/workqueue/devices/writeback/cpumask".into(),
            format!("{reason} (writeback)"),
        );
    }
    if let Some((target, new)) = writeback_scope(host) {
        out.changes.push(Change {
            target,
            new: new.into(),
            why: format!("{reason} (writeback: one worker pool for the whole mask, not one per NUMA node or cache, as the RHEL 7 low-latency guide's writeback/numa=0)"),
        });
    }
}

/// The writeback workqueue's pool scope and the value that makes it one pool over its
/// cpumask: `numa` = `0` before Linux 6.6, `affinity_scope` = `system` since.
pub fn writeback_scope(host: &Host) -> Option<(Target, &'static str)> {
    const DIR: &str = "/sys/bus/workqueue/devices/writeback";
    if host.workqueues.writeback_numa.is_some() {
        Some((Target::file(format!("{DIR}/numa"), Format::Text), "0"))
    } else if host.workqueues.writeback_affinity_scope.is_some() {
        Some((Target::file(format!("{DIR}/affinity_scope"), Format::Word), "system"))
    } else {
        None
    }
}

fn allowed(task: &Task, opts: &Options) -> bool {
    opts.allow.iter().any(|a| a.matches(task))
}

fn tasks(
    host: &Host,
    cpus: &CpuSet,
    reason: &str,
    kthreads: bool,
    opts: &Options,
    out: &mut Changes,
) {
    let Some(tasks) = &host.tasks else {
        out.notes
            .push(Note { what: "tasks".into(), why: "the task list could not be read".into() });
        return;
    };
    let mut per_cpu = 0usize;
    let mut irq_threads = 0usize;
    for t in tasks.iter().filter(|t| t.kthread == kthreads) {
        let Some(aff) = &t.allowed_cpus else { continue };
        if aff.is_subset(cpus) {
            continue;
        }
        if t.per_cpu_kthread {
            per_cpu += 1;
            continue;
        }
        if t.irq_thread().is_some() {
            irq_threads += 1;
            continue;
        }
        let what = format!("pid {} tid {} ({})", t.pid, t.tid, t.comm);
        if !kthreads && in_kubepods(t) {
            out.notes.push(Note {
                what,
                why: "in a kubepods cgroup: the kubelet owns its placement".into(),
            });
            continue;
        }
        if allowed(t, opts) {
            out.notes.push(Note { what, why: "allowlisted workload (--allow)".into() });
            continue;
        }
        out.changes.push(Change {
            target: Target::Task {
                pid: t.pid,
                tid: t.tid,
                start_time: t.start_time,
                comm: t.comm.clone(),
            },
            new: narrowed(aff, cpus).to_list(),
            why: reason.to_string(),
        });
    }
    if per_cpu > 0 {
        out.notes.push(Note {
            what: format!("{per_cpu} per-CPU kthreads"),
            why: "bound to their CPU (PF_NO_SETAFFINITY): expected residue, never moved".into(),
        });
    }
    if irq_threads > 0 {
        out.notes.push(Note {
            what: format!("{irq_threads} threaded IRQ handlers (irq/N-…)"),
            why: "they follow their IRQ's affinity (the kernel moves each after its IRQ's next interrupt); moving the thread alone would leave the interrupt where it is and add a cross-CPU wake-up".into(),
        });
    }
}

fn per_cpu_file(
    host: &Host,
    cpus: &CpuSet,
    rel: &str,
    value: &str,
    reason: &str,
    present: impl Fn(&host::CpuPower) -> bool,
    out: &mut Changes,
) {
    for cpu in cpus.iter() {
        let known = host.power.cpus.iter().find(|p| p.cpu == cpu);
        if known.is_some_and(|p| !present(p)) {
            out.notes.push(Note {
                what: format!("cpu{cpu} {rel}"),
                why: "this host does not expose it (no cpufreq driver?)".into(),
            });
            continue;
        }
        out.changes.push(Change {
            target: Target::file(format!("/sys/devices/system/cpu/cpu{cpu}/{rel}"), Format::Text),
            new: value.to_string(),
            why: reason.to_string(),
        });
    }
}

fn idle(
    host: &Host,
    cpus: &CpuSet,
    max_us: u64,
    reason: &str,
    disable_states: bool,
    out: &mut Changes,
) {
    for cpu in cpus.iter() {
        let power = host.power.cpus.iter().find(|p| p.cpu == cpu);
        let has_qos = power.is_none_or(|p| p.pm_qos_resume_latency_us.is_some());
        if has_qos {
            // "n/a" means 0 µs (poll only); "0" would mean no constraint.
            let value = if max_us == 0 { "n/a".to_string() } else { max_us.to_string() };
            out.changes.push(Change {
                target: Target::file(
                    format!("/sys/devices/system/cpu/cpu{cpu}/power/pm_qos_resume_latency_us"),
                    Format::Text,
                ),
                new: value,
                why: format!("{reason} (per-CPU PM QoS, persists without a daemon)"),
            });
            if !disable_states {
                continue;
            }
        }
        let states = power.map(|p| p.idle_states.as_slice()).unwrap_or_default();
        if disable_states && power.is_some_and(|p| p.idle_states.is_empty()) {
            out.notes.push(Note {
                what: format!("cpu{cpu} cpuidle states"),
                why: "this host exposes no cpuidle states for it (idle=poll, no cpuidle driver, or not captured)".into(),
            });
        }
        for st in deeper_states(states, max_us) {
            out.changes.push(Change {
                target: Target::file(
                    format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{}/disable", st.index),
                    Format::Text,
                ),
                new: "1".into(),
                why: format!(
                    "{reason} ({} exit latency {} µs > {max_us})",
                    st.name,
                    st.exit_latency_us.unwrap_or(0)
                ),
            });
        }
    }
}

/// The idle states of one CPU whose exit latency is above `max_us`: those an idle limit
/// switches off.
pub fn deeper_states(
    states: &[host::IdleState],
    max_us: u64,
) -> impl Iterator<Item = &host::IdleState> {
    states.iter().filter(move |st| st.exit_latency_us.is_some_and(|l| l > max_us))
}

/// Boot-tier arguments of the plan that the running kernel was not booted with.
pub fn pending_kernel_args(plan: &Plan, host: &Host) -> Vec<KernelArg> {
    let running = &host.kernel.boot.tokens;
    plan.kernel_args
        .iter()
        .filter(|a| {
            !running.iter().any(|(k, v)| *k == a.key && same_arg(a.value.as_deref(), v.as_deref()))
        })
        .cloned()
        .collect()
}

/// Split an isolcpus-style value into sorted flags and the cpu set (`None` when the value
/// holds no cpu-list).
pub fn flags_and_cpus(value: &str) -> (Vec<String>, Option<CpuSet>) {
    let mut flags = Vec::new();
    let mut cpus: Vec<&str> = Vec::new();
    for part in value.split(',') {
        if part.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
            flags.push(part.to_string());
        } else {
            cpus.push(part);
        }
    }
    flags.sort();
    let set = if cpus.is_empty() { None } else { CpuSet::parse_list(&cpus.join(",")).ok() };
    (flags, set)
}

/// Kernel-argument values compared as parsed sets (isolcpus-style flags and cpus) when both
/// hold a cpu-list, else as text.
pub fn same_arg(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => match (flags_and_cpus(a), flags_and_cpus(b)) {
            ((fa, Some(ca)), (fb, Some(cb))) => fa == fb && ca == cb,
            _ => a == b,
        },
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_arg_values_compare_as_sets() {
        assert!(same_arg(Some("managed_irq,domain,2-4"), Some("domain,managed_irq,2,3,4")));
        assert!(!same_arg(Some("2-4"), Some("2-5")));
        assert!(same_arg(Some("on"), Some("on")));
        assert!(!same_arg(Some("on"), None));
    }
}

#[cfg(test)]
mod plan_tests {
    use super::*;
    use host::{CpuPower, IdleState};

    fn plan(items: Vec<RuntimeItem>) -> Plan {
        Plan {
            schema_version: 1,
            name: "t".into(),
            host: None,
            reserved: CpuSet::from_cpus([0]),
            isolated: CpuSet::from_cpus([1]),
            offlined: CpuSet::new(),
            options: Default::default(),
            kernel_args: vec![],
            runtime: items,
            rationale: vec![],
            smt_disabled: CpuSet::new(),
        }
    }

    #[test]
    fn idle_limit_uses_pm_qos_or_falls_back_to_disabling_deep_states() {
        let mut host = Host::default();
        let st = |i: usize, lat: u64| IdleState {
            index: i,
            name: format!("C{i}"),
            exit_latency_us: Some(lat),
            ..Default::default()
        };
        host.power.cpus = vec![
            CpuPower {
                cpu: 1,
                pm_qos_resume_latency_us: None,
                idle_states: vec![st(0, 0), st(1, 2), st(2, 100)],
                ..Default::default()
            },
            CpuPower { cpu: 2, pm_qos_resume_latency_us: Some("0".into()), ..Default::default() },
        ];
        let p = plan(vec![RuntimeItem::IdleLimit {
            cpus: CpuSet::from_cpus([1, 2]),
            max_latency_us: 10,
            reason: "r".into(),
            disable_states: false,
        }]);
        let c = plan_changes(&p, &host, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
        let paths: Vec<String> =
            c.changes.iter().map(|c| format!("{}={}", c.target, c.new)).collect();
        assert_eq!(
            paths,
            vec![
                "/sys/devices/system/cpu/cpu1/cpuidle/state2/disable=1".to_string(),
                "/sys/devices/system/cpu/cpu2/power/pm_qos_resume_latency_us=10".to_string(),
            ]
        );
    }

    #[test]
    fn a_chosen_idle_limit_also_disables_every_deeper_state() {
        let mut host = Host::default();
        let st = |i: usize, lat: u64| IdleState {
            index: i,
            name: format!("C{i}"),
            exit_latency_us: Some(lat),
            ..Default::default()
        };
        host.power.cpus = vec![
            CpuPower {
                cpu: 1,
                pm_qos_resume_latency_us: Some("0".into()),
                idle_states: vec![st(0, 0), st(1, 2), st(2, 33), st(3, 133), st(4, 290)],
                ..Default::default()
            },
            CpuPower { cpu: 2, pm_qos_resume_latency_us: Some("0".into()), ..Default::default() },
        ];
        let p = plan(vec![RuntimeItem::IdleLimit {
            cpus: CpuSet::from_cpus([1, 2]),
            max_latency_us: 80,
            reason: "r".into(),
            disable_states: true,
        }]);
        let c = plan_changes(&p, &host, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<String> =
            c.changes.iter().map(|c| format!("{}={}", c.target, c.new)).collect();
        assert_eq!(
            got,
            [
                "/sys/devices/system/cpu/cpu1/power/pm_qos_resume_latency_us=80",
                "/sys/devices/system/cpu/cpu1/cpuidle/state3/disable=1",
                "/sys/devices/system/cpu/cpu1/cpuidle/state4/disable=1",
                "/sys/devices/system/cpu/cpu2/power/pm_qos_resume_latency_us=80",
            ]
        );
        assert!(c.changes[1].why.contains("C3 exit latency 133 µs > 80"), "{}", c.changes[1].why);
        assert_eq!(c.notes.len(), 1, "{:?}", c.notes);
        assert!(c.notes[0].what.contains("cpu2"));
    }

    #[test]
    fn the_writeback_pool_scope_follows_the_kernel() {
        let mask = |host: &Host| {
            let p = plan(vec![RuntimeItem::WorkqueueMask {
                cpus: CpuSet::from_cpus([0]),
                reason: "r".into(),
            }]);
            let c = plan_changes(&p, host, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
            c.changes.iter().map(|c| format!("{}={}", c.target, c.new)).collect::<Vec<_>>()
        };
        let mut host = Host::default();
        host.workqueues.writeback = Some(CpuSet::from_cpus([0, 1]));
        assert_eq!(mask(&host), ["/sys/bus/workqueue/devices/writeback/cpumask=1"]);
        host.workqueues.writeback_numa = Some("1".into());
        assert_eq!(
            mask(&host),
            [
                "/sys/bus/workqueue/devices/writeback/cpumask=1",
                "/sys/bus/workqueue/devices/writeback/numa=0"
            ]
        );
        host.workqueues.writeback_numa = None;
        host.workqueues.writeback_affinity_scope = Some("default (cache)".into());
        assert_eq!(mask(&host)[1], "/sys/bus/workqueue/devices/writeback/affinity_scope=system");
        assert_eq!(writeback_scope(&host).map(|(t, _)| t.format()), Some(Format::Word));
    }

    #[test]
    fn governor_on_a_host_without_cpufreq_is_a_note() {
        let mut host = Host::default();
        host.power.cpus = vec![CpuPower { cpu: 1, governor: None, ..Default::default() }];
        let p = plan(vec![RuntimeItem::Governor {
            cpus: CpuSet::from_cpus([1]),
            governor: "performance".into(),
            reason: "r".into(),
        }]);
        let c = plan_changes(&p, &host, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
        assert!(c.changes.is_empty());
        assert_eq!(c.notes.len(), 1);
    }

    #[test]
    fn sysctl_paths_and_formats() {
        let p = plan(vec![
            RuntimeItem::Sysctl {
                name: "kernel.watchdog_cpumask".into(),
                value: "0".into(),
                reason: "r".into(),
            },
            RuntimeItem::Sysctl {
                name: "vm.stat_interval".into(),
                value: "10".into(),
                reason: "r".into(),
            },
        ]);
        let c = plan_changes(&p, &Host::default(), &Options::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            c.changes[0].target,
            Target::file("/proc/sys/kernel/watchdog_cpumask", Format::CpuList)
        );
        assert_eq!(c.changes[1].target, Target::file("/proc/sys/vm/stat_interval", Format::Text));
    }

    #[test]
    fn a_plan_writing_elsewhere_is_refused() {
        let file = |path: &str| RuntimeItem::File {
            path: path.into(),
            value: "x".into(),
            reason: "r".into(),
        };
        let sysctl = |name: &str| RuntimeItem::Sysctl {
            name: name.into(),
            value: "x".into(),
            reason: "r".into(),
        };
        for item in [
            file("etc/passwd"),
            file("../victim"),
            file("/proc/sys/../../etc/shadow"),
            sysctl("kernel.core_pattern"),
            sysctl("../../etc/passwd"),
        ] {
            let p = plan(vec![sysctl("vm.stat_interval"), item.clone()]);
            let r = plan_changes(&p, &Host::default(), &Options::default());
            assert!(r.is_err(), "{item:?} must be refused");
        }
        let p = plan(vec![file("sys/kernel/mm/transparent_hugepage/enabled")]);
        assert!(plan_changes(&p, &Host::default(), &Options::default()).is_ok());
    }
}
