#!/usr/bin/env bash
# Timer latency on an isolated CPU with CPU load on a housekeeping CPU, before and after
# `lowlat apply`, interleaved in one run (before, apply, after, revert; repeated) so both
# sides see the same machine weather. Needs root (apply writes /proc/irq, /sys).
#
# usage: sudo bench/apply-before-after.sh [ROUNDS] [SECONDS]
#   env: LOWLAT=path/to/lowlat (default: target/release/lowlat, built if missing)
#        HK=0 ISO=1 (housekeeping / measured CPU), OUT=dir for results
set -euo pipefail
ROUNDS=${1:-3}
SECS=${2:-30}
HK=${HK:-0}
ISO=${ISO:-1}
cd "$(dirname "$0")/.."
LOWLAT=${LOWLAT:-target/release/lowlat}
[ -x "$LOWLAT" ] || cargo build --release -p lowlat
OUT=${OUT:-$(mktemp -d /tmp/lowlat-apply-bench.XXXXXX)}
mkdir -p "$OUT"
JOURNAL="$OUT/journal.jsonl"
trap '"$LOWLAT" revert --journal "$JOURNAL" >/dev/null 2>&1 || true' EXIT

"$LOWLAT" plan --reserved-cpus "$HK" --isolated "$ISO" -o "$OUT/plan.yaml" >/dev/null
measure() { # $1 = output json
  "$LOWLAT" measure timer -a "$ISO" --main-cpu "$HK" -p 95 -i 1000us -D "${SECS}s" \
    --load "cpu:$HK" --json "$1" -q >/dev/null || true
}
for r in $(seq 1 "$ROUNDS"); do
  measure "$OUT/before-$r.json"
  "$LOWLAT" apply --plan "$OUT/plan.yaml" --journal "$JOURNAL" >"$OUT/apply-$r.txt"
  measure "$OUT/after-$r.json"
  "$LOWLAT" revert --journal "$JOURNAL" >"$OUT/revert-$r.txt"
done

python3 - "$OUT" "$ROUNDS" <<'PY'
import json, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(p):
    t = json.load(open(p))["threads"][0]
    return {k: t[k] for k in ("count", "overruns", "p50_ns", "p99_ns", "p999_ns", "max_ns")}
us = lambda ns: f"{ns/1000:.1f}"
print(f"{'round':<6}{'side':<8}{'samples':>8}{'overruns':>9}{'p50 µs':>9}{'p99 µs':>9}{'p99.9 µs':>10}{'max µs':>10}")
agg = {"before": [], "after": []}
for r in range(1, rounds + 1):
    for side in ("before", "after"):
        d = load(f"{out}/{side}-{r}.json"); agg[side].append(d)
        print(f"{r:<6}{side:<8}{d['count']:>8}{d['overruns']:>9}{us(d['p50_ns']):>9}{us(d['p99_ns']):>9}{us(d['p999_ns']):>10}{us(d['max_ns']):>10}")
med = lambda xs: sorted(xs)[len(xs)//2]
print("\nmedian over rounds, after/before ratio:")
for k in ("p50_ns", "p99_ns", "p999_ns", "max_ns"):
    b = med([d[k] for d in agg["before"]]); a = med([d[k] for d in agg["after"]])
    print(f"  {k[:-3]:<6} before {us(b):>9} µs  after {us(a):>9} µs  ratio {a/b:.2f}")
print(f"\nresults in {out}")
PY
