//! Kernel and boot: release, version, PREEMPT_RT, `/proc/cmdline` (parsed), clocksource,
//! hostname, boot id (live only), and virtualization (cpuinfo `hypervisor` flag,
//! `/sys/hypervisor/type`, DMI vendor/product, `kvm-clock`).

use super::Ctx;
use crate::model::Host;
use crate::parse::cmdline;

const CLOCK: &str = "sys/devices/system/clocksource/clocksource0";

pub(super) fn read(cx: &mut Ctx, host: &mut Host) {
    let k = &mut host.kernel;
    k.release = cx.value("kernel.release", "proc/sys/kernel/osrelease");
    k.version = cx.value("kernel.version", "proc/sys/kernel/version");
    host.hostname = cx.value("hostname", "proc/sys/kernel/hostname");
    k.cmdline = cx.text("kernel.cmdline", "proc/cmdline").map(|s| s.trim().to_string());
    let nr = host.cpus.possible.as_ref().and_then(|p| p.last()).map(|l| l + 1);
    if let Some(c) = &k.cmdline {
        k.boot = cmdline::parse(c, nr);
        for (key, err) in k.boot.errors.clone() {
            cx.warn("proc/cmdline", Some(1), format!("{key}=: {err}"));
        }
        if k.release.is_none() {
            if let Some(r) = cmdline::release_from_boot_image(&k.boot) {
                k.release = Some(r);
                k.release_source = Some("BOOT_IMAGE in /proc/cmdline".into());
            }
        }
    }
    k.preempt = k.version.as_deref().and_then(preempt_model);
    let rt_file = cx.opt_value("kernel.realtime", "sys/kernel/realtime");
    (k.realtime, k.realtime_evidence) =
        realtime(rt_file.as_deref(), k.version.as_deref(), k.release.as_deref());
    k.clocksource = cx.opt_value("kernel.clocksource", &format!("{CLOCK}/current_clocksource"));
    k.available_clocksources = cx
        .opt_value("kernel.available_clocksources", &format!("{CLOCK}/available_clocksource"))
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    if cx.root.is_live() {
        k.boot_id = cx.opt_value("kernel.boot_id", "proc/sys/kernel/random/boot_id");
    }
    virtualization(cx, host);
}

/// The preemption model in a `uname -v` string.
pub(crate) fn preempt_model(version: &str) -> Option<String> {
    ["PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT_LAZY", "PREEMPT"]
        .iter()
        .find(|m| version.split_whitespace().any(|w| w == **m))
        .map(|m| m.to_string())
}

/// PREEMPT_RT from, in order: `/sys/kernel/realtime`, the version string, the release name.
pub(crate) fn realtime(
    file: Option<&str>,
    version: Option<&str>,
    release: Option<&str>,
) -> (Option<bool>, Option<String>) {
    if file == Some("1") {
        return (Some(true), Some("/sys/kernel/realtime = 1".into()));
    }
    if let Some(v) = version {
        if v.split_whitespace().any(|w| w == "PREEMPT_RT") {
            return (Some(true), Some("PREEMPT_RT in the kernel version string".into()));
        }
    }
    if let Some(r) = release {
        let rt = r.split(['.', '-', '+', '_']).any(|p| {
            p == "rt"
                || (p.starts_with("rt")
                    && p[2..].chars().all(|c| c.is_ascii_digit())
                    && p.len() > 2)
        });
        if rt {
            return (Some(true), Some(format!("release {r} names an RT build")));
        }
    }
    match (version, release) {
        (Some(_), _) => (Some(false), Some("no PREEMPT_RT in the kernel version string".into())),
        (None, Some(r)) => (
            Some(false),
            Some(format!("release {r} does not name an RT build (version string unknown)")),
        ),
        _ => (None, None),
    }
}

