//! Boot-state checks: the running command line against the plan as parsed sets (pending
//! reboot when the boot loader already has the arguments), duplicates, the kernel's own
//! `isolated`/`nohz_full` view, PREEMPT_RT, SMT siblings and housekeeping per NUMA node.

use cpuset::CpuSet;

use crate::model::{Check, Group, Input, Status};
use crate::sets::{flags_and_cpus, same_arg, token, tokens, Sets};

const G: Group = Group::Boot;

/// Keys a command line may legitimately repeat.
const REPEATABLE: &[&str] = &["console", "hugepagesz", "hugepages", "BOOT_IMAGE", "initrd"];

fn has(tokens: &[(String, Option<String>)], key: &str, value: Option<&str>) -> bool {
    tokens.iter().any(|(k, v)| k == key && same_arg(value, v.as_deref()))
}

pub fn checks(inp: &Input<'_>, sets: &Sets) -> Vec<Check> {
    let mut out = vec![cmdline(inp), duplicates(inp)];
    out.extend(sysfs(inp));
    out.push(preempt_rt(inp));
    out.push(smt(inp, sets));
    out.push(numa(inp, sets));
    out
}

pub(crate) fn render_fix(inp: &Input<'_>) -> String {
    format!(
        "`lowlat render {} cmdline` shows the arguments; `lowlat render {} grubby` (or bls / grub / rpm-ostree) writes them; then reboot",
        inp.plan_arg, inp.plan_arg
    )
}

fn cmdline(inp: &Input<'_>) -> Check {
    let Some(raw) = inp.host.kernel.cmdline.as_deref() else {
        return Check::new(G, "cmdline-args", Status::NotApplicable)
            .ev("/proc/cmdline could not be read");
    };
    let running = tokens(raw);
    if inp.plan.kernel_args.is_empty() {
        return Check::new(G, "cmdline-args", Status::NotApplicable)
            .ev("the plan has no kernel arguments");
    }
    let mut missing = Vec::new();
    for a in &inp.plan.kernel_args {
        if !has(&running, &a.key, a.value.as_deref()) {
            missing.push(a);
        }
    }
    if missing.is_empty() {
        return Check::new(G, "cmdline-args", Status::Pass).ev(format!(
            "all {} planned arguments are on /proc/cmdline (compared as parsed sets)",
            inp.plan.kernel_args.len()
        ));
    }
    let mut pending_all = !inp.boot_entries.is_empty();
    let mut ev = Vec::new();
    for a in &missing {
        let want = a.token();
        let now: Vec<String> = running
            .iter()
            .filter(|(k, _)| *k == a.key)
            .map(|(k, v)| token(k, v.as_deref()))
            .collect();
        let staged: Vec<&str> = inp
            .boot_entries
            .iter()
            .filter(|e| has(&tokens(&e.cmdline), &a.key, a.value.as_deref()))
            .map(|e| e.source.as_str())
            .collect();
        if staged.is_empty() {
            pending_all = false;
        }
        ev.push(format!(
            "{want}: running has {}; next boot: {}",
            if now.is_empty() { "nothing".to_string() } else { now.join(" ") },
            if staged.is_empty() {
                "not configured".to_string()
            } else {
                format!("in {}", staged.join(", "))
            }
        ));
    }
    let status = if pending_all { Status::PendingReboot } else { Status::Fail };
    Check::new(G, "cmdline-args", status)
        .ev(format!(
            "{} of {} planned arguments are not on /proc/cmdline",
            missing.len(),
            inp.plan.kernel_args.len()
        ))
        .evs(ev)
        .fix(if pending_all {
            "reboot into the configured entry".to_string()
        } else {
            render_fix(inp)
        })
}

fn duplicates(inp: &Input<'_>) -> Check {
    let running = inp.host.kernel.cmdline.as_deref().map(tokens).unwrap_or_default();
    let mut seen: Vec<&str> = Vec::new();
    let mut dups: Vec<String> = Vec::new();
    for (k, _) in &running {
        if REPEATABLE.contains(&k.as_str()) {
            continue;
        }
        if seen.contains(&k.as_str()) {
            if !dups.contains(k) {
                dups.push(k.clone());
            }
        } else {
            seen.push(k);
        }
    }
    if dups.is_empty() {
        Check::new(G, "cmdline-duplicates", Status::Pass).ev("no argument is given twice")
    } else {
        Check::new(G, "cmdline-duplicates", Status::Warn)
            .evs(dups.iter().map(|d| {
                format!("{d} appears more than once (the kernel uses the last one, or merges)")
            }))
            .fix(render_fix(inp))
    }
}

