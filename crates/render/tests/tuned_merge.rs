//! The OpenShift Tuned CR merged with its parents the way TuneD's inheritance does
//! (`tuned/profiles/merger.py`: includes first, in order; a unit's options updated by the
//! child's; `[variables]` likewise), over TuneD's own profiles in `testdata/tuned/` (GPL-2.0,
//! see its NOTICE). Then the boot line TuneD would compute (`plugin_bootloader.py`: every
//! `cmdline*` option in order, `+` appends, `-` removes) is what NTO turns into a second
//! MachineConfig: it must add nothing to lowlat's MachineConfig, so the node's effective boot
//! line is the MachineConfig's `kernelArguments`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde_norway::Value;

/// A unit: its options in TuneD's order.
type Unit = Vec<(String, String)>;

/// A profile: units in order.
#[derive(Debug, Default, Clone)]
struct Profile {
    units: Vec<(String, Unit)>,
}

impl Profile {
    fn unit(&self, name: &str) -> Option<&Unit> {
        self.units.iter().find(|(n, _)| n == name).map(|(_, u)| u)
    }
    fn get(&self, unit: &str, key: &str) -> Option<&str> {
        self.unit(unit)?.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// TuneD's `tuned.conf` syntax (configobj): `[unit]`, `key = value`, `#` comments.
fn parse(text: &str) -> Profile {
    let mut p = Profile::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            p.units.push((name.to_string(), vec![]));
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        let unit = &mut p.units.last_mut().expect("option before any unit").1;
        unit.push((k.trim().to_string(), v.trim().to_string()));
    }
    p
}

/// `merger.py _merge_two`: the newer profile's options update the older's (an existing key
/// keeps its place, as a Python dict does).
fn merge(mut a: Profile, b: Profile) -> Profile {
    for (name, unit) in b.units {
        match a.units.iter_mut().find(|(n, _)| *n == name) {
            None => a.units.push((name, unit)),
            Some((_, old)) => {
                // `unit.py`: `drop` is no option; it removes the named options inherited so
                // far (`re.split(r"\b\s*[,;]\s*")`).
                if let Some((_, d)) = unit.iter().find(|(k, _)| k == "drop") {
                    let names: Vec<&str> =
                        d.split([',', ';']).map(str::trim).filter(|n| !n.is_empty()).collect();
                    old.retain(|(k, _)| !names.contains(&k.as_str()));
                }
                for (k, v) in unit.into_iter().filter(|(k, _)| k != "drop") {
                    match old.iter_mut().find(|(ok, _)| *ok == k) {
                        Some(slot) => slot.1 = v,
                        None => old.push((k, v)),
                    }
                }
            }
        }
    }
    a
}

/// Load a profile with its includes (bare metal: `virt_check` picks its second profile; a
/// `-` include is optional and absent here).
fn load(text: &str) -> Profile {
    let own = parse(text);
    let mut merged = Profile::default();
    if let Some(include) = own.get("main", "include") {
        for name in include.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let name = match name.strip_prefix("${f:virt_check:") {
                Some(rest) => rest.trim_end_matches('}').split(':').nth(1).unwrap().to_string(),
                None => name.to_string(),
            };
            if name.starts_with('-') {
                continue;
            }
            let path = common::testdata_dir().join("tuned/profiles").join(&name).join("tuned.conf");
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e} (TuneD profile `{name}`)", path.display()));
            merged = merge(merged, load(&text));
        }
    }
    merge(merged, own)
}

/// `plugin_bootloader.py _get_effective_options`: the boot line from the `cmdline*` options.
fn boot_line(p: &Profile) -> Vec<String> {
    let mut line: Vec<String> = vec![];
    for (k, v) in p.unit("bootloader").into_iter().flatten() {
        if !k.starts_with("cmdline") || v.is_empty() {
            continue;
        }
        if let Some(rest) = v.strip_prefix('-') {
            let drop: Vec<&str> = rest.split_whitespace().collect();
            line.retain(|t| !drop.contains(&t.as_str()));
        } else {
            line.extend(v.trim_start_matches('+').split_whitespace().map(String::from));
        }
    }
    line
}

fn tuned_data(plan: &plan::Plan) -> String {
    let cr = render::openshift::tuned_cr(plan, "worker-cnf");
    cr["spec"]["profile"][0]["data"].as_str().unwrap().to_string()
}

fn machine_config_args(plan: &plan::Plan) -> Vec<String> {
    let mc = render::openshift::machine_config(plan, "worker-cnf");
    match &mc["spec"]["kernelArguments"] {
        Value::Sequence(s) => s.iter().map(|a| a.as_str().unwrap().to_string()).collect(),
        other => panic!("kernelArguments: {other:?}"),
    }
}

