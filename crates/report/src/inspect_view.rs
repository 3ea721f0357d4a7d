//! The `lowlat inspect` terminal view of a [`Host`]: summary, topology grid (NUMA × core ×
//! thread), kernel and boot, power, memory and sysctls, IRQs (who may land where, top
//! talkers), what runs on each CPU (the `ps -eTo psr,pid,tid,policy,rtprio,cmd` question
//! answered directly; `cpu` focuses on one), and findings with evidence and fixes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use cpuset::CpuSet;
use host::{Host, Severity, Task};

use crate::term::{truncate, wrap, Paint, Style, Table};

/// What to show.
#[derive(Debug, Clone, Default)]
pub struct ViewOptions {
    /// Focus on one CPU: its tasks, IRQs and power state.
    pub cpu: Option<usize>,
}

/// Render the whole view.
pub fn render(h: &Host, opts: &ViewOptions, st: &Style) -> String {
    let mut out = String::new();
    if let Some(cpu) = opts.cpu {
        summary(&mut out, h, st);
        focus(&mut out, h, cpu, st);
        findings(&mut out, h, st, Some(cpu));
        return out;
    }
    summary(&mut out, h, st);
    topology(&mut out, h, st);
    kernel(&mut out, h, st);
    power(&mut out, h, st);
    memory(&mut out, h, st);
    pci(&mut out, h, st);
    irqs(&mut out, h, st);
    tasks(&mut out, h, st);
    findings(&mut out, h, st, None);
    unknowns(&mut out, h, st);
    out
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "unknown".to_string(), |x| x.to_string())
}

fn set_or(v: &Option<CpuSet>, none: &str) -> String {
    match v {
        Some(s) if s.is_empty() => "none".into(),
        Some(s) => s.to_list(),
        None => none.into(),
    }
}

fn kv(out: &mut String, st: &Style, key: &str, val: &str) {
    let _ = writeln!(out, "  {:<16} {}", st.paint(Paint::Dim, key), val);
}

fn summary(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Summary"));
    let src = match &h.source.node {
        Some(n) => format!("{} {} (node {n})", h.source.kind, h.source.path),
        None => format!("{} {}", h.source.kind, h.source.path),
    };
    kv(out, st, "source", &src);
    if let Some(n) = &h.hostname {
        kv(out, st, "hostname", n);
    }
    let online = h.online_cpus();
    let packages: BTreeSet<i64> = h.topology.cpus.iter().filter_map(|c| c.package).collect();
    let cores: BTreeSet<(Option<i64>, Option<i64>)> =
        h.topology.cpus.iter().map(|c| (c.package, c.core)).collect();
    let model = h
        .topology
        .cpus
        .iter()
        .find_map(|c| c.model.clone())
        .unwrap_or_else(|| "unknown model".into());
    kv(
        out,
        st,
        "cpus",
        &format!(
            "{} online ({online}), {} package{}, {} cores, {} thread{}/core, {} NUMA node{} — {model}",
            online.len(),
            packages.len(),
            if packages.len() == 1 { "" } else { "s" },
            cores.len(),
            h.topology.threads_per_core,
            if h.topology.threads_per_core == 1 { "" } else { "s" },
            h.numa_nodes.len(),
            if h.numa_nodes.len() == 1 { "" } else { "s" },
        ),
    );
    let rt = match h.kernel.realtime {
        Some(true) => st.paint(Paint::Green, "PREEMPT_RT"),
        Some(false) => h.kernel.preempt.clone().unwrap_or_else(|| "not RT".into()),
        None => "RT unknown".into(),
    };
    kv(out, st, "kernel", &format!("{} ({rt})", opt(&h.kernel.release)));
    let iso = h.isolated_cpus();
    let nohz = h
        .cpus
        .nohz_full
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| h.kernel.boot.nohz_full.clone());
    kv(
        out,
        st,
        "isolation",
        &format!(
            "isolated {}, nohz_full {}, housekeeping {}",
            if iso.is_empty() { "none".to_string() } else { st.paint(Paint::Cyan, &iso.to_list()) },
            set_or(&nohz, "none"),
            online.difference(&iso).to_list()
        ),
    );
    let virt = match &h.virtualization {
        Some(v) => {
            st.paint(Paint::Yellow, &format!("{v} (latency includes the hypervisor's noise)"))
        }
        None => "bare metal (no hypervisor seen)".into(),
    };
    kv(out, st, "virtualization", &virt);
    let tasks = match &h.tasks {
        Some(t) => format!("{} threads", t.len()),
        None => "tasks not captured".into(),
    };
    kv(
        out,
        st,
        "contents",
        &format!(
            "{tasks}, {} IRQs, {} PCI devices, cgroup {}",
            h.irqs.len(),
            h.pci_devices.len(),
            opt(&h.cgroup.version)
        ),
    );
    let (e, w, i) = h.findings.iter().fold((0, 0, 0), |(e, w, i), f| match f.severity {
        Severity::Error => (e + 1, w, i),
        Severity::Warn => (e, w + 1, i),
        Severity::Info => (e, w, i + 1),
    });
    kv(out, st, "findings", &format!("{e} error, {w} warning, {i} info (details at the end)"));
    out.push('\n');
}

