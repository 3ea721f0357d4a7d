#!/bin/sh
# lowlat plan `ull` for ocp47sno-master-0.demo.lab: kernel arguments for every installed kernel via grubby
# housekeeping 0, isolated 1-11
# grubby replaces an existing argument's value; reboot to apply.
set -eu
grubby --update-kernel=ALL --args='skew_tick=1 tsc=reliable rcupdate.rcu_normal_after_boot=1 nohz=on nohz_full=1-11 rcu_nocbs=1-11 isolcpus=domain,managed_irq,1-11 irqaffinity=0 kthread_cpus=0 systemd.cpu_affinity=0 nosoftlockup nmi_watchdog=0 mce=off intel_iommu=on iommu=pt rcutree.kthread_prio=11 intel_pstate=disable processor.max_cstate=1 intel_idle.max_cstate=0 idle=poll nosmt'
# a conflicting `nohz=off` from an earlier setup is replaced by nohz=on above
echo 'lowlat: kernel arguments updated; reboot to apply' >&2
