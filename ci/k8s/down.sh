#!/usr/bin/env bash
# down.sh — stop everything up.sh started and remove what it made, then prove it:
#  1. best effort: delete Jobs and Pods through the API, so the kubelets stop the sandboxes;
#  2. stop the kubelets, then scheduler, controller-manager, apiserver (by PID file: TERM,
#     then KILL);
#  3. per containerd: kill and delete its remaining tasks and containers, stop it; then any
#     shim serving one of OUR sockets and any process left in OUR kubepods cgroups (by PID);
#  4. stop etcd; unmount what lies under our directories; remove the network namespaces,
#     bridges, cgroups and /run directories that up.sh recorded as ours;
#  5. restore the sysctls the kubelet rewrote; delete the state (logs are copied first).
# Ends with "clean: ..." (exit 0) or lists every survivor and exits 1.
# Safe to run at any time, also when nothing is up, and twice.
# Env: KEEP_STATE=1 keeps $LOWLAT_K8S_STATE; LOGS_TO (default /tmp/lowlat-k8s-logs) gets the logs.
set -uo pipefail
# shellcheck source=ci/k8s/lib.sh
source "$(dirname "$0")/lib.sh"
LOGS_TO=${LOGS_TO:-/tmp/lowlat-k8s-logs}
T0=$(date +%s)

stop_pid() { # stop_pid PID [TIMEOUT_S]: TERM, wait, KILL
  local pid=$1 to=${2:-20} i
  running "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null
  for ((i = 0; i < to * 10; i++)); do running "$pid" || return 0; sleep 0.1; done
  log "pid $pid did not exit on TERM within ${to}s, sending KILL"
  kill -KILL "$pid" 2>/dev/null
  for ((i = 0; i < 50; i++)); do running "$pid" || return 0; sleep 0.1; done
}
stop() { # stop NAME [TIMEOUT_S]: the process of $PIDS/NAME, if it is still the program we started
  local name=$1 pid prog=${1%-n[0-9]*}
  [[ -f $PIDS/$name ]] || return 0
  pid=$(cat "$PIDS/$name")
  if running "$pid"; then
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$prog"; then # PID reuse guard
      stop_pid "$pid" "${2:-20}"; log "stopped $name (pid $pid)"
    else
      log "pid $pid of $name is now another program; left alone"
    fi
  fi
  rm -f "$PIDS/$name"
}
pidnames() { # pidnames PROG: PID file names of PROG, for every node (PROG, PROG-n2, ...)
  local f
  for f in "$PIDS/$1" "$PIDS/$1"-n[0-9]*; do [[ -f $f ]] && basename "$f"; done
}
# every client call is time-limited: a wedged component must not hang the teardown
c() { timeout 15 ctr --address "$@"; }
tasks() { c "$1" -n k8s.io tasks ls -q 2>/dev/null; }
kc() { timeout 60 "$K8S" kubectl --request-timeout=20s "$@"; }

# 1. graceful: let the kubelets tear the pods down
if alive kube-apiserver && [[ -n $(pidnames kubelet) ]] && [[ -f $KUBECONFIG_ADMIN ]]; then
  export KUBECONFIG=$KUBECONFIG_ADMIN
  kc delete jobs --all --all-namespaces --cascade=background --wait=false >/dev/null 2>&1
  if kc delete pods --all --all-namespaces --grace-period=2 --timeout=40s >/dev/null 2>&1; then
    log "all pods deleted through the API"
  else
    log "pod deletion through the API incomplete (pods on kubelet-less nodes stay): going on"
  fi
  for _ in $(seq 40); do # at most 20 s until every sandbox is stopped
    n=0
    for s in $(node_sockets); do n=$((n + $(tasks "$s" | wc -l))); done
    ((n == 0)) && break
    sleep 0.5
  done
fi

# 2. kubelets first (they would restart containers), then the control plane
for k in $(pidnames kubelet); do stop "$k" & done
wait
for p in kube-scheduler kube-controller-manager kube-apiserver; do stop "$p" 10 & done
wait

# 3. containers, containerds, shims
for s in $(node_sockets); do
  for t in $(tasks "$s"); do c "$s" -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
done
sleep 0.5
for s in $(node_sockets); do
  for t in $(tasks "$s"); do c "$s" -n k8s.io tasks delete -f "$t" >/dev/null 2>&1; done
  for ctn in $(c "$s" -n k8s.io containers ls -q 2>/dev/null); do
    c "$s" -n k8s.io containers delete "$ctn" >/dev/null 2>&1
  done
done
for p in $(pidnames containerd); do stop "$p" & done
wait
# shims started by OUR containerds carry "-address $RUNDIR/..." on their command line
for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "-address $RUNDIR/"; then
    log "stopping leftover shim pid $pid"; stop_pid "$pid" 5
  fi
done
# processes still inside the kubepods cgroups of our kubelets (node 1: /kubepods,
# node I: /lowlat-nI/kubepods)
CGROOTS="/kubepods $(sed 's|^/sys/fs/cgroup/[^/]*||' "$STATE/cgroups.ours" 2>/dev/null | sort -u | sed 's|$|/kubepods|' | tr '\n' ' ')"
for r in $CGROOTS; do
  f=/sys/fs/cgroup/pids$r
  [[ -d $f ]] || continue
  for pid in $(find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u); do
    log "killing leftover container process $pid ($(cat "/proc/$pid/comm" 2>/dev/null))"
    kill -KILL "$pid" 2>/dev/null
  done
