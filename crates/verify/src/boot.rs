//! Boot-state checks: the running command line against the plan as parsed sets (pending
//! reboot when the boot loader already has the arguments), duplicates, the effects of the
//! arguments an NTO node goes without (`irqaffinity`, `kthread_cpus`), the kernel's own
//! `isolated`/`nohz_full` view, PREEMPT_RT, SMT siblings and housekeeping per NUMA node.

use cpuset::CpuSet;
use plan::{Flavour, KernelArg, NTO_OMITS};

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
    out.extend(omitted_effects(inp, sets));
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
    // the boot line the plan's flavour gives the node (NTO's goes without some arguments)
    let args = inp.plan.boot_args();
    if args.is_empty() {
        return Check::new(G, "cmdline-args", Status::NotApplicable)
            .ev("the plan has no kernel arguments");
    }
    let flavour_note = omitted(inp).map(|keys| {
        format!(
            "the plan is for NTO's configuration (render_flavour: nto), whose boot line has no {}: their effects are checked instead ({})",
            keys.join(" or "),
            keys.iter().map(|k| effect_id(k)).collect::<Vec<_>>().join(", ")
        )
    });
    let mut missing = Vec::new();
    for a in &args {
        if !has(&running, &a.key, a.value.as_deref()) {
            missing.push(a);
        }
    }
    if missing.is_empty() {
        return Check::new(G, "cmdline-args", Status::Pass)
            .ev(format!(
                "all {} planned arguments are on /proc/cmdline (compared as parsed sets)",
                args.len()
            ))
            .evs(flavour_note);
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
            args.len()
        ))
        .evs(ev)
        .evs(flavour_note)
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
    inp.plan.boot_args().into_iter().find(|a| a.key == key).and_then(|a| a.value)
}

