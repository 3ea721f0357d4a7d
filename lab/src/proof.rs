//! The lab's proofs. Boot 0 (no lowlat arguments) snapshots the guest; the host plans from the
//! snapshot and renders the kernel arguments three ways (`render cmdline`, the options line of
//! a rendered BLS entry, GRUB_CMDLINE_LINUX of a rendered /etc/default/grub); the guest boots
//! with each and `verify` must pass every boot check, then the runtime tier goes round trip
//! (apply → verify passes → revert restores byte for byte). A last boot without the arguments
//! must fail exactly the boot checks, each with its fix. Every claim is recorded in
//! `summary.json`; the run passes when every claim holds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use verify::{Report, Status};

use crate::fetch::Packages;
use crate::lab::{Guest, Lab, BASE_ARGS};

const PROBE: &str = include_str!("../guest/jobs/probe.sh");
const TIERS: &str = include_str!("../guest/jobs/tiers.sh");
const VERIFY: &str = include_str!("../guest/jobs/verify.sh");

/// The plan the lab boots: real-time kernel, low-latency power, isolcpus with the `domain`
/// flag (so `/sys/devices/system/cpu/isolated` is non-empty and checked).
pub const PLAN_ARGS: &[&str] =
    &["--rt-kernel", "--power", "low-latency", "--isolcpus-domain", "--name", "rtlab"];

/// Checks whose effect only kernel arguments give: on a boot without them they fail with a
/// fix that renders the arguments and reboots, and `apply` (even `--move-tasks`) cannot make
/// them pass.
pub const BOOT_ONLY: &[&str] =
    &["cmdline-args", "sysfs-isolated", "sysfs-nohz-full", "rcu-offload-threads"];

/// Checks the plan's kernel arguments make pass at boot, before any `apply`: the boot-only
/// ones, the masks `irqaffinity=`, `kthread_cpus=` and `systemd.cpu_affinity=` set (which
/// `apply` can also set at run time), and the plan-and-kernel checks of the boot group.
pub const BOOT_EFFECTS: &[&str] = &[
    "cmdline-args",
    "sysfs-isolated",
    "sysfs-nohz-full",
    "rcu-offload-threads",
    "irq-default-affinity",
    "kthreadd-affinity",
    "pid1-affinity",
    "preempt-rt",
    "smt-siblings",
    "housekeeping-per-numa",
];

/// Of [`BOOT_EFFECTS`], those a boot without the arguments fails (the others judge the plan
/// and the kernel, not the command line).
pub const BARE_FAILS: &[&str] = &[
    "cmdline-args",
    "sysfs-isolated",
    "sysfs-nohz-full",
    "rcu-offload-threads",
    "irq-default-affinity",
    "kthreadd-affinity",
    "pid1-affinity",
];

/// One claim and whether it held.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    pub name: String,
    pub ok: bool,
    pub detail: String,
    /// Not judged, and why (a timing comparison on a host too busy to compare): neither a
    /// pass nor a failure, and said so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct Summary {
    pub kernel_package: String,
    pub kernel_version: String,
    pub accel: String,
    pub topology: String,
    pub boots: Vec<BootRecord>,
    /// Boots that hung before /init and were retried once.
    pub hung_and_retried: Vec<String>,
    pub claims: Vec<Claim>,
    pub passed: bool,
    pub wall_s: f64,
    /// The tracer boot's numbers (when it ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracers: Option<crate::tracers::TracerReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BootRecord {
    pub name: String,
    pub cmdline: String,
    pub wall_s: f64,
    pub steps: BTreeMap<String, i32>,
}

impl Summary {
    pub(crate) fn claim(
        &mut self,
        name: impl Into<String>,
        ok: bool,
        detail: impl Into<String>,
    ) -> bool {
        let c = Claim { name: name.into(), ok, detail: detail.into(), skipped: None };
        eprintln!("[rtlab] {} {}: {}", if ok { "ok  " } else { "FAIL" }, c.name, c.detail);
        self.claims.push(c);
        ok
    }
    /// A claim not judged: `why` says what kept it from being judged, `detail` what was seen.
    pub(crate) fn skip(&mut self, name: impl Into<String>, why: String, detail: impl Into<String>) {
        let c = Claim { name: name.into(), ok: false, detail: detail.into(), skipped: Some(why) };
        eprintln!(
            "[rtlab] SKIP {}: not judged: {} (seen: {})",
            c.name,
            c.skipped.as_deref().unwrap_or_default(),
            c.detail
        );
        self.claims.push(c);
    }
    pub(crate) fn boot(&mut self, g: &Guest) {
        self.boots.push(BootRecord {
            name: g.name.clone(),
            cmdline: std::fs::read_to_string(g.booted.dir.join("cmdline.txt"))
                .unwrap_or_default()
                .trim()
                .into(),
            wall_s: g.booted.wall.as_secs_f64(),
            steps: g.steps.iter().map(|s| (s.name.clone(), s.rc)).collect(),
        });
    }
}

