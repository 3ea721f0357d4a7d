#!/usr/bin/env bash
# Peak RSS (VmHWM, recorded by lowlat as params.tool_peak_rss_bytes in its result) of
# `lowlat measure timer` for a short and a long run (memory must not grow with run length),
# and for 1 vs 2 measured CPUs (the per-thread cost, to extrapolate to 16 threads).
#   SHORT=10 LONG=60 bench/rss.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SHORT=${SHORT:-10} LONG=${LONG:-60}
LOWLAT=${LOWLAT:-target/release/lowlat}
[ -x "$LOWLAT" ] || cargo build --release -p lowlat
OUT=${OUT:-$(mktemp -d /tmp/lowlat-bench.XXXXXX)}
peak() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['params']['tool_peak_rss_bytes'] // 1024)" "$1"; }
for d in "$SHORT" "$LONG"; do
  "$LOWLAT" measure timer -q --cpus 1 --main-cpu 0 -D "${d}s" --json "$OUT/rss-1-$d.json"
  echo "timer, 1 CPU,  ${d}s: peak RSS $(peak "$OUT/rss-1-$d.json") KiB"
done
"$LOWLAT" measure timer -q --cpus 0-1 -D "${SHORT}s" --json "$OUT/rss-2.json" 2>/dev/null
one=$(peak "$OUT/rss-1-$SHORT.json"); two=$(peak "$OUT/rss-2.json")
echo "timer, 2 CPUs, ${SHORT}s: peak RSS $two KiB (main thread shares a measured CPU here)"
echo "per extra thread: $((two - one)) KiB; 16 threads: about $(((one + 15 * (two - one)) / 1024)) MiB"
