# shellcheck shell=bash
# oci.sh — assemble a one-layer OCI image archive from a directory, reproducibly, with no
# container daemon and no registry. Sourced by image/build.sh and ci/k8s/build.sh.
#
#   oci_archive ROOTFS OUT NAME EPOCH CONFIG_JSON [ANNOTATIONS_JSON]
#     ROOTFS            directory that becomes the image's only layer (owners/modes as staged)
#     OUT               output .tar: an OCI image layout (oci-layout, index.json, blobs/)
#     NAME              full image name, e.g. localhost/lowlat:0.1.0 — written as both
#                       io.containerd.image.name (ctr import) and org.opencontainers.image.ref.name
#     EPOCH             seconds since 1970: every mtime in the layer and in the outer tar, and
#                       the config's "created" (use SOURCE_DATE_EPOCH / the commit time)
#     CONFIG_JSON       the image config's "config" object (Entrypoint, Env, WorkingDir, Labels)
#     ANNOTATIONS_JSON  annotations for the manifest and the index entry (default {})
#
# Reproducible by construction: entries sorted by name, mtimes = EPOCH, owner/group 0 by
# number, no atime/ctime/xattrs, gzip without name or timestamp (-n), JSON written by jq
# with a fixed key order. Same inputs => byte-identical archive.
# Needs: GNU tar, gzip, sha256sum, jq.

_oci_blob() { # _oci_blob DIR FILE -> moves FILE to DIR/blobs/sha256/<digest>, prints "digest size"
  local d s
  d=$(sha256sum "$2" | cut -d' ' -f1); s=$(stat -c%s "$2")
  mv "$2" "$1/blobs/sha256/$d"
  echo "$d $s"
}

_oci_tar() { # _oci_tar EPOCH DIR OUT ENTRIES... : the one deterministic tar invocation
  local epoch=$1 dir=$2 out=$3; shift 3
  LC_ALL=C tar --format=gnu --sort=name --mtime="@$epoch" \
    --owner=0 --group=0 --numeric-owner --no-acls --no-xattrs --no-selinux \
    -C "$dir" -cf "$out" "$@"
}

oci_archive() {
  local root=$1 out=$2 name=$3 epoch=$4 config=$5 annotations=${6:-'{}'}
  local w created diff layer_d layer_s cfg_d cfg_s man_d man_s
  w=$(mktemp -d)
  mkdir -p "$w/blobs/sha256"
  created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
  # The layer. GNU tar format: no pax headers, so no atime/ctime records.
  _oci_tar "$epoch" "$root" "$w/layer.tar" .
  diff=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
  gzip -n -9 <"$w/layer.tar" >"$w/layer.tar.gz"; rm -f "$w/layer.tar"
  read -r layer_d layer_s < <(_oci_blob "$w" "$w/layer.tar.gz")
  jq -cn --arg created "$created" --arg diff "sha256:$diff" --argjson config "$config" '{
      architecture: "amd64", os: "linux", created: $created, config: $config,
      rootfs: {type: "layers", diff_ids: [$diff]},
      history: [{created: $created, created_by: "lowlat image/oci.sh"}]
    }' >"$w/config.json"
  read -r cfg_d cfg_s < <(_oci_blob "$w" "$w/config.json")
  jq -cn --arg cd "sha256:$cfg_d" --argjson cs "$cfg_s" --arg ld "sha256:$layer_d" \
    --argjson ls "$layer_s" --argjson ann "$annotations" '{
      schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs},
      layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: $ld, size: $ls}]
    } + (if $ann == {} then {} else {annotations: $ann} end)' >"$w/manifest.json"
  read -r man_d man_s < <(_oci_blob "$w" "$w/manifest.json")
  jq -cn --arg md "sha256:$man_d" --argjson ms "$man_s" --arg name "$name" --argjson ann "$annotations" '{
      schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $md, size: $ms,
        platform: {architecture: "amd64", os: "linux"},
        annotations: ($ann + {"io.containerd.image.name": $name,
                              "org.opencontainers.image.ref.name": $name})}]
    }' >"$w/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$w/oci-layout"
  # outer archive: oci-layout first (some readers sniff it), then index.json, then blobs
  chmod -R u=rwX,go=rX "$w"
  _oci_tar "$epoch" "$w" "$out.tmp" oci-layout index.json blobs
  mv "$out.tmp" "$out"
  rm -rf "$w"
  # for callers that want to print them
  # shellcheck disable=SC2034
  OCI_MANIFEST_DIGEST=sha256:$man_d OCI_CONFIG_DIGEST=sha256:$cfg_d
}
