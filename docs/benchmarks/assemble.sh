#!/usr/bin/env bash
# Rebuild docs/BENCHMARKS.md from the per-area tables in docs/benchmarks/*.md (each area's
# bench script writes or documents its own page; this file is the one place to read them).
set -euo pipefail
cd "$(dirname "$0")/.."
{
  cat <<'HEAD'
# Benchmarks

The latest tables, per area, with the machine each ran on. Every comparison against a peer
tool (cyclictest, oslat, fio, the shell) is **side by side in the same run, interleaved**, and
reported as ratios: the machine these ran on is a 2-vCPU Firecracker **VM** (KVM guest, AMD
EPYC, kernel 6.18 `PREEMPT_DYNAMIC`, not PREEMPT_RT) whose hypervisor adds millisecond stalls
no guest tuning removes, and it was shared with other builds while these ran. Absolute
latencies here say nothing about bare metal; ratios and shapes do.

Scripts live in `bench/`; each section names the command that produced it.

| area | page | scripts |
|---|---|---|
| inspect speed | [inspect](benchmarks/inspect.md) | `bench/inspect.sh` |
| timer / noise fidelity, cost, memory | [measure](benchmarks/measure.md) | `bench/timer-vs-cyclictest.sh`, `bench/noise-vs-oslat.sh`, `bench/injection-vs-cyclictest.sh`, `bench/rss.sh` |
| fsync fidelity, OS-update matrix, etcd | [storage](benchmarks/storage.md) | `bench/fsync-vs-fio.sh`, `bench/fsync-matrix.sh`, `bench/etcd-vs-probe.sh` |
| timer latency before/after `apply` | [tune](benchmarks/tune.md) | `bench/apply-before-after.sh` |

HEAD
  for area in inspect measure storage tune; do
    f="benchmarks/$area.md"
    [ -f "$f" ] || continue
    echo
    # Shift headings one level down so each page becomes a section.
    awk '/^```/ { fence = !fence } !fence && /^#+ / { $0 = "#" $0 } { print }' "$f"
  done
} > BENCHMARKS.md
