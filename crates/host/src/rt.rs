//! Why a real-time policy (SCHED_FIFO/RR) is refused to a task, named from evidence, and the
//! exact fix. The kernel refuses `sched_setscheduler` with EPERM when the caller lacks
//! CAP_SYS_NICE and RLIMIT_RTPRIO is below the priority, and — with RT group scheduling
//! (`CONFIG_RT_GROUP_SCHED`, enabled at boot) and RT bandwidth on
//! (`kernel.sched_rt_runtime_us` ≥ 0) — when the task's cpu cgroup has an RT runtime of 0.
//! On cgroup v1 a child's budget never exceeds its parent's, so a 0 anywhere on the chain
//! from the root to the task's cgroup is fatal; on cgroup v2 no non-root cgroup can be given
//! a budget at all, so only a task in the root cgroup (for the cpu controller) may be RT.
//!
//! [`gather`] reads the evidence through a [`Root`] (so it works on snapshots too);
//! [`diagnose`] is pure. `verify`, `inspect`'s findings and `measure` all use them.

use std::io::Read;

use serde::{Deserialize, Serialize};

pub use crate::cgroup::{
    ChainLevel, ContainerChain, Containers, Namespace, Namespaced, Nested, NsEvidence, Recognised,
    Tree,
};
use crate::root::Root;

/// The largest kernel config we read (a distribution config is ~300 KB).
const MAX_CONFIG: u64 = 8 << 20;

/// A task's cgroup for the cpu controller, with what decides its RT budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "version", rename_all = "lowercase")]
pub enum CgroupPlace {
    /// cgroup v1: the cpu hierarchy's mount, the task's path in it, and
    /// `cpu.rt_runtime_us` of every level from the root down to it.
    V1 { mount: String, path: String, chain: Vec<ChainLevel> },
    /// cgroup v2: the task's cgroup, and the cgroup whose cpu controller governs it (the
    /// nearest ancestor-or-self whose parent enables `cpu` in `cgroup.subtree_control`).
    V2 { mount: String, path: String, cpu_path: String },
}

/// Everything [`diagnose`] looks at. `None` fields were not readable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    /// CAP_SYS_NICE in `CapEff`.
    pub cap_sys_nice: Option<bool>,
    /// Soft RLIMIT_RTPRIO (`Max realtime priority`); `u64::MAX` for unlimited.
    pub rlimit_rtprio: Option<u64>,
    /// `kernel.sched_rt_runtime_us` (-1: RT bandwidth off, no group check).
    pub sched_rt_runtime_us: Option<i64>,
    /// RT group scheduling active in this kernel, and how we know.
    pub rt_group_sched: Option<bool>,
    pub rt_group_sched_evidence: Option<String>,
    pub cgroup: Option<CgroupPlace>,
}

/// The closed set of causes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CauseKind {
    /// Neither CAP_SYS_NICE nor a sufficient RLIMIT_RTPRIO.
    NoCapSysNice,
    /// cgroup v1: a `cpu.rt_runtime_us` of 0 on the chain.
    CgroupV1NoBudget,
    /// cgroup v2 with RT group scheduling and the task outside the root cgroup.
    CgroupV2NonRoot,
    /// `kernel.sched_rt_runtime_us` = 0: no RT time anywhere.
    GlobalRuntimeZero,
    /// None of the above explains it.
    Unknown,
}

impl CauseKind {
    /// The stable id, as serialized (`no-cap-sys-nice`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            CauseKind::NoCapSysNice => "no-cap-sys-nice",
            CauseKind::CgroupV1NoBudget => "cgroup-v1-no-budget",
            CauseKind::CgroupV2NonRoot => "cgroup-v2-non-root",
            CauseKind::GlobalRuntimeZero => "global-runtime-zero",
            CauseKind::Unknown => "unknown",
        }
    }
}

/// Why real-time is (or would be) refused: the cause, the evidence in words, the fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cause {
    pub kind: CauseKind,
    /// One sentence naming the cause (with the path for cgroup causes).
    pub message: String,
    /// The cause in a few words, for a verdict line (`cgroup /a/b: no RT budget (v2)`).
    pub short: String,
    /// The evidence lines it rests on.
    pub evidence: Vec<String>,
    /// The exact fix.
    pub fix: String,
}

