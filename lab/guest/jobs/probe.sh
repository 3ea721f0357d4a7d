#!/bin/sh
# First boot, no lowlat arguments: what the guest is, as lowlat sees it (the host plans from
# the snapshot), and what the kernel offers.
. /lab/lib.sh
step inspect lowlat inspect --json
step snapshot lowlat snapshot -o /out/snapshot.tgz
step facts sh -c 'for f in /sys/devices/system/cpu/isolated /sys/devices/system/cpu/nohz_full \
    /proc/irq/default_smp_affinity /sys/kernel/tracing/available_tracers \
    /sys/devices/system/cpu/cpu0/topology/thread_siblings_list /sys/devices/system/node/node1/cpulist; do
    printf "%s: %s\n" "$f" "$(cat "$f" 2>&1)"; done; cat /proc/cmdline; uname -a'
