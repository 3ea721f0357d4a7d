#!/usr/bin/env bash
# etcd's own WAL fsync figures next to lowlat's fsync probe, on the same filesystem, without and
# with lowlat's bulk interference and with one mitigation. Starts Debian's etcd (etcd-server) on
# 127.0.0.1 with a temporary data dir, loads it with bounded `etcdctl put` loops, and stops
# everything it started (by PID) on exit.
#
#   bench/etcd-vs-probe.sh [DIR] [SECONDS] [INTERFERENCE] [MITIGATION]
#   bench/etcd-vs-probe.sh /var/tmp 20 syncfs-at-end scheduler=bfq+ionice-idle
set -euo pipefail
DIR=${1:-/var/tmp}
SECS=${2:-20}
INTERF=${3:-fsync-per-file}
MITIG=${4:-}
BULK=${BULK:-1g}
LOWLAT=${LOWLAT:-$(dirname "$0")/../target/debug/lowlat}
for c in etcd etcdctl jq; do command -v $c >/dev/null || { echo "$c not installed (apt-get install etcd-server etcd-client jq)" >&2; exit 2; }; done
[ -x "$LOWLAT" ] || { echo "build lowlat first (cargo build -p lowlat) or set LOWLAT=" >&2; exit 2; }
if [ -z "$MITIG" ]; then
  if [ "$(id -u)" = 0 ] && grep -qw bfq /sys/block/*/queue/scheduler 2>/dev/null; then MITIG=scheduler=bfq+ionice-idle; else MITIG=rate=50; fi
fi
PORT=${PORT:-$((23000 + RANDOM % 2000))}
PEER=$((PORT + 1))
URL=http://127.0.0.1:$PORT
WORK=$(mktemp -d "$DIR/lowlat-etcd-XXXXXX")
ETCD_PID=""
LOAD_PIDS=()
cleanup() {
  for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "$ETCD_PID" ] && kill "$ETCD_PID" 2>/dev/null && wait "$ETCD_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

etcd --name lowlat-bench --data-dir "$WORK/data" \
  --listen-client-urls "$URL" --advertise-client-urls "$URL" \
  --listen-peer-urls "http://127.0.0.1:$PEER" --initial-advertise-peer-urls "http://127.0.0.1:$PEER" \
  --initial-cluster "lowlat-bench=http://127.0.0.1:$PEER" --logger=zap --log-outputs="$WORK/etcd.log" &
ETCD_PID=$!
export ETCDCTL_API=3
for _ in $(seq 1 50); do etcdctl --endpoints="$URL" endpoint health >/dev/null 2>&1 && break; sleep 0.2; done
etcdctl --endpoints="$URL" endpoint health >/dev/null 2>&1 || { echo "etcd did not start; see $WORK/etcd.log" >&2; cat "$WORK/etcd.log" >&2; exit 3; }

load() { # bounded: at most 20000 puts per loop, 4 loops, until stopped
  local i
  for w in 1 2 3 4; do
    ( for i in $(seq 1 20000); do etcdctl --endpoints="$URL" put "/bench/$w/$i" "value-$i-0123456789012345678901234567890123456789012345678901234567890123456789" >/dev/null || exit 0; done ) &
    LOAD_PIDS+=($!)
  done
}
unload() { for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; LOAD_PIDS=(); }

phase() { # name, extra lowlat fsync args...
  local name=$1; shift
  load
  "$LOWLAT" measure etcd --endpoint "$URL" --duration "${SECS}s" --interval 5s --json "$WORK/$name.etcd.json" >/dev/null &
  local mpid=$!
  "$LOWLAT" measure fsync --dir "$WORK" --duration "${SECS}s" --rate 500 --bulk-size "$BULK" "$@" --json "$WORK/$name.fsync.json" >/dev/null || true
  wait "$mpid" || true
  unload
  jq -r --arg n "$name" --slurpfile f "$WORK/$name.fsync.json" '
    def ms: (. / 1e6 * 100 | round / 100 | tostring) + " ms";
    [$n, (.wal_fsync.count|tostring), (.wal_fsync.p99_ns|ms),
     ((.windows | map(.wal_fsync_p99_ns) | max // 0)|ms),
     (.backend_commit.p99_ns // 0 | ms),
     ($f[0].lat_ns.p99|ms), ($f[0].worst_window_p99_ns|ms), ($f[0].worst_window_max_ns|ms),
     (($f[0].scenarios[0].bulk.duration_ns // 0) / 1e9 * 10 | round / 10 | tostring) + " s"] | @tsv' \
    "$WORK/$name.etcd.json"
}

printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' scenario "etcd wal n" "etcd wal p99" "etcd worst-5s p99" "etcd commit p99" "probe p99" "probe worst-1s p99" "probe worst-1s max" "bulk"
phase baseline
phase "$INTERF" --interference "$INTERF"
phase "$INTERF+$MITIG" --interference "$INTERF" --mitigation "$MITIG"
echo "(etcd $(etcd --version | head -1 | awk '{print $3}') on $URL, data in $DIR, probe rate 500/s, bulk $BULK; etcd quantiles are interpolated in 1 ms..8 s buckets)"