fn virtualization(cx: &mut Ctx, host: &mut Host) {
    let mut ev = Vec::new();
    let flag = host.topology.cpus.iter().any(|c| c.flags.iter().any(|f| f == "hypervisor"));
    if flag {
        ev.push("/proc/cpuinfo: `hypervisor` flag".to_string());
    }
    let hv_type = cx.opt_value("virtualization", "sys/hypervisor/type");
    if let Some(t) = &hv_type {
        ev.push(format!("/sys/hypervisor/type = {t}"));
    }
    let vendor = cx.opt_value("virtualization", "sys/class/dmi/id/sys_vendor");
    let product = cx.opt_value("virtualization", "sys/class/dmi/id/product_name");
    let dmi = dmi_hypervisor(vendor.as_deref(), product.as_deref());
    if let Some((name, what)) = &dmi {
        ev.push(format!("DMI {what} names {name}"));
    }
    let kvm_clock = host.kernel.clocksource.as_deref() == Some("kvm-clock")
        || host.kernel.available_clocksources.iter().any(|c| c == "kvm-clock");
    if kvm_clock && (flag || dmi.is_some()) {
        ev.push("clocksource kvm-clock available".to_string());
    }
    host.virtualization = if let Some(t) = hv_type {
        Some(t)
    } else if let Some((name, _)) = dmi {
        Some(name)
    } else if flag {
        Some(if kvm_clock { "kvm".to_string() } else { "unknown-hypervisor".to_string() })
    } else {
        None
    };
    // No cpuinfo flags to look at (unreadable or missing from a snapshot) and nothing else
    // that names a hypervisor: unknown, not bare metal.
    let cpuinfo = cx.root.read_string("proc/cpuinfo");
    if host.virtualization.is_none() && cpuinfo.is_err() {
        host.virtualization_unknown = Some(
            "/proc/cpuinfo could not be read (no `hypervisor` flag to look for) and neither DMI nor /sys/hypervisor names one"
                .into(),
        );
    }
    host.virtualization_evidence = ev;
}

/// A hypervisor named by DMI vendor / product strings.
pub(crate) fn dmi_hypervisor(
    vendor: Option<&str>,
    product: Option<&str>,
) -> Option<(String, String)> {
    let table: &[(&str, &str)] = &[
        ("KVM", "kvm"),
        ("QEMU", "qemu"),
        ("Standard PC", "qemu"),
        ("VMware", "vmware"),
        ("VirtualBox", "virtualbox"),
        ("innotek", "virtualbox"),
        ("Xen", "xen"),
        ("HVM domU", "xen"),
        ("Amazon EC2", "amazon"),
        ("Google Compute Engine", "google"),
        ("Microsoft Corporation", "microsoft"),
        ("Virtual Machine", "microsoft"),
        ("OpenStack", "kvm"),
        ("Firecracker", "firecracker"),
    ];
    for (what, v) in [("product_name", product), ("sys_vendor", vendor)] {
        let Some(v) = v else { continue };
        if let Some((_, name)) = table.iter().find(|(needle, _)| v.contains(needle)) {
            return Some((name.to_string(), format!("{what} \"{}\"", util::term::excerpt(v, 60))));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_detection() {
        assert_eq!(realtime(Some("1"), None, None).0, Some(true));
        assert_eq!(realtime(None, Some("#1 SMP PREEMPT_RT Thu"), None).0, Some(true));
        assert_eq!(
            realtime(None, None, Some("4.18.0-193.28.1.rt13.77.el8_2.x86_64")).0,
            Some(true)
        );
        assert_eq!(realtime(None, None, Some("6.1.0-rt-amd64")).0, Some(true));
        assert_eq!(realtime(None, None, Some("4.18.0-193.29.1.el8_2.x86_64")).0, Some(false));
        assert_eq!(realtime(None, Some("#1 SMP PREEMPT_DYNAMIC"), Some("6.18.44")).0, Some(false));
        assert_eq!(realtime(None, None, None).0, None);
        assert_eq!(preempt_model("#1 SMP PREEMPT_DYNAMIC @0").as_deref(), Some("PREEMPT_DYNAMIC"));
    }

    #[test]
    fn dmi_names() {
        assert_eq!(dmi_hypervisor(None, Some("KVM")).map(|d| d.0).as_deref(), Some("kvm"));
        assert_eq!(dmi_hypervisor(Some("Dell Inc."), Some("PowerEdge R640")), None);
        assert_eq!(
            dmi_hypervisor(Some("VMware, Inc."), Some("VMware7,1")).map(|d| d.0).as_deref(),
            Some("vmware")
        );
    }
}