/// Read the evidence for task `pid` (`self`, or a number) through `root`.
pub fn gather(root: &Root, pid: &str) -> Evidence {
    let status = root.read_string(&format!("proc/{pid}/status")).ok();
    let limits = root.read_string(&format!("proc/{pid}/limits")).ok();
    let cgroups = root.read_string(&format!("proc/{pid}/cgroup")).ok();
    let mounts = root.read_string("proc/mounts").ok();
    let (rt_group_sched, rt_group_sched_evidence) = rt_group_sched(root);
    let cgroup = match (cgroups.as_deref(), mounts.as_deref()) {
        (Some(c), Some(m)) => place(root, c, m),
        _ => None,
    };
    // On v1 the presence of cpu.rt_runtime_us is evidence enough of RT group scheduling.
    let (rt_group_sched, rt_group_sched_evidence) = match (&cgroup, rt_group_sched) {
        (Some(CgroupPlace::V1 { chain, .. }), None)
            if chain.iter().any(|l| l.rt_runtime_us.is_some()) =>
        {
            (Some(true), Some("cpu.rt_runtime_us present in the v1 cpu hierarchy".to_string()))
        }
        _ => (rt_group_sched, rt_group_sched_evidence),
    };
    Evidence {
        cap_sys_nice: status
            .as_deref()
            .and_then(util::privilege::parse_cap_eff)
            .map(|m| util::privilege::has_cap(m, util::privilege::CAP_SYS_NICE)),
        rlimit_rtprio: limits.as_deref().and_then(parse_rtprio_limit),
        sched_rt_runtime_us: root
            .read_trimmed("proc/sys/kernel/sched_rt_runtime_us")
            .ok()
            .and_then(|v| v.parse().ok()),
        rt_group_sched,
        rt_group_sched_evidence,
        cgroup,
    }
}

/// Whether the running kernel schedules RT by group: `CONFIG_RT_GROUP_SCHED=y` in
/// `/proc/config.gz` or `/boot/config-<release>`, unless disabled at boot
/// (`CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED` without `rt_group_sched=1`, or `rt_group_sched=0`).
fn rt_group_sched(root: &Root) -> (Option<bool>, Option<String>) {
    let (config, from) = match kernel_config(root) {
        Some(x) => x,
        None => return (None, None),
    };
    let cmdline = root.read_string("proc/cmdline").unwrap_or_default();
    let (on, why) = rt_group_sched_from(&config, &cmdline);
    (Some(on), Some(format!("{why} ({from})")))
}

/// The running kernel's config text and where it came from.
fn kernel_config(root: &Root) -> Option<(String, String)> {
    if let Ok(gz) = root.read_bytes("proc/config.gz") {
        let mut text = String::new();
        let dec = flate2::read::GzDecoder::new(&gz[..]);
        if dec.take(MAX_CONFIG).read_to_string(&mut text).is_ok() {
            return Some((text, "/proc/config.gz".into()));
        }
    }
    let release = root.read_trimmed("proc/sys/kernel/osrelease").ok()?;
    if release.contains('/') || release.contains("..") {
        return None;
    }
    let path = format!("boot/config-{release}");
    let text = root.read_string(&path).ok()?;
    Some((text, format!("/{path}")))
}

/// Pure: RT group scheduling from a kernel config and the command line.
pub fn rt_group_sched_from(config: &str, cmdline: &str) -> (bool, String) {
    let set = |name: &str| config.lines().any(|l| l.trim() == format!("{name}=y"));
    if !set("CONFIG_RT_GROUP_SCHED") {
        return (false, "CONFIG_RT_GROUP_SCHED is not set".into());
    }
    let arg = cmdline.split_whitespace().find_map(|a| a.strip_prefix("rt_group_sched="));
    match (set("CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED"), arg) {
        (_, Some("0")) => (false, "CONFIG_RT_GROUP_SCHED=y, disabled by rt_group_sched=0".into()),
        (true, Some("1")) => {
            (true, "CONFIG_RT_GROUP_SCHED=y, default-disabled but rt_group_sched=1".into())
        }
        (true, _) => {
            (false, "CONFIG_RT_GROUP_SCHED=y with CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED".into())
        }
        (false, _) => (true, "CONFIG_RT_GROUP_SCHED=y".into()),
    }
}

