//! Power: per-CPU cpufreq (driver, governor, EPP, frequencies), cpuidle states (name, exit
//! latency, residency, disabled, usage), per-CPU PM QoS resume latency, intel_pstate status
//! and the cpuidle driver.

use super::{numbered, Ctx};
use crate::model::{CpuPower, Host, IdleState};

const CPU: &str = "sys/devices/system/cpu";

pub(super) fn read(cx: &mut Ctx, host: &mut Host) {
    host.power.intel_pstate_status =
        cx.opt_value("power.intel_pstate_status", &format!("{CPU}/intel_pstate/status"));
    host.power.cpuidle_driver =
        cx.opt_value("power.cpuidle_driver", &format!("{CPU}/cpuidle/current_driver"));
    let cpus: Vec<usize> = host.topology.cpus.iter().filter(|c| c.online).map(|c| c.cpu).collect();
    let mut any_freq = false;
    let mut any_idle = false;
    for cpu in cpus {
        let base = format!("{CPU}/cpu{cpu}");
        cx.hold(&base);
        let f = format!("{base}/cpufreq");
        let mut p = CpuPower { cpu, ..Default::default() };
        if cx.list("power.cpus[].governor", &f).is_some() {
            any_freq = true;
            p.scaling_driver =
                cx.opt_value("power.cpus[].scaling_driver", &format!("{f}/scaling_driver"));
            p.governor = cx.opt_value("power.cpus[].governor", &format!("{f}/scaling_governor"));
            p.energy_perf_preference = cx.opt_value(
                "power.cpus[].energy_perf_preference",
                &format!("{f}/energy_performance_preference"),
            );
            p.min_khz = cx.opt_int("power.cpus[].min_khz", &format!("{f}/scaling_min_freq"));
            p.max_khz = cx.opt_int("power.cpus[].max_khz", &format!("{f}/scaling_max_freq"));
            if cx.root.is_live() {
                p.cur_khz = cx.opt_int("power.cpus[].cur_khz", &format!("{f}/scaling_cur_freq"));
            }
        }
        p.pm_qos_resume_latency_us = cx.opt_value(
            "power.cpus[].pm_qos_resume_latency_us",
            &format!("{base}/power/pm_qos_resume_latency_us"),
        );
        if let Some(states) = cx.list("power.cpus[].idle_states", &format!("{base}/cpuidle")) {
            any_idle = true;
            for i in numbered(&states, "state") {
                let s = format!("{base}/cpuidle/state{i}");
                p.idle_states.push(IdleState {
                    index: i,
                    name: cx
                        .opt_value("power.cpus[].idle_states", &format!("{s}/name"))
                        .unwrap_or_default(),
                    desc: cx.opt_value("power.cpus[].idle_states", &format!("{s}/desc")),
                    exit_latency_us: cx
                        .opt_int("power.cpus[].idle_states", &format!("{s}/latency")),
                    target_residency_us: cx
                        .opt_int("power.cpus[].idle_states", &format!("{s}/residency")),
                    disabled: cx
                        .opt_int::<u8>("power.cpus[].idle_states", &format!("{s}/disable"))
                        .map(|d| d != 0),
                    usage: cx.opt_int("power.cpus[].idle_states", &format!("{s}/usage")),
                    time_us: cx.opt_int("power.cpus[].idle_states", &format!("{s}/time")),
                });
            }
        }
        host.power.cpus.push(p);
    }
    cx.release();
    if !any_freq {
        cx.unknown(
            "power.cpus[].governor",
            &format!("{CPU}/cpu*/cpufreq"),
            "no cpufreq directory (no cpufreq driver, a VM, or not captured)".into(),
        );
    }
    if !any_idle {
        cx.unknown(
            "power.cpus[].idle_states",
            &format!("{CPU}/cpu*/cpuidle"),
            "no cpuidle directory (not captured, or idle=poll)".into(),
        );
    }
}
