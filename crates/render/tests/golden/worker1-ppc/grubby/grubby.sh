#!/bin/sh
# lowlat plan `performance` for worker1: kernel arguments for every installed kernel via grubby
# housekeeping 0,2,40,42, isolated 1,3-39,41,43-79
# grubby replaces an existing argument's value; reboot to apply.
set -eu
grubby --update-kernel=ALL --args='skew_tick=1 tsc=reliable rcupdate.rcu_normal_after_boot=1 nohz=on nohz_full=1,3-39,41,43-79 rcu_nocbs=1,3-39,41,43-79 isolcpus=managed_irq,1,3-39,41,43-79 irqaffinity=0,2,40,42 kthread_cpus=0,2,40,42 systemd.cpu_affinity=0,2,40,42 nosoftlockup intel_iommu=on iommu=pt rcutree.kthread_prio=11 intel_pstate=disable'
# a conflicting `nohz=off` from an earlier setup is replaced by nohz=on above
echo 'lowlat: kernel arguments updated; reboot to apply' >&2