/// Pure: the soft `Max realtime priority` of a `/proc/<pid>/limits` text.
pub fn parse_rtprio_limit(limits: &str) -> Option<u64> {
    let rest = limits.lines().find_map(|l| l.strip_prefix("Max realtime priority"))?;
    let soft = rest.split_whitespace().next()?;
    if soft == "unlimited" {
        Some(u64::MAX)
    } else {
        soft.parse().ok()
    }
}

/// Pure: the cpu controller's entry of a `/proc/<pid>/cgroup` text: `V1(path)` from a line
/// whose controller list holds `cpu`, else `V2(path)` from the `0::` line.
pub fn cpu_cgroup_line(cgroup: &str) -> Option<(bool, String)> {
    let mut v2 = None;
    for l in cgroup.lines() {
        let (ctrl, path) = cgroup_line(l)?;
        if has_cpu(ctrl) {
            return Some((true, path.to_string()));
        }
        if ctrl.is_empty() {
            v2 = Some(path.to_string());
        }
    }
    v2.map(|p| (false, p))
}

/// Pure: the cgroup-v1 line of a `/proc/<pid>/cgroup` text whose controller list holds `cpu`,
/// as (controller list as the kernel names it — `cpu` or `cpu,cpuacct`, the mount options of
/// that hierarchy —, path). `None` on cgroup v2.
pub fn cpu_v1_line(cgroup: &str) -> Option<(&str, &str)> {
    cgroup.lines().filter_map(cgroup_line).find(|(ctrl, _)| has_cpu(ctrl))
}

/// One `ID:CONTROLLERS:PATH` line of `/proc/<pid>/cgroup` as (controllers, path).
fn cgroup_line(l: &str) -> Option<(&str, &str)> {
    let mut f = l.splitn(3, ':');
    let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
    Some((ctrl, path))
}

fn has_cpu(ctrl: &str) -> bool {
    ctrl.split(',').any(|c| c == "cpu")
}

/// Pure: the mount point of the v1 hierarchy holding `cpu`, and of the cgroup2 tree.
pub fn cgroup_mounts(mounts: &str) -> (Option<String>, Option<String>) {
    let (mut v1, mut v2) = (None, None);
    for l in mounts.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (Some(dir), Some(kind), Some(opts)) = (f.get(1), f.get(2), f.get(3)) else { continue };
        match *kind {
            "cgroup" if v1.is_none() && opts.split(',').any(|o| o == "cpu") => {
                v1 = Some(dir.to_string())
            }
            "cgroup2" if v2.is_none() => v2 = Some(dir.to_string()),
            _ => {}
        }
    }
    (v1, v2)
}

/// Pure: the levels of a cgroup path from the root: `/a/b` → `["", "/a", "/a/b"]` (stops at a
/// `.` or `..` component).
pub fn levels(path: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut cur = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        if part == ".." || part == "." {
            break;
        }
        cur.push('/');
        cur.push_str(part);
        out.push(cur.clone());
    }
    out
}

fn place(root: &Root, cgroup: &str, mounts: &str) -> Option<CgroupPlace> {
    let (is_v1, path) = cpu_cgroup_line(cgroup)?;
    let (v1, v2) = cgroup_mounts(mounts);
    let mount = if is_v1 { v1? } else { v2? };
    Some(place_at(root, is_v1, &mount, &path))
}

/// A cgroup `path` under the cpu controller's `mount` (v1 or v2) with what decides its RT
/// budget, read through `root`: the v1 chain of `cpu.rt_runtime_us`, or the v2 cgroup whose
/// cpu controller governs it. Also for a cgroup no task is in yet (`--rt-cgroup PATH`).
pub fn place_at(root: &Root, v1: bool, mount: &str, path: &str) -> CgroupPlace {
    let (mount, path) = (mount.to_string(), path.to_string());
    let base = mount.trim_start_matches('/').to_string();
    if v1 {
        let chain = levels(&path)
            .into_iter()
            .map(|l| {
                let rel = format!("{base}{l}/cpu.rt_runtime_us");
                ChainLevel {
                    rt_runtime_us: root.read_trimmed(&rel).ok().and_then(|v| v.parse().ok()),
                    file: format!("/{rel}"),
                }
            })
            .collect();
        return CgroupPlace::V1 { mount, path, chain };
    }
    let lv = levels(&path);
    // Climb while the parent does not enable cpu for its children.
    let mut cpu_path = lv.last().cloned().unwrap_or_default();
    for i in (1..lv.len()).rev() {
        let parent = format!("{base}{}/cgroup.subtree_control", lv[i - 1]);
        let enabled = root
            .read_string(&parent)
            .map(|s| s.split_whitespace().any(|c| c == "cpu"))
            .unwrap_or(true);
        if enabled {
            break;
        }
        cpu_path = lv[i - 1].clone();
    }
    let cpu_path = if cpu_path.is_empty() { "/".to_string() } else { cpu_path };
    CgroupPlace::V2 { mount, path, cpu_path }
}

