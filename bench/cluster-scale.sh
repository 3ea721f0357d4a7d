#!/usr/bin/env bash
# cluster-scale.sh — what `lowlat cluster` costs as the fleet grows, on the real API server of
# ci/k8s (up.sh must have run): for N = 10, 100, 500 Node objects with no kubelet
# (ci/k8s/fake-nodes.sh), run
#   1. `lowlat cluster nodes -l lowlat.test/fake=true`
#   2. the scheduling/cleanup part of `lowlat cluster check`: one Job per node created, their
#      pods watched until --start-timeout reports them "never started", everything deleted and
#      the deletion watched until nothing labelled is left
# and print one Markdown row each: HTTP requests lowlat sent to the API server (LOWLAT_API_STATS=1
# makes lowlat count them; a watch counts once), requests per node, wall time, peak RSS.
#   bench/cluster-scale.sh [N ...]        default: 10 100 500
# Env: LOWLAT (binary, default target/release/lowlat, else target/debug/lowlat), START_TIMEOUT (default 10s).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
eval "$(bash "$ROOT/ci/k8s/env.sh")"
LOWLAT=${LOWLAT:-}
if [[ -z $LOWLAT ]]; then
  for b in "$ROOT/target/release/lowlat" "$ROOT/target/debug/lowlat"; do [[ -x $b ]] && { LOWLAT=$b; break; }; done
fi
[[ -x ${LOWLAT:-} ]] || { echo "no lowlat binary: cargo build --release -p lowlat --features cluster" >&2; exit 1; }
kubectl get --raw /readyz >/dev/null 2>&1 || { echo "cluster not up (ci/k8s/up.sh)" >&2; exit 1; }
sizes=("$@"); ((${#sizes[@]})) || sizes=(10 100 500)
SEL=lowlat.test/fake=true
TMP=$(mktemp -d); trap 'rm -rf "$TMP"; "$ROOT/ci/k8s/fake-nodes.sh" --delete >/dev/null 2>&1 || true' EXIT

measure() { # measure LABEL N CMD... -> one table row
  local label=$1 n=$2; shift 2
  local t0 t1 rss req
  t0=$(date +%s.%N)
  LOWLAT_API_STATS=1 /usr/bin/time -f '%M' -o "$TMP/time" "$@" >"$TMP/out" 2>"$TMP/err" || true
  t1=$(date +%s.%N)
  rss=$(tail -1 "$TMP/time")
  req=$(awk '/^lowlat: api requests:/ {print $4}' "$TMP/err")
  [[ -n $req ]] || { echo "no request count from lowlat ($label, $n):" >&2; tail -5 "$TMP/err" >&2; req=NaN; }
  printf '| %s | %d | %s | %s | %s | %s |\n' "$label" "$n" "$req" \
    "$(awk -v r="$req" -v n="$n" 'BEGIN{ if (r == "NaN") print "-"; else printf "%.2f", r / n }')" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f s", b - a}')" "$(awk -v k="$rss" 'BEGIN{printf "%.1f MB", k / 1024}')"
}

echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -r); lowlat: $LOWLAT"
echo
echo "| command | nodes | API requests | per node | wall | peak RSS |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for n in "${sizes[@]}"; do
  "$ROOT/ci/k8s/fake-nodes.sh" --delete >/dev/null 2>&1 || true
  "$ROOT/ci/k8s/fake-nodes.sh" "$n" >/dev/null
  measure "cluster nodes" "$n" "$LOWLAT" cluster nodes -l "$SEL"
  measure "cluster check (schedule, time out, clean up)" "$n" "$LOWLAT" cluster check -l "$SEL" --quick \
    --start-timeout "${START_TIMEOUT:-10s}" --out "$TMP/fleet-$n"
  grep -q 'nothing labelled left' "$TMP/out" || { echo "cleanup incomplete at $n nodes:" >&2; grep cleanup "$TMP/out" >&2; }
done
