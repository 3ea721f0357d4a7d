#!/usr/bin/env bash
# Known-latency injection, cyclictest vs lowlat: a SCHED_FIFO 99 spinner of SPIN us every
# EVERY ms on the measured CPU (crates/measure/examples/inject.rs) while each tool measures
# at a 100 us interval; both must see a max near SPIN us and a similar count above 150 us
# (about half the injections at a 100 us interval: one of the two deadlines inside each spin
# is more than 150 us late when it falls in the spin's first 50 us).
#   CPU=1 MAIN=0 SPIN=200 EVERY=50 DURATION=10 ROUNDS=2 bench/injection-vs-cyclictest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CPU=${CPU:-1} MAIN=${MAIN:-0} SPIN=${SPIN:-200} EVERY=${EVERY:-50} DURATION=${DURATION:-10} ROUNDS=${ROUNDS:-2}
LOWLAT=${LOWLAT:-target/release/lowlat}
INJECT=${INJECT:-target/release/examples/inject}
[ -x "$LOWLAT" ] || cargo build --release -p lowlat
[ -x "$INJECT" ] || cargo build --release -p measure --example inject
OUT=${OUT:-$(mktemp -d /tmp/lowlat-bench.XXXXXX)}
echo "# injection: FIFO 99 spin ${SPIN}us every ${EVERY}ms on CPU $CPU; tools at FIFO 95, interval 100us, ${DURATION}s x $ROUNDS"
echo "# expected: ~$((DURATION * 1000 / EVERY)) injections per run; results in $OUT"
A=() B=()
for r in $(seq 1 "$ROUNDS"); do
  "$INJECT" "$CPU" "$SPIN" "$EVERY" $((DURATION + 1)) >/dev/null & ip=$!
  cyclictest -m -q -p95 -i100 -t1 -a"$CPU" --mainaffinity="$MAIN" -D"$DURATION" -h1000 --json="$OUT/ct-$r.json" >/dev/null
  wait $ip
  "$LOWLAT" import cyclictest "$OUT/ct-$r.json" -o "$OUT/ct-$r.lowlat.json"; A+=("$OUT/ct-$r.lowlat.json")
  "$INJECT" "$CPU" "$SPIN" "$EVERY" $((DURATION + 1)) >/dev/null & ip=$!
  "$LOWLAT" measure timer -q --cpus "$CPU" --main-cpu "$MAIN" --priority 95 --interval 100us \
    --duration "${DURATION}s" --json "$OUT/ll-$r.json"
  wait $ip
  B+=("$OUT/ll-$r.json")
done
python3 bench/lib-compare.py timer cyclictest lowlat "${A[@]}" "${B[@]}"
