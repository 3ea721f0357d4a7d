//! Small host configuration files: the systemd `CPUAffinity=` drop-in (with a unit holding
//! PM QoS when the plan has a chosen idle limit) and the irqbalance banned-CPU line.

use plan::{Plan, RuntimeItem};

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

/// The `systemd` target: the `CPUAffinity=` drop-in, and with a chosen idle limit the unit
/// that holds it.
pub fn systemd_files(plan: &Plan) -> Vec<OutFile> {
    let mut v = vec![systemd(plan)];
    v.extend(pm_qos_unit(plan));
    v
}

/// The idle limit a plan chose (not a power mode's), in µs.
pub fn chosen_idle_limit(plan: &Plan) -> Option<u64> {
    plan.runtime.iter().find_map(|r| match r {
        RuntimeItem::IdleLimit { max_latency_us, disable_states: true, .. } => {
            Some(*max_latency_us)
        }
        _ => None,
    })
}

/// The shell command that holds `/dev/cpu_dma_latency` at `us` for as long as it runs: the
/// request lives while the file stays open, so the shell opens it, writes the value and
/// becomes `sleep`, which inherits the descriptor. The value is written as 8 hex digits: the
/// kernel reads exactly 4 bytes as a binary number and anything else as hex text.
pub fn pm_qos_hold_command(us: u64) -> String {
    format!("exec 3>/dev/cpu_dma_latency && printf %08x {us} >&3 && exec sleep infinity")
}

/// `lowlat-idle-limit.service`: PM QoS held at the chosen limit from boot, as TuneD's
/// `force_latency` or seed 001's `/dev/cpu_dma_latency` holder do. Complements the per-CPU
/// writes of `lowlat apply`, which do not survive a reboot.
fn pm_qos_unit(plan: &Plan) -> Option<OutFile> {
    let us = chosen_idle_limit(plan)?;
    // `%` is systemd's specifier character: doubled in ExecStart.
    let cmd = pm_qos_hold_command(us).replace('%', "%%");
    let s = format!(
        "# lowlat plan `{name}`: hold /dev/cpu_dma_latency at {us} µs, so that no CPU enters an idle\n\
         # state that takes longer than {us} µs to leave (shallower states, and turbo, stay).\n\
         # Install as /etc/systemd/system/lowlat-idle-limit.service, then\n\
         #   systemctl daemon-reload && systemctl enable --now lowlat-idle-limit.service\n\
         # Stopping the service drops the request.\n\
         [Unit]\n\
         Description=lowlat: hold PM QoS (/dev/cpu_dma_latency) at {us} us\n\
         DefaultDependencies=no\n\
         After=systemd-tmpfiles-setup-dev.service\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart=/bin/sh -c '{cmd}'\n\
         Restart=on-failure\n\
         \n\
         [Install]\n\
         WantedBy=sysinit.target\n",
        name = plan.name.replace(|c: char| c.is_control(), "?"),
    );
    Some(OutFile::new("lowlat-idle-limit.service", s))
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
