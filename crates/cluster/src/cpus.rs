//! Which CPUs a node's pod had, and whether they were its own.
//!
//! The pod reads what the kernel enforces on it ([`seen`]: its own `Cpus_allowed_list`, the
//! cpuset the kubelet gave the container, and the node's online CPUs, through `host::Root`);
//! the controller adds what only the API knows (the pod's `status.qosClass`, the kubelet's CPU
//! manager policy and reserved CPUs from configz) and [`judge`]s: **exclusive** only when a
//! Guaranteed pod asking N whole CPUs was confined to exactly N CPUs, none of them reserved, by
//! a kubelet running the static CPU manager (the one case where the kubelet keeps every other
//! container off them). Anything else is **shared** with the reason, or **unknown** when a fact
//! is missing. Pure apart from [`seen`].

use cpuset::CpuSet;
use serde::{Deserialize, Serialize};

/// Whether the pod's CPUs were its own. Closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The kubelet's static CPU manager gave the container these whole CPUs: no other
    /// container of that kubelet is placed on them.
    Exclusive,
    /// The container ran on CPUs that other pods may use too (see `detail`).
    Shared,
    /// A fact is missing (the container's CPUs, the QoS class or the kubelet's policy).
    Unknown,
}

/// The `cpu` entry of a node's `capacity` or `allocatable` map, as written (`2`, `1500m`).
pub fn cpu_quantity(
    resources: Option<
        &std::collections::BTreeMap<
            String,
            k8s_openapi::apimachinery::pkg::api::resource::Quantity,
        >,
    >,
) -> Option<String> {
    resources.and_then(|m| m.get("cpu")).map(|q| q.0.clone())
}

/// A CPU quantity (`2`, `1500m`, `0.5`) in millicores; `None` when it is not one.
pub fn cpu_millis(q: &str) -> Option<u64> {
    let q = q.trim();
    if let Some(m) = q.strip_suffix('m') {
        return m.parse().ok();
    }
    let v: f64 = q.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * 1000.0).round() as u64)
}

/// What the pod saw of its CPUs (written by the agent into `agent.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Seen {
    /// The CPUs the container may run on: the agent's own `Cpus_allowed_list`.
    pub allowed: Option<CpuSet>,
    /// The node's online CPUs.
    pub online: Option<CpuSet>,
    /// Why a field is missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// Read, in the pod, which CPUs this process (the container) may run on and which are online.
pub fn seen(root: &host::Root) -> Seen {
    let mut s = Seen::default();
    let status = "proc/self/status";
    match root.read_record_string(status) {
        Ok(text) => match host::parse::task::status(&text).cpus_allowed_list {
            Some(list) => match CpuSet::parse_list(&list) {
                Ok(set) => s.allowed = Some(set),
                Err(e) => s.errors.push(format!("/{status}: Cpus_allowed_list '{list}': {e}")),
            },
            None => s.errors.push(format!("/{status}: no Cpus_allowed_list line")),
        },
        Err(e) => s.errors.push(format!("/{status}: {}", e.reason())),
    }
    let online = "sys/devices/system/cpu/online";
    match root.read_trimmed(online).map(|t| (CpuSet::parse_list(&t), t)) {
        Ok((Ok(set), _)) => s.online = Some(set),
        Ok((Err(e), t)) => s.errors.push(format!("/{online}: '{t}': {e}")),
        Err(e) => s.errors.push(format!("/{online}: {}", e.reason())),
    }
    s
}