/// Run lowlat on the host; its stdout.
pub(crate) fn lowlat(bin: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new(bin)
        .args(args)
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    if !out.status.success() {
        bail!(
            "lowlat {} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn report(g: &Guest, file: &str) -> Result<Report> {
    let text = g.read(file)?;
    serde_json::from_str(&text)
        .with_context(|| format!("boot {}: {file} is not a verify report", g.name))
}

fn by_status(r: &Report, s: Status) -> BTreeSet<String> {
    r.checks.iter().filter(|c| c.status == s).map(|c| c.id.clone()).collect()
}

fn show(r: &Report, ids: &BTreeSet<String>) -> String {
    ids.iter()
        .map(|id| {
            let c = r.get(id);
            let ev = c.and_then(|c| c.evidence.first()).map(String::as_str).unwrap_or("");
            format!("{id} ({ev})")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The options line of a BLS entry.
pub fn bls_options(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        l.strip_prefix("options")
            .filter(|r| r.starts_with([' ', '\t']))
            .map(|r| r.trim().to_string())
    })
}

/// The value of `GRUB_CMDLINE_LINUX="…"` in /etc/default/grub, unquoted as grub-mkconfig's
/// shell would (`\"`, `\$`, `\\`, `` \` `` inside double quotes).
pub fn grub_cmdline(text: &str) -> Option<String> {
    let line = text.lines().rev().find(|l| l.trim_start().starts_with("GRUB_CMDLINE_LINUX="))?;
    let v = line.trim_start().trim_start_matches("GRUB_CMDLINE_LINUX=").trim();
    if let Some(inner) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        let mut out = String::new();
        let mut it = inner.chars().peekable();
        while let Some(c) = it.next() {
            if c == '\\' && matches!(it.peek(), Some('"' | '$' | '\\' | '`')) {
                out.extend(it.next());
            } else {
                out.push(c);
            }
        }
        Some(out)
    } else if let Some(inner) = v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        Some(inner.to_string())
    } else {
        Some(v.to_string())
    }
}

/// A `state-*.txt` dump: files (path → value) and tasks (pid → "comm\tcpus").
#[derive(Debug, Default, PartialEq, Eq)]
pub struct State {
    pub files: BTreeMap<String, String>,
    pub tasks: BTreeMap<u32, String>,
}

pub fn parse_state(text: &str) -> State {
    let mut s = State::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("task ") {
            if let Some((pid, more)) = rest.split_once(' ') {
                if let Ok(pid) = pid.parse() {
                    s.tasks.insert(pid, more.to_string());
                }
            }
        } else if let Some((k, v)) = line.split_once('\t') {
            s.files.insert(k.to_string(), v.to_string());
        }
    }
    s
}

/// Differences between two dumps: files by value, tasks present in both by allowed CPUs
/// (kworkers come and go).
pub fn state_diff(a: &State, b: &State) -> Vec<String> {
    let mut d = Vec::new();
    for (k, v) in &a.files {
        match b.files.get(k) {
            Some(w) if w == v => {}
            Some(w) => d.push(format!("{k}: {v:?} -> {w:?}")),
            None => d.push(format!("{k}: gone")),
        }
    }
    for k in b.files.keys().filter(|k| !a.files.contains_key(*k)) {
        d.push(format!("{k}: new"));
    }
    // A kworker's comm names the work item it last ran: compare allowed CPUs only.
    let cpus = |s: &str| s.rsplit('\t').next().unwrap_or("").to_string();
    for (pid, v) in &a.tasks {
        if let Some(w) = b.tasks.get(pid) {
            if cpus(w) != cpus(v) {
                d.push(format!("task {pid}: {v:?} -> {w:?}"));
            }
        }
    }
    d
}

