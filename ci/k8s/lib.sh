# shellcheck shell=bash disable=SC2034  # the settings are used by the scripts that source this
# lib.sh — shared settings and helpers for the ci/k8s scripts (sourced, never run).
#
# Every path, port and name the harness uses is defined here, once. Override with the
# environment (all optional):
#   LOWLAT_K8S_CACHE   build cache: Kubernetes binary, Go caches, pause image
#                      (default ~/.cache/lowlat-k8s; kept between CI runs when it exists)
#   LOWLAT_K8S_STATE   cluster state: PKI, configs, logs, PID files (default /var/lib/lowlat-k8s)
#   LOWLAT_K8S_RUN     runtime sockets (default /run/lowlat-k8s)
#   LOWLAT_K8S_ETCD    etcd data dir, on tmpfs (default /dev/shm/lowlat-k8s-etcd)
#   K8S_VERSION        Kubernetes version to build from the Go module proxy (default v1.34.4)

K8S_VERSION=${K8S_VERSION:-v1.34.4}
CACHE=${LOWLAT_K8S_CACHE:-${HOME:-/root}/.cache/lowlat-k8s}
STATE=${LOWLAT_K8S_STATE:-/var/lib/lowlat-k8s}
RUNDIR=${LOWLAT_K8S_RUN:-/run/lowlat-k8s}
ETCD_DIR=${LOWLAT_K8S_ETCD:-/dev/shm/lowlat-k8s-etcd}

K8S_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$K8S_LIB_DIR/../.." && pwd)
BIN=$CACHE/bin                 # k8s multi-call binary + symlinks (kubectl, kubelet, ...)
K8S=$BIN/k8s
PKI=$STATE/pki
LOGS=$STATE/logs
PIDS=$STATE/pids
KUBECONFIG_ADMIN=$STATE/admin.kubeconfig
API_URL=https://127.0.0.1:6443
PAUSE_IMAGE=localhost/lowlat-pause:1
PAUSE_TAR=$CACHE/images/pause.oci.tar
BRIDGE_PREFIX=lowlatbr             # lowlatbr0, lowlatbr1, ... one pod bridge per node
NODE_IF=lowlatnodes                # a port-less bridge holding the kubelets' addresses 192.0.2.I
FAKE_NODE_LABEL=lowlat.test/fake   # label on the kubelet-less Node objects of fake-nodes.sh
# The sysctls the kubelet rewrites at start-up (protectKernelDefaults=false). Saved before
# the first kubelet starts, put back once every node is Ready and again by down.sh.
KUBELET_SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes"

_script=$(basename "${0:-lib}" .sh)
log() { printf '[%s %s] %s\n' "$_script" "$(date +%T)" "$*"; }
warn() { printf '[%s %s] WARNING: %s\n' "$_script" "$(date +%T)" "$*" >&2; }
die() { printf '[%s %s] ERROR: %s\n' "$_script" "$(date +%T)" "$*" >&2; exit 1; }

# running PID: the process exists and is not a zombie. Our daemons are re-parented to this
# VM's PID 1, which reaps late, so "kill -0" alone would also succeed on a dead process.
running() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) && [[ ${s##*) } != Z* ]]; }
# alive NAME: the PID file $PIDS/NAME names a running process
alive() { [[ -f $PIDS/$1 ]] && running "$(cat "$PIDS/$1")"; }

# Node layout. Node names must resolve to 127.x: the apiserver reaches a kubelet through
# the node's Hostname address and every kubelet listens on 127.0.0.1 only. The first node
# is this machine's hostname, then "localhost", then any other /etc/hosts name on 127.x.
loopname() { getent ahostsv4 "$1" 2>/dev/null | grep -q '^127\.'; }
node_names() { # node_names N -> prints N names, one a line; fails if there are not enough
  local want=$1 n found=()
  for n in "${NODE:-$(hostname)}" localhost $(awk '$1 ~ /^127\./ {for (i = 2; i <= NF; i++) print $i}' /etc/hosts); do
    ((${#found[@]} < want)) || break
    loopname "$n" || continue
    [[ " ${found[*]-} " == *" $n "* ]] && continue
    found+=("$n")
  done
  ((${#found[@]} == want)) || { echo "only ${#found[@]} host names resolve to 127.x (${found[*]-}), NODES=$want needs $want" >&2; return 1; }
  printf "%s\n" "${found[@]}"
}
# node_vars I (1-based): per-node names, dirs, ports. Node 1 uses the top-level dirs.
node_vars() {
  local i=$1
  if ((i == 1)); then ND=$STATE NR=$RUNDIR SUF="" CGROOT=""
  else ND=$STATE/n$i NR=$RUNDIR/n$i SUF=-n$i CGROOT=/lowlat-n$i; fi
  BR=$BRIDGE_PREFIX$((i - 1)) SUBNET=10.88.$((i - 1)).0/24
  KPORT=$((10250 + 10 * (i - 1))) HPORT=$((10248 + 10 * (i - 1)))
  NODE_IP=192.0.2.$i
  SOCK=$NR/containerd/containerd.sock
}
# sockets of every node containerd that has a running process
node_sockets() {
  local s
  for s in "$RUNDIR"/containerd/containerd.sock "$RUNDIR"/n*/containerd/containerd.sock; do
    [[ -S $s ]] && echo "$s"
  done
}
# restore_sysctls: put back the values saved in $STATE/sysctl.before
restore_sysctls() {
  local k v
  [[ -f $STATE/sysctl.before ]] || return 0
  while read -r k v; do
    [[ $(cat "/proc/sys/$k") == "$v" ]] || { echo "$v" >"/proc/sys/$k" && log "restored ${k//\//.}=$v"; }
  done <"$STATE/sysctl.before"
}
