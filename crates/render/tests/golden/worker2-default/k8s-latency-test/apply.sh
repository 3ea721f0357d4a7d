#!/bin/sh
# lowlat latency test, in its order (KUBECTL=oc on OpenShift)
set -eu
cd "$(dirname "$0")"
k=${KUBECTL:-kubectl}
$k apply -f namespace.yaml
$k apply -f load.yaml
$k -n 'lowlat-latency' rollout status deployment/lowlat-load --timeout=10m
$k apply -f latency-test.yaml
$k -n 'lowlat-latency' wait --for=condition=complete --timeout=-1s job/lowlat-latency-test || true
$k -n 'lowlat-latency' logs job/lowlat-latency-test | grep Latencies
