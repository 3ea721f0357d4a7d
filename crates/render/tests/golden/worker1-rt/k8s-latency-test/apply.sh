#!/bin/sh
# lowlat plan `rt`: the latency test in its order (kubectl or oc)
set -eu
cd "$(dirname "$0")"
k=${KUBECTL:-kubectl}
$k apply -f namespace.yaml
$k apply -f load.yaml
$k -n lowlat-latency rollout status deployment/lowlat-load --timeout=10m
$k apply -f latency-test.yaml
$k -n lowlat-latency wait --for=condition=complete --timeout=-1s job/lowlat-latency-test || true
$k -n lowlat-latency logs job/lowlat-latency-test | grep Latencies
