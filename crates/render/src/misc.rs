//! Small host configuration files: the systemd `CPUAffinity=` drop-in and the irqbalance
//! banned-CPU line.

use plan::Plan;

use crate::{quote, OutFile};

/// `/etc/systemd/system.conf.d/50-lowlat-cpu-affinity.conf`.
pub fn systemd(plan: &Plan) -> OutFile {
    let cpus: Vec<String> = plan.reserved.iter().map(|c| c.to_string()).collect();
    let s = format!(
        "# lowlat plan `{}`: PID 1 and every service it starts run on the housekeeping CPUs.\n# Install as /etc/systemd/system.conf.d/50-lowlat-cpu-affinity.conf; takes effect after a reboot\n# (or `systemctl daemon-reexec` for services started afterwards).\n[Manager]\nCPUAffinity={}\n",
        quote::comment(&plan.name),
        cpus.join(" ")
    );
    OutFile::new("50-lowlat-cpu-affinity.conf", s)
}

/// The irqbalance environment line banning the isolated CPUs.
pub fn irqbalance(plan: &Plan) -> OutFile {
    let width = plan.all_cpus().union(&plan.smt_disabled).last().map_or(1, |l| l + 1);
    let s = format!(
        "# lowlat plan `{}`: keep irqbalance off the isolated CPUs.\n# Add to /etc/sysconfig/irqbalance (EL) or /etc/default/irqbalance (Debian), then restart irqbalance.\nIRQBALANCE_BANNED_CPULIST={}\n# irqbalance older than 1.8 reads the mask form instead:\n#IRQBALANCE_BANNED_CPUS={}\n",
        quote::comment(&plan.name),
        plan.isolated,
        plan.isolated.to_mask(width)
    );
    OutFile::new("irqbalance", s)
}