/// The cause that refuses `priority` (1–99) to a task with this evidence, or `None` when
/// nothing in the evidence refuses it. `refused` says the kernel did refuse: then a cause is
/// always returned (`Unknown` when the evidence explains nothing).
pub fn diagnose(ev: &Evidence, priority: u32, refused: bool) -> Option<Cause> {
    if ev.cap_sys_nice == Some(false) {
        let limit = ev.rlimit_rtprio.unwrap_or(0);
        if limit < u64::from(priority) {
            let shown = if limit == u64::MAX { "unlimited".into() } else { limit.to_string() };
            return Some(Cause {
                kind: CauseKind::NoCapSysNice,
                short: "no CAP_SYS_NICE".into(),
                message: format!(
                    "no CAP_SYS_NICE and RLIMIT_RTPRIO {shown} is below priority {priority}"
                ),
                evidence: vec![
                    "CapEff lacks CAP_SYS_NICE (bit 23)".into(),
                    format!("Max realtime priority (soft) = {shown}"),
                ],
                fix: format!(
                    "run as root, or grant CAP_SYS_NICE (`setcap cap_sys_nice+ep <binary>`; in a container `--cap-add SYS_NICE`), or raise RLIMIT_RTPRIO to {priority} (`ulimit -r {priority}`, or `<user> - rtprio {priority}` in /etc/security/limits.conf)"
                ),
            });
        }
    }
    let rt_bw = ev.sched_rt_runtime_us.is_none_or(|v| v >= 0);
    let runtime_ev = ev
        .sched_rt_runtime_us
        .map(|v| format!("kernel.sched_rt_runtime_us = {v}"))
        .unwrap_or_else(|| "kernel.sched_rt_runtime_us not read".into());
    if rt_bw && ev.rt_group_sched != Some(false) {
        if let Some(c) = cgroup_cause(ev, &runtime_ev) {
            return Some(c);
        }
    }
    if ev.sched_rt_runtime_us == Some(0) {
        return Some(Cause {
            kind: CauseKind::GlobalRuntimeZero,
            short: "kernel.sched_rt_runtime_us = 0".into(),
            message: "kernel.sched_rt_runtime_us is 0: the kernel gives real-time tasks no time at all".into(),
            evidence: vec![runtime_ev],
            fix: "sysctl -w kernel.sched_rt_runtime_us=950000 (the default; -1 only on a PREEMPT_RT kernel with stalld)".into(),
        });
    }
    refused.then(|| Cause {
        kind: CauseKind::Unknown,
        short: "cause not found".into(),
        message: "the kernel refused the real-time policy, and neither capabilities, RLIMIT_RTPRIO, the cgroup RT budget nor kernel.sched_rt_runtime_us explain it".into(),
        evidence: summary(ev, &runtime_ev),
        fix: "check seccomp or an LSM policy (SELinux/AppArmor) denying sched_setscheduler, and compare with `chrt -f 1 true`".into(),
    })
}

fn summary(ev: &Evidence, runtime_ev: &str) -> Vec<String> {
    let mut out = vec![
        format!("CAP_SYS_NICE: {}", yes_no(ev.cap_sys_nice)),
        runtime_ev.to_string(),
        format!(
            "RT group scheduling: {}",
            ev.rt_group_sched_evidence.as_deref().unwrap_or("unknown")
        ),
    ];
    match &ev.cgroup {
        Some(CgroupPlace::V1 { path, .. }) => out.push(format!("cgroup v1 cpu: {path}")),
        Some(CgroupPlace::V2 { path, cpu_path, .. }) => {
            out.push(format!("cgroup v2: {path} (cpu controller at {cpu_path})"))
        }
        None => out.push("cgroup: unknown".into()),
    }
    out
}

