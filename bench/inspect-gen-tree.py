#!/usr/bin/env python3
"""Generate a synthetic host tree (proc/ + sys/) for benchmarking `lowlat inspect --root`.

    bench/inspect-gen-tree.py OUTDIR --cpus 512 --tasks 50000 --irqs 2000

Layout and file formats follow the real kernel files lowlat reads (topology, caches,
cpufreq, cpuidle, NUMA nodes, /proc/interrupts with LOC/RES/CAL/TLB rows, /proc/irq/N,
/proc/PID/task/TID/{stat,status}, cgroup, cmdline). Two threads per core, two NUMA nodes,
CPUs 2..cpus/8 isolated. Deterministic (no randomness) so runs are comparable.
"""
import argparse
import os


def w(root, rel, text):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)


def cpulist(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--cpus", type=int, default=512)
    ap.add_argument("--tasks", type=int, default=50000)
    ap.add_argument("--irqs", type=int, default=2000)
    ap.add_argument("--threads-per-process", type=int, default=5)
    a = ap.parse_args()
    r, n = a.out, a.cpus
    half = n // 2
    iso = list(range(2, max(3, n // 8)))
    sib = lambda c: [c % half, c % half + half]
    node = lambda c: c % 2
    S = "sys/devices/system"
    allc = cpulist(range(n))
    for f, v in [("possible", allc), ("present", allc), ("online", allc), ("offline", ""),
                 ("isolated", cpulist(iso)), ("nohz_full", cpulist(iso))]:
        w(r, f"{S}/cpu/{f}", v + "\n")
    w(r, f"{S}/cpu/smt/control", "on\n")
    w(r, f"{S}/cpu/smt/active", "1\n")
    w(r, f"{S}/cpu/cpuidle/current_driver", "intel_idle\n")
    w(r, f"{S}/cpu/intel_pstate/status", "active\n")
    cpuinfo = []
    for c in range(n):
        b = f"{S}/cpu/cpu{c}"
        w(r, f"{b}/online", "1\n")
        t = f"{b}/topology"
        w(r, f"{t}/core_id", f"{(c % half) // 2}\n")
        w(r, f"{t}/physical_package_id", f"{node(c)}\n")
        w(r, f"{t}/die_id", "0\n")
        w(r, f"{t}/thread_siblings_list", cpulist(sib(c)) + "\n")
        for i, (lvl, typ, size, shared) in enumerate([(1, "Data", "48K", sib(c)), (1, "Instruction", "32K", sib(c)),
                                                      (2, "Unified", "2048K", sib(c)),
                                                      (3, "Unified", "105M", [x for x in range(n) if node(x) == node(c)])]):
            ci = f"{b}/cache/index{i}"
            w(r, f"{ci}/level", f"{lvl}\n")
            w(r, f"{ci}/type", typ + "\n")
            w(r, f"{ci}/size", size + "\n")
            w(r, f"{ci}/shared_cpu_list", cpulist(shared) + "\n")
            w(r, f"{ci}/id", f"{c % half if lvl < 3 else node(c)}\n")
        w(r, f"{b}/cpufreq/scaling_driver", "intel_pstate\n")
        w(r, f"{b}/cpufreq/scaling_governor", ("performance" if c in iso else "powersave") + "\n")
        w(r, f"{b}/cpufreq/scaling_min_freq", "800000\n")
        w(r, f"{b}/cpufreq/scaling_max_freq", "3500000\n")
        w(r, f"{b}/power/pm_qos_resume_latency_us", "0\n")
        for i, (nm, lat) in enumerate([("POLL", 0), ("C1", 2), ("C1E", 10), ("C6", 133)]):
            s = f"{b}/cpuidle/state{i}"
            for f, v in [("name", nm), ("desc", nm), ("latency", lat), ("residency", lat * 3), ("disable", 0),
                         ("usage", 1000 + c), ("time", 99999)]:
                w(r, f"{s}/{f}", f"{v}\n")
        cpuinfo.append(f"processor\t: {c}\nvendor_id\t: GenuineIntel\nmodel name\t: Synthetic Xeon\n"
                       f"physical id\t: {node(c)}\ncore id\t\t: {(c % half) // 2}\n"
                       "flags\t\t: fpu tsc constant_tsc nonstop_tsc ht tsc_deadline_timer\n\n")
    w(r, "proc/cpuinfo", "".join(cpuinfo))
    for k in range(2):
        b = f"{S}/node/node{k}"
        w(r, f"{b}/cpulist", cpulist([c for c in range(n) if node(c) == k]) + "\n")
        w(r, f"{b}/distance", "10 21\n" if k == 0 else "21 10\n")
        w(r, f"{b}/meminfo", f"Node {k} MemTotal:       263000000 kB\nNode {k} MemFree:        200000000 kB\n")
    # Interrupts.
    hdr = "      " + "".join(f"{'CPU%d' % c:>11}" for c in range(n)) + "\n"
    rows = []
    for i in range(a.irqs):
        irq = 24 + i
        tgt = (i * 7) % n
        counts = "".join(f"{(1000 + i) if c == tgt else 0:>11}" for c in range(n))
        rows.append(f"{irq:>5}:{counts}  IR-PCI-MSI {524288 + i}-edge      eth0-TxRx-{i}\n")
        p = f"proc/irq/{irq}"
        w(r, f"{p}/smp_affinity_list", f"{tgt}\n" if i % 3 else allc + "\n")
        w(r, f"{p}/effective_affinity_list", f"{tgt}\n")
        w(r, f"{p}/node", f"{node(tgt)}\n")
    for name, desc in [("NMI", "Non-maskable interrupts"), ("LOC", "Local timer interrupts"),
                       ("RES", "Rescheduling interrupts"), ("CAL", "Function call interrupts"),
                       ("TLB", "TLB shootdowns")]:
        rows.append(f"{name:>5}:" + "".join(f"{1000 * (c + 1):>11}" for c in range(n)) + f"   {desc}\n")
    rows.append("  ERR:          0\n  MIS:          0\n")
    w(r, "proc/interrupts", hdr + "".join(rows))
    w(r, "proc/softirqs", "      " + "".join(f"{'CPU%d' % c:>11}" for c in range(n)) + "\n" +
      "".join(f"{k:>10}:" + "".join(f"{c * 10:>11}" for c in range(n)) + "\n" for k in ["HI", "TIMER", "NET_TX", "NET_RX", "SCHED", "RCU"]))
    words = max(1, (n + 31) // 32)
    w(r, "proc/irq/default_smp_affinity", ",".join(["ffffffff"] * words) + "\n")
    # Kernel, memory, sysctls.
    w(r, "proc/cmdline", f"BOOT_IMAGE=/vmlinuz-6.1.0-rt-amd64 isolcpus=managed_irq,domain,{cpulist(iso)} "
                         f"nohz_full={cpulist(iso)} rcu_nocbs={cpulist(iso)} irqaffinity=0-1 quiet\n")
    w(r, "proc/sys/kernel/osrelease", "6.1.0-rt-amd64\n")
    w(r, "proc/sys/kernel/version", "#1 SMP PREEMPT_RT Debian 6.1.0\n")
    w(r, "proc/sys/kernel/hostname", f"synthetic-{n}\n")
    w(r, "proc/meminfo", "MemTotal:       526000000 kB\nMemAvailable:   400000000 kB\nHugepagesize:       2048 kB\n")
    w(r, "proc/sys/kernel/sched_rt_runtime_us", "950000\n")
    w(r, "proc/sys/kernel/sched_rt_period_us", "1000000\n")
    w(r, "sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n")
    # Tasks: per-CPU kthreads first, then user processes with threads.
    pid, made = 1, 0
    procs = []
    for c in range(n):
        for comm in ("migration", "ksoftirqd", "cpuhp", "rcuc"):
            if made >= a.tasks:
                break
            procs.append((pid, [pid], f"{comm}/{c}", True, str(c), c))
            pid += 1
            made += 1
    while made < a.tasks:
        k = min(a.threads_per_process, a.tasks - made)
        procs.append((pid, list(range(pid, pid + k)), "app", False, cpulist([0, 1] + list(range(n // 8, n))), pid % n))
        pid += k
        made += k
    for p, tids, comm, kth, allowed, cpu in procs:
        w(r, f"proc/{p}/cgroup", "0::/system.slice/app.service\n")
        w(r, f"proc/{p}/cmdline", "" if kth else f"/usr/bin/app\0--id\0{p}\0")
        flags = 0x04208040 if kth else 0x00400100
        pol, prio = (1, 99) if comm.startswith("migration") else (0, 0)
        for t in tids:
            stat = (f"{t} ({comm}) S 1 {p} {p} 0 -1 {flags} 0 0 0 0 10 5 0 0 20 0 {len(tids)} 0 {1000 + t} "
                    f"0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 {cpu} {prio} {pol} 0 0 0 0 0 0 0 0 0 0 0\n")
            w(r, f"proc/{p}/task/{t}/stat", stat)
            w(r, f"proc/{p}/task/{t}/status", f"Name:\t{comm}\nCpus_allowed_list:\t{allowed}\n"
                                              "voluntary_ctxt_switches:\t10\nnonvoluntary_ctxt_switches:\t1\n")
    print(f"{r}: {n} CPUs, {made} tasks in {len(procs)} processes, {a.irqs} IRQs")


if __name__ == "__main__":
    main()
