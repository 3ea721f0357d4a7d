//! PCI devices whose placement matters (NICs, storage, accelerators) and their NUMA node.

use std::fmt::Write as _;

use host::Host;

use super::fmt::set_or;
use crate::term::{Paint, Style, Table};

/// A PCI class code's family name, for the classes whose placement matters.
pub(super) fn pci_family(class: &str) -> Option<&'static str> {
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

pub(super) fn pci(out: &mut String, h: &Host, st: &Style) {
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
