#!/usr/bin/env python3
"""Time a shell command N times and print `median min max` in milliseconds.

    bench/inspect-time.py 21 lowlat inspect --json

The command runs through `sh -c`, output discarded; one warm-up run is not counted.
"""
import statistics
import subprocess
import sys
import time

n = int(sys.argv[1])
cmd = " ".join(sys.argv[2:])
subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
ts = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    ts.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(ts):.1f} {min(ts):.1f} {max(ts):.1f}")
