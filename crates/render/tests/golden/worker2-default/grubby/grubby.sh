#!/bin/sh
# lowlat plan `lowlat` for worker2: kernel arguments for every installed kernel via grubby
# housekeeping 0, isolated 1-23
# grubby replaces an existing argument's value; reboot to apply.
set -eu
grubby --update-kernel=ALL --args='skew_tick=1 tsc=reliable rcupdate.rcu_normal_after_boot=1 nohz=on nohz_full=1-23 rcu_nocbs=1-23 isolcpus=managed_irq,1-23 irqaffinity=0 kthread_cpus=0 systemd.cpu_affinity=0 intel_iommu=on iommu=pt intel_pstate=disable'
# a conflicting `nohz=off` from an earlier setup is replaced by nohz=on above
echo 'lowlat: kernel arguments updated; reboot to apply' >&2
