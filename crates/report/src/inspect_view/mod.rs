//! The `lowlat inspect` terminal view of a [`Host`]: summary, topology grid (NUMA × core ×
//! thread), kernel and boot, power, memory and sysctls, IRQs (who may land where, top
//! talkers), what runs on each CPU (the `ps -eTo psr,pid,tid,policy,rtprio,cmd` question
//! answered directly; `cpu` focuses on one), and findings with evidence and fixes.

mod containers;
mod findings;
mod fmt;
mod focus;
mod irqs;
mod kernel;
mod memory;
mod pci;
mod power;
mod summary;
mod tasks;
mod topology;

use host::Host;

use crate::term::Style;

/// What to show.
#[derive(Debug, Clone, Default)]
pub struct ViewOptions {
    /// Focus on one CPU: its tasks, IRQs and power state.
    pub cpu: Option<usize>,
    /// The containers view instead of the whole host.
    pub containers: bool,
}

/// Render the whole view.
pub fn render(h: &Host, opts: &ViewOptions, st: &Style) -> String {
    let mut out = String::new();
    if let Some(cpu) = opts.cpu {
        summary::summary(&mut out, h, st);
        focus::focus(&mut out, h, cpu, st);
        findings::findings(&mut out, h, st, Some(cpu));
        return out;
    }
    if opts.containers {
        summary::summary(&mut out, h, st);
        containers::containers(&mut out, h, st);
        return out;
    }
    summary::summary(&mut out, h, st);
    topology::topology(&mut out, h, st);
    kernel::kernel(&mut out, h, st);
    power::power(&mut out, h, st);
    memory::memory(&mut out, h, st);
    pci::pci(&mut out, h, st);
    irqs::irqs(&mut out, h, st);
    tasks::tasks(&mut out, h, st);
    findings::findings(&mut out, h, st, None);
    findings::unknowns(&mut out, h, st);
    out
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
        insta::assert_snapshot!(render(
            &h,
            &ViewOptions { cpu: Some(5), ..Default::default() },
            &Style::plain(120)
        ));
    }

    #[test]
    fn vm_view_and_cpu_focus() {
        let h = vm();
        insta::assert_snapshot!("vm_view", render(&h, &ViewOptions::default(), &Style::plain(100)));
        insta::assert_snapshot!(
            "vm_cpu1",
            render(&h, &ViewOptions { cpu: Some(1), ..Default::default() }, &Style::plain(100))
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
