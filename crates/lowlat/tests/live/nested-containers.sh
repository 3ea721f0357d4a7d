#!/bin/bash
# Nested containers on the live kernel, run as PID 1 of a new PID namespace (so PID 1's
# namespace links are readable wherever this runs): a docker-in-docker-like outer container
# (its first process moved to init/, an inner container under docker/<id>) and a chrooted
# process in its own mount namespace, in the cgroup tree `lowlat inspect` walks. `inspect
# --containers` must list the outer container once with one nested container, and the chroot
# by its mount namespace and root; a snapshot must give the same list. Cleans up after itself.
set -euo pipefail
L=${LOWLAT:?set LOWLAT to the lowlat binary}
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$$" = 1 ] || fail "run me as PID 1 of a new PID namespace (unshare --pid --fork --mount-proc)"
# The tree lowlat walks: the v1 hierarchy holding cpu, else the cgroup2 mount.
M=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)
[ -n "$M" ] || M=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$M" ] || fail "no cgroup hierarchy with the cpu controller mounted"
N=lowlat-nested-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
B=$M/$N
O=$B/c0ffee0123456789
R=$(mktemp -d)
SNAP=$(mktemp --suffix .tgz)
pids=()
cleanup() {
  # SIGKILL: the init of a new PID namespace ignores signals it has no handler for.
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  # A cgroup is removable once its last process has exited: retry for a while.
  for _ in $(seq 40); do
    for d in $O/docker/0123456789abcdef $O/docker $O/init $O $B/chroot-svc $B; do
      [ -d "$d" ] && rmdir "$d" 2>/dev/null || true
    done
    [ -d "$B" ] || break
    sleep 0.05
  done
  [ -d "$B" ] && echo "WARN: could not remove $B" >&2
  rm -rf "$R" "$SNAP"
}
trap cleanup EXIT
mkdir -p "$O/init" "$O/docker/0123456789abcdef" "$B/chroot-svc"
# Start "$@" and move the launcher's child (the process in the new namespaces) into cgroup $1.
start() {
  local cg=$1; shift
  "$@" &
  local u=$! c=""
  pids+=("$u")
  for _ in $(seq 100); do c=$(pgrep -P "$u" | head -1 || true); [ -n "$c" ] && break; sleep 0.05; done
  [ -n "$c" ] || fail "no child of $*"
  pids+=("$c")
  echo "$c" > "$cg/cgroup.procs"
}
start "$O/init" unshare --pid --fork --mount sleep 120
start "$O/docker/0123456789abcdef" unshare --pid --fork --mount sleep 120
# python3 (which CI has for .ci/module-cycles.py) chroots itself: nothing to run inside $R.
start "$B/chroot-svc" unshare --mount --fork python3 -c \
  "import os, sys, time; os.chroot(sys.argv[1]); os.chdir('/'); time.sleep(120)" "$R"
chrooted=${pids[-1]}
for _ in $(seq 100); do [ "$(readlink "/proc/$chrooted/root")" = "$R" ] && break; sleep 0.05; done
[ "$(readlink "/proc/$chrooted/root")" = "$R" ] || fail "python3 did not chroot to $R"
view() { "$L" inspect --containers "$@" | grep -E "/$N/|^  (ns|nested) " | grep "$N" || true; }
live=$(view)
echo "$live"
grep -q "^  /$N/c0ffee0123456789 " <<<"$live" || fail "the outer container is not listed"
grep -q "ns /$N/c0ffee0123456789: pid .* runs in other pid, mnt namespaces" <<<"$live" \
  || fail "the outer container is not recognised by its namespaces"
grep -q "nested /$N/c0ffee0123456789: holds 1 container of its own" <<<"$live" \
  || fail "the inner container is not counted on the outer one"
grep -q "ns /$N/chroot-svc: pid .* runs in other mnt namespace than PID 1, root $R" <<<"$live" \
  || fail "the chroot is not recognised by its mount namespace and root"
if grep -q -e "/init" -e "/docker/0123456789abcdef" <<<"$live"; then
  fail "a descendant of the outer container is listed"
fi
"$L" snapshot -o "$SNAP" >/dev/null
back=$(view --root "$SNAP")
[ "$back" = "$live" ] || fail "the snapshot lists otherwise:
$back"
echo "ok: live and snapshot agree"