/// A node row's `cpus`: what the pod had and what that means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PodCpus {
    /// Whole CPUs asked with requests = limits (`None`: a Burstable pod).
    pub requested: Option<u32>,
    /// The pod's `status.qosClass` (`Guaranteed`, `Burstable`, `BestEffort`).
    pub qos_class: Option<String>,
    /// The kubelet's `cpuManagerPolicy` (configz).
    pub cpu_manager_policy: Option<String>,
    /// The kubelet's `reservedSystemCPUs` (configz).
    pub reserved_system_cpus: Option<String>,
    /// The CPUs the container may run on, read in the pod.
    pub allowed: Option<CpuSet>,
    /// The node's online CPUs, read in the pod.
    pub online: Option<CpuSet>,
    /// The CPUs the timer measured on (`timer.json`).
    pub measured: Option<CpuSet>,
    pub placement: Placement,
    /// Why, in words.
    pub detail: String,
}

impl PodCpus {
    /// The timer measured only on CPUs the container had (`None`: either is unknown).
    pub fn measured_within(&self) -> Option<bool> {
        Some(self.measured.as_ref()?.is_subset(self.allowed.as_ref()?))
    }
}

/// The kubelet's CPU manager settings (from its configz).
#[derive(Debug, Clone, Copy, Default)]
pub struct Kubelet<'a> {
    /// `cpuManagerPolicy`.
    pub policy: Option<&'a str>,
    /// `reservedSystemCPUs`.
    pub reserved: Option<&'a str>,
}

/// What [`judge`] weighs.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    pub requested: Option<u32>,
    pub qos_class: Option<&'a str>,
    /// The kubelet's settings, or why they were not read.
    pub kubelet: Result<Kubelet<'a>, &'a str>,
    pub seen: &'a Seen,
    pub measured: Option<CpuSet>,
}

fn cpus(n: usize) -> &'static str {
    if n == 1 {
        "CPU"
    } else {
        "CPUs"
    }
}

/// Decide whether the pod's CPUs were exclusive, and say why.
pub fn judge(f: &Facts<'_>) -> PodCpus {
    let policy = f.kubelet.ok().and_then(|k| k.policy);
    let reserved = f.kubelet.ok().and_then(|k| k.reserved);
    let (placement, mut detail) = decide(f, policy, reserved);
    if let (Some(m), Some(a)) = (&f.measured, &f.seen.allowed) {
        if !m.is_subset(a) {
            detail.push_str(&format!(
                "; the timer measured {} {m}, outside the container's {a}",
                cpus(m.len())
            ));
        }
    }
    PodCpus {
        requested: f.requested,
        qos_class: f.qos_class.map(str::to_string),
        cpu_manager_policy: policy.map(str::to_string),
        reserved_system_cpus: reserved.map(str::to_string),
        allowed: f.seen.allowed.clone(),
        online: f.seen.online.clone(),
        measured: f.measured.clone(),
        placement,
        detail,
    }
}

