//! Devices: block devices (rotational, scheduler, wbt, write cache), PCI devices (class,
//! vendor/device, NUMA node, local CPUs, IRQ, driver) and network interfaces (backing PCI
//! device, queue counts, NUMA node, state).

use super::Ctx;
use crate::model::{BlockDevice, Host, NetInterface, PciDevice};
use crate::parse::{bracketed, choices};

pub(super) fn read(cx: &mut Ctx, host: &mut Host) {
    block(cx, host);
    pci(cx, host);
    net(cx, host);
}

fn block(cx: &mut Ctx, host: &mut Host) {
    let Some(names) = cx.list("block_devices", "sys/block") else {
        cx.unknown("block_devices", "sys/block", "not present".into());
        return;
    };
    for name in names.into_iter().filter(|n| !n.starts_with("loop") && !n.starts_with("ram")) {
        let q = format!("sys/block/{name}/queue");
        let sched = cx.opt_value("block_devices[].scheduler", &format!("{q}/scheduler"));
        host.block_devices.push(BlockDevice {
            rotational: cx
                .opt_value("block_devices[].rotational", &format!("{q}/rotational"))
                .map(|v| v == "1"),
            scheduler: sched
                .as_deref()
                .and_then(|s| bracketed(s).or_else(|| (s == "none").then(|| s.to_string()))),
            schedulers_available: sched.as_deref().map(choices).unwrap_or_default(),
            wbt_lat_usec: cx
                .opt_value("block_devices[].wbt_lat_usec", &format!("{q}/wbt_lat_usec")),
            write_cache: cx.opt_value("block_devices[].write_cache", &format!("{q}/write_cache")),
            nr_requests: cx.opt_int("block_devices[].nr_requests", &format!("{q}/nr_requests")),
            size_sectors: cx
                .opt_int("block_devices[].size_sectors", &format!("sys/block/{name}/size")),
            name,
        });
    }
}

/// `pci:v00008086d00002021sv…bc08sc80i00` → (vendor, device, class).
pub(crate) fn modalias_ids(m: &str) -> (Option<String>, Option<String>, Option<String>) {
    let Some(rest) = m.strip_prefix("pci:") else { return (None, None, None) };
    // Fields in order: v<8> d<8> sv<8> sd<8> bc<2> sc<2> i<2>.
    let mut pos = 0;
    let mut take = |key: &str, len: usize| -> Option<String> {
        let s = rest.get(pos..)?;
        let i = s.find(key)? + key.len();
        let v = s.get(i..i + len)?;
        pos += i + len;
        v.chars().all(|c| c.is_ascii_hexdigit()).then(|| v.to_ascii_lowercase())
    };
    let vendor = take("v", 8).map(|v| format!("0x{}", &v[4..]));
    let device = take("d", 8).map(|v| format!("0x{}", &v[4..]));
    let _ = (take("sv", 8), take("sd", 8));
    let class = match (take("bc", 2), take("sc", 2), take("i", 2)) {
        (Some(b), Some(s), Some(i)) => Some(format!("0x{b}{s}{i}")),
        _ => None,
    };
    (vendor, device, class)
}

fn pci(cx: &mut Ctx, host: &mut Host) {
    const BUS: &str = "sys/bus/pci/devices";
    let Some(names) = cx.list("pci_devices", BUS) else {
        cx.unknown("pci_devices", BUS, "not present".into());
        return;
    };
    for address in names {
        let d = format!("{BUS}/{address}");
        let modalias = cx.opt_value("pci_devices[].modalias", &format!("{d}/modalias"));
        let (mv, md, mc) = modalias.as_deref().map(modalias_ids).unwrap_or_default();
        let driver = cx
            .root
            .read_link(&format!("{d}/driver"))
            .ok()
            .and_then(|t| t.rsplit('/').next().map(str::to_string));
        host.pci_devices.push(PciDevice {
            class: cx.opt_value("pci_devices[].class", &format!("{d}/class")).or(mc),
            vendor: cx.opt_value("pci_devices[].vendor", &format!("{d}/vendor")).or(mv),
            device: cx.opt_value("pci_devices[].device", &format!("{d}/device")).or(md),
            modalias,
            numa_node: cx.opt_int("pci_devices[].numa_node", &format!("{d}/numa_node")),
            local_cpus: cx.cpus("pci_devices[].local_cpus", &format!("{d}/local_cpulist"), true),
            irq: cx.opt_int("pci_devices[].irq", &format!("{d}/irq")),
            driver,
            address,
        });
    }
}

fn net(cx: &mut Ctx, host: &mut Host) {
    const NET: &str = "sys/class/net";
    let Some(names) = cx.list("net_interfaces", NET) else {
        cx.unknown("net_interfaces", NET, "not present".into());
        return;
    };
    for name in names {
        let d = format!("{NET}/{name}");
        let dev = cx.root.read_link(&format!("{d}/device")).ok();
        // virtio NICs link to `../../../virtio2`: resolve the whole path to find the PCI
        // function above it (`…/0000:00:03.0/virtio2`). Lexical, inside the tree.
        let pci_address = dev.as_ref().and_then(|t| {
            let full = cx
                .root
                .resolve_links(&format!("{d}/device"))
                .map(|r| r.path)
                .unwrap_or_else(|_| t.clone());
            full.rsplit('/').find(|c| is_pci_address(c)).map(str::to_string)
        });
        let queues = cx.list("net_interfaces[].queues", &format!("{d}/queues")).unwrap_or_default();
        let count = |p: &str| {
            let n = queues.iter().filter(|q| q.starts_with(p)).count();
            (!queues.is_empty()).then_some(n)
        };
        let numa_node = if dev.is_some() {
            cx.opt_int("net_interfaces[].numa_node", &format!("{d}/device/numa_node"))
        } else {
            None
        };
        host.net_interfaces.push(NetInterface {
            rx_queues: count("rx-"),
            tx_queues: count("tx-"),
            pci_address,
            numa_node,
            operstate: cx.opt_value("net_interfaces[].operstate", &format!("{d}/operstate")),
            name,
        });
    }
}

fn is_pci_address(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12 && b[4] == b':' && b[7] == b':' && b[10] == b'.'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modalias() {
        let (v, d, c) = modalias_ids("pci:v00008086d00002021sv00001028sd00000716bc08sc80i00");
        assert_eq!(v.as_deref(), Some("0x8086"));
        assert_eq!(d.as_deref(), Some("0x2021"));
        assert_eq!(c.as_deref(), Some("0x088000"));
        assert_eq!(modalias_ids("acpi:QEMU0002:"), (None, None, None));
        assert_eq!(modalias_ids("pci:v0000"), (None, None, None));
        assert!(is_pci_address("0000:3b:00.0"));
        assert!(!is_pci_address("virtio0"));
    }
}
