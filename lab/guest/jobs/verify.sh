#!/bin/sh
# A boot with a plan: verify as booted; then `lowlat check` with no plan, which on a host booted
# with isolation must judge that isolation (not a default plan of its own). Nothing is applied.
. /lab/lib.sh
step verify-booted lowlat verify --plan /job/plan.yaml --json /out/verify-booted.json
step check-own lowlat check --skip timer,noise,fsync --duration 2s --out /out/check
exit 0