fn decide(f: &Facts<'_>, policy: Option<&str>, reserved: Option<&str>) -> (Placement, String) {
    let Some(allowed) = &f.seen.allowed else {
        let why = if f.seen.errors.is_empty() {
            "not reported by the pod".to_string()
        } else {
            f.seen.errors.join("; ")
        };
        return (Placement::Unknown, format!("the container's CPUs are unknown: {why}"));
    };
    let had = format!("{} {allowed}", cpus(allowed.len()));
    let Some(n) = f.requested else {
        return (
            Placement::Shared,
            format!("a Burstable pod runs on the node's shared CPUs ({had})"),
        );
    };
    match f.qos_class {
        Some("Guaranteed") => {}
        Some(q) => {
            return (
                Placement::Shared,
                format!("the pod's QoS class is {q}, not Guaranteed: it ran on {had}"),
            )
        }
        None => {
            return (
                Placement::Unknown,
                format!("the pod's QoS class was not seen; it ran on {had}"),
            )
        }
    }
    let whole = usize::try_from(n).unwrap_or(usize::MAX);
    let pinned = allowed.len() == whole
        && f.seen.online.as_ref().is_none_or(|o| allowed.is_subset(o) && allowed != o);
    let policy_words = match (policy, &f.kubelet) {
        (Some(p), _) => format!("the kubelet's CPU manager policy is '{p}'"),
        (None, Err(e)) => format!("the kubelet's CPU manager policy is unknown ({e})"),
        (None, Ok(_)) => "the kubelet's CPU manager policy is not in its configuration".into(),
    };
    if !pinned {
        let online = f.seen.online.as_ref().map(|o| format!(" of online {o}")).unwrap_or_default();
        let hint = if policy == Some("static") {
            String::new()
        } else {
            " (only the static policy gives Guaranteed pods CPUs of their own)".into()
        };
        return (
            Placement::Shared,
            format!(
                "Guaranteed with {n} whole {}, but the container may run on {had}{online}, \
                 which other pods share: {policy_words}{hint}",
                cpus(whole)
            ),
        );
    }
    match policy {
        Some("static") => {
            let overlap = reserved
                .and_then(|r| CpuSet::parse_list(r).ok())
                .map(|r| r.intersection(allowed))
                .filter(|o| !o.is_empty());
            match overlap {
                Some(o) => (
                    Placement::Shared,
                    format!("{had} include reserved {} {o}: not exclusive", cpus(o.len())),
                ),
                None => (
                    Placement::Exclusive,
                    format!(
                        "{had} given to this container alone by the kubelet's static CPU manager \
                         (reserved: {}; every other pod of this kubelet runs outside them)",
                        reserved.unwrap_or("none")
                    ),
                ),
            }
        }
        Some(_) => (
            Placement::Shared,
            format!(
                "confined to {had}, but not by the static CPU manager ({policy_words}): other \
                 pods may be placed there"
            ),
        ),
        None => (
            Placement::Unknown,
            format!("confined to {had} as asked, but {policy_words}: exclusivity not proven"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> Option<CpuSet> {
        Some(CpuSet::parse_list(s).unwrap())
    }

    fn kubelet<'a>(policy: &'a str, reserved: Option<&'a str>) -> Kubelet<'a> {
        Kubelet { policy: Some(policy), reserved }
    }

    fn facts<'a>(
        requested: Option<u32>,
        qos: Option<&'a str>,
        k: Result<Kubelet<'a>, &'a str>,
        seen: &'a Seen,
    ) -> Facts<'a> {
        Facts { requested, qos_class: qos, kubelet: k, seen, measured: seen.allowed.clone() }
    }

    #[test]
    fn cpu_quantities() {
        assert_eq!(cpu_millis("2"), Some(2000));
        assert_eq!(cpu_millis("1500m"), Some(1500));
        assert_eq!(cpu_millis("0.5"), Some(500));
        assert_eq!(cpu_millis("x"), None);
        assert_eq!(cpu_millis("-1"), None);
    }

    #[test]
    fn static_policy_whole_cpus_are_exclusive() {
        let seen = Seen { allowed: set("1"), online: set("0-1"), errors: vec![] };
        let k = kubelet("static", Some("0"));
        let p = judge(&facts(Some(1), Some("Guaranteed"), Ok(k), &seen));
        assert_eq!(p.placement, Placement::Exclusive, "{}", p.detail);
        assert!(p.detail.starts_with("CPU 1 given to this container alone"), "{}", p.detail);
        assert_eq!(p.measured_within(), Some(true));
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["allowed"], "1");
        assert_eq!(json["placement"], "exclusive");
        assert_eq!(serde_json::from_value::<PodCpus>(json).unwrap(), p);
    }

    #[test]
    fn policy_none_is_shared_and_says_why() {
        let seen = Seen { allowed: set("0-1"), online: set("0-1"), errors: vec![] };
        let k = kubelet("none", None);
        let p = judge(&facts(Some(1), Some("Guaranteed"), Ok(k), &seen));
        assert_eq!(p.placement, Placement::Shared);
        assert_eq!(
            p.detail,
            "Guaranteed with 1 whole CPU, but the container may run on CPUs 0-1 of online 0-1, \
             which other pods share: the kubelet's CPU manager policy is 'none' (only the \
             static policy gives Guaranteed pods CPUs of their own)"
        );
    }

    #[test]
    fn everything_short_of_proof_is_not_exclusive() {
        let pinned = Seen { allowed: set("2-3"), online: set("0-7"), errors: vec![] };
        let k = kubelet("static", Some("0-1"));
        // Burstable, BestEffort, QoS not seen
        let p = judge(&facts(None, Some("Burstable"), Err("not read"), &pinned));
        assert_eq!(p.placement, Placement::Shared);
        assert!(p.detail.starts_with("a Burstable pod"), "{}", p.detail);
        let p = judge(&facts(Some(2), Some("BestEffort"), Ok(k), &pinned));
        assert_eq!(p.placement, Placement::Shared);
        assert_eq!(judge(&facts(Some(2), None, Ok(k), &pinned)).placement, Placement::Unknown);
        // more CPUs than asked, reserved ones among them
        let p = judge(&facts(Some(1), Some("Guaranteed"), Ok(k), &pinned));
        assert_eq!(p.placement, Placement::Shared, "{}", p.detail);
        let r = kubelet("static", Some("3"));
        let p = judge(&facts(Some(2), Some("Guaranteed"), Ok(r), &pinned));
        assert_eq!(p.placement, Placement::Shared);
        assert!(p.detail.contains("include reserved CPU 3"), "{}", p.detail);
        // pinned as asked, but the policy is unknown or not static
        let p = judge(&facts(Some(2), Some("Guaranteed"), Err("permission missing"), &pinned));
        assert_eq!(p.placement, Placement::Unknown);
        assert!(p.detail.contains("unknown (permission missing)"), "{}", p.detail);
        let n = kubelet("none", None);
        let p = judge(&facts(Some(2), Some("Guaranteed"), Ok(n), &pinned));
        assert_eq!(p.placement, Placement::Shared);
        // the container's CPUs not read
        let none = Seen { errors: vec!["/proc/self/status: gone".into()], ..Default::default() };
        let p = judge(&facts(Some(2), Some("Guaranteed"), Ok(k), &none));
        assert_eq!(p.placement, Placement::Unknown);
        assert!(p.detail.ends_with("/proc/self/status: gone"), "{}", p.detail);
    }

    #[test]
    fn a_timer_outside_the_container_is_said() {
        let seen = Seen { allowed: set("1"), online: set("0-1"), errors: vec![] };
        let k = kubelet("static", Some("0"));
        let mut f = facts(Some(1), Some("Guaranteed"), Ok(k), &seen);
        f.measured = set("0-1");
        let p = judge(&f);
        assert_eq!(p.measured_within(), Some(false));
        assert!(p.detail.ends_with("the timer measured CPUs 0-1, outside the container's 1"));
    }

    #[test]
    fn the_pod_reads_its_own_cpus_through_root() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("proc/self")).unwrap();
        std::fs::create_dir_all(d.path().join("sys/devices/system/cpu")).unwrap();
        std::fs::write(
            d.path().join("proc/self/status"),
            "Name:\tlowlat\nCpus_allowed:\t2\nCpus_allowed_list:\t1\nMems_allowed_list:\t0\n",
        )
        .unwrap();
        std::fs::write(d.path().join("sys/devices/system/cpu/online"), "0-1\n").unwrap();
        let root = host::Root::open(d.path()).unwrap();
        assert_eq!(seen(&root), Seen { allowed: set("1"), online: set("0-1"), errors: vec![] });
        std::fs::write(d.path().join("proc/self/status"), "Name:\tlowlat\n").unwrap();
        std::fs::remove_file(d.path().join("sys/devices/system/cpu/online")).unwrap();
        let s = seen(&root);
        assert_eq!((s.allowed, s.online), (None, None));
        assert_eq!(s.errors.len(), 2, "{:?}", s.errors);
        assert!(s.errors[0].contains("no Cpus_allowed_list"), "{:?}", s.errors);
    }
}
