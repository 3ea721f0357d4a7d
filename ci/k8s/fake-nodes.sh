#!/usr/bin/env bash
# fake-nodes.sh — Node objects with no kubelet behind them, for tests that need "a node whose
# pod never starts" and for scale benchmarks (10/100/500 nodes) on the local cluster.
#
#   ci/k8s/fake-nodes.sh N [--not-ready] [--prefix P]   create N nodes P0001..PNNNN (default
#                                                       prefix "fake-"), all at once
#   ci/k8s/fake-nodes.sh --delete                       delete every fake node (and their pods)
#   ci/k8s/fake-nodes.sh --list                         list the fake nodes
#
# Every fake node carries the label lowlat.test/fake=true (also kubernetes.io/hostname,
# kubernetes.io/os=linux, kubernetes.io/arch=amd64) and a capacity of 4 CPUs, 8 GiB, 110 pods.
# By default it is created with a Ready=True condition, so the scheduler places pods on it;
# with --not-ready it has no conditions at all. Either way no kubelet ever runs its pods: a pod
# bound to it stays Pending with no container status, forever.
# After the node-monitor grace period (about 50 s) with no heartbeat the node lifecycle
# controller sets Ready=Unknown and adds the taints node.kubernetes.io/unreachable
# (NoSchedule, NoExecute); pods without a matching toleration are then evicted after their
# tolerationSeconds (300 s by default). Tolerate everything ({operator: Exists}) to keep them.
# Fake nodes live in etcd only: down.sh removes them with everything else.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
eval "$(bash "$HERE/env.sh")"
# shellcheck source=ci/k8s/lib.sh
source "$HERE/lib.sh"

sel=$FAKE_NODE_LABEL=true
case ${1:-} in
  --delete)
    t0=$(date +%s.%N)
    # pods bound to a fake node never get a kubelet's confirmation: force them out
    kubectl get pods -A -o json | jq -r --argjson nodes "$(kubectl get nodes -l "$sel" -o json | jq '[.items[].metadata.name]')" \
      '.items[] | select(.spec.nodeName as $n | $nodes | index($n)) | "\(.metadata.namespace) \(.metadata.name)"' |
      while read -r ns pod; do kubectl delete pod -n "$ns" "$pod" --grace-period=0 --force >/dev/null 2>&1 || true; done
    n=$(kubectl get nodes -l "$sel" -o name | wc -l)
    # one DELETE of the collection (500 nodes: ~1 s; "kubectl delete nodes -l" deletes one by
    # one and took 19 s for 100), then wait until the list is empty
    kubectl delete --raw "/api/v1/nodes?labelSelector=${FAKE_NODE_LABEL//\//%2F}%3Dtrue" >/dev/null
    for _ in $(seq 300); do
      [[ -z $(kubectl get nodes -l "$sel" -o name) ]] && break
      sleep 0.2
    done
    log "deleted $n fake node(s) in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
    exit 0 ;;
  --list) kubectl get nodes -l "$sel"; exit 0 ;;
  '' | -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[[ $1 =~ ^[0-9]+$ ]] || die "usage: fake-nodes.sh N [--not-ready] [--prefix P] | --delete | --list"
N=$1; shift
READY=1 PREFIX=fake-
while (($#)); do
  case $1 in
    --not-ready) READY=0 ;;
    --prefix) PREFIX=$2; shift ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
t0=$(date +%s.%N)
# One JSON List, created in one request per node by kubectl (create keeps .status for Nodes,
# as a kubelet registering itself does).
jq -n --argjson n "$N" --arg prefix "$PREFIX" --arg lbl "$FAKE_NODE_LABEL" --arg now "$now" --argjson ready "$READY" '{
  apiVersion: "v1", kind: "List",
  items: [range(1; $n + 1) as $i | ($prefix + ($i | tostring | if length < 4 then ("0000"[length:] + .) else . end)) as $name | {
    apiVersion: "v1", kind: "Node",
    metadata: {name: $name, labels: {($lbl): "true", "kubernetes.io/hostname": $name,
      "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
    status: ({
      capacity: {cpu: "4", memory: "8Gi", pods: "110"},
      allocatable: {cpu: "4", memory: "8Gi", pods: "110"},
      nodeInfo: {architecture: "amd64", operatingSystem: "linux", kubeletVersion: "fake",
        containerRuntimeVersion: "none://", kernelVersion: "", osImage: "fake node (no kubelet)",
        kubeProxyVersion: "", machineID: "", systemUUID: "", bootID: ""}
    } + (if $ready == 1 then {conditions: [{type: "Ready", status: "True", reason: "FakeNode",
      message: "lowlat fake node: no kubelet", lastHeartbeatTime: $now, lastTransitionTime: $now}]} else {} end))
  }]}' | kubectl create -f - >/dev/null
log "created $N fake node(s) ${PREFIX}0001..: $(kubectl get nodes -l "$sel" -o name | wc -l) labelled $sel in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
