#!/bin/sh
# A boot with a plan: verify as booted, nothing else.
. /lab/lib.sh
step verify-booted lowlat verify --plan /job/plan.yaml --json /out/verify-booted.json
exit 0
