#!/usr/bin/env bash
# Peak RSS of `lowlat measure timer` for a short and a long run (memory must not grow with
# run length) and for 1 vs N measured CPUs (the per-thread cost, to extrapolate to 16).
#   CPUS=1 SHORT=10 LONG=60 bench/rss.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CPUS=${CPUS:-1} SHORT=${SHORT:-10} LONG=${LONG:-60}
LOWLAT=${LOWLAT:-target/release/lowlat}
[ -x "$LOWLAT" ] || cargo build --release -p lowlat
OUT=${OUT:-$(mktemp -d /tmp/lowlat-bench.XXXXXX)}
peak() {  # peak RSS in KiB of a child run
  python3 - "$@" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
for d in "$SHORT" "$LONG"; do
  echo "timer --cpus $CPUS -D ${d}s: peak RSS $(peak "$LOWLAT" measure timer -q --cpus "$CPUS" -D "${d}s" --json "$OUT/rss-$d.json") KiB"
done
