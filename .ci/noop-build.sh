#!/usr/bin/env bash
# noop-build.sh [PROFILE_ARGS...] — prove that a second `cargo build` does nothing (issue 23):
# lowlat's build script (crates/cli/build.rs: the git revision for --version) must watch only paths that exist (cargo reruns a build script, and
# re-links the binary, on every build when a watched path is missing), and a build right after
# a build must compile nothing. Usage: .ci/noop-build.sh [--release]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=debug
[[ ${1:-} == --release ]] && profile=release
cargo build --locked "$@" -p lowlat >/dev/null 2>&1 || cargo build --locked "$@" -p lowlat
t0=$(date +%s.%N)
log=$(cargo build --locked "$@" -p lowlat -v 2>&1)
t1=$(date +%s.%N)
if grep -Eq '^ *(Compiling|Running) ' <<<"$log"; then
    grep -E '^ *(Compiling|Running|Dirty) ' <<<"$log" >&2
    echo "noop-build: a second cargo build ($profile) did work (above)" >&2
    exit 1
fi
# every path the build script watches exists (relative paths are from crates/cli)
bad=0
outs=(target/"$profile"/build/cli-*/output)
[[ -e ${outs[0]} ]] || { echo "noop-build: no build script output under target/$profile/build/cli-*" >&2; exit 1; }
for out in "${outs[@]}"; do
    while IFS= read -r p; do
        [[ $p == /* ]] || p=crates/cli/$p
        if [[ ! -e $p ]]; then
            echo "noop-build: $out watches a missing path: $p (cargo would rerun it every build)" >&2
            bad=1
        fi
    done < <(sed -n 's/^cargo:rerun-if-changed=//p' "$out")
done
((bad == 0)) || exit 1
awk -v a="$t0" -v b="$t1" -v p="$profile" 'BEGIN { printf "noop-build: second cargo build (%s) did nothing, %.2f s\n", p, b - a }'
