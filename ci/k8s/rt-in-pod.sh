#!/usr/bin/env bash
# shellcheck disable=SC2015 # "check && ok ... || bad ...": ok and bad always succeed
# rt-in-pod.sh — show, on the live cluster, how a privileged pod gets SCHED_FIFO on this
# RT-group-scheduling kernel (CONFIG_RT_GROUP_SCHED=y, cgroup v1 "cpu" hierarchy), and how
# it gives the budget back. The facts and the exact commands are in ci/k8s/README.md,
# section "Real-time in pods"; this script is their executable form.
#
# For every kubelet-backed node and both QoS classes that matter (Burstable: the pod cgroup
# sits under /kubepods/burstable; Guaranteed: directly under /kubepods), one privileged pod:
#   1. reads its own cpu cgroup path from /proc/self/cgroup and the chain's rt_runtime_us;
#   2. shows that SCHED_FIFO fails (lowlat measure timer falls back to SCHED_OTHER, and
#      `chrt -f 50` from the host's file system, run by chroot so it stays in the pod's
#      cgroups, gets EPERM);
#   3. mounts the cgroup v1 "cpu" hierarchy afresh (privileged: CAP_SYS_ADMIN; cgroup v1 has
#      no cgroup namespace, so the mount shows the whole tree) and grants RT_US microseconds
#      per period to every level of its chain, parents first;
#   4. shows SCHED_FIFO works (lowlat's timer threads at priority 95, chrt -f 50 succeeds);
#   5. puts every level back to its old value, children first, and checks it.
# Pods are deleted at the end. Prints PASS/FAIL lines and "N passed, N failed".
# Env: RT_US (budget per level, default 100000 of the 1000000 µs period).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
eval "$(bash "$HERE/env.sh")"
RT_US=${RT_US:-100000}
pass=0 fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

kubectl get --raw /readyz >/dev/null 2>&1 || { echo "cluster not up (ci/k8s/up.sh)"; exit 1; }
if [[ ! -f /sys/fs/cgroup/cpu/cpu.rt_runtime_us ]]; then
  # cgroup v2 only, or a kernel without CONFIG_RT_GROUP_SCHED: nothing to grant, nothing to show
  echo "skipped: no cgroup v1 cpu.rt_runtime_us on this host (no RT group scheduling to work around)"
  exit 0
fi
"$HERE/load-image.sh" >/dev/null || exit 1
read -r -a nodes <<<"$LOWLAT_K8S_NODES"

pod() { # pod NAME NODE QOS
  local res
  case $3 in
    burstable) res='{requests: {cpu: 100m}}' ;;
    guaranteed) res='{requests: {cpu: 500m, memory: 64Mi}, limits: {cpu: 500m, memory: 64Mi}}' ;;
  esac
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: lowlat-rt-in-pod}}
spec:
  nodeName: $2
  hostPID: true
  hostNetwork: true
  dnsPolicy: None
  dnsConfig: {nameservers: [127.0.0.1]}
  automountServiceAccountToken: false
  enableServiceLinks: false
  terminationGracePeriodSeconds: 1
  tolerations: [{operator: Exists}]
  containers:
  - name: c
    image: $LOWLAT_IMAGE
    imagePullPolicy: Never
    command: [/bin/busybox, sleep, "600"]
    securityContext: {privileged: true}
    resources: $res
    # only for chrt(1) from the host (chroot keeps the pod's cgroups); lowlat needs no mount
    volumeMounts: [{name: host, mountPath: /host, readOnly: true}]
  volumes: [{name: host, hostPath: {path: /, type: Directory}}]
YAML
}

# The in-pod part, as the Rust side would do it (busybox applets stand in for file I/O).
# Prints "key value" lines for the host side to judge.
# shellcheck disable=SC2016
INPOD='
B=/bin/busybox RT_US=$1
p=$($B awk -F: "\$2 == \"cpu\" {print \$3}" /proc/self/cgroup)
echo "path $p"
M=/tmp/cgroup-cpu
$B mkdir -p $M && $B mount -t cgroup -o cpu cgroup $M || { echo "mount failed"; exit 1; }
echo "root $($B cat $M/cpu.rt_runtime_us)/$($B cat $M/cpu.rt_period_us)"
chain=""; d=""
for c in $(echo "$p" | $B tr / " "); do d="$d/$c"; chain="$chain $d"; done
for d in $chain; do echo "before $d $($B cat $M$d/cpu.rt_runtime_us)"; done
echo "timer-before $(lowlat measure timer -a 1 -l 200 -q --json - 2>/dev/null | $B tr -d "\n")"
$B chroot /host chrt -f 50 true 2>/dev/null; echo "chrt-before $?"
for d in $chain; do                       # parents first
  old=$($B cat $M$d/cpu.rt_runtime_us)
  echo "$old" >/tmp/old.$($B echo "$d" | $B md5sum | $B cut -c1-8)
  [ "$old" -ge "$RT_US" ] && continue     # shared level already granted enough
  echo "$RT_US" >$M$d/cpu.rt_runtime_us && echo "grant $d ok" || echo "grant $d FAILED"