done

# 4. etcd
stop etcd

# unmount everything under our directories, and the network namespaces we created
before=$(cat "$STATE/netns.before" 2>/dev/null)
newns=()
for f in /run/netns/cni-*; do
  [[ -e $f ]] && ! grep -qxF "${f##*/}" <<<"$before" && newns+=("$f")
done
ours_re="^($STATE|$RUNDIR|$ETCD_DIR|/run/netns/cni-|/var/run/netns/cni-)"
while read -r m; do
  if [[ $m == */netns/cni-* ]]; then
    printf '%s\n' "${newns[@]-}" | grep -qxF "/run/netns/${m##*/}" || continue
  fi
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
done < <(awk '{print $5}' /proc/self/mountinfo | grep -E "$ours_re" | sort -r)
for ns in "${newns[@]-}"; do [[ -n $ns ]] && rm -f "$ns"; done

# bridges made by up.sh (the veths went with the network namespaces)
while read -r br; do
  ip link show "$br" >/dev/null 2>&1 && ip link del "$br" && log "deleted bridge $br"
done < <(cat "$STATE/bridges.ours" 2>/dev/null)

# cgroups made by our kubelets/runc (every hierarchy, cgroup2 "unified" included), deepest first
for r in $CGROOTS; do
  for d in /sys/fs/cgroup/*"$r"; do
    [[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
done
while read -r d; do
  [[ -d $d ]] && rmdir "$d" 2>/dev/null
done < <(sort -r "$STATE/cgroups.ours" 2>/dev/null)
for r in $CGROOTS; do # roots the kubelet made in hierarchies up.sh did not (e.g. unified)
  [[ $r == /kubepods ]] || rmdir /sys/fs/cgroup/*"${r%/kubepods}" 2>/dev/null
done

# lowlat's RT grant records (a hostPath the pods created): the cgroups they name are gone now
rm -rf /var/lib/lowlat/rt-grants && rmdir /var/lib/lowlat 2>/dev/null

# /run/containerd (shim sockets, path fixed in containerd 1.6) and /run/netns, if ours
if [[ -f $STATE/run-containerd.ours ]]; then
  rmdir /run/containerd/s /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd 2>/dev/null
fi
[[ -f $STATE/run-netns.ours ]] && rmdir /run/netns 2>/dev/null

# 5. the sysctls the kubelet rewrote at start-up (saved by up.sh)
restore_sysctls
sysctl_left=()
if [[ -f $STATE/sysctl.before ]]; then
  while read -r k v; do
    [[ $(cat "/proc/sys/$k") == "$v" ]] || sysctl_left+=("sysctl ${k//\//.}=$(cat "/proc/sys/$k") (was $v)")
  done <"$STATE/sysctl.before"
fi

# the kubelets' CPU/memory manager checkpoints: their pods are gone, and a checkpoint written
# under other CPU manager settings stops the next kubelet from starting (matters with KEEP_STATE=1)
rm -f "$STATE"/kubelet/{cpu,memory}_manager_state "$STATE"/n[0-9]*/kubelet/{cpu,memory}_manager_state

# logs, then state
if [[ -d $LOGS ]]; then rm -rf "$LOGS_TO" && cp -a "$LOGS" "$LOGS_TO"; fi
run_containerd_ours=0; [[ -f $STATE/run-containerd.ours ]] && run_containerd_ours=1
bridges=$(cat "$STATE/bridges.ours" 2>/dev/null)
rm -rf "$RUNDIR" "$ETCD_DIR"
[[ ${KEEP_STATE:-0} == 1 ]] || rm -rf "$STATE"

# ---- prove it: anything of ours left?
left=("${sysctl_left[@]}")
for p in /proc/[0-9]*; do
  running "${p#/proc/}" || continue # zombies awaiting PID 1's reaper do not count
  c=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)
  case $c in *"$CACHE/bin/"*|*"$STATE/"*|*"$RUNDIR/"*|*"$ETCD_DIR"*) left+=("process ${p#/proc/}: ${c:0:150}");; esac
done
while read -r m; do left+=("mount $m"); done < <(awk '{print $5}' /proc/self/mountinfo | grep -E "$ours_re")
for br in $bridges; do ip link show "$br" >/dev/null 2>&1 && left+=("bridge $br"); done
for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/lowlat-n[0-9]*; do [[ -d $d ]] && left+=("cgroup $d"); done
((run_containerd_ours)) && [[ -e /run/containerd ]] && left+=("dir /run/containerd")
if ((${#left[@]})); then
  log "NOT clean after $(($(date +%s) - T0)) s, left behind:"
  printf '    %s\n' "${left[@]}"
  exit 1
fi
log "clean: no process, mount, bridge or cgroup of ours left; sysctls restored ($(($(date +%s) - T0)) s; logs in $LOGS_TO)"
