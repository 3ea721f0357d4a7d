#!/usr/bin/env bash
# lowlat measure timer vs cyclictest, interleaved A B A B … with identical parameters
# (CPU, main-thread CPU, SCHED_FIFO priority, interval, duration, memory locked, PM QoS held).
# Prints per-metric medians and ratios (lowlat / cyclictest). Needs root and rt-tests.
#   CPU=1 MAIN=0 PRIO=95 INTERVAL=1000 DURATION=10 ROUNDS=3 LOAD= bench/timer-vs-cyclictest.sh
# LOAD, if set, is a shell command run on MAIN for every run of both tools (e.g.
# "stress-ng --cpu 1 --taskset 0").
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${CPU:-1} MAIN=${MAIN:-0} PRIO=${PRIO:-95} INTERVAL=${INTERVAL:-1000} DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3} HIST=${HIST:-10000} LOAD=${LOAD:-}
LOWLAT=${LOWLAT:-target/release/lowlat}
[ -x "$LOWLAT" ] || cargo build --release -p lowlat
OUT=${OUT:-$(mktemp -d /tmp/lowlat-bench.XXXXXX)}
echo "# timer: CPU $CPU, main CPU $MAIN, FIFO $PRIO, interval ${INTERVAL}us, ${DURATION}s x $ROUNDS rounds, load: ${LOAD:-none}"
echo "# host: $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)$(grep -qw hypervisor /proc/cpuinfo && echo ', VIRTUALIZED')"
echo "# cyclictest: $(cyclictest --help 2>&1 | head -1)   results in $OUT"
run_load() { if [ -n "$LOAD" ]; then taskset -c "$MAIN" sh -c "$LOAD" >/dev/null 2>&1 & echo $!; fi; }
stop_load() { if [ -n "${1:-}" ]; then kill -- "$1" 2>/dev/null || true; pkill -P "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi; }
A=() B=()
for r in $(seq 1 "$ROUNDS"); do
  lp=$(run_load)
  cyclictest -m -q -p"$PRIO" -i"$INTERVAL" -t1 -a"$CPU" --mainaffinity="$MAIN" -D"$DURATION" \
    -h"$HIST" --json="$OUT/ct-$r.json" >"$OUT/ct-$r.txt"
  stop_load "$lp"
  "$LOWLAT" import cyclictest "$OUT/ct-$r.json" -o "$OUT/ct-$r.lowlat.json"
  A+=("$OUT/ct-$r.lowlat.json")
  lp=$(run_load)
  "$LOWLAT" measure timer -q --cpus "$CPU" --main-cpu "$MAIN" --policy fifo --priority "$PRIO" \
    --interval "${INTERVAL}us" --duration "${DURATION}s" --json "$OUT/ll-$r.json"
  stop_load "$lp"
  B+=("$OUT/ll-$r.json")
done
python3 bench/lib-compare.py timer cyclictest lowlat "${A[@]}" "${B[@]}"