/// What is particular to PREEMPT_RT in the runtime round trip: every IRQ handler is a
/// thread (judged with its IRQ, never moved alone), the per-CPU ktimers / ksoftirqd / rcuc
/// threads stay where the kernel put them, and RT throttling goes off and back.
fn rt_claims(sum: &mut Summary, applied: &Report, before: &State, after: &State, reverted: &State) {
    let threads = applied.get("irq-threads");
    sum.claim(
        "PREEMPT_RT: threaded IRQ handlers are judged with their IRQs after apply",
        threads.is_some_and(|c| matches!(c.status, Status::Pass | Status::ExpectedResidue)),
        threads.map_or("no irq-threads check".into(), |c| {
            format!("{}: {}", c.status.as_str(), c.evidence.join(" / "))
        }),
    );
    let per_cpu = ["ktimers/", "ksoftirqd/", "rcuc/"];
    let mut seen = 0;
    let mut moved = Vec::new();
    for (pid, v) in &before.tasks {
        let comm = v.split('\t').next().unwrap_or("");
        if per_cpu.iter().any(|p| comm.starts_with(p)) {
            seen += 1;
            if after.tasks.get(pid).is_some_and(|w| w != v) {
                moved.push(format!("{comm} ({pid})"));
            }
        }
    }
    sum.claim(
        "PREEMPT_RT: ktimers, ksoftirqd and rcuc threads stay on their CPUs through apply",
        seen > 0 && moved.is_empty(),
        if moved.is_empty() {
            format!("{seen} per-CPU threads untouched")
        } else {
            format!("moved: {}", moved.join(", "))
        },
    );
    let key = "/proc/sys/kernel/sched_rt_runtime_us";
    let get = |s: &State| s.files.get(key).map(|v| v.trim().to_string());
    let (b, a, r) = (get(before), get(after), get(reverted));
    sum.claim(
        "PREEMPT_RT: sched_rt_runtime_us -1 after apply, as found after revert",
        a.as_deref() == Some("-1") && b.is_some() && b == r,
        format!("before {b:?}, applied {a:?}, reverted {r:?}"),
    );
}

fn sample_bls() -> String {
    format!(
        "title Debian GNU/Linux 12 (PREEMPT_RT lab)\nversion 6.1-rt\nlinux /vmlinuz-rt\ninitrd /initrd.img-rt\noptions {BASE_ARGS} root=/dev/vda ro\n"
    )
}

fn sample_grub() -> String {
    format!("GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX_DEFAULT=\"\"\nGRUB_CMDLINE_LINUX=\"{BASE_ARGS}\"\n")
}

/// The one file a render wrote into `dir`.
fn rendered_file(dir: &Path, suffix: &str) -> Result<PathBuf> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.to_string_lossy().ends_with(suffix) && !p.to_string_lossy().ends_with(".lowlat-bak") {
            return Ok(p);
        }
    }
    bail!("no *{suffix} in {}", dir.display())
}

