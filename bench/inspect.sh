#!/usr/bin/env bash
# Benchmark `lowlat inspect` (release build):
#  1. live host: median of many runs, against the shell way
#     (`ps -eTo psr,pid,tid,policy,rtprio,cmd` plus `cat /proc/interrupts`);
#  2. synthetic trees of 128/256/512 CPUs with tasks and IRQs scaled alongside
#     (512 CPUs = 50k tasks, 2k IRQs): lowlat against a shell read of the same files
#     (`find | xargs cat` of every task's stat+status plus /proc/interrupts: what ps would
#     read, without parsing).
# Usage: bench/inspect.sh [RUNS_LIVE] [RUNS_TREE]   (trees go to $BENCH_DIR, default /dev/shm)
# BASE_BIN=/path/to/older/lowlat adds that binary's rows next to this build's (before/after
# in the same run, on the same trees and load).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS_LIVE=${1:-51}
RUNS_TREE=${2:-5}
DIR=${BENCH_DIR:-/dev/shm}/lowlat-bench
cargo build --release -q -p lowlat
# Where cargo put it: CARGO_TARGET_DIR when set (a shared machine's per-worktree target).
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
BIN=$(cd "$TARGET" && pwd)/release/lowlat
T=bench/inspect-time.py

echo "machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "threads on this host: $(ls -d /proc/[0-9]*/task/* 2>/dev/null | wc -l), IRQ rows: $(wc -l < /proc/interrupts)"
echo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| what | wall median ms | wall min ms | wall max ms | CPU median ms |"
echo "|---|---:|---:|---:|---:|"
row() { read -r med min max cpu < <(python3 "$T" "$1" "$2"); echo "| $3 | $med | $min | $max | $cpu |"; }
BASE=${BASE_BIN:-}
[ -n "$BASE" ] && echo "base binary: $BASE" && echo
row "$RUNS_LIVE" "$BIN inspect --json" "live: lowlat inspect --json ($RUNS_LIVE runs)"
[ -n "$BASE" ] && row "$RUNS_LIVE" "$BASE inspect --json" "live: base lowlat inspect --json ($RUNS_LIVE runs)"
row "$RUNS_LIVE" "$BIN inspect" "live: lowlat inspect (table, $RUNS_LIVE runs)"
row "$RUNS_LIVE" "ps -eTo psr,pid,tid,policy,rtprio,cmd; cat /proc/interrupts" "live: ps -eTo … + cat /proc/interrupts ($RUNS_LIVE runs)"

rm -rf "$DIR"
mkdir -p "$DIR"
for spec in "128 12500 500" "256 25000 1000" "512 50000 2000"; do
    set -- $spec
    python3 bench/inspect-gen-tree.py "$DIR/t$1" --cpus "$1" --tasks "$2" --irqs "$3" >/dev/null
    row "$RUNS_TREE" "$BIN inspect --json --root $DIR/t$1" "tree $1 CPUs / $2 tasks / $3 IRQs: lowlat inspect --json"
    [ -n "$BASE" ] && row "$RUNS_TREE" "$BASE inspect --json --root $DIR/t$1" "tree $1 CPUs: base lowlat inspect --json"
    # find + xargs: a glob of 100k paths exceeds ARG_MAX and would fail without reading.
    row "$RUNS_TREE" "find $DIR/t$1/proc -path '*/task/*' \\( -name stat -o -name status \\) -print0 | xargs -0 cat; cat $DIR/t$1/proc/interrupts" "tree $1 CPUs: shell read of the same task files + interrupts"
done
rm -rf "$DIR"
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
