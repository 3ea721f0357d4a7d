#!/usr/bin/env python3
"""Shared helpers for the lowlat-vs-rt-tests benchmarks: read lowlat result JSON files
(lowlat's own, or rt-tests output imported with `lowlat import`), re-bin every histogram to
1 us buckets (cyclictest's and oslat's resolution) and compute the same percentiles for
both sides with one method, so ratios compare measurements, not bucketing."""
import json, sys, statistics

def load(path):
    with open(path) as f:
        return json.load(f)

def us_hist(thread):
    """{floor(us): count} plus overflow from a result thread's histogram."""
    h = {}
    for b in thread["histogram"]["buckets"]:
        k = b["lo_ns"] // 1000
        h[k] = h.get(k, 0) + b["count"]
    return h, thread["histogram"]["overflow"]

def quantile(h, overflow, q, maxv):
    total = sum(h.values()) + overflow
    if total == 0:
        return 0.0
    rank = max(1, int(-(-q * total // 1)))
    seen = 0
    for k in sorted(h):
        seen += h[k]
        if seen >= rank:
            return float(k)  # bucket [k, k+1) us, reported by its lower bound like cyclictest's truncation
    return maxv

def timer_metrics(path):
    t = load(path)["threads"][0]
    h, of = us_hist(t)
    mx = t["max_ns"] / 1000
    return {
        "count": t["count"],
        "avg": t["avg_ns"] / 1000,
        "p50": quantile(h, of, 0.50, mx),
        "p90": quantile(h, of, 0.90, mx),
        "p99": quantile(h, of, 0.99, mx),
        "p99.9": quantile(h, of, 0.999, mx),
        "max": mx,
        ">=150us": sum(c for k, c in h.items() if k >= 150) + of,
    }

def noise_metrics(path, oslat_last=None):
    d = load(path)
    t = d["threads"][0]
    h, of = us_hist(t)
    secs = max(d.get("duration_ns", 0) / 1e9, 1e-9)
    def band(lo, hi):
        return sum(c for k, c in h.items() if lo <= k < hi)
    # oslat's last bucket (>= 31 us) holds every overflow: group ours the same way.
    top = band(31, 10**12) + of
    return {
        "ns/iter": secs * 1e9 / max(t["count"], 1),
        "samples/s": t["count"] / secs,
        "1-2us/s": band(1, 2) / secs,
        "2-5us/s": band(2, 5) / secs,
        "5-10us/s": band(5, 10) / secs,
        "10-31us/s": band(10, 31) / secs,
        ">=31us/s": top / secs,
        "max": t["max_ns"] / 1000,
    }

# Noise metrics held to the ±15 % agreement of issue 12 (the band counts per second).
BANDS = ("1-2us/s", "2-5us/s", "5-10us/s", "10-31us/s", ">=31us/s")

def report(kind, a_files, b_files, a_name, b_name):
    f = timer_metrics if kind == "timer" else noise_metrics
    A = [f(p) for p in a_files]
    B = [f(p) for p in b_files]
    keys = list(A[0].keys())
    print(f"{'metric':<12} {a_name + ' (median)':>20} {b_name + ' (median)':>20} {'ratio B/A':>10} {'±15%':>5}   per round A | B")
    for k in keys:
        a = statistics.median(x[k] for x in A)
        b = statistics.median(x[k] for x in B)
        r = (b / a) if a else float("nan")
        ok = ("yes" if abs(r - 1) <= 0.15 else "NO") if k in BANDS else ""
        rounds = " ".join(f"{x[k]:.1f}" for x in A) + " | " + " ".join(f"{x[k]:.1f}" for x in B)
        print(f"{k:<12} {a:>20.2f} {b:>20.2f} {r:>10.3f} {ok:>5}   {rounds}")

def irq_counts(path, cpu):
    """{interrupt line: count on `cpu`} from a /proc/interrupts capture."""
    with open(path) as f:
        lines = f.read().splitlines()
    ncpu = len(lines[0].split())
    out = {}
    for line in lines[1:]:
        parts = line.split()
        if not parts or not parts[0].endswith(":"):
            continue
        cols = parts[1:1 + ncpu]
        if len(cols) <= cpu or not cols[cpu].isdigit():
            continue
        name = parts[0][:-1]
        if name.isdigit():
            name += " " + parts[-1]  # numbered lines: add the device name
        out[name] = int(cols[cpu])
    return out

def irq_report(cpu, duration, outdir, kind="irq"):
    """Median interrupts per second on the measured CPU while each tool ran."""
    import glob, os
    rates = {"os": [], "ll": []}
    for tool in rates:
        for before in sorted(glob.glob(os.path.join(outdir, f"{tool}-*.{kind}0"))):
            a = irq_counts(before, cpu)
            b = irq_counts(before[:-1] + "1", cpu)
            # Per second of the tool's own wall time when the script recorded it (oslat runs
            # a second longer than its -D: it pre-heats first), else of the nominal duration.
            stem = before[: -len(kind) - 2]  # ".irq0" off
            try:
                with open(stem + ".t0") as f0, open(stem + ".t1") as f1:
                    secs = float(f1.read()) - float(f0.read())
            except OSError:
                secs = duration
            rates[tool].append({k: (b.get(k, 0) - a[k]) / secs for k in a})
    keys = sorted({k for r in rates["os"] + rates["ll"] for k, v in r.items() if v > 0})
    print(f"{kind + ' on CPU ' + str(cpu) + '/s':<28} {'oslat (median)':>15} {'lowlat (median)':>16}   per round A | B")
    for k in keys:
        a = statistics.median(r.get(k, 0) for r in rates["os"])
        b = statistics.median(r.get(k, 0) for r in rates["ll"])
        rounds = " ".join(f"{r.get(k, 0):.1f}" for r in rates["os"]) + " | " + " ".join(f"{r.get(k, 0):.1f}" for r in rates["ll"])
        print(f"{k:<28} {a:>15.2f} {b:>16.2f}   {rounds}")

if __name__ == "__main__":
    if sys.argv[1] == "irq":
        irq_report(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "irq")
        sys.exit(0)
    kind, a_name, b_name = sys.argv[1], sys.argv[2], sys.argv[3]
    files = sys.argv[4:]
    half = len(files) // 2
    report(kind, files[:half], files[half:], a_name, b_name)