/// Where a planned kernel argument is: on the running command line, only in every boot entry
/// (pending reboot), or nowhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgState {
    Running,
    Staged,
    Absent,
}

/// The state of the planned argument `key` (its planned value compared as a set).
pub(crate) fn arg_state(inp: &Input<'_>, key: &str) -> ArgState {
    let value = planned(inp, key);
    let running = inp.host.kernel.cmdline.as_deref().map(tokens).unwrap_or_default();
    if has(&running, key, value.as_deref()) {
        ArgState::Running
    } else if !inp.boot_entries.is_empty()
        && inp.boot_entries.iter().all(|e| has(&tokens(&e.cmdline), key, value.as_deref()))
    {
        ArgState::Staged
    } else {
        ArgState::Absent
    }
}

/// The planned value of kernel argument `key` (`None`: not planned, or a bare flag).
pub(crate) fn planned(inp: &Input<'_>, key: &str) -> Option<String> {
    inp.plan.kernel_args.iter().find(|a| a.key == key).and_then(|a| a.value.clone())
}

fn sysfs(inp: &Input<'_>) -> Vec<Check> {
    let running = inp.host.kernel.cmdline.as_deref().map(tokens).unwrap_or_default();
    let mut out = Vec::new();
    // isolcpus: the domain-isolated set shows in /sys/devices/system/cpu/isolated.
    let want_iso = planned(inp, "isolcpus").and_then(|v| {
        let (flags, cpus) = flags_and_cpus(&v);
        let domain = flags.is_empty() || flags.iter().any(|f| f == "domain");
        cpus.map(|c| if domain { c } else { CpuSet::new() })
    });
    out.push(sysfs_one(
        inp,
        &running,
        "sysfs-isolated",
        "isolcpus",
        want_iso,
        inp.host.cpus.isolated.as_ref(),
        "/sys/devices/system/cpu/isolated",
    ));
    let want_nohz = planned(inp, "nohz_full").and_then(|v| CpuSet::parse_list(&v).ok());
    out.push(sysfs_one(
        inp,
        &running,
        "sysfs-nohz-full",
        "nohz_full",
        want_nohz,
        inp.host.cpus.nohz_full.as_ref(),
        "/sys/devices/system/cpu/nohz_full",
    ));
    out
}

fn sysfs_one(
    inp: &Input<'_>,
    running: &[(String, Option<String>)],
    id: &str,
    key: &str,
    want: Option<CpuSet>,
    have: Option<&CpuSet>,
    path: &str,
) -> Check {
    let Some(want) = want else {
        return Check::new(G, id, Status::NotApplicable).ev(format!("{key} is not planned"));
    };
    let Some(have) = have else {
        if inp.live && key == "nohz_full" {
            return Check::new(G, id, Status::Warn)
                .ev(format!("{path} does not exist: this kernel is built without CONFIG_NO_HZ_FULL, so nohz_full= will be ignored"))
                .fix("boot a kernel with CONFIG_NO_HZ_FULL=y (distribution and RT kernels have it), or drop nohz_full from the plan");
        }
        return Check::new(G, id, Status::NotApplicable).ev(format!("{path} could not be read"));
    };
    if *have == want {
        return Check::new(G, id, Status::Pass).ev(format!("{path} = {} as planned", show(have)));
    }
    let value = planned(inp, key);
    let booted = has(running, key, value.as_deref());
    let staged = !inp.boot_entries.is_empty()
        && inp.boot_entries.iter().all(|e| has(&tokens(&e.cmdline), key, value.as_deref()));
    let ev = format!("{path} = {}, planned {}", show(have), show(&want));
    if booted {
        Check::new(G, id, Status::Fail).ev(ev).fix(format!(
            "the kernel was booted with the planned {key}= but did not apply it (CONFIG_NO_HZ_FULL? offline CPUs?): check dmesg for 'isolcpus'/'Housekeeping', then `lowlat plan` again"
        ))
    } else if staged {
        Check::new(G, id, Status::PendingReboot)
            .ev(ev)
            .ev(format!("the boot loader has the planned {key}="))
            .fix("reboot")
    } else {
        Check::new(G, id, Status::Fail)
            .ev(ev)
            .ev(format!("the running command line does not carry the planned {key}="))
            .fix(render_fix(inp))
    }
}

