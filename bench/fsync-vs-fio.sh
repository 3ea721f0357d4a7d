#!/usr/bin/env bash
# lowlat measure fsync vs fio, interleaved, same directory and parameters (the etcd recipe:
# fio --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300). Prints each round and
# the median IOPS / p50 / p99 of both with lowlat/fio ratios (target: within 10%).
#
#   bench/fsync-vs-fio.sh [DIR] [ROUNDS] [SIZE] [BS]
#   LOWLAT=target/release/lowlat bench/fsync-vs-fio.sh /var/lib/etcd 7 22m 2300
set -euo pipefail
DIR=${1:-/var/tmp}
ROUNDS=${2:-5}
SIZE=${3:-22m}
BS=${4:-2300}
LOWLAT=${LOWLAT:-$(dirname "$0")/../target/debug/lowlat}
command -v fio >/dev/null || { echo "fio not installed (apt-get install fio)" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq not installed" >&2; exit 2; }
[ -x "$LOWLAT" ] || { echo "build lowlat first (cargo build -p lowlat) or set LOWLAT=" >&2; exit 2; }
WORK=$(mktemp -d "$DIR/lowlat-bench-XXXXXX")
OUT=$(mktemp -d)
trap 'rm -rf "$WORK" "$OUT"' EXIT INT TERM

extract() { # fio-shaped JSON -> "iops p50_ns p99_ns"
  jq -r '.jobs[0] | "\(.write.iops) \(.sync.lat_ns.percentile["50.000000"]) \(.sync.lat_ns.percentile["99.000000"])"' "$1"
}

printf '%-6s %-7s %10s %10s %10s\n' round tool IOPS p50_us p99_us
for r in $(seq 1 "$ROUNDS"); do
  # Alternate which tool goes first so drift on a shared disk hits both alike.
  if [ $((r % 2)) -eq 1 ]; then order="fio lowlat"; else order="lowlat fio"; fi
  for tool in $order; do
    sync
    if [ "$tool" = fio ]; then
      fio --rw=write --ioengine=sync --fdatasync=1 --directory="$WORK" --size="$SIZE" --bs="$BS" \
          --name=etcd --unlink=1 --output-format=json --output="$OUT/fio.$r.json" >/dev/null
      f="$OUT/fio.$r.json"
    else
      "$LOWLAT" measure fsync --dir "$WORK" --size "$SIZE" --bs "$BS" \
          --fio-json "$OUT/lowlat.$r.json" >/dev/null || true
      f="$OUT/lowlat.$r.json"
    fi
    read -r iops p50 p99 < <(extract "$f")
    echo "$tool $iops $p50 $p99" >> "$OUT/all"
    printf '%-6s %-7s %10.0f %10.1f %10.1f\n' "$r" "$tool" "$iops" "$(echo "$p50/1000" | bc -l)" "$(echo "$p99/1000" | bc -l)"
  done
done

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo
printf '%-8s %12s %12s %8s\n' metric fio lowlat ratio
for col in 2:IOPS 3:p50_us 4:p99_us; do
  i=${col%%:*}; name=${col#*:}
  f=$(awk -v i="$i" '$1=="fio"{print $i}' "$OUT/all" | median)
  l=$(awk -v i="$i" '$1=="lowlat"{print $i}' "$OUT/all" | median)
  div=1; [ "$name" != IOPS ] && div=1000
  printf '%-8s %12.1f %12.1f %8.3f\n' "$name" "$(echo "$f/$div" | bc -l)" "$(echo "$l/$div" | bc -l)" "$(echo "$l/$f" | bc -l)"
done
echo "(dir $DIR, size $SIZE, bs $BS, $ROUNDS interleaved rounds, medians; $(uname -r), $(nproc) CPUs)"