fn yes_no(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

/// Pure: the topmost level of a v1 chain whose `cpu.rt_runtime_us` is 0, and the writes that
/// give every zero level from there down a budget, parents first (`echo 100000 > FILE`; at
/// most the nearest budgeted parent's). `None` when no level is 0.
pub fn budget_writes(chain: &[ChainLevel]) -> Option<(&ChainLevel, Vec<String>)> {
    let first = chain.iter().position(|l| l.rt_runtime_us == Some(0))?;
    let budget = chain[..first]
        .iter()
        .rev()
        .find_map(|l| l.rt_runtime_us.filter(|v| *v > 0))
        .unwrap_or(950_000);
    let give = budget.min(100_000);
    let writes = chain[first..]
        .iter()
        .filter(|l| l.rt_runtime_us == Some(0))
        .map(|l| format!("echo {give} > {}", l.file))
        .collect();
    Some((&chain[first], writes))
}

fn cgroup_cause(ev: &Evidence, runtime_ev: &str) -> Option<Cause> {
    match ev.cgroup.as_ref()? {
        CgroupPlace::V1 { path, chain, .. } => {
            let (zero, writes) = budget_writes(chain)?;
            let mut evidence: Vec<String> = chain
                .iter()
                .map(|l| match l.rt_runtime_us {
                    Some(v) => format!("{} = {v}", l.file),
                    None => format!("{} unreadable", l.file),
                })
                .collect();
            evidence.push(runtime_ev.to_string());
            Some(Cause {
                kind: CauseKind::CgroupV1NoBudget,
                short: format!("cgroup {path}: RT budget 0 on its chain"),
                message: format!(
                    "cgroup v1 RT budget is 0 at {} on the chain to the task's cgroup {path}: sched_setscheduler fails with EPERM there",
                    zero.file
                ),
                evidence,
                fix: format!(
                    "give every level an RT budget, parent first (each at most its parent's, siblings share it): {}; for Docker `docker run --cpu-rt-runtime=95000` (daemon `--cpu-rt-runtime`); or measure from the root cgroup (`lowlat measure timer --rt-cgroup root`)",
                    writes.join(" && ")
                ),
            })
        }
        CgroupPlace::V2 { mount, path, cpu_path } => {
            if ev.rt_group_sched != Some(true) || cpu_path == "/" {
                return None;
            }
            Some(Cause {
                kind: CauseKind::CgroupV2NonRoot,
                short: format!("cgroup v2 {path}: no RT budget"),
                message: format!(
                    "cgroup v2 with RT group scheduling: the task's cgroup {path} (cpu controller at {cpu_path}) has no RT budget, and cgroup v2 cannot give a non-root cgroup one"
                ),
                evidence: vec![
                    format!("cgroup v2 path {path}, cpu controller at {cpu_path}"),
                    format!(
                        "RT group scheduling: {}",
                        ev.rt_group_sched_evidence.as_deref().unwrap_or("yes")
                    ),
                    runtime_ev.to_string(),
                ],
                fix: format!(
                    "run from the root cgroup (`echo $$ > {mount}/cgroup.procs`, then start the program; or `lowlat measure timer --rt-cgroup root`), or boot with rt_group_sched=0 (kernel 6.16+) or a kernel without CONFIG_RT_GROUP_SCHED"
                ),
            })
        }
    }
}

/// Most directories walked in a cgroup tree (a node with thousands of pods stays bounded).
const MAX_WALK: usize = 20_000;
/// Deepest level walked (kubepods.slice/kubepods-burstable.slice/<pod>/<container> is 4).
const MAX_DEPTH: usize = 8;

/// Pure: is a cgroup directory, named `name` under `parent`, a container's?
/// Docker, Podman, CRI-O and containerd scopes (systemd driver), and the cgroupfs
/// driver's `docker/<id>`, `libpod_parent/…/<id>`, `kubepods…/pod<uid>/<id>`.
pub fn is_container(parent: &str, name: &str) -> bool {
    let scope = |p: &str| name.starts_with(p) && name.ends_with(".scope");
    if ["docker-", "libpod-", "crio-", "cri-containerd-"].iter().any(|p| scope(p))
        && !name.contains("conmon")
    {
        return true;
    }
    let last = parent.rsplit('/').next().unwrap_or("");
    let id_like = name.len() >= 12 && name.bytes().all(|b| b.is_ascii_hexdigit());
    (last == "docker" || parent.contains("libpod_parent")) && id_like
        || (parent.contains("kubepods") && last.starts_with("pod") && !name.ends_with(".slice"))
}

/// v1 interface files of the cpu/cpuacct hierarchy (everything else is a child cgroup).
fn is_v1_file(name: &str) -> bool {
    name.starts_with("cpu.")
        || name.starts_with("cpuacct.")
        || name.starts_with("cgroup.")
        || matches!(name, "tasks" | "notify_on_release" | "release_agent")
}

/// Processes of a cgroup whose namespaces are compared with PID 1's (the first ones listed).
const MAX_SAMPLED: usize = 8;

/// PID 1's namespaces, the reference a container's processes differ from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostNs {
    pub pid: u64,
    pub mnt: u64,
}