/// The planned arguments the plan's flavour leaves off the boot line (NTO's: `irqaffinity`,
/// `kthread_cpus`), when there are any.
fn omitted(inp: &Input<'_>) -> Option<Vec<&'static str>> {
    if inp.plan.flavour() != Flavour::Nto {
        return None;
    }
    let keys: Vec<&'static str> = NTO_OMITS
        .iter()
        .copied()
        .filter(|k| inp.plan.kernel_args.iter().any(|a| a.key == *k))
        .collect();
    (!keys.is_empty()).then_some(keys)
}

/// The check that judges what an argument NTO's boot line goes without is for.
fn effect_id(key: &str) -> String {
    format!("{}-effect", key.replace('_', "-"))
}

/// Whether the running line (or, failing that, every boot entry) has `key` covering `cpus`:
/// `Some(true)` running, `Some(false)` only staged for the next boot, `None` neither. With
/// `flag`, the value must carry that flag too (`isolcpus=managed_irq,…`).
pub(crate) fn covers(
    inp: &Input<'_>,
    key: &str,
    flag: Option<&str>,
    cpus: &CpuSet,
) -> Option<bool> {
    let ok = |toks: &[(String, Option<String>)]| {
        toks.iter().filter(|(k, _)| k == key).any(|(_, v)| {
            let (flags, set) = flags_and_cpus(v.as_deref().unwrap_or(""));
            flag.is_none_or(|f| flags.iter().any(|x| x == f))
                && set.is_some_and(|s| cpus.is_subset(&s))
        })
    };
    let running = inp.host.kernel.cmdline.as_deref().map(tokens).unwrap_or_default();
    if ok(&running) {
        Some(true)
    } else if !inp.boot_entries.is_empty()
        && inp.boot_entries.iter().all(|e| ok(&tokens(&e.cmdline)))
    {
        Some(false)
    } else {
        None
    }
}

/// On a plan for NTO's configuration, one check per planned argument NTO's boot line goes
/// without: the argument is not demanded, the effect it is planned for is — passing when it
/// holds (or the argument is there anyway), failing with the effect named when it does not.
fn omitted_effects(inp: &Input<'_>, sets: &Sets) -> Vec<Check> {
    let Some(keys) = omitted(inp) else { return vec![] };
    if inp.host.kernel.cmdline.is_none() {
        return keys
            .iter()
            .map(|k| {
                Check::new(G, effect_id(k), Status::NotApplicable)
                    .ev("/proc/cmdline could not be read")
            })
            .collect();
    }
    let args = &inp.plan.kernel_args;
    keys.iter()
        .filter_map(|k| args.iter().find(|a| a.key == *k))
        .map(|a| {
            if has(
                &inp.host.kernel.cmdline.as_deref().map(tokens).unwrap_or_default(),
                &a.key,
                a.value.as_deref(),
            ) {
                return Check::new(G, effect_id(&a.key), Status::Pass).ev(format!(
                    "{} is on /proc/cmdline (NTO's boot line goes without it)",
                    a.token()
                ));
            }
            match a.key.as_str() {
                "irqaffinity" => irqaffinity_effect(inp, sets, a),
                _ => kthread_effect(inp, sets, a),
            }
        })
        .collect()
}

/// `irqaffinity=` keeps IRQs off the isolated CPUs from boot on. An NTO node goes without it:
/// managed IRQs stay off them by `isolcpus=managed_irq,…`, the others are moved off a pod's
/// CPUs by CRI-O when the pod starts with `irq-load-balancing.crio.io: disable` (per pod, not
/// node-wide). Pass: no IRQ is routed to an isolated CPU and the default mask excludes them
/// (the effect holds node-wide); n.a.: NTO's per-pod way is in place (managed_irq on the boot
/// line), so where IRQs go now is no verdict on it; fail: neither.
fn irqaffinity_effect(inp: &Input<'_>, sets: &Sets, a: &KernelArg) -> Check {
    let id = effect_id(&a.key);
    let host = inp.host;
    let routed: Vec<String> = host
        .irqs
        .iter()
        .filter(|i| i.managed != Some(true))
        .filter_map(|i| {
            let eff = i.effective_affinity.as_ref().or(i.affinity.as_ref())?;
            (!eff.is_disjoint(&sets.iso)).then(|| i.irq.to_string())
        })
        .collect();
    let default = host.default_smp_affinity.as_ref();
    let now = format!(
        "now: default_smp_affinity = {}, {} of {} IRQs routed to isolated CPUs {}",
        default.map_or("(not read)".into(), show),
        routed.len(),
        host.irqs.len(),
        sets.iso.to_list()
    );
    if !host.irqs.is_empty()
        && routed.is_empty()
        && default.is_some_and(|d| d.is_disjoint(&sets.iso))
    {
        return Check::new(G, id, Status::Pass)
            .ev(format!(
                "IRQs are off the isolated CPUs without {} (what it is planned for)",
                a.token()
            ))
            .ev(now);
    }
    let why = format!(
        "{} is not on NTO's boot line: NTO keeps managed IRQs off the isolated CPUs with isolcpus=managed_irq and moves the others off a pod's CPUs per pod (CRI-O, irq-load-balancing.crio.io: disable with RuntimeClass {})",
        a.key,
        format_args!("performance-{}", inp.plan.name)
    );
    match covers(inp, "isolcpus", Some("managed_irq"), &sets.iso) {
        Some(true) => Check::new(G, id, Status::NotApplicable)
            .ev(why)
            .ev(format!("isolcpus=managed_irq covers the isolated CPUs {} on /proc/cmdline", sets.iso.to_list()))
            .ev(format!("{now} (IRQs are balanced over them until a pod asks; irq-effective-affinity has the detail)")),
        Some(false) => Check::new(G, id, Status::PendingReboot)
            .ev(why)
            .ev("the boot loader has isolcpus=managed_irq over the isolated CPUs; the running kernel does not")
            .ev(now)
            .fix("reboot into the configured entry"),
        None => Check::new(G, id, Status::Fail)
            .ev(format!(
                "IRQs are not kept off the isolated CPUs {}: no {}, and no isolcpus=managed_irq covering them on /proc/cmdline",
                sets.iso.to_list(),
                a.key
            ))
            .ev(now)
            .fix(format!(
                "`lowlat render {} openshift` (NTO's isolcpus=managed_irq; `--beyond-nto` adds irqaffinity=) and roll it out",
                inp.plan_arg
            )),
    }
}

/// `kthread_cpus=` keeps unbound kthreads on the housekeeping CPUs. An NTO node goes without
/// it: `nohz_full=` over the isolated CPUs does the same (the kernel's `HK_TYPE_KTHREAD`
/// housekeeping, which kthreadd confines itself and every unbound kthread to). Judged on
/// kthreadd's allowed CPUs where the task list is there, else on `nohz_full=`.
fn kthread_effect(inp: &Input<'_>, sets: &Sets, a: &KernelArg) -> Check {
    let id = effect_id(&a.key);
    let kthreadd = inp.host.tasks.as_ref().and_then(|t| t.iter().find(|t| t.pid == 2));
    if let Some(allowed) = kthreadd.and_then(|t| t.allowed_cpus.as_ref()) {
        return if allowed.is_disjoint(&sets.iso) {
            Check::new(G, id, Status::Pass).ev(format!(
                "kthreadd (pid 2) is allowed {} only: unbound kthreads start on housekeeping CPUs without {} (what it is planned for)",
                allowed.to_list(),
                a.token()
            ))
        } else {
            Check::new(G, id, Status::Fail)
                .ev(format!(
                    "unbound kthreads may run on isolated CPUs {}: kthreadd (pid 2) is allowed {}, and there is no {}",
                    allowed.intersection(&sets.iso).to_list(),
                    allowed.to_list(),
                    a.key
                ))
                .fix(format!(
                    "`lowlat render {} openshift` (NTO's nohz_full=) and roll it out; `lowlat apply {}` moves kthreadd now",
                    inp.plan_arg, inp.plan_arg
                ))
        };
    }
    match covers(inp, "nohz_full", None, &sets.iso) {
        Some(true) => Check::new(G, id, Status::Pass).ev(format!(
            "nohz_full= covers the isolated CPUs {}: the kernel keeps unbound kthreads on the housekeeping CPUs (HK_TYPE_KTHREAD), what {} is planned for (no task list here to see kthreadd)",
            sets.iso.to_list(),
            a.token()
        )),
        Some(false) => Check::new(G, id, Status::PendingReboot)
            .ev("the boot loader has nohz_full= over the isolated CPUs; the running kernel does not")
            .fix("reboot into the configured entry"),
        None => Check::new(G, id, Status::Fail)
            .ev(format!(
                "unbound kthreads may run on the isolated CPUs {}: no {}, and no nohz_full= covering them on /proc/cmdline",
                sets.iso.to_list(),
                a.key
            ))
            .fix(format!(
                "`lowlat render {} openshift` (NTO's nohz_full=; `--beyond-nto` adds kthread_cpus=) and roll it out",
                inp.plan_arg
            )),
    }
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
