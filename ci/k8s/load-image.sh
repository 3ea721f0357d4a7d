#!/usr/bin/env bash
# load-image.sh — import an OCI image archive into the containerd of every running node
# (namespace k8s.io, the kubelet's), so that pods with imagePullPolicy: Never find it.
#
#   ci/k8s/load-image.sh [ARCHIVE]     (default: target/lowlat-image.oci.tar from image/build.sh)
#
# Re-importing the same archive is harmless; importing a new build under the same name moves
# the name to the new image (running pods keep the old one).
set -euo pipefail
# shellcheck source=ci/k8s/lib.sh
source "$(dirname "$0")/lib.sh"

archive=${1:-${LOWLAT_IMAGE_ARCHIVE:-$REPO_ROOT/target/lowlat-image.oci.tar}}
[[ -f $archive ]] || die "$archive not found (build it with image/build.sh)"
name=$(tar -xOf "$archive" index.json | jq -r '.manifests[0].annotations["io.containerd.image.name"]')
digest=$(tar -xOf "$archive" index.json | jq -r '.manifests[0].digest')
n=0
while read -r sock; do
  [[ -n $sock ]] || continue
  ctr --address "$sock" version >/dev/null 2>&1 || continue
  # skip when this exact manifest is already there under that name
  if ctr --address "$sock" -n k8s.io images ls | awk -v n="$name" -v d="$digest" '$1 == n && $3 == d {f = 1} END {exit !f}'; then
    :
  else
    ctr --address "$sock" -n k8s.io images import "$archive" >/dev/null
  fi
  n=$((n + 1))
done < <(node_sockets)
((n > 0)) || die "no running node containerd under $RUNDIR (run ci/k8s/up.sh)"
log "$name ($digest) present in $n node containerd(s)"