/// Pure: the inode of a `/proc/<pid>/ns/<kind>` link target (`pid:[4026531836]`).
pub fn parse_ns_link(target: &str, kind: Namespace) -> Option<u64> {
    let rest = target.strip_prefix(kind.as_str())?.strip_prefix(":[")?;
    rest.strip_suffix(']')?.parse().ok()
}

fn ns_of(root: &Root, pid: &str, kind: Namespace) -> Option<u64> {
    let target = root.read_link(&format!("proc/{pid}/ns/{}", kind.as_str())).ok()?;
    parse_ns_link(&target, kind)
}

/// PID 1's namespaces through `root`; `None` without process information (a must-gather, or
/// not root; a snapshot keeps what the walk read).
pub fn host_ns(root: &Root) -> Option<HostNs> {
    Some(HostNs { pid: ns_of(root, "1", Namespace::Pid)?, mnt: ns_of(root, "1", Namespace::Mnt)? })
}

/// Pure: the first (at most [`MAX_SAMPLED`]) pids of a `cgroup.procs` text.
pub fn sample_pids(procs: &str) -> Vec<u32> {
    procs.lines().filter_map(|l| l.trim().parse().ok()).take(MAX_SAMPLED).collect()
}

/// Pure: whether a process with these namespaces (and root directory, read only when needed)
/// is a container's, against PID 1's: another PID namespace, or another mount namespace with
/// another root directory.
pub fn ns_verdict(
    host: HostNs,
    pid: u32,
    pid_ns: Option<u64>,
    mnt_ns: Option<u64>,
    root_dir: impl FnOnce() -> Option<String>,
) -> Option<NsEvidence> {
    let mut differ = Vec::new();
    if pid_ns.is_some_and(|n| n != host.pid) {
        differ.push(Namespace::Pid);
    }
    if mnt_ns.is_some_and(|n| n != host.mnt) {
        differ.push(Namespace::Mnt);
    }
    match differ.as_slice() {
        [] => None,
        [Namespace::Mnt] => {
            let dir = root_dir().filter(|d| d != "/")?;
            Some(NsEvidence { pid, differ, root: Some(dir) })
        }
        _ => Some(NsEvidence { pid, differ, root: None }),
    }
}

/// The namespace evidence of the cgroup directory `dir` (root-relative), from the processes
/// listed in its `cgroup.procs`, with the PID namespace of the process it rests on.
fn ns_evidence(root: &Root, dir: &str, host: HostNs) -> Option<(NsEvidence, Option<u64>)> {
    let procs = root.read_string(&format!("{dir}/cgroup.procs")).ok()?;
    sample_pids(&procs).into_iter().find_map(|pid| {
        let p = pid.to_string();
        let pid_ns = ns_of(root, &p, Namespace::Pid);
        let ev = ns_verdict(host, pid, pid_ns, ns_of(root, &p, Namespace::Mnt), || {
            root.read_link(&format!("proc/{p}/root")).ok()
        })?;
        Some((ev, pid_ns))
    })
}

/// Children through which a container's first process is seen when the container's own
/// cgroup holds none: systemd as its init (`init.scope`: an LXC or nspawn container, a kind
/// node), moby's docker-in-docker script (`init`, where it moves the inner dockerd on cgroup
/// v2), systemd-nspawn's split of the machine scope (`payload`, beside `supervisor`).
const ENTRIES: [&str; 3] = ["init.scope", "init", "payload"];

