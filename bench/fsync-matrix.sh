#!/usr/bin/env bash
# The seed's hand-made comparison in one command: baseline plus each OS-update-like bulk
# writer × mitigation, probe p99 / p99.9 / worst 1-s window / bulk writer duration / verdict.
# Scheduler and cgroup changes are restored by lowlat itself (run as root for those).
#
#   bench/fsync-matrix.sh [DIR] [DURATION] [BULK] [extra lowlat args...]
#   bench/fsync-matrix.sh /var/lib/etcd 15s 1g --interference fsync-per-file,syncfs-at-end,trickle
set -euo pipefail
DIR=${1:-/var/tmp}
DUR=${2:-15s}
BULK=${3:-1g}
shift $(( $# < 3 ? $# : 3 ))
LOWLAT=${LOWLAT:-$(dirname "$0")/../target/debug/lowlat}
[ -x "$LOWLAT" ] || { echo "build lowlat first (cargo build -p lowlat) or set LOWLAT=" >&2; exit 2; }
OUT=${OUT:-fsync-matrix.json}
"$LOWLAT" measure fsync --matrix --dir "$DIR" --duration "$DUR" --bulk-size "$BULK" --bulk-delay 3s \
  --json "$OUT" "$@" | sed -n '/^scenario /,$p'
echo "(full result with per-second windows: $OUT; $(uname -r), $(nproc) CPUs)"
