#!/bin/sh
# Regenerate testdata/nto-oracle/cases/ from the real tools (see tools/regenerate.py and
# testdata/nto-oracle/README.md): NTO's PPC, `render` and webhook checks built from an NTO clone,
# TuneD's own code at the commit NTO pins. Needs python3 with PyYAML; builds lowlat first.
#   ORACLE_BIN=/path/bin TUNED_SRC=/path/tuned NTO_SRC=/path/nto testdata/nto-oracle/regenerate.sh [CASE...]
set -eu
cd "$(dirname "$0")/../.."
: "${ORACLE_BIN:?set ORACLE_BIN to the directory holding ppc, cluster-node-tuning-operator, pp-validate}"
: "${TUNED_SRC:?set TUNED_SRC to a redhat-performance/tuned tree at NTO's pinned commit}"
cargo build -q -p lowlat
exec python3 testdata/nto-oracle/tools/regenerate.py "$@"