/// Pure: whether the walk may take the cgroup `dir` for a container begun below it (through
/// an [`ENTRIES`] child): never the root, whose `init.scope` is PID 1's, and never a systemd
/// slice, which only groups units (`machine.slice` holds machines, it is not one).
pub fn may_begin_container(dir: &str) -> bool {
    let last = dir.rsplit('/').next().unwrap_or("");
    !last.is_empty() && !last.ends_with(".slice")
}

/// The namespace evidence of a container that begins at `dir` though its own cgroup holds no
/// process of it: a process of an [`ENTRIES`] child (or of `payload/init.scope`) in another
/// namespace than PID 1. `names` are `dir`'s children.
fn entry_evidence(
    root: &Root,
    base: &str,
    dir: &str,
    names: &[&String],
    host: HostNs,
) -> Option<(NsEvidence, Option<u64>)> {
    ENTRIES.iter().filter(|e| names.iter().any(|n| n == *e)).find_map(|e| {
        let d = format!("{base}{dir}/{e}");
        ns_evidence(root, &d, host).or_else(|| {
            let inner = root.list_dir(&d).ok()?;
            (*e == "payload" && inner.iter().any(|n| n == "init.scope"))
                .then(|| ns_evidence(root, &format!("{d}/init.scope"), host))
                .flatten()
        })
    })
}

/// A container cgroup found by [`walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    path: String,
    /// The namespace evidence when recognised by it rather than by name.
    evidence: Option<NsEvidence>,
    /// Container cgroups inside it (docker-in-docker, Docker in an LXC container).
    nested: usize,
}

/// What a walk may still visit (shared by the walk and the nested counts).
struct Budget(usize);

impl Budget {
    fn take(&mut self) -> bool {
        let ok = self.0 > 0;
        self.0 = self.0.saturating_sub(1);
        ok
    }
}

