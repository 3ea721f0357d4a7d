#!/usr/bin/env bash
# build.sh — build lowlat's OCI image archive without any container daemon or registry:
#   target/lowlat-image.oci.tar   (an OCI image layout in a tar; name in `--print-name`)
#
#   image/build.sh                      build the static release binary and the archive
#   image/build.sh --with-rt-tests      also put rt-tests' cyclictest and oslat in the image,
#                                       with exactly the shared libraries ldd names (also:
#                                       LOWLAT_IMAGE_RT_TESTS=1)
#   image/build.sh --print-name         print the image name (localhost/lowlat:<version>), nothing else
#   image/build.sh --binary             build only the static binary and print its path (the
#                                       RT kernel lab puts it in its initramfs)
#   image/build.sh --check-reproducible build the archive twice from the same tree (the second
#                                       time from a fresh staging dir, later) and compare sha256
#   image/build.sh --check-reproducible=full
#                                       same, but the second build also compiles lowlat again
#                                       from an empty target dir (target/image-repro)
#   image/build.sh --out FILE           write the archive elsewhere
#
# Contents (one layer): /usr/bin/lowlat (static: glibc with crt-static), /bin/sh and
# /bin/kill (busybox-static: lowlat runs `sh -c` for --load-cmd and `kill -INT` to pass a
# SIGTERM on to its measuring child in `check`), a writable /tmp and /results (mode 1777,
# the working directory), empty /proc /sys /dev mount points. See image/README.md.
#
# Reproducible: every mtime = SOURCE_DATE_EPOCH (default: the HEAD commit's time), owners
# 0:0 by number, sorted entries, gzip -n, path prefixes remapped in the binary, the git
# revision passed to the build explicitly. Same tree => byte-identical archive.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=image/oci.sh
source "$HERE/oci.sh"
log() { printf '[image %s] %s\n' "$(date +%T)" "$*"; }
die() { printf '[image] ERROR: %s\n' "$*" >&2; exit 1; }

TRIPLE=x86_64-unknown-linux-gnu
OUT=$ROOT/target/lowlat-image.oci.tar
RT_TESTS=${LOWLAT_IMAGE_RT_TESTS:-0}
MODE=build
while (($#)); do
  case $1 in
    --with-rt-tests) RT_TESTS=1 ;;
    --print-name) MODE=print-name ;;
    --binary) MODE=binary ;;
    --check-reproducible) MODE=check ;;
    --check-reproducible=full) MODE=check-full ;;
    --out) OUT=$(realpath -m "$2"); shift ;;
    -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

# The name: repository from crates/render/image-name, tag = the workspace version
# (Cargo.toml): the same string as render::default_image(), the Rust side's one definition.
VERSION=$(awk '/^\[workspace.package\]/ {p = 1; next} /^\[/ {p = 0} p && $1 == "version" {gsub(/"/, "", $3); print $3; exit}' "$ROOT/Cargo.toml")
[[ -n $VERSION ]] || die "no [workspace.package] version in Cargo.toml"
NAME=$(tr -d '[:space:]' <"$ROOT/crates/render/image-name"):$VERSION
if [[ $MODE == print-name ]]; then echo "$NAME"; exit 0; fi

# ------------------------------------------------------------------ provenance
REV=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
SHORT=${REV:0:12}
if [[ $REV != unknown ]] && ! git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null; then
  REV+=-dirty SHORT+=-dirty # tracked files differ from HEAD: say so, never hide it
fi
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)}
SOURCE=$(awk '/^\[workspace.package\]/ {p = 1; next} /^\[/ {p = 0} p && $1 == "repository" {gsub(/"/, "", $3); print $3; exit}' "$ROOT/Cargo.toml")

