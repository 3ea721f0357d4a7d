#!/bin/sh
# lowlat plan `rt` for worker1: kernel arguments for every installed kernel via grubby
# housekeeping 0-1,40-41, isolated 2-38,42-78, offline 39,79
# grubby replaces an existing argument's value; reboot to apply.
set -eu
grubby --update-kernel=ALL --args='skew_tick=1 tsc=reliable rcupdate.rcu_normal_after_boot=1 nohz=on nohz_full=2-38,42-78 rcu_nocbs=2-38,42-78 isolcpus=managed_irq,2-38,42-78 irqaffinity=0-1,40-41 kthread_cpus=0-1,40-41 systemd.cpu_affinity=0,1,40,41 nosoftlockup nmi_watchdog=0 mce=off intel_iommu=on iommu=pt rcutree.kthread_prio=11 intel_pstate=disable default_hugepagesz=1G hugepagesz=1G hugepages=16 hugepagesz=2M hugepages=0'
# a conflicting `nohz=off` from an earlier setup is replaced by nohz=on above
echo 'lowlat: kernel arguments updated; reboot to apply' >&2