/// The whole lab; `tracers`: the comparison's rounds and seconds (none: skipped);
/// `tracers_only`: the probe and the tracer boot only (the bench).
pub fn run(
    lab: &mut Lab,
    pk: &Packages,
    bin: &Path,
    tracers: Option<(u32, u32)>,
    tracers_only: bool,
) -> Result<bool> {
    let t0 = Instant::now();
    let mut sum = Summary {
        kernel_package: pk.kernel_package.clone(),
        kernel_version: pk.kernel_version.clone(),
        topology: format!("{:?}", lab.machine.topology),
        ..Summary::default()
    };
    let host = lab.dir.join("host");
    let _ = std::fs::remove_dir_all(&host);
    std::fs::create_dir_all(&host)?;
    let limit = Duration::from_secs(300);

    // ---- boot 0: what the guest is
    let probe = lab.boot("0-probe", "", false, PROBE, &[], limit)?;
    sum.accel = lab.accel_note.clone();
    sum.boot(&probe);
    for s in ["inspect", "snapshot"] {
        let st = probe.step(s)?;
        sum.claim(
            format!("probe: lowlat {s} runs on PREEMPT_RT"),
            st.rc == 0,
            format!("exit {}", st.rc),
        );
    }

    // ---- on the host: plan from the snapshot, render three ways
    let snap = probe.file("snapshot.tgz");
    let plan_path = host.join("plan.yaml");
    let mut args = vec!["plan", "--root", snap.to_str().unwrap_or_default()];
    args.extend_from_slice(PLAN_ARGS);
    args.extend(["-o", plan_path.to_str().unwrap_or_default()]);
    let plan_out = lowlat(bin, &args)?;
    std::fs::write(host.join("plan.txt"), &plan_out)?;
    let plan = plan::Plan::load(&plan_path).map_err(|e| anyhow::anyhow!("{e}"))?;
    sum.claim(
        "plan from the snapshot: whole SMT cores, a housekeeping core on each NUMA node",
        plan.reserved.to_list() == "0-1,4-5" && plan.isolated.to_list() == "2-3,6-7",
        format!("housekeeping {}, isolated {}", plan.reserved.to_list(), plan.isolated.to_list()),
    );
    let pathstr = plan_path.to_str().unwrap_or_default();
    let cmdline = lowlat(bin, &["render", "--plan", pathstr, "cmdline"])?.trim().to_string();
    std::fs::write(host.join("cmdline.txt"), format!("{cmdline}\n"))?;
    let bls_in = host.join("lab.conf");
    std::fs::write(&bls_in, sample_bls())?;
    let bls_dir = host.join("bls");
    lowlat(
        bin,
        &[
            "render",
            "--plan",
            pathstr,
            "bls",
            "--input",
            bls_in.to_str().unwrap_or_default(),
            "-o",
            bls_dir.to_str().unwrap_or_default(),
        ],
    )?;
    let bls_file = rendered_file(&bls_dir, ".conf")?;
    let bls_line = bls_options(&std::fs::read_to_string(&bls_file)?)
        .with_context(|| format!("{} has no options line", bls_file.display()))?;
    let grub_in = host.join("grub");
    std::fs::write(&grub_in, sample_grub())?;
    let grub_dir = host.join("grub-out");
    lowlat(
        bin,
        &[
            "render",
            "--plan",
            pathstr,
            "grub",
            "--input",
            grub_in.to_str().unwrap_or_default(),
            "-o",
            grub_dir.to_str().unwrap_or_default(),
        ],
    )?;
    let grub_file = rendered_file(&grub_dir, "grub")?;
    let grub_line = grub_cmdline(&std::fs::read_to_string(&grub_file)?)
        .with_context(|| format!("{} has no GRUB_CMDLINE_LINUX", grub_file.display()))?;
    let plan_bytes = std::fs::read(&plan_path)?;
    let files = vec![("plan.yaml".to_string(), plan_bytes)];
    if tracers_only {
        if let Some((rounds, seconds)) = tracers {
            sum.tracers = Some(crate::tracers::prove(
                lab,
                &mut sum,
                bin,
                &cmdline,
                &plan.isolated,
                rounds,
                seconds,
            )?);
        }
        return finish(lab, sum, t0);
    }

    // ---- boot 1: `render cmdline`, then the runtime tier round trip
    let b1 = lab.boot("1-cmdline", &cmdline, false, TIERS, &files, limit)?;
    sum.boot(&b1);
    // ---- boots 2 and 3: the options lines of the rendered boot loader files, exactly
    let b2 = lab.boot("2-bls", &bls_line, true, VERIFY, &files, limit)?;
    sum.boot(&b2);
    let b3 = lab.boot("3-grub", &grub_line, true, VERIFY, &files, limit)?;
    sum.boot(&b3);
    // ---- boot 4: no lowlat arguments, the same plan
    let b4 = lab.boot("4-bare", "", false, TIERS, &files, limit)?;
    sum.boot(&b4);

    // ---- judgement
    let set = |ids: &[&str]| -> BTreeSet<String> { ids.iter().map(|s| s.to_string()).collect() };
    let status_of = |r: &Report, id: &str| r.get(id).map(|c| c.status);

    // Booted with the rendered arguments, before apply: every boot effect is there.
    for g in [&b1, &b2, &b3] {
        let r = report(g, "verify-booted.json")?;
        let bad: BTreeSet<String> = set(BOOT_EFFECTS)
            .into_iter()
            .filter(|id| status_of(&r, id) != Some(Status::Pass))
            .collect();
        sum.claim(
            format!("{}: every boot check passes before apply", g.name),
            bad.is_empty(),
            if bad.is_empty() {
                format!("{} checks pass: {}", BOOT_EFFECTS.len(), BOOT_EFFECTS.join(", "))
            } else {
                format!("not passing: {}", show(&r, &bad))
            },
        );
    }

    // `lowlat check` with no plan on a host booted with isolation: the host's own isolated
    // CPUs are what it verifies and measures (never a default plan of its own).
    for g in [&b2, &b3] {
        let own = plan::Plan::load(&g.file("check/plan.yaml"));
        let ticks: Option<results::TicksResult> =
            g.read("check/ticks.json").ok().and_then(|t| serde_json::from_str(&t).ok());
        let measured: Option<cpuset::CpuSet> =
            ticks.map(|t| t.cpus.iter().map(|c| c.cpu as usize).collect());
        let ok = matches!(&own, Ok(p) if p.isolated == plan.isolated && p.name == "implied-by-cmdline")
            && measured.as_ref() == Some(&plan.isolated);
        sum.claim(
            format!("{}: `lowlat check` judges the host's own isolation", g.name),
            ok,
            format!(
                "check's plan: {}; ticks measured on {}; booted isolated {}",
                match &own {
                    Ok(p) => format!("{} isolating {}", p.name, p.isolated),
                    Err(e) => format!("unreadable ({e})"),
                },
                measured.map_or_else(|| "nothing".into(), |m| m.to_list()),
                plan.isolated
            ),
        );
    }

    // The same plan without the arguments: those checks fail, each with its fix.
    let bare = report(&b4, "verify-booted.json")?;
    let not_failed: BTreeSet<String> = set(BARE_FAILS)
        .into_iter()
        .filter(|id| status_of(&bare, id) != Some(Status::Fail))
        .collect();
    sum.claim(
        "bare boot: the boot checks fail",
        not_failed.is_empty(),
        if not_failed.is_empty() {
            show(&bare, &set(BARE_FAILS))
        } else {
            format!("not failing: {}", show(&bare, &not_failed))
        },
    );
    let no_fix: Vec<String> = bare
        .checks
        .iter()
        .filter(|c| c.status == Status::Fail && c.fix.is_none())
        .map(|c| c.id.clone())
        .collect();
    sum.claim(
        "bare boot: every failure names its fix",
        no_fix.is_empty(),
        format!("without a fix: {no_fix:?}"),
    );

    for g in [&b1, &b4] {
        let applied = report(g, "verify-applied.json")?;
        let fails = by_status(&applied, Status::Fail);
        let step = g.step("apply")?;
        sum.claim(
            format!("{}: apply --move-tasks exits 0", g.name),
            step.rc == 0,
            format!("exit {} {}", step.rc, g.read("apply.err").unwrap_or_default().trim()),
        );
        if g.name == b1.name {
            sum.claim(
                "booted with the arguments, after apply: verify passes",
                fails.is_empty(),
                if fails.is_empty() {
                    format!(
                        "{} pass, {} expected residue, no failure",
                        applied.summary.pass, applied.summary.expected_residue
                    )
                } else {
                    format!("failing: {}", show(&applied, &fails))
                },
            );
        } else {
            sum.claim(
                "bare boot after apply: exactly the boot-only checks fail",
                fails == set(BOOT_ONLY),
                format!("failing: {}; boot-only: {}", show(&applied, &fails), BOOT_ONLY.join(", ")),
            );
            let wrong_fix: Vec<String> = applied
                .checks
                .iter()
                .filter(|c| {
                    c.status == Status::Fail
                        && !c.fix.as_deref().is_some_and(|f| f.contains("lowlat render"))
                })
                .map(|c| format!("{}: {:?}", c.id, c.fix))
                .collect();
            sum.claim(
                "bare boot after apply: each failure's fix renders the arguments and reboots",
                wrong_fix.is_empty(),
                if wrong_fix.is_empty() {
                    "every fix names `lowlat render`".into()
                } else {
                    wrong_fix.join("; ")
                },
            );
        }
        let before = parse_state(&g.read("state-before.txt")?);
        let applied_s = parse_state(&g.read("state-applied.txt")?);
        let reverted = parse_state(&g.read("state-reverted.txt")?);
        if g.name == b1.name {
            rt_claims(&mut sum, &applied, &before, &applied_s, &reverted);
        }
        // `lowlat status` after apply and after revert, on the booted kernel.
        let status = |f: &str| -> Option<verify::status::Status> {
            g.read(f).ok().and_then(|t| serde_json::from_str(&t).ok())
        };
        let (st_applied, st_reverted) =
            (status("status-applied.json"), status("status-reverted.json"));
        let want_args = if g.name == b1.name {
            verify::status::ArgState::Running
        } else {
            verify::status::ArgState::Missing
        };
        let ok = st_applied.as_ref().is_some_and(|s| {
            matches!(&s.applied, verify::status::Applied::Active { run, .. }
                if run.plan.as_deref() == Some("/job/plan.yaml") && run.changes > 0)
                && s.drift.as_ref().is_some_and(|d| d.changed.is_empty() && d.unchanged > 0)
                && !s.boot_args.is_empty()
                && s.boot_args.iter().all(|a| a.state == want_args)
        }) && st_reverted
            .as_ref()
            .is_some_and(|s| matches!(s.applied, verify::status::Applied::Reverted { .. }));
        sum.claim(
            format!(
                "{}: `lowlat status` tells what is applied, the boot arguments and drift",
                g.name
            ),
            ok,
            match (&st_applied, &st_reverted) {
                (Some(a), Some(r)) => format!(
                    "after apply: {:?}, boot args {:?} ({} of them), drift {}; after revert: {}",
                    match &a.applied {
                        verify::status::Applied::Active { run, .. } =>
                            format!("active, {} changes from {:?}", run.changes, run.plan),
                        other => format!("{other:?}"),
                    },
                    want_args,
                    a.boot_args.len(),
                    a.drift.as_ref().map_or("none".into(), |d| format!(
                        "{} unchanged, {} changed, {} gone",
                        d.unchanged,
                        d.changed.len(),
                        d.gone
                    )),
                    match &r.applied {
                        verify::status::Applied::Reverted { restored, .. } =>
                            format!("reverted ({restored} restored)"),
                        other => format!("{other:?}"),
                    }
                ),
                _ => "status files missing or unreadable".into(),
            },
        );
        let changed = state_diff(&before, &applied_s);
        let left = state_diff(&before, &reverted);
        sum.claim(
            format!("{}: apply changed the runtime state", g.name),
            !changed.is_empty(),
            format!("{} values changed", changed.len()),
        );
        sum.claim(
            format!("{}: revert restores byte for byte", g.name),
            left.is_empty() && g.step("revert")?.rc == 0,
            if left.is_empty() {
                format!(
                    "{} files and the allowed CPUs of {} tasks as before",
                    before.files.len(),
                    before.tasks.len()
                )
            } else {
                left.join("; ")
            },
        );
    }
    if let Some((rounds, seconds)) = tracers {
        sum.tracers = Some(crate::tracers::prove(
            lab,
            &mut sum,
            bin,
            &cmdline,
            &plan.isolated,
            rounds,
            seconds,
        )?);
    }
    finish(lab, sum, t0)
}

