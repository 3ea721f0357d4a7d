#!/usr/bin/env bash
# lowlat measure noise vs oslat, interleaved A B A B … with identical parameters (CPU,
# main-thread CPU, policy SCHED_OTHER unless PRIO is set, duration). Prints per-second
# counts of gaps in oslat-compatible bands, the max, and ratios (lowlat / oslat).
#   CPU=1 MAIN=0 DURATION=10 ROUNDS=3 [PRIO=1] bench/noise-vs-oslat.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${CPU:-1} MAIN=${MAIN:-0} DURATION=${DURATION:-10} ROUNDS=${ROUNDS:-3} PRIO=${PRIO:-}
LOWLAT=${LOWLAT:-target/release/lowlat}
[ -x "$LOWLAT" ] || cargo build --release -p lowlat
OUT=${OUT:-$(mktemp -d /tmp/lowlat-bench.XXXXXX)}
POLICY=SCHED_OTHER; [ -n "$PRIO" ] && POLICY="SCHED_FIFO $PRIO"
echo "# noise: CPU $CPU, main CPU $MAIN, $POLICY, ${DURATION}s x $ROUNDS rounds"
echo "# host: $(uname -r), $(nproc) CPUs$(grep -qw hypervisor /proc/cpuinfo && echo ', VIRTUALIZED')   results in $OUT"
A=() B=()
for r in $(seq 1 "$ROUNDS"); do
  oslat -q -D "$DURATION" -c "$CPU" -C "$MAIN" ${PRIO:+-f "$PRIO"} --json="$OUT/os-$r.json" >"$OUT/os-$r.txt"
  "$LOWLAT" import oslat "$OUT/os-$r.json" -o "$OUT/os-$r.lowlat.json"
  A+=("$OUT/os-$r.lowlat.json")
  "$LOWLAT" measure noise -q --cpus "$CPU" --main-cpu "$MAIN" ${PRIO:+--priority "$PRIO"} \
    --duration "${DURATION}s" --json "$OUT/ll-$r.json"
  B+=("$OUT/ll-$r.json")
done
python3 bench/lib-compare.py noise oslat lowlat "${A[@]}" "${B[@]}"
