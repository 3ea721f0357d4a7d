#!/usr/bin/env python3
"""Time a shell command N times; print `median_wall min_wall max_wall median_cpu` in ms.

    bench/inspect-time.py 21 lowlat inspect --json

The command runs through `sh -c` with output discarded, after one uncounted warm-up run.
CPU time is user+system of the command (and its children) per run: on a shared machine it
moves much less than wall time when other work competes for the cores.
"""
import resource
import statistics
import subprocess
import sys
import time

n = int(sys.argv[1])
cmd = " ".join(sys.argv[2:])
subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall, cpu = [], []
for _ in range(n):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall.append((time.perf_counter() - t) * 1000)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) * 1000)
print(f"{statistics.median(wall):.1f} {min(wall):.1f} {max(wall):.1f} {statistics.median(cpu):.1f}")