fn finish(lab: &Lab, mut sum: Summary, t0: Instant) -> Result<bool> {
    sum.hung_and_retried = lab.hung.clone();
    sum.wall_s = t0.elapsed().as_secs_f64();
    sum.passed = sum.claims.iter().all(|c| c.ok || c.skipped.is_some());
    std::fs::write(lab.dir.join("summary.json"), serde_json::to_string_pretty(&sum)?)?;
    let failed = sum.claims.iter().filter(|c| !c.ok && c.skipped.is_none()).count();
    let skipped = sum.claims.iter().filter(|c| c.skipped.is_some()).count();
    println!(
        "rtlab: {} ({} claims, {failed} failed, {skipped} not judged) in {:.0} s on {}; details in {}",
        if sum.passed { "PASS" } else { "FAIL" },
        sum.claims.len(),
        sum.wall_s,
        sum.accel,
        lab.dir.join("summary.json").display()
    );
    Ok(sum.passed)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn boot_loader_lines_are_read_as_the_loader_would() {
        assert_eq!(bls_options("title x\noptions  a=1 b\n").as_deref(), Some("a=1 b"));
        assert_eq!(bls_options("optionsfoo x\n"), None);
        assert_eq!(
            grub_cmdline("GRUB_CMDLINE_LINUX=\"a \\\"b\\\" \\$c\"\n").as_deref(),
            Some("a \"b\" $c")
        );
        assert_eq!(grub_cmdline("GRUB_CMDLINE_LINUX='x y'\n").as_deref(), Some("x y"));
    }

    #[test]
    fn state_diff_compares_files_and_surviving_tasks() {
        let a = parse_state(
            "/proc/irq/default_smp_affinity\tff\ntask 1 init\t0-7\ntask 99 kworker/u16:1\t0-7\n",
        );
        let b = parse_state("/proc/irq/default_smp_affinity\t33\ntask 1 init\t0-1,4-5\ntask 100 kworker/u16:2\t0-7\n");
        let c = parse_state("/proc/irq/default_smp_affinity\tff\ntask 1 init\t0-7\ntask 99 kworker/u16:1-events\t0-7\n");
        assert!(state_diff(&a, &c).is_empty(), "a kworker's new comm is not a change");
        let d = state_diff(&a, &b);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(state_diff(&a, &a).is_empty());
    }
}