#[test]
fn the_effective_boot_line_is_the_machine_configs() {
    for (name, plan) in common::cases() {
        let merged = load(&tuned_data(&plan));
        let tuned_line = boot_line(&merged);
        let mc = machine_config_args(&plan);
        // NTO adds TuneD's boot line as its own MachineConfig: the node boots with both.
        let node: Vec<String> = mc.iter().cloned().chain(tuned_line.iter().cloned()).collect();
        assert_eq!(node, mc, "{name}: TuneD would add {tuned_line:?} to the MachineConfig's line");
        // One intel_pstate, the plan's (TuneD's recommendation for the CPU generation), never
        // a second one from cpu-partitioning.
        let pstates: Vec<&String> =
            node.iter().filter(|a| a.starts_with("intel_pstate=")).collect();
        assert!(pstates.len() <= 1, "{name}: {pstates:?}");
        // No initrd rebuild either.
        for k in ["initrd_remove_dir", "initrd_dst_img", "initrd_add_dir"] {
            assert_eq!(merged.get("bootloader", k), Some(""), "{name}: {k}");
        }
        // cpu-partitioning's node-wide irqbalance bans are off; timers follow NTO.
        assert_eq!(merged.get("irqbalance", "enabled"), Some("false"), "{name}");
        if merged.get("sysctl", "kernel.timer_migration").is_some() {
            assert_eq!(merged.get("sysctl", "kernel.timer_migration"), Some("1"), "{name}");
        }
    }
}

#[test]
fn without_the_overrides_cpu_partitioning_adds_its_boot_line() {
    // The merge has teeth: the parents alone bring cpu-partitioning's and network-latency's
    // arguments (the contradiction the overrides remove) and the irqbalance bans.
    let parents = load("[main]\ninclude=openshift-node,cpu-partitioning\n");
    let line = boot_line(&parents);
    assert!(line.iter().any(|a| a == "intel_pstate=disable"), "{line:?}");
    assert!(line.iter().any(|a| a == "skew_tick=1"), "{line:?}");
    assert_eq!(parents.get("irqbalance", "banned_cpus"), Some("${isolated_cores}"));
    assert_eq!(parents.get("sysctl", "kernel.timer_migration"), Some("0"));
    // TuneD's `-` removes from the line built so far.
    let p = parse("[bootloader]\ncmdline_a=+a b c\ncmdline_b=-b\ncmdline_c=d\n");
    assert_eq!(boot_line(&p), vec!["a", "c", "d"]);
}

#[test]
fn no_rt_plan_sets_a_sysctl_the_rt_kernel_lacks() {
    // network-latency sets kernel.numa_balancing and net.core.busy_read/busy_poll; RT kernels
    // have none of them (TuneD logs an ERROR, NTO marks the Profile Degraded). After TuneD's
    // merge, an RT plan's profile sets none; a non-RT plan keeps network-latency's.
    let mut rt_seen = false;
    for (name, plan) in common::cases() {
        let merged = load(&tuned_data(&plan));
        for k in render::tuned::RT_DROPPED_SYSCTLS {
            let set = merged.get("sysctl", k);
            if plan.options.rt_kernel {
                assert_eq!(set, None, "{name}: the RT profile sets {k}");
            } else {
                assert!(set.is_some(), "{name}: {k} dropped on a non-RT plan");
            }
        }
        // the host TuneD profile too
        let host =
            render::tuned::tuned_conf(&plan, "cpu-partitioning", render::tuned::Flavor::Host);
        let merged = load(&host);
        for k in render::tuned::RT_DROPPED_SYSCTLS {
            if plan.options.rt_kernel {
                assert_eq!(merged.get("sysctl", k), None, "{name} (tuned target): sets {k}");
            }
        }
        rt_seen |= plan.options.rt_kernel;
        assert!(
            !plan.options.rt_kernel
                || !plan.runtime.iter().any(|r| matches!(r,
                    plan::RuntimeItem::Sysctl { name, .. } if render::tuned::RT_DROPPED_SYSCTLS.contains(&name.as_str()))),
            "{name}: the RT plan itself sets a sysctl RT kernels lack"
        );
    }
    assert!(rt_seen, "no RT case among the fixtures");
}

#[test]
fn an_rt_plan_carrying_a_sysctl_the_rt_kernel_lacks_renders_without_it() {
    // An RT plan file written before lowlat stopped planning kernel.numa_balancing=0 (or
    // edited by hand): TuneD's drop= removes only inherited options, so an explicit line would
    // survive the merge; render leaves it out.
    let (name, mut plan) =
        common::cases().into_iter().find(|(_, p)| p.options.rt_kernel).expect("an RT case");
    for k in render::tuned::RT_DROPPED_SYSCTLS {
        plan.runtime.push(plan::RuntimeItem::Sysctl {
            name: k.to_string(),
            value: "0".into(),
            reason: "an older plan".into(),
        });
    }
    for text in [
        tuned_data(&plan),
        render::tuned::tuned_conf(&plan, "cpu-partitioning", render::tuned::Flavor::Host),
    ] {
        let merged = load(&text);
        for k in render::tuned::RT_DROPPED_SYSCTLS {
            assert_eq!(merged.get("sysctl", k), None, "{name}: sets {k}:\n{text}");
            assert!(text.contains(&format!("# {k}=0 (in the plan) left out")), "{text}");
        }
    }
}