done
echo "timer-after $(lowlat measure timer -a 1 -l 200 -q --json - 2>/dev/null | $B tr -d "\n")"
$B chroot /host chrt -f 50 true 2>/dev/null; echo "chrt-after $?"
rev=""; for d in $chain; do rev="$d $rev"; done
for d in $rev; do                         # children first, only once no RT task is left
  old=$($B cat /tmp/old.$($B echo "$d" | $B md5sum | $B cut -c1-8))
  echo "$old" >$M$d/cpu.rt_runtime_us && echo "restore $d $($B cat $M$d/cpu.rt_runtime_us)" || echo "restore $d FAILED"
done
$B umount $M
'
t0=$(date +%s)
kubectl delete pods -l app=lowlat-rt-in-pod --grace-period=1 --wait=true >/dev/null 2>&1
for n in "${nodes[@]}"; do
  for q in burstable guaranteed; do pod "rt-$q-$n" "$n" "$q"; echo ---; done
done | kubectl apply -f - >/dev/null
kubectl wait --for=condition=Ready pods -l app=lowlat-rt-in-pod --timeout=90s >/dev/null ||
  { bad "pods not Ready"; kubectl get pods -l app=lowlat-rt-in-pod -o wide; }
for n in "${nodes[@]}"; do
  for q in burstable guaranteed; do
    name=rt-$q-$n
    out=$(kubectl exec "$name" -- /bin/sh -c "$INPOD" sh "$RT_US" 2>&1)
    echo "--- $name ($(kubectl get pod "$name" -o jsonpath='{.status.qosClass}') on $n):"
    sed 's/^\(timer-[a-z]*\) .*/\1 (lowlat measure timer JSON)/; s/^/    /' <<<"$out"
    prio() { awk -v k="$1" '$1 == k {$1 = ""; print}' <<<"$out" | jq -r '.threads[0].priority' 2>/dev/null; }
    path=$(awk '$1 == "path" {print $2}' <<<"$out")
    case $q in
      burstable) [[ $path =~ /kubepods/burstable/pod[0-9a-f-]+/[0-9a-f]+$ ]] ;;
      guaranteed) [[ $path =~ /kubepods/pod[0-9a-f-]+/[0-9a-f]+$ ]] ;;
    esac && ok "$name: cgroup $path" || bad "$name: unexpected cgroup '$path'"
    [[ $(prio timer-before) == 0 && $(awk '$1 == "chrt-before" {print $2}' <<<"$out") != 0 ]] &&
      ok "$name: before the grant: lowlat's timer threads at priority 0 (SCHED_OTHER), chrt -f 50 fails" ||
      bad "$name: SCHED_FIFO worked before the grant (timer priority $(prio timer-before))"
    grep -q 'grant .* FAILED' <<<"$out" && bad "$name: a grant failed" || ok "$name: chain granted $RT_US µs, parents first"
    [[ $(prio timer-after) == 95 && $(awk '$1 == "chrt-after" {print $2}' <<<"$out") == 0 ]] &&
      ok "$name: after the grant: lowlat's timer threads SCHED_FIFO 95, chrt -f 50 works" ||
      bad "$name: no SCHED_FIFO after the grant (timer priority $(prio timer-after))"
    if ! grep -q 'restore .* FAILED' <<<"$out" && diff <(awk '$1 == "before" {print $2, $3}' <<<"$out" | sort) \
      <(awk '$1 == "restore" {print $2, $3}' <<<"$out" | sort) >/dev/null; then
      ok "$name: every level back to its old value, children first"
    else
      bad "$name: restore incomplete"
    fi
  done
done
kubectl delete pods -l app=lowlat-rt-in-pod --grace-period=1 --wait=false >/dev/null 2>&1
echo "($(($(date +%s) - t0)) s)"
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
