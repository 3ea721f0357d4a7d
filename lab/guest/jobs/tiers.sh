#!/bin/sh
# A boot with a plan (/job/plan.yaml): verify as booted, then the runtime tier round trip —
# apply, verify, revert — with the state of every file the runtime tier may write dumped
# before apply, after apply and after revert.
. /lab/lib.sh
step verify-booted lowlat verify --plan /job/plan.yaml --json /out/verify-booted.json
step snapshot-booted lowlat snapshot -o /out/snapshot-booted.tgz
dump_state /out/state-before.txt
step apply lowlat apply --plan /job/plan.yaml --move-tasks
dump_state /out/state-applied.txt
step verify-applied lowlat verify --plan /job/plan.yaml --json /out/verify-applied.json
step status-applied lowlat status --json /out/status-applied.json
step snapshot-applied lowlat snapshot -o /out/snapshot-applied.tgz
cp /var/lib/lowlat/journal.jsonl /out/journal.jsonl 2>/dev/null
step revert lowlat revert
step status-reverted lowlat status --json /out/status-reverted.json
dump_state /out/state-reverted.txt
[ -f /job/more.sh ] && sh /job/more.sh
exit 0
