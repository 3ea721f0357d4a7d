#!/usr/bin/env bash
# tracers-vs-rtla.sh [ROUNDS] [SECONDS] — lowlat's tracer modes (measure timer/noise --tracer)
# against rtla timerlat/osnoise top, interleaved in one boot of Debian's PREEMPT_RT kernel in
# the lab (docs/LAB.md): per-CPU figures as ratios lowlat / rtla, and the interrupts each run
# cost the measured CPUs. Writes target/rtlab/run/parity.md (the table docs/BENCHMARKS.md keeps)
# and prints it. Defaults: 3 rounds of 20 s. Run it when nothing else runs on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-20}
cargo run -p rtlab --release --locked -- parity --rounds "$rounds" --seconds "$seconds"
cat target/rtlab/run/parity.md