/// Cores grouped by NUMA node then package, each core's threads in order.
/// NUMA node → cores (ordered by package then first CPU), each core its CPUs.
type NodeCores = BTreeMap<Option<usize>, Vec<Vec<usize>>>;

fn cores_by_node(h: &Host) -> NodeCores {
    type Key = (Option<usize>, Option<i64>, Option<i64>);
    let mut by_core: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    for c in &h.topology.cpus {
        by_core.entry((c.numa_node, c.package, c.core)).or_default().push(c.cpu);
    }
    let mut out = NodeCores::new();
    for ((node, _, _), mut cpus) in by_core {
        cpus.sort_unstable();
        out.entry(node).or_default().push(cpus);
    }
    for v in out.values_mut() {
        v.sort_by_key(|c| c.first().copied());
    }
    out
}

fn topology(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Topology (NUMA × core × thread)"));
    if h.topology.cpus.is_empty() {
        let _ = writeln!(out, "  unknown (no sys/devices/system/cpu)\n");
        return;
    }
    let iso = h.isolated_cpus();
    let _ = writeln!(
        out,
        "  {}",
        st.paint(Paint::Dim, "* = isolated, - = offline; columns are cores, rows are SMT threads")
    );
    let maxcpu = h.topology.cpus.iter().map(|c| c.cpu).max().unwrap_or(0);
    let cell = maxcpu.to_string().len() + 2;
    for (node, cores) in cores_by_node(h) {
        let cpus: CpuSet = cores.iter().flatten().copied().collect();
        let pkgs: CpuSet = cpus
            .iter()
            .filter_map(|c| h.cpu(c)?.package)
            .filter_map(|p| usize::try_from(p).ok())
            .collect();
        let mem =
            node.and_then(|n| h.numa_nodes.iter().find(|x| x.id == n)).and_then(|n| n.mem_total_kb);
        let _ = writeln!(
            out,
            "  {} {} {}: {} cores, cpus {}{}",
            st.paint(Paint::Bold, &format!("node {}", node.map_or("?".into(), |n| n.to_string()))),
            if pkgs.len() == 1 { "package" } else { "packages" },
            if pkgs.is_empty() { "?".to_string() } else { pkgs.to_list() },
            cores.len(),
            cpus,
            mem.map_or(String::new(), |m| format!(", {} MiB", m / 1024))
        );
        let threads = cores.iter().map(Vec::len).max().unwrap_or(1);
        let per_line = ((st.width.saturating_sub(10)) / cell).max(4);
        for chunk in cores.chunks(per_line) {
            for t in 0..threads {
                let mut line = format!("    {:<6}", format!("t{t}"));
                for core in chunk {
                    let s = match core.get(t) {
                        Some(&c) => {
                            let online = h.cpu(c).map_or(true, |x| x.online);
                            let mark = if !online {
                                "-"
                            } else if iso.contains(c) {
                                "*"
                            } else {
                                " "
                            };
                            let txt = format!("{c}{mark}");
                            let pad = " ".repeat(cell.saturating_sub(txt.len()));
                            if iso.contains(c) {
                                format!("{pad}{}", st.paint(Paint::Cyan, &txt))
                            } else {
                                format!("{pad}{txt}")
                            }
                        }
                        None => " ".repeat(cell),
                    };
                    line.push_str(&s);
                }
                let _ = writeln!(out, "{}", line.trim_end());
            }
        }
    }
    if h.numa_nodes.len() > 1 {
        let d: Vec<String> =
            h.numa_nodes.iter().map(|n| format!("node{}: {:?}", n.id, n.distances)).collect();
        kv(out, st, "distances", &d.join("  "));
    }
    let mut caches: BTreeMap<(u32, String), (usize, Option<u64>, String)> = BTreeMap::new();
    for c in &h.caches {
        let e = caches.entry((c.level, c.kind.clone())).or_insert((
            0,
            c.size_kb,
            c.shared_cpus.len().to_string(),
        ));
        e.0 += 1;
    }
    if !caches.is_empty() {
        let parts: Vec<String> = caches
            .iter()
            .map(|((l, k), (n, sz, ex))| {
                let k = match k.as_str() {
                    "Data" => "d",
                    "Instruction" => "i",
                    _ => "",
                };
                format!(
                    "L{l}{k} {}×{} ({ex} CPUs each)",
                    n,
                    sz.map_or("?".into(), |s| if s >= 1024 {
                        format!("{}M", s / 1024)
                    } else {
                        format!("{s}K")
                    })
                )
            })
            .collect();
        for (i, l) in
            wrap(&parts.join(", "), st.width, "                   ").into_iter().enumerate()
        {
            if i == 0 {
                kv(out, st, "caches", l.trim_start());
            } else {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    kv(
        out,
        st,
        "smt",
        &format!(
            "control {}, active {}",
            opt(&h.topology.smt_control),
            opt(&h.topology.smt_active)
        ),
    );
    out.push('\n');
}

fn kernel(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Kernel and boot"));
    let k = &h.kernel;
    let rel = match &k.release_source {
        Some(s) => format!("{} (from {s})", opt(&k.release)),
        None => opt(&k.release),
    };
    kv(out, st, "release", &rel);
    kv(out, st, "version", &opt(&k.version));
    kv(
        out,
        st,
        "realtime",
        &format!(
            "{} — {}",
            opt(&k.realtime),
            k.realtime_evidence.as_deref().unwrap_or("no evidence")
        ),
    );
    kv(
        out,
        st,
        "clocksource",
        &format!(
            "{} (available: {})",
            opt(&k.clocksource),
            if k.available_clocksources.is_empty() {
                "unknown".into()
            } else {
                k.available_clocksources.join(" ")
            }
        ),
    );
    let b = &k.boot;
    let iso = match &b.isolcpus {
        Some(i) => format!(
            "{} (flags: {})",
            i.cpus,
            if i.flags.is_empty() { "none = domain".into() } else { i.flags.join(",") }
        ),
        None => "not set".into(),
    };
    kv(out, st, "isolcpus=", &iso);
    kv(out, st, "nohz_full=", &set_or(&b.nohz_full, "not set"));
    kv(out, st, "rcu_nocbs=", &set_or(&b.rcu_nocbs, "not set"));
    kv(out, st, "irqaffinity=", &set_or(&b.irqaffinity, "not set"));
    kv(out, st, "kthread_cpus=", &set_or(&b.kthread_cpus, "not set"));
    kv(out, st, "systemd.cpu_aff.", &set_or(&b.systemd_cpu_affinity, "not set"));
    if !b.hugepages.is_empty() {
        let hp: Vec<String> = b.hugepages.iter().map(|(k, v)| format!("{k}={v}")).collect();
        kv(out, st, "hugepages", &hp.join(" "));
    }
    const NOTABLE: &[&str] = &[
        "nohz",
        "skew_tick",
        "idle",
        "intel_idle.max_cstate",
        "processor.max_cstate",
        "intel_pstate",
        "nosoftlockup",
        "nmi_watchdog",
        "tsc",
        "mitigations",
        "rcu_nocb_poll",
        "rcutree.kthread_prio",
        "audit",
        "mce",
        "iommu",
        "intel_iommu",
        "transparent_hugepage",
        "cpuidle_haltpoll.force",
    ];
    let notable: Vec<String> = b
        .tokens
        .iter()
        .filter(|(key, _)| NOTABLE.contains(&key.as_str()))
        .map(|(key, v)| v.as_ref().map_or(key.clone(), |v| format!("{key}={v}")))
        .collect();
    if !notable.is_empty() {
        kv(out, st, "also", &notable.join(" "));
    }
    kv(out, st, "sysfs isolated", &set_or(&h.cpus.isolated, "unknown"));
    kv(out, st, "sysfs nohz_full", &set_or(&h.cpus.nohz_full, "unknown"));
    for (key, e) in &b.errors {
        kv(out, st, "cmdline error", &st.paint(Paint::Red, &format!("{key}=: {e}")));
    }
    out.push('\n');
}

fn power(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Power"));
    let p = &h.power;
    kv(out, st, "cpuidle driver", &opt(&p.cpuidle_driver));
    kv(out, st, "intel_pstate", &opt(&p.intel_pstate_status));
    let mut gov: BTreeMap<String, CpuSet> = BTreeMap::new();
    let mut qos: BTreeMap<String, CpuSet> = BTreeMap::new();
    for c in &p.cpus {
        let g = match (&c.scaling_driver, &c.governor) {
            (Some(d), Some(g)) => format!("{d}/{g}"),
            (None, Some(g)) => g.clone(),
            _ => "no cpufreq".into(),
        };
        gov.entry(g).or_default().insert(c.cpu);
        qos.entry(c.pm_qos_resume_latency_us.clone().unwrap_or_else(|| "unknown".into()))
            .or_default()
            .insert(c.cpu);
    }
    let g: Vec<String> = gov.iter().map(|(g, s)| format!("{g} on {s}")).collect();
    let g = if g.is_empty() { "unknown".to_string() } else { g.join("; ") };
    kv(out, st, "governor", &g);
    let q: Vec<String> = qos.iter().map(|(v, s)| format!("{v} on {s}")).collect();
    if !q.is_empty() {
        kv(out, st, "pm_qos resume", &format!("{} (µs; 0 = no limit)", q.join("; ")));
    }
    // C-states: one row per state name, CPUs where it is enabled.
    let mut states: BTreeMap<(usize, String), (Option<u64>, CpuSet, CpuSet)> = BTreeMap::new();
    for c in &p.cpus {
        for s in &c.idle_states {
            let e = states.entry((s.index, s.name.clone())).or_insert((
                s.exit_latency_us,
                CpuSet::new(),
                CpuSet::new(),
            ));
            if s.disabled.unwrap_or(false) {
                e.2.insert(c.cpu);
            } else {
                e.1.insert(c.cpu);
            }
        }
    }
    if states.is_empty() {
        kv(out, st, "C-states", "unknown (no cpuidle)");
    } else {
        let mut t = Table::new(&["STATE", "EXIT µs", "ENABLED ON", "DISABLED ON"]).right(&[1]);
        for ((_, name), (lat, en, dis)) in states {
            let deep = lat.is_some_and(|l| l > host::findings::DEEP_CSTATE_US) && !en.is_empty();
            let lat = lat.map_or("?".into(), |l| l.to_string());
            t.row(vec![
                name,
                if deep { st.paint(Paint::Yellow, &lat) } else { lat },
                if en.is_empty() { "-".into() } else { en.to_list() },
                if dis.is_empty() { "-".into() } else { dis.to_list() },
            ]);
        }
        out.push_str(&t.render(st, 2));
    }
    out.push('\n');
}

fn memory(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("Memory, sysctls, workqueues"));
    let m = &h.memory;
    kv(
        out,
        st,
        "memory",
        &format!(
            "{} MiB total, {} MiB available",
            m.mem_total_kb.map_or("?".into(), |k| (k / 1024).to_string()),
            m.mem_available_kb.map_or("?".into(), |k| (k / 1024).to_string())
        ),
    );
    kv(
        out,
        st,
        "THP",
        &format!(
            "enabled {}, defrag {}; KSM run {}",
            opt(&m.thp_enabled),
            opt(&m.thp_defrag),
            opt(&m.ksm_run)
        ),
    );
    let mut hp: Vec<String> = m
        .hugepages
        .iter()
        .filter(|(_, v)| v.total > 0)
        .map(|(k, v)| format!("{}×{k}kB ({} free)", v.total, v.free))
        .collect();
    for n in &h.numa_nodes {
        for (k, v) in n.hugepages.iter().filter(|(_, v)| v.total > 0) {
            hp.push(format!("node{}: {}×{k}kB", n.id, v.total));
        }
    }
    kv(
        out,
        st,
        "hugepages",
        &if hp.is_empty() {
            format!("none allocated (default size {} kB)", opt(&m.default_hugepage_kb))
        } else {
            hp.join(", ")
        },
    );
    if !h.sysctls.values.is_empty() {
        let s: Vec<String> = h
            .sysctls
            .values
            .iter()
            .map(|(k, v)| format!("{}={v}", k.rsplit_once('.').map_or(k.as_str(), |x| x.1)))
            .collect();
        for (i, l) in wrap(&s.join(" "), st.width, "                   ").into_iter().enumerate() {
            if i == 0 {
                kv(out, st, "sysctls", l.trim_start());
            } else {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    let w = &h.workqueues;
    kv(
        out,
        st,
        "workqueues",
        &format!(
            "unbound cpumask {}, writeback {}, {} per-queue masks",
            set_or(&w.cpumask, "unknown"),
            set_or(&w.writeback, "unknown"),
            w.per_workqueue.len()
        ),
    );
    if !h.cgroup.partitions.is_empty() {
        let p: Vec<String> = h
            .cgroup
            .partitions
            .iter()
            .map(|p| format!("{} {} ({})", p.path, p.partition, set_or(&p.cpus_effective, "?")))
            .collect();
        kv(out, st, "cpuset parts", &p.join("; "));
    }
    for b in &h.block_devices {
        kv(
            out,
            st,
            &format!("block {}", b.name),
            &format!(
                "{}, scheduler {}, wbt {}, cache {}",
                match b.rotational {
                    Some(true) => "rotational",
                    Some(false) => "non-rotational",
                    None => "?",
                },
                opt(&b.scheduler),
                b.wbt_lat_usec.as_ref().map_or("unknown".into(), |w| format!("{w} µs")),
                opt(&b.write_cache)
            ),
        );
    }
    for n in &h.net_interfaces {
        kv(
            out,
            st,
            &format!("net {}", n.name),
            &format!(
                "{} rx / {} tx queues, {}{}",
                opt(&n.rx_queues),
                opt(&n.tx_queues),
                opt(&n.operstate),
                n.pci_address.as_ref().map_or(String::new(), |a| format!(", pci {a}"))
            ),
        );
    }
    out.push('\n');
}

/// A PCI class code's family name, for the classes whose placement matters.
fn pci_family(class: &str) -> Option<&'static str> {
    let c = class.trim_start_matches("0x");
    match c.get(..2)? {
        "01" => Some("storage"),
        "02" => Some("network"),
        "03" => Some("display"),
        "0b" => Some("processor"),
        "12" => Some("accelerator"),
        _ => None,
    }
}

fn pci(out: &mut String, h: &Host, st: &Style) {
    if h.pci_devices.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", st.heading("PCI devices (NUMA placement)"));
    let mut t =
        Table::new(&["ADDRESS", "KIND", "ID", "DRIVER", "NODE", "NET", "LOCAL CPUS"]).right(&[4]);
    let mut others = 0;
    for d in &h.pci_devices {
        let Some(fam) = d.class.as_deref().and_then(pci_family) else {
            others += 1;
            continue;
        };
        let nets: Vec<&str> = h
            .net_interfaces
            .iter()
            .filter(|n| n.pci_address.as_deref() == Some(d.address.as_str()))
            .map(|n| n.name.as_str())
            .collect();
        t.row(vec![
            d.address.clone(),
            fam.to_string(),
            format!(
                "{}:{}",
                d.vendor.as_deref().unwrap_or("?").trim_start_matches("0x"),
                d.device.as_deref().unwrap_or("?").trim_start_matches("0x")
            ),
            d.driver.clone().unwrap_or_else(|| "-".into()),
            d.numa_node.map_or("?".into(), |n| n.to_string()),
            if nets.is_empty() { "-".into() } else { nets.join(",") },
            set_or(&d.local_cpus, "?"),
        ]);
    }
    if !t.is_empty() {
        out.push_str(&t.render(st, 2));
    }
    let _ = writeln!(out, "  {}", st.paint(Paint::Dim, &format!("{others} other devices (bridges, USB, or no class captured) not shown; NODE -1 = no NUMA affinity reported")));
    out.push('\n');
}

/// Per-CPU IRQ facts: device IRQs allowed / effectively targeted, device interrupt count,
/// and the named rows of interest.
struct CpuIrqs {
    allowed: usize,
    effective: usize,
    device_count: u64,
    named: BTreeMap<String, u64>,
}

fn cpu_irqs(h: &Host, cpu: usize) -> CpuIrqs {
    let mut c = CpuIrqs { allowed: 0, effective: 0, device_count: 0, named: BTreeMap::new() };
    for irq in &h.irqs {
        if irq.affinity.as_ref().is_some_and(|a| a.contains(cpu)) {
            c.allowed += 1;
        }
        if irq.effective_affinity.as_ref().is_some_and(|a| a.contains(cpu)) {
            c.effective += 1;
        }
        c.device_count += irq.counts.get(cpu).copied().unwrap_or(0);
    }
    if let Some(t) = &h.interrupts {
        if let Some(col) = t.cpus.iter().position(|&x| x == cpu) {
            for r in t.rows.iter().filter(|r| ["LOC", "RES", "CAL", "TLB"].contains(&r.id.as_str()))
            {
                c.named.insert(r.id.clone(), r.counts.get(col).copied().unwrap_or(0));
            }
        }
    }
    c
}

fn irqs(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("IRQs (who may land where)"));
    if h.irqs.is_empty() && h.interrupts.is_none() {
        let _ = writeln!(out, "  unknown (no /proc/interrupts)\n");
        return;
    }
    kv(out, st, "default affinity", &set_or(&h.default_smp_affinity, "unknown"));
    let iso = h.isolated_cpus();
    let online = h.online_cpus();
    // Rows: every CPU on small hosts; isolated + busiest on big ones.
    let mut rows: Vec<usize> = online.iter().collect();
    let many = rows.len() > 16;
    if many {
        let mut busy: Vec<(u64, usize)> =
            rows.iter().map(|&c| (cpu_irqs(h, c).device_count, c)).collect();
        busy.sort_by(|a, b| b.cmp(a));
        let mut keep: BTreeSet<usize> = iso.iter().collect();
        keep.extend(busy.iter().take(8).map(|x| x.1));
        rows = keep.into_iter().collect();
    }
    let mut t =
        Table::new(&["CPU", "MAY GET", "EFFECTIVE", "DEVICE IRQS", "LOC", "RES", "CAL", "TLB", ""])
            .right(&[0, 1, 2, 3, 4, 5, 6, 7]);
    for cpu in &rows {
        let c = cpu_irqs(h, *cpu);
        let n = |k: &str| c.named.get(k).map_or("-".into(), |v| v.to_string());
        let mark = if iso.contains(*cpu) {
            if c.effective > 0 || c.device_count > 0 {
                st.paint(Paint::Yellow, "isolated, gets IRQs")
            } else {
                st.paint(Paint::Cyan, "isolated")
            }
        } else {
            String::new()
        };
        t.row(vec![
            cpu.to_string(),
            c.allowed.to_string(),
            c.effective.to_string(),
            c.device_count.to_string(),
            n("LOC"),
            n("RES"),
            n("CAL"),
            n("TLB"),
            mark,
        ]);
    }
    let _ = writeln!(out, "  {}", st.paint(Paint::Dim, "MAY GET = device IRQs whose smp_affinity includes the CPU; EFFECTIVE = effective_affinity; counts since boot"));
    out.push_str(&t.render(st, 2));
    if many {
        let _ = writeln!(
            out,
            "  {}",
            st.paint(
                Paint::Dim,
                &format!(
                    "(isolated and the 8 busiest of {} CPUs shown; `--cpu N` for one)",
                    online.len()
                )
            )
        );
    }
    let mut top: Vec<&host::Irq> =
        h.irqs.iter().filter(|i| i.counts.iter().sum::<u64>() > 0).collect();
    top.sort_by_key(|i| std::cmp::Reverse(i.counts.iter().sum::<u64>()));
    if !top.is_empty() {
        let _ = writeln!(out, "  {}", st.paint(Paint::Bold, "top talkers"));
        let mut t = Table::new(&["IRQ", "TOTAL", "AFFINITY", "EFFECTIVE", "NAME"]).right(&[0, 1]);
        for i in top.iter().take(10) {
            t.row(vec![
                i.irq.to_string(),
                i.counts.iter().sum::<u64>().to_string(),
                set_or(&i.affinity, "?"),
                set_or(&i.effective_affinity, "?"),
                i.name.clone().unwrap_or_default(),
            ]);
        }
        out.push_str(&t.render(st, 2));
    }
    out.push('\n');
}

/// Kind of a task for the "what runs where" view.
fn kind(t: &Task) -> &'static str {
    if t.per_cpu_kthread && t.allowed_cpus.as_ref().is_some_and(|a| a.len() > 1) {
        // PF_NO_SETAFFINITY but not bound: unbound workqueue workers follow the wq cpumask.
        "unbound kworker"
    } else if t.per_cpu_kthread {
        "per-cpu kthread"
    } else if t.kthread {
        "kthread"
    } else {
        "user"
    }
}

fn rt(t: &Task) -> bool {
    t.policy == "FF" || t.policy == "RR" || t.policy == "DLN"
}

fn tasks(out: &mut String, h: &Host, st: &Style) {
    let _ = writeln!(out, "{}", st.heading("What runs where"));
    let Some(tasks) = &h.tasks else {
        let _ = writeln!(
            out,
            "  tasks not captured in this source (must-gathers hold no /proc/<pid>)\n"
        );
        return;
    };
    let iso = h.isolated_cpus();
    let _ = writeln!(out, "  {}", st.paint(Paint::Dim, "RAN = threads whose last CPU (stat field 39) is this one; ALLOWED = movable threads whose affinity includes it"));
    let mut t = Table::new(&[
        "CPU",
        "RAN",
        "PER-CPU KTH",
        "MOVABLE KTH",
        "USER",
        "ALLOWED KTH",
        "ALLOWED USER",
        "RT THREADS",
    ])
    .right(&[0, 1, 2, 3, 4, 5, 6]);
    // One pass over the tasks (not one per CPU): linear in tasks × allowed CPUs.
    #[derive(Default)]
    struct PerCpu<'a> {
        ran: usize,
        per_cpu: usize,
        movable_kth: usize,
        user: usize,
        allowed_kth: usize,
        allowed_user: usize,
        rt: Vec<&'a Task>,
    }
    let mut per: BTreeMap<usize, PerCpu> = BTreeMap::new();
    for x in tasks {
        if let Some(c) = x.cpu {
            let e = per.entry(c).or_default();
            e.ran += 1;
            match kind(x) {
                "per-cpu kthread" => e.per_cpu += 1,
                "user" => e.user += 1,
                _ => e.movable_kth += 1,
            }
            if rt(x) {
                e.rt.push(x);
            }
        }
        if !x.per_cpu_kthread {
            for c in x.allowed_cpus.iter().flat_map(|a| a.iter()) {
                let e = per.entry(c).or_default();
                if x.kthread {
                    e.allowed_kth += 1;
                } else {
                    e.allowed_user += 1;
                }
            }
        }
    }
    for cpu in h.online_cpus().iter() {
        let e = per.remove(&cpu).unwrap_or_default();
        // RT threads that last ran here: how many, and the highest-priority one.
        let mut rts = e.rt;
        rts.sort_by_key(|x| (std::cmp::Reverse(x.rt_priority), x.pid, x.tid));
        let rts_s = match rts.first() {
            Some(top) => {
                format!("{} (top: {} {}{})", rts.len(), top.comm, top.policy, top.rt_priority)
            }
            None => "0".into(),
        };
        let (ak, au) = (e.allowed_kth, e.allowed_user);
        let flag = |n: usize| {
            if iso.contains(cpu) && n > 0 {
                st.paint(Paint::Yellow, &n.to_string())
            } else {
                n.to_string()
            }
        };
        t.row(vec![
            if iso.contains(cpu) {
                st.paint(Paint::Cyan, &format!("{cpu}*"))
            } else {
                cpu.to_string()
            },
            e.ran.to_string(),
            e.per_cpu.to_string(),
            e.movable_kth.to_string(),
            e.user.to_string(),
            flag(ak),
            flag(au),
            rts_s,
        ]);
    }
    out.push_str(&t.render(st, 2));
    let _ = writeln!(
        out,
        "  {}",
        st.paint(
            Paint::Dim,
            "`lowlat inspect --cpu N` lists every thread that ran or may run on CPU N"
        )
    );
    out.push('\n');
}

fn focus(out: &mut String, h: &Host, cpu: usize, st: &Style) {
    let _ = writeln!(out, "{}", st.heading(&format!("CPU {cpu}")));
    let Some(topo) = h.cpu(cpu) else {
        let _ = writeln!(
            out,
            "  CPU {cpu} does not exist on this host (online: {})\n",
            h.online_cpus()
        );
        return;
    };
    let iso = h.isolated_cpus();
    kv(
        out,
        st,
        "place",
        &format!(
            "node {}, package {}, core {}, siblings {}",
            opt(&topo.numa_node),
            opt(&topo.package),
            opt(&topo.core),
            topo.siblings
        ),
    );
    kv(out, st, "role", if iso.contains(cpu) { "isolated" } else { "housekeeping" });
    if let Some(p) = h.power.cpus.iter().find(|p| p.cpu == cpu) {
        let states: Vec<String> = p
            .idle_states
            .iter()
            .map(|s| {
                format!(
                    "{}({}µs{})",
                    s.name,
                    s.exit_latency_us.map_or("?".into(), |l| l.to_string()),
                    if s.disabled == Some(true) { ", off" } else { "" }
                )
            })
            .collect();
        kv(
            out,
            st,
            "power",
            &format!(
                "governor {}, pm_qos {}, C-states {}",
                opt(&p.governor),
                opt(&p.pm_qos_resume_latency_us),
                if states.is_empty() { "unknown".into() } else { states.join(" ") }
            ),
        );
    }
    let c = cpu_irqs(h, cpu);
    let named: Vec<String> = c.named.iter().map(|(k, v)| format!("{k} {v}")).collect();
    kv(
        out,
        st,
        "interrupts",
        &format!(
            "{} device IRQs may target it, {} effectively do, {} device interrupts; {}",
            c.allowed,
            c.effective,
            c.device_count,
            named.join(", ")
        ),
    );
    let mut t = Table::new(&["IRQ", "COUNT HERE", "AFFINITY", "EFFECTIVE", "NAME"]).right(&[0, 1]);
    for irq in h.irqs.iter().filter(|i| {
        i.affinity.as_ref().is_some_and(|a| a.contains(cpu))
            || i.counts.get(cpu).is_some_and(|n| *n > 0)
    }) {
        t.row(vec![
            irq.irq.to_string(),
            irq.counts.get(cpu).copied().unwrap_or(0).to_string(),
            set_or(&irq.affinity, "?"),
            set_or(&irq.effective_affinity, "?"),
            irq.name.clone().unwrap_or_default(),
        ]);
    }
    if !t.is_empty() {
        out.push_str(&t.render(st, 2));
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{}",
        st.heading(&format!(
            "Threads on CPU {cpu} (ps -eTo psr,pid,tid,policy,rtprio,cmd, answered)"
        ))
    );
    let Some(tasks) = &h.tasks else {
        let _ = writeln!(out, "  tasks not captured in this source\n");
        return;
    };
    let mut rows: Vec<&Task> = tasks
        .iter()
        .filter(|t| {
            t.cpu == Some(cpu)
                || (!t.per_cpu_kthread && t.allowed_cpus.as_ref().is_some_and(|a| a.contains(cpu)))
                || (t.per_cpu_kthread
                    && t.allowed_cpus.as_ref().is_some_and(|a| a.len() == 1 && a.contains(cpu)))
        })
        .collect();
    rows.sort_by_key(|t| (!t.kthread, !t.per_cpu_kthread, t.pid, t.tid));
    let mut tb = Table::new(&["PSR", "PID", "TID", "POL", "RTPRIO", "KIND", "ALLOWED", "CMD"])
        .right(&[0, 1, 2, 4]);
    for t in rows {
        let cmd = match (&t.cmdline, t.kthread) {
            (_, true) => format!("[{}]", t.comm),
            (Some(c), false) => c.clone(),
            (None, false) => t.comm.clone(),
        };
        let psr = t.cpu.map_or("?".into(), |c| c.to_string());
        let movable_here = !t.per_cpu_kthread && iso.contains(cpu);
        tb.row(vec![
            if t.cpu == Some(cpu) { psr } else { st.paint(Paint::Dim, &psr) },
            t.pid.to_string(),
            t.tid.to_string(),
            t.policy.clone(),
            if rt(t) { t.rt_priority.to_string() } else { "-".into() },
            if movable_here { st.paint(Paint::Yellow, kind(t)) } else { kind(t).to_string() },
            set_or(&t.allowed_cpus, "?"),
            truncate(&cmd, 200),
        ]);
    }
    out.push_str(&tb.render(st, 2));
    let _ = writeln!(out, "  {}", st.paint(Paint::Dim, "PSR is the last CPU the thread ran on; rows with another PSR may run here (their ALLOWED includes it)"));
    out.push('\n');
}

fn findings(out: &mut String, h: &Host, st: &Style, cpu: Option<usize>) {
    // Findings are about the host as a whole (a sibling of CPU N, an IRQ that may reach it…):
    // the focused view shows them all rather than guess which concern CPU N.
    let title = if cpu.is_some() { "Findings (whole host)" } else { "Findings" };
    let _ = writeln!(out, "{}", st.heading(title));
    let list: Vec<&host::Finding> = h.findings.iter().collect();
    if list.is_empty() {
        let _ = writeln!(out, "  none\n");
        return;
    }
    for f in list {
        let sev = match f.severity {
            Severity::Error => st.paint(Paint::Red, "error"),
            Severity::Warn => st.paint(Paint::Yellow, "warn "),
            Severity::Info => st.paint(Paint::Cyan, "info "),
        };
        let head = format!("{sev} {} ", st.paint(Paint::Bold, &f.id));
        let lines = wrap(&f.message, st.width.saturating_sub(4), "");
        let _ = writeln!(out, "  {head}{}", lines.first().map(String::as_str).unwrap_or(""));
        for l in lines.iter().skip(1) {
            let _ = writeln!(out, "        {l}");
        }
        for e in &f.evidence {
            let _ = writeln!(
                out,
                "        {} {}",
                st.paint(Paint::Dim, "·"),
                truncate(e, st.width.saturating_sub(10))
            );
        }
        if let Some(fix) = &f.fix {
            for (i, l) in wrap(fix, st.width.saturating_sub(14), "").into_iter().enumerate() {
                let _ = writeln!(
                    out,
                    "        {} {l}",
                    if i == 0 { st.paint(Paint::Green, "fix:") } else { "    ".into() }
                );
            }
        }
    }
    out.push('\n');
}

fn unknowns(out: &mut String, h: &Host, st: &Style) {
    if h.unknown.is_empty() && h.warnings.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", st.heading("Not known"));
    for u in &h.unknown {
        let _ = writeln!(out, "  {:<28} {} ({})", u.field, st.paint(Paint::Dim, &u.path), u.reason);
    }
    for w in h.warnings.iter().take(20) {
        let line = w.line.map_or(String::new(), |l| format!(":{l}"));
        let _ = writeln!(
            out,
            "  {} {}{line}: {}",
            st.paint(Paint::Yellow, "warning"),
            w.path,
            w.message
        );
    }
    if h.warnings.len() > 20 {
        let _ = writeln!(out, "  … {} more warnings (see --json)", h.warnings.len() - 20);
    }
}

#[cfg(test)]
mod tests {
    //! The view on the must-gather nodes and the committed VM snapshot, as insta snapshots.

    use std::path::{Path, PathBuf};

    use super::*;

    /// The repository's `testdata/` (public fixtures and CRD schemas; see `testdata/NOTICE.md`).
    fn testdata_dir() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
    }

    fn node(mg: &str, node: &str) -> Host {
        let dir = testdata_dir().join("fixtures/must-gather").join(mg);
        let mut h = host::read(&host::Root::must_gather(&dir, Some(node)).unwrap());
        h.source.path = format!("<testdata>/fixtures/must-gather/{mg}");
        h
    }

    fn vm() -> Host {
        let p =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/tests/fixtures/firecracker-vm.tgz");
        let mut h = host::read(&host::Root::open(&p).unwrap());
        h.source.path = "firecracker-vm.tgz".into();
        h
    }

    #[test]
    fn worker1_view() {
        let h = node("must-gather.bare-metal", "worker1");
        insta::assert_snapshot!(render(&h, &ViewOptions::default(), &Style::plain(120)));
    }

    #[test]
    fn worker2_view() {
        let h = node("must-gather.bare-metal", "worker2");
        insta::assert_snapshot!(render(&h, &ViewOptions::default(), &Style::plain(100)));
    }

    #[test]
    fn sno_view() {
        let h = node("must-gather.sno", "ocp47sno-master-0.demo.lab");
        insta::assert_snapshot!(render(&h, &ViewOptions::default(), &Style::plain(100)));
    }

    #[test]
    fn worker1_cpu5_focus() {
        let h = node("must-gather.bare-metal", "worker1");
        insta::assert_snapshot!(render(&h, &ViewOptions { cpu: Some(5) }, &Style::plain(120)));
    }

    #[test]
    fn vm_view_and_cpu_focus() {
        let h = vm();
        insta::assert_snapshot!("vm_view", render(&h, &ViewOptions::default(), &Style::plain(100)));
        insta::assert_snapshot!(
            "vm_cpu1",
            render(&h, &ViewOptions { cpu: Some(1) }, &Style::plain(100))
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let h = vm();
        let plain = render(&h, &ViewOptions::default(), &Style::plain(100));
        assert!(!plain.contains('\x1b'));
        let col = render(&h, &ViewOptions::default(), &Style { color: true, width: 100 });
        assert!(col.contains("\x1b[1m"));
    }
}