# ------------------------------------------------------------------ tools
need=()
command -v jq >/dev/null || need+=(jq)
# busybox-static, not Debian's dynamically linked busybox: the image has no libc for it
# (ldd exits 1 for a static binary, so read its words, not its status)
bb_ldd=$(LC_ALL=C ldd /bin/busybox 2>&1 || true)
[[ $bb_ldd == *"not a dynamic executable"* || $bb_ldd == *"statically linked"* ]] || need+=(busybox-static)
((RT_TESTS)) && ! command -v cyclictest >/dev/null && need+=(rt-tests)
if ((${#need[@]})); then
  [[ $(id -u) == 0 ]] || die "missing: ${need[*]} (apt-get install ${need[*]})"
  log "apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# ------------------------------------------------------------------ the static binary
# Own target dir: different RUSTFLAGS would otherwise invalidate the normal target/release.
build_binary() { # build_binary TARGET_DIR -> path of the binary
  local tdir=$1 cargo_home=${CARGO_HOME:-$HOME/.cargo}
  log "cargo build --release --features cluster --target $TRIPLE (static, target dir ${tdir#"$ROOT"/})" >&2
  # --remap-path-prefix: no checkout or cargo-home path in the binary, so a clone elsewhere
  # builds the same bytes. With --target, RUSTFLAGS reach only the target, not build scripts.
  (cd "$ROOT" && LOWLAT_GIT_REV=$SHORT \
    RUSTFLAGS="-C target-feature=+crt-static --remap-path-prefix=$ROOT=/lowlat --remap-path-prefix=$cargo_home=/cargo" \
    cargo build --release --locked --target "$TRIPLE" --target-dir "$tdir" -p lowlat --features cluster >&2)
  echo "$tdir/$TRIPLE/release/lowlat"
}

# ------------------------------------------------------------------ the root file system
stage() { # stage BINARY DIR
  local bin=$1 r=$2 f l m
  mkdir -p "$r"/{usr/bin,bin,tmp,results,proc,sys,dev,etc}
  # strip: the line tables help only with a debugger, and they triple the size
  strip --strip-debug -o "$r/usr/bin/lowlat" "$bin"
  chmod 0755 "$r/usr/bin/lowlat"
  install -m 0755 /bin/busybox "$r/bin/busybox"
  ln -s busybox "$r/bin/sh"
  ln -s busybox "$r/bin/kill"
  if ((RT_TESTS)); then
    for f in cyclictest oslat; do
      install -m 0755 "$(command -v "$f")" "$r/usr/bin/$f"
      # exactly the libraries ldd names, at the paths it names (the loader included)
      for l in $(ldd "$(command -v "$f")" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
        [[ -e $r$l ]] && continue
        mkdir -p "$r$(dirname "$l")"
        if [[ $l == */ld-linux* ]]; then m=0755; else m=0644; fi
        install -m "$m" "$(realpath "$l")" "$r$l"
      done
    done
  fi
  chmod 1777 "$r/tmp" "$r/results"
  # /etc exists for the runtime's bind mounts (hosts, hostname, resolv.conf); it stays empty
  find "$r" -type d ! -perm 1777 -exec chmod 0755 {} +
}

assemble() { # assemble BINARY OUT
  local bin=$1 out=$2 w config ann f rc contents="lowlat (static), busybox sh+kill"
  ((RT_TESTS)) && contents+=", rt-tests cyclictest+oslat"
  w=$(mktemp -d)
  stage "$bin" "$w/root"
  if [[ $(id -u) == 0 ]]; then # prove the binaries start inside that root
    chroot "$w/root" /usr/bin/lowlat --version >/dev/null || die "lowlat does not start in the image root"
    if ((RT_TESTS)); then # exit status 127: the loader did not find a library
      for f in cyclictest oslat; do
        rc=0; chroot "$w/root" "/usr/bin/$f" --help >/dev/null 2>&1 || rc=$?
        ((rc != 127)) || die "$f does not start in the image root (missing library?)"
      done
    fi
  fi
  ann=$(jq -cn --arg v "$VERSION" --arg r "$REV" --arg s "$SOURCE" --arg c "$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ)" \
    --arg d "$contents" '{
      "org.opencontainers.image.title": "lowlat",
      "org.opencontainers.image.description": $d,
      "org.opencontainers.image.version": $v,
      "org.opencontainers.image.revision": $r,
      "org.opencontainers.image.source": $s,
      "org.opencontainers.image.created": $c,
      "org.opencontainers.image.licenses": "Apache-2.0"}')
  config=$(jq -cn --argjson labels "$ann" '{
      Entrypoint: ["/usr/bin/lowlat"],
      Env: ["PATH=/usr/bin:/bin"],
      WorkingDir: "/results",
      Labels: $labels}')
  mkdir -p "$(dirname "$out")"
  oci_archive "$w/root" "$out" "$NAME" "$EPOCH" "$config" "$ann"
  rm -rf "$w"
}

t0=$(date +%s)
BIN=$(build_binary "$ROOT/target/image")
if [[ $MODE == binary ]]; then echo "$BIN"; exit 0; fi
assemble "$BIN" "$OUT"
log "built $NAME -> ${OUT#"$ROOT"/}: $(stat -c%s "$OUT") bytes, sha256 $(sha256sum "$OUT" | cut -c1-16)…, revision $REV ($(($(date +%s) - t0)) s)"

if [[ $MODE == check || $MODE == check-full ]]; then
  sleep 1 # a later wall-clock second: any leaked timestamp would show
  second=$(mktemp --suffix=.oci.tar)
  if [[ $MODE == check-full ]]; then
    rm -rf "$ROOT/target/image-repro"
    BIN2=$(build_binary "$ROOT/target/image-repro")
    if cmp -s "$BIN" "$BIN2"; then
      log "binary rebuilt from an empty target dir: identical"
    else
      log "binary rebuilt from an empty target dir: DIFFERS"
    fi
  else
    BIN2=$(mktemp); cp "$BIN" "$BIN2"; touch "$BIN2" # same bytes, new file, new mtime
  fi
  assemble "$BIN2" "$second"
  a=$(sha256sum "$OUT" | cut -d' ' -f1) b=$(sha256sum "$second" | cut -d' ' -f1)
  rm -f "$second"
  if [[ $MODE == check ]]; then rm -f "$BIN2"; else rm -rf "$ROOT/target/image-repro"; fi
  if [[ $a == "$b" ]]; then
    log "reproducible: both builds sha256 $a"
  else
    die "NOT reproducible: $a vs $b"
  fi
fi
