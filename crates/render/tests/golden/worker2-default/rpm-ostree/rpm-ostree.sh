#!/bin/sh
# lowlat plan `lowlat` for worker2: rpm-ostree kernel arguments (RHCOS / Fedora CoreOS / other ostree hosts)
# housekeeping 0, isolated 1-23
# On OpenShift prefer `lowlat render openshift` (MachineConfig kernelArguments / kernelType).
set -euf
IFS=' 	
'
want='skew_tick=1 tsc=reliable rcupdate.rcu_normal_after_boot=1 nohz=on nohz_full=1-23 rcu_nocbs=1-23 isolcpus=managed_irq,1-23 irqaffinity=0 kthread_cpus=0 systemd.cpu_affinity=0 intel_iommu=on iommu=pt intel_pstate=disable'
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
