#!/bin/sh
# lowlat plan `performance` for role worker-cnf: housekeeping 0,2,40,42, isolated 1,3-39,41,43-79
set -eu
cd "$(dirname "$0")"
oc apply -f 01-machineconfigpool.yaml
oc apply -f 04-tuned.yaml
oc apply -f 02-machineconfig.yaml
oc apply -f 03-kubeletconfig.yaml
oc apply -f 05-runtimeclass.yaml
# move the node into the pool; the MachineConfigPool rolls it out and reboots the node
oc label node 'worker1' 'node-role.kubernetes.io/worker-cnf='