fn show(s: &CpuSet) -> String {
    if s.is_empty() {
        "(empty)".into()
    } else {
        s.to_list()
    }
}

fn preempt_rt(inp: &Input<'_>) -> Check {
    let k = &inp.host.kernel;
    let ev = format!(
        "kernel {} ({})",
        k.release.as_deref().unwrap_or("?"),
        k.preempt.as_deref().or(k.version.as_deref()).unwrap_or("preemption model unknown")
    );
    if !inp.plan.options.rt_kernel {
        return Check::new(G, "preempt-rt", Status::NotApplicable)
            .ev("the plan does not ask for PREEMPT_RT")
            .ev(ev);
    }
    match k.realtime {
        Some(true) => Check::new(G, "preempt-rt", Status::Pass).ev(ev),
        Some(false) => Check::new(G, "preempt-rt", Status::Fail)
            .ev(ev)
            .fix("install and boot a PREEMPT_RT kernel (`lowlat render --plan FILE openshift` sets kernelType: realtime)"),
        None => Check::new(G, "preempt-rt", Status::Warn).ev("could not tell whether the kernel is PREEMPT_RT").ev(ev),
    }
}

fn smt(inp: &Input<'_>, sets: &Sets) -> Check {
    let topo = &inp.host.topology.cpus;
    if topo.is_empty() {
        return Check::new(G, "smt-siblings", Status::NotApplicable).ev("topology unknown");
    }
    let mut iso_bad = CpuSet::new();
    let mut hk_sibs = CpuSet::new();
    for c in topo.iter().filter(|c| sets.iso.contains(c.cpu)) {
        let on_hk = c.siblings.intersection(&sets.hk).difference(&inp.plan.smt_disabled);
        if !on_hk.is_empty() {
            iso_bad.insert(c.cpu);
            hk_sibs = hk_sibs.union(&on_hk);
        }
    }
    if iso_bad.is_empty() {
        let tpc = inp.host.topology.threads_per_core.max(1);
        return Check::new(G, "smt-siblings", Status::Pass).ev(format!(
            "no isolated CPU shares a core with a housekeeping CPU ({tpc} thread(s) per core)"
        ));
    }
    Check::new(G, "smt-siblings", Status::Fail)
        .ev(format!(
            "SMT siblings {} of isolated CPUs {} are housekeeping: they share L1/L2 and execution units, so housekeeping work adds latency on the isolated CPUs",
            hk_sibs.to_list(),
            iso_bad.to_list()
        ))
        .fix("`lowlat plan` keeps siblings together (or `--no-smt` / offline the siblings); then render and reboot")
}

fn numa(inp: &Input<'_>, sets: &Sets) -> Check {
    if inp.host.numa_nodes.is_empty() {
        return Check::new(G, "housekeeping-per-numa", Status::NotApplicable)
            .ev("NUMA layout unknown");
    }
    let bare: Vec<String> = inp
        .host
        .numa_nodes
        .iter()
        .filter(|n| !n.cpus.is_disjoint(&sets.iso) && n.cpus.is_disjoint(&sets.hk))
        .map(|n| {
            format!(
                "node {} (CPUs {}) has isolated CPUs but no housekeeping CPU",
                n.id,
                n.cpus.to_list()
            )
        })
        .collect();
    if bare.is_empty() {
        Check::new(G, "housekeeping-per-numa", Status::Pass)
            .ev("every NUMA node with isolated CPUs has a housekeeping CPU")
    } else {
        Check::new(G, "housekeeping-per-numa", Status::Warn)
            .evs(bare)
            .fix("`lowlat plan --split-reserved-across-numa` so each node's IRQs and kthreads stay local")
    }
}
