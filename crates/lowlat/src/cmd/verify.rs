//! `lowlat verify`: gather the evidence (host model, boot loader entries, irqbalance, cgroup
//! RT budgets, a short live window) and run the `verify` crate's checks against a plan.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use host::Root;
use plan::{Plan, RuntimeItem};
use verify::{render, Allow, BootEntry, Input, Irqbalance, Window};

use super::common::HostArgs;
use crate::exit::{usage, ExitCode};

/// Arguments of `lowlat verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan to check against; without it, the plan implied by the host's own command
    /// line (isolcpus ∪ nohz_full isolated, the rest housekeeping).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub host: HostArgs,
    /// Print the checks as JSON (`checks[] {id, status, evidence, fix}`, `summary`).
    #[arg(long)]
    pub json: bool,
    /// Also write the checks as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// A workload task allowed on the isolated CPUs: a PID or a comm (repeatable).
    #[arg(long, value_name = "COMM|PID")]
    pub allow: Vec<String>,
    /// The `lowlat apply` journal: IRQs whose affinity write the kernel refused there are
    /// classified as managed (expected residue).
    #[arg(long, value_name = "PATH", default_value = tune::journal::DEFAULT_JOURNAL)]
    pub journal: PathBuf,
    /// Live only: how long to watch interrupt and idle-state counters (e.g. 2s, 500ms; 0 to skip).
    #[arg(long, value_name = "DURATION", default_value = "2s")]
    pub window: String,
}

fn parse_duration(s: &str) -> anyhow::Result<Duration> {
    let s = s.trim();
    let (num, unit) =
        s.find(|c: char| !c.is_ascii_digit() && c != '.').map_or((s, "s"), |i| s.split_at(i));
    let n: f64 = num
        .parse()
        .map_err(|_| usage(format!("--window {s:?}: expected a duration like 2s or 500ms")))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" | "" => n,
        "m" => n * 60.0,
        _ => return Err(usage(format!("--window {s:?}: unit must be ms, s or m"))),
    };
    Ok(Duration::from_secs_f64(secs))
}

