#!/usr/bin/env bash
# idle-cost.sh — what the running cluster costs: CPU (% of one core) and RSS of every process
# up.sh started (the PID files in $LOWLAT_K8S_STATE/pids), sampled over SECONDS (default 60)
# from utime+stime in /proc/PID/stat and VmRSS in /proc/PID/status.
#   ci/k8s/idle-cost.sh [SECONDS]
set -euo pipefail
# shellcheck source=ci/k8s/lib.sh
source "$(dirname "$0")/lib.sh"
T=${1:-60}
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
declare -A start
names=()
for f in "$PIDS"/*; do
  if [[ ! -f $f ]] || ! running "$(cat "$f")"; then continue; fi
  names+=("${f##*/}"); start[${f##*/}]=$(ticks "$(cat "$f")")
done
((${#names[@]})) || die "no running component in $PIDS (is the cluster up?)"
sleep "$T"
tot=0 rss_tot=0
for n in "${names[@]}"; do
  pid=$(cat "$PIDS/$n")
  running "$pid" || { printf '%-26s exited during the sample\n' "$n"; continue; }
  pct=$(awk -v d=$(($(ticks "$pid") - start[$n])) -v hz="$HZ" -v t="$T" 'BEGIN {printf "%.2f", 100 * d / hz / t}')
  rss=$(($(awk '/^VmRSS/ {print $2}' "/proc/$pid/status") / 1024))
  printf '%-26s %6s %% %6d MiB\n' "$n" "$pct" "$rss"
  tot=$(awk -v a="$tot" -v b="$pct" 'BEGIN {printf "%.2f", a + b}'); rss_tot=$((rss_tot + rss))
done
echo "total over ${T}s: $tot % of one core, $rss_tot MiB RSS (the shared binary counted once per process)"
