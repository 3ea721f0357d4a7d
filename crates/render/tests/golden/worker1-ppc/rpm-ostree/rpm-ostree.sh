#!/bin/sh
# lowlat plan `performance` for worker1: rpm-ostree kernel arguments (RHCOS / Fedora CoreOS / other ostree hosts)
# housekeeping 0,2,40,42, isolated 1,3-39,41,43-79
# On OpenShift prefer `lowlat render openshift` (MachineConfig kernelArguments / kernelType).
set -euf
IFS=' 	
'
want='skew_tick=1 tsc=reliable rcupdate.rcu_normal_after_boot=1 nohz=on nohz_full=1,3-39,41,43-79 rcu_nocbs=1,3-39,41,43-79 isolcpus=managed_irq,1,3-39,41,43-79 irqaffinity=0,2,40,42 kthread_cpus=0,2,40,42 systemd.cpu_affinity=0,2,40,42 nosoftlockup intel_iommu=on iommu=pt rcutree.kthread_prio=11 intel_pstate=disable'
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

# Real-time kernel (the RHCOS-RT override procedure): swap the stock kernel packages for
# kernel-rt in one transaction. Pass the RPMs with `lowlat render rpm-ostree --rt-package FILE`.
if rpm-ostree status -b | grep -q 'kernel-rt-core'; then
  # already on an RT kernel: replace the overlay with the given build in one transaction
  rpm-ostree uninstall kernel-rt-core kernel-rt-modules kernel-rt-modules-extra --install './kernel-rt-core-VERSION.rpm' --install './kernel-rt-modules-VERSION.rpm' --install './kernel-rt-modules-extra-VERSION.rpm'
else
  rpm-ostree override remove kernel kernel-core kernel-modules kernel-modules-extra --install './kernel-rt-core-VERSION.rpm' --install './kernel-rt-modules-VERSION.rpm' --install './kernel-rt-modules-extra-VERSION.rpm'
fi
echo 'lowlat: staged; run `systemctl reboot` to apply' >&2