/// Walk a cgroup tree from `base` (root-relative), bounded: the container cgroups, each
/// listed once at the cgroup where it begins — its name is a runtime's, or (with `host`
/// known) a process of its own or of an [`ENTRIES`] child runs in another namespace — and
/// never its descendants, which are only counted when they are containers themselves.
fn walk(root: &Root, base: &str, is_file: fn(&str) -> bool, host: Option<HostNs>) -> Vec<Found> {
    let mut found = Vec::new();
    let mut stack = vec![(String::new(), 0usize)];
    let mut budget = Budget(MAX_WALK);
    while let Some((dir, depth)) = stack.pop() {
        if !budget.take() {
            break;
        }
        let Ok(names) = root.list_dir(&format!("{base}{dir}")) else { continue };
        let subdirs: Vec<&String> = names.iter().filter(|n| !is_file(n)).collect();
        if may_begin_container(&dir) {
            if let Some((ev, pid_ns)) =
                host.and_then(|h| entry_evidence(root, base, &dir, &subdirs, h))
            {
                let nested = nested(root, base, &dir, is_file, host, pid_ns, depth, &mut budget);
                found.push(Found { path: dir, evidence: Some(ev), nested });
                continue;
            }
        }
        for n in subdirs.into_iter().rev() {
            let child = format!("{dir}/{n}");
            let top = if is_container(&dir, n) {
                Some((None, host.and_then(|h| own_pid_ns(root, base, &child, h))))
            } else {
                host.and_then(|h| ns_evidence(root, &format!("{base}{child}"), h))
                    .map(|(ev, pid_ns)| (Some(ev), pid_ns))
            };
            match top {
                Some((evidence, pid_ns)) => {
                    let nested =
                        nested(root, base, &child, is_file, host, pid_ns, depth + 1, &mut budget);
                    found.push(Found { path: child, evidence, nested });
                }
                None if depth + 1 < MAX_DEPTH => stack.push((child, depth + 1)),
                None => {}
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// The PID namespace of a container cgroup recognised by name (its own processes', else an
/// [`ENTRIES`] child's), when another than PID 1's.
fn own_pid_ns(root: &Root, base: &str, dir: &str, host: HostNs) -> Option<u64> {
    if let Some((_, ns)) = ns_evidence(root, &format!("{base}{dir}"), host) {
        return ns;
    }
    let names = root.list_dir(&format!("{base}{dir}")).ok()?;
    let names: Vec<&String> = names.iter().collect();
    entry_evidence(root, base, dir, &names, host).and_then(|(_, ns)| ns)
}

/// How many containers the container cgroup `top` holds: descendants whose name is a
/// runtime's, or (with `host` and `top`'s PID namespace known) whose process runs in a PID
/// namespace other than both PID 1's and `top`'s. A nested container's own descendants are
/// not walked.
#[allow(clippy::too_many_arguments)]
fn nested(
    root: &Root,
    base: &str,
    top: &str,
    is_file: fn(&str) -> bool,
    host: Option<HostNs>,
    top_pid_ns: Option<u64>,
    depth: usize,
    budget: &mut Budget,
) -> usize {
    let mut count = 0;
    let mut stack = vec![(top.to_string(), depth)];
    while let Some((dir, depth)) = stack.pop() {
        if !budget.take() {
            break;
        }
        let Ok(names) = root.list_dir(&format!("{base}{dir}")) else { continue };
        for n in names.iter().filter(|n| !is_file(n)) {
            let child = format!("{dir}/{n}");
            let other_ns = || {
                let (h, own) = (host?, top_pid_ns?);
                let (_, ns) = ns_evidence(root, &format!("{base}{child}"), h)?;
                Some(ns.is_some_and(|ns| ns != own))
            };
            if is_container(&dir, n) || other_ns() == Some(true) {
                count += 1;
            } else if depth + 1 < MAX_DEPTH {
                stack.push((child, depth + 1));
            }
        }
    }
    count
}

/// v2 interface files are `<controller>.<knob>` (a child cgroup may have dots in its name:
/// `systemd-nspawn@x.service`, `lxc.payload.c1`).
fn is_v2_file(name: &str) -> bool {
    const CONTROLLERS: [&str; 11] = [
        "cgroup", "cpu", "cpuset", "io", "memory", "pids", "rdma", "hugetlb", "misc", "irq", "dmem",
    ];
    name.split_once('.').is_some_and(|(c, _)| CONTROLLERS.contains(&c))
}

/// Read the host's container cgroups and their RT budgets through `root`.
pub fn containers(root: &Root) -> Containers {
    let (rt_group_sched, rt_group_sched_evidence) = rt_group_sched(root);
    let sched_rt_runtime_us =
        root.read_trimmed("proc/sys/kernel/sched_rt_runtime_us").ok().and_then(|v| v.parse().ok());
    let mounts = root.read_string("proc/mounts").unwrap_or_default();
    let host = host_ns(root);
    let (mut namespaced, mut nested) = (Vec::new(), Vec::new());
    let mut keep = |found: Vec<Found>| -> Vec<String> {
        found
            .into_iter()
            .map(|f| {
                if let Some(evidence) = f.evidence {
                    namespaced.push(Namespaced { path: f.path.clone(), evidence });
                }
                if f.nested > 0 {
                    nested.push(Nested { path: f.path.clone(), containers: f.nested });
                }
                f.path
            })
            .collect()
    };
    let tree = match cgroup_mounts(&mounts) {
        (Some(v1), _) => {
            let base = v1.trim_start_matches('/').to_string();
            let containers = keep(walk(root, &base, is_v1_file, host))
                .into_iter()
                .map(|path| {
                    let chain = match place_at(root, true, &v1, &path) {
                        CgroupPlace::V1 { chain, .. } => chain,
                        CgroupPlace::V2 { .. } => Vec::new(),
                    };
                    ContainerChain { path, chain }
                })
                .collect();
            Tree::V1 { mount: v1, containers }
        }
        (None, Some(v2)) => {
            let base = v2.trim_start_matches('/').to_string();
            Tree::V2 { containers: keep(walk(root, &base, is_v2_file, host)), mount: v2 }
        }
        (None, None) => Tree::Unknown,
    };
    let (rt_group_sched, rt_group_sched_evidence) = match (&tree, rt_group_sched) {
        (Tree::V1 { containers, .. }, None)
            if containers.iter().any(|c| c.chain.iter().any(|l| l.rt_runtime_us.is_some())) =>
        {
            (Some(true), Some("cpu.rt_runtime_us present in the v1 cpu hierarchy".to_string()))
        }
        _ => (rt_group_sched, rt_group_sched_evidence),
    };
    Containers {
        sched_rt_runtime_us,
        rt_group_sched,
        rt_group_sched_evidence,
        tree,
        namespaced,
        nested,
    }
}

#[cfg(test)]
mod tests;