/// Boot loader command lines for the next boot: BLS entries and /etc/default/grub.
fn boot_entries(root: &Root) -> Vec<BootEntry> {
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

fn irqbalance(root: &Root, host: &host::Host) -> Option<Irqbalance> {
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

/// cgroup-v1 `cpu.rt_runtime_us` at the cpu controller's root, its children, and the
/// children of container parents (kubepods*, docker, machine.slice).
fn rt_chain(root: &Root) -> Vec<(String, i64)> {
    let base = ["sys/fs/cgroup/cpu,cpuacct", "sys/fs/cgroup/cpu"]
        .into_iter()
        .find(|b| root.read_string(&format!("{b}/cpu.rt_runtime_us")).is_ok());
    let Some(base) = base else { return Vec::new() };
    let read = |dir: &str| {
        let p = format!("{dir}/cpu.rt_runtime_us");
        root.read_trimmed(&p).ok().and_then(|v| v.parse::<i64>().ok()).map(|v| (format!("/{p}"), v))
    };
    let mut out: Vec<(String, i64)> = read(base).into_iter().collect();
    for child in root.list_dir(base).unwrap_or_default() {
        let dir = format!("{base}/{child}");
        let Some(entry) = read(&dir) else { continue };
        out.push(entry);
        if child.starts_with("kubepods") || child == "docker" || child == "machine.slice" {
            for grand in root.list_dir(&dir).unwrap_or_default() {
                out.extend(read(&format!("{dir}/{grand}")));
            }
        }
    }
    out
}

/// `key = value` lines of the files `sysctl --system` reads, in its order.
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

/// Values of planned knobs the host model may not carry, read through the root.
fn planned_files(root: &Root, plan: &Plan, host: &mut host::Host) -> BTreeMap<String, String> {
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
        if let std::collections::btree_map::Entry::Vacant(e) = host.sysctls.values.entry(name) {
            if let Ok(v) = root.read_trimmed(&path) {
                e.insert(v);
            }
        }
    }
    files
}

/// IRQs whose `smp_affinity` write `apply` saw refused (EIO/EPERM/EINVAL) in this boot are
/// managed or per-CPU: mark them so, since `/proc` does not say.
fn mark_refused_irqs(journal: &std::path::Path, host: &mut host::Host) {
    use tune::journal::Record;
    let Ok(Some(records)) = tune::journal::read(journal) else { return };
    let boot = host.kernel.boot_id.clone();
    let mut changes: BTreeMap<u64, String> = BTreeMap::new();
    for r in &records {
        match r {
            Record::Change { seq, target: tune::Target::File { path, .. }, boot_id, .. }
                if Some(boot_id) == boot.as_ref() =>
            {
                changes.insert(*seq, path.clone());
            }
            Record::Outcome { seq, outcome, .. } if *outcome == tune::journal::Outcome::Refused => {
                let irq = changes
                    .get(seq)
                    .and_then(|p| p.strip_prefix("/proc/irq/"))
                    .and_then(|p| p.split('/').next())
                    .and_then(|n| n.parse::<u32>().ok());
                if let Some(n) = irq {
                    for i in host.irqs.iter_mut().filter(|i| i.irq == n && i.managed.is_none()) {
                        i.managed = Some(true);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Run `lowlat verify`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let window = parse_duration(&args.window)?;
    let root = args.host.open_root()?;
    let mut host = args.host.load()?;
    let start = Instant::now();
    let (plan, plan_arg) = match &args.plan {
        Some(p) => (plan::Plan::load(p)?, format!("--plan {}", p.display())),
        None => (verify::implied_plan(&host), "--plan FILE".to_string()),
    };
    let files = planned_files(&root, &plan, &mut host);
    if root.is_live() {
        mark_refused_irqs(&args.journal, &mut host);
    }
    let live = root.is_live();
    let win = if live && !window.is_zero() {
        std::thread::sleep(window.saturating_sub(start.elapsed()));
        let after = host::read(&root);
        match (host.interrupts.clone(), after.interrupts) {
            (Some(before), Some(a)) => Some(Window {
                duration: start.elapsed(),
                interrupts_before: before,
                interrupts_after: a,
                idle_before: host.power.cpus.clone(),
                idle_after: after.power.cpus,
            }),
            _ => None,
        }
    } else {
        None
    };
    let input = Input {
        host: &host,
        plan: &plan,
        live,
        boot_entries: boot_entries(&root),
        irqbalance: irqbalance(&root, &host),
        window: win,
        allow: args
            .allow
            .iter()
            .map(|a| a.parse().map_or_else(|_| Allow::Comm(a.clone()), Allow::Pid))
            .collect(),
        rt_runtime_chain: rt_chain(&root),
        files,
        sysctl_conf: sysctl_conf(&root),
        plan_arg,
    };
    let report = verify::verify(&input);
    if let Some(path) = &args.junit {
        std::fs::write(path, render::junit(&report))
            .with_context(|| format!("writing JUnit XML to {}", path.display()))?;
    }
    if args.json {
        print!("{}", &(serde_json::to_string_pretty(&report)? + "\n"));
    } else {
        let hk = if plan.reserved.is_empty() { "-".into() } else { plan.reserved.to_list() };
        print!(
            "{}",
            &format!(
                "lowlat verify: {} against plan {:?} (isolated {}, housekeeping {}){}\n\n",
                root,
                plan.name,
                if plan.isolated.is_empty() { "-".into() } else { plan.isolated.to_list() },
                hk,
                if live { String::new() } else { "; live-only checks are n.a.".into() }
            )
        );
        if plan.isolated.is_empty() {
            print!("note: the plan isolates no CPU, so most checks have nothing to check; make one with `lowlat plan -o plan.yaml` and pass --plan\n\n");
        }
        print!("{}", &render::table(&report));
    }
    Ok(if report.passed() { ExitCode::Ok } else { ExitCode::CheckFailed })
}
