#!/bin/sh
# lowlat plan `ull` for ocp47sno-master-0.demo.lab: rpm-ostree kernel arguments (RHCOS / Fedora CoreOS / other ostree hosts)
# housekeeping 0, isolated 1-11
# On OpenShift prefer `lowlat render openshift` (MachineConfig kernelArguments / kernelType).
set -euf
IFS=' 	
'
want='skew_tick=1 tsc=reliable rcupdate.rcu_normal_after_boot=1 nohz=on nohz_full=1-11 rcu_nocbs=1-11 isolcpus=domain,managed_irq,1-11 irqaffinity=0 kthread_cpus=0 systemd.cpu_affinity=0 nosoftlockup nmi_watchdog=0 mce=off intel_iommu=on iommu=pt rcutree.kthread_prio=11 intel_pstate=disable processor.max_cstate=1 intel_idle.max_cstate=0 idle=poll nosmt'
current=$(rpm-ostree kargs)
set --
for have in $current; do
  key=${have%%=*}
  for w in $want; do
    if [ "${w%%=*}" = "$key" ]; then
      case " $want " in *" $have "*) ;; *) set -- "$@" "--delete=$have" ;; esac
      break
    fi
  done
done
for w in $want; do
  case " $current " in *" $w "*) ;; *) set -- "$@" "--append=$w" ;; esac
done
if [ $# -gt 0 ]; then
  rpm-ostree kargs "$@"
else
  echo 'lowlat: kernel arguments already in place' >&2
fi
echo 'lowlat: staged; run `systemctl reboot` to apply' >&2
