#!/usr/bin/env python3
"""Evaluate a Tuned CR the way the NTO operand's TuneD would on a given node, offline, with
TuneD's own Python code (profile locator, loader, merger, variables and built-in functions of
the TuneD commit NTO pins), so that the *effective* settings can be compared:

  - the boot command line TuneD computes (NTO turns it into the `50-nto-<pool>` MachineConfig),
    exactly as plugin_bootloader._get_effective_options() concatenates the cmdline* options,
    then variable/function expansion;
  - every other unit's options after inheritance and expansion (sysctl, cpu, irqbalance,
    scheduler, systemd, service, vm, sysfs …).

Host-dependent functions read the node's must-gather sysinfo.tgz instead of this machine:
/proc and /sys reads are redirected into it (cpu online/present synthesised from cpuN dirs),
`uname -r` answers an RT or non-RT kernel release, `lscpu` is synthesised from /proc/cpuinfo,
/sys/devices/cpu/caps/pmu_name (not in sysinfo) from the CPU model (see PMU_BY_MODEL).
Nothing is written to the host: exec'd commands are answered by stubs.

  TUNED_SRC=… python3 tuned_eval.py --tuned CR.yaml [--tuned CR2.yaml] --sysinfo sysinfo.tgz \
      [--rt] [--pool worker-cnf] [--profile NAME] [--json OUT.json]
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile

import yaml

TUNED_SRC = os.environ.get("TUNED_SRC", "")
if not TUNED_SRC or not os.path.isdir(os.path.join(TUNED_SRC, "tuned")):
    sys.exit("set TUNED_SRC to a redhat-performance/tuned checkout")
sys.path.insert(0, TUNED_SRC)

import tuned.consts as consts  # noqa: E402
import tuned.logs  # noqa: E402
from tuned.utils.commands import commands  # noqa: E402

# kernel perf's pmu_name by Intel family-6 model (arch/x86/events/intel/core.c); TuneD's
# intel_recommended_pstate returns `disable` for sandybridge..skylake (and for ""), else `active`.
PMU_BY_MODEL = {
    42: "sandybridge", 45: "sandybridge", 58: "ivybridge", 62: "ivybridge",
    60: "haswell", 63: "haswell", 69: "haswell", 70: "haswell",
    61: "broadwell", 71: "broadwell", 79: "broadwell", 86: "broadwell",
    78: "skylake", 94: "skylake", 85: "skylake", 142: "skylake", 158: "skylake", 165: "skylake", 166: "skylake",
    106: "icelake", 108: "icelake", 125: "icelake", 126: "icelake",
    143: "sapphire_rapids", 207: "sapphire_rapids", 173: "granite_rapids", 174: "granite_rapids",
    151: "alderlake_hybrid", 154: "alderlake_hybrid", 183: "raptorlake_hybrid",
}

STATE = {"root": None, "rt": False, "pmu": None}


def _redirect(path):
    root = STATE["root"]
    if root and (path.startswith("/sys/") or path.startswith("/proc/")):
        return os.path.join(root, path.lstrip("/"))
    return path


_orig_read = commands.read_file


def _read_file(self, f, err_ret="", no_error=False):
    if f == "/sys/devices/cpu/caps/pmu_name":
        return (STATE["pmu"] or "") + "\n"
    if f.startswith("/etc/tuned/") and f.endswith("-variables.conf"):
        # the RPM's /etc/tuned/cpu-partitioning-variables.conf, as on an NTO node
        p = os.path.join(TUNED_SRC, "profiles", "cpu-partitioning", os.path.basename(f))
        return _orig_read(self, p, err_ret, True) if os.path.exists(p) else err_ret
    return _orig_read(self, _redirect(f), err_ret, True)


def _execute(self, args, shell=False, cwd=None, env={}, no_errors=[], return_err=False):
    if isinstance(args, str):
        args = args.split()
    prog = os.path.basename(args[0]) if args else ""
    out = ""
    if prog == "uname":
        out = "5.14.0-570.el9_6.x86_64+rt\n" if STATE["rt"] else "5.14.0-570.el9_6.x86_64\n"
        out = out.replace("+rt", ".rt") if STATE["rt"] else out
    elif prog == "lscpu":
        out = STATE["lscpu"]
    elif prog == "nproc":
        out = str(STATE["ncpu"]) + "\n"
    elif prog == "mktemp":
        out = "/tmp/tuned.XXXXXX\n"
    elif prog == "virt-what":
        out = ""
    else:
        out = ""
    if return_err:
        return 0, out, ""
    return 0, out


commands.read_file = _read_file
commands.execute = _execute

from tuned.profiles.factory import Factory  # noqa: E402
from tuned.profiles.loader import Loader  # noqa: E402
from tuned.profiles.locator import Locator  # noqa: E402
from tuned.profiles.merger import Merger  # noqa: E402
from tuned.profiles.variables import Variables  # noqa: E402
import tuned.profiles.functions.function_calc_isolated_cores as _fcic  # noqa: E402


def setup_node(sysinfo, rt, pmu=None):
    d = tempfile.mkdtemp(prefix="tuned-eval-")
    with tarfile.open(sysinfo) as t:
        members = [m for m in t.getmembers() if m.name.startswith(("proc/cpuinfo", "proc/cmdline", "sys/devices/system/cpu/", "sys/devices/system/node/"))
                   and not m.issym() and not m.islnk()]
        t.extractall(d, members=members)
    cpus = sorted(int(os.path.basename(p)[3:]) for p in glob.glob(os.path.join(d, "sys/devices/system/cpu/cpu[0-9]*")))
    os.makedirs(os.path.join(d, "sys/devices/system/cpu"), exist_ok=True)

    def fmt(c):
        return "%d-%d" % (c[0], c[-1]) if c and c == list(range(c[0], c[-1] + 1)) else ",".join(map(str, c))
    for n in ("online", "present", "possible"):
        with open(os.path.join(d, "sys/devices/system/cpu", n), "w") as f:
            f.write(fmt(cpus) + "\n")
    cpuinfo = open(os.path.join(d, "proc/cpuinfo")).read()
    vendor = re.search(r"vendor_id\s*:\s*(\S+)", cpuinfo)
    vendor = vendor.group(1) if vendor else ""
    model = re.search(r"^model\s*:\s*(\d+)", cpuinfo, re.M)
    model = int(model.group(1)) if model else -1
    mname = re.search(r"model name\s*:\s*(.*)", cpuinfo)
    STATE.update(root=d, rt=rt, ncpu=len(cpus), cpuinfo=cpuinfo,
                 uname="Linux node 5.14.0-570.el9_6.x86_64%s #1 SMP x86_64" % (".rt" if rt else ""),
                 pmu=pmu if pmu is not None else (PMU_BY_MODEL.get(model, "") if vendor == "GenuineIntel" else ""),
                 lscpu="Architecture:        x86_64\nVendor ID:           %s\nModel:               %d\nModel name:          %s\n"
                 % (vendor, model, mname.group(1) if mname else ""))
    _fcic.consts.SYSFS_CPUS_PATH = os.path.join(d, "sys/devices/system/cpu")
    return {"cpus": len(cpus), "vendor": vendor, "model": model, "pmu_name": STATE["pmu"],
            "model_name": mname.group(1) if mname else ""}


def bootloader_cmdline(options):
    """plugin_bootloader._get_effective_options(), cmdline part (TuneD 2.24)."""
    cmdline = ""
    for key in options:
        if not str(key).startswith("cmdline"):
            continue
        val = options[key]
        if val is None or val == "":
            continue
        op, op1, vals = val[0], val[1:2], val[1:].strip()
        if op == "+" or (op == "\\" and op1 in ["\\", "+", "-"]):
            if vals != "":
                cmdline += " " + vals
        elif op == "-":
            if vals != "":
                for p in vals.split():
                    cmdline = re.sub(r"(\A|\s)" + re.escape(p) + r"(?=\Z|\s)", r"", cmdline)
        else:
            cmdline += " " + val
    return cmdline.strip()


def tuned_docs(paths):
    docs = []
    for p in paths:
        with open(p) as f:
            for d in yaml.safe_load_all(f):
                if d and d.get("kind") == "Tuned":
                    docs.append(d)
    return docs


def recommended(docs, pool):
    best = None
    for d in docs:
        for r in d.get("spec", {}).get("recommend", []) or []:
            labels = r.get("machineConfigLabels") or {}
            if pool and labels and pool not in labels.values():
                continue
            pr = r.get("priority", 1 << 30)
            if best is None or pr < best[0]:
                best = (pr, r.get("profile"), labels, r.get("operand"))
    return best


def evaluate(tuned_paths, sysinfo, rt, pool=None, profile=None, pmu=None):
    node = setup_node(sysinfo, rt, pmu)
    docs = tuned_docs(tuned_paths)
    rec = recommended(docs, pool)
    name = profile or (rec[1] if rec else None)
    pdir = tempfile.mkdtemp(prefix="tuned-profiles-")
    for d in docs:
        for p in d.get("spec", {}).get("profile", []) or []:
            os.makedirs(os.path.join(pdir, p["name"]), exist_ok=True)
            with open(os.path.join(pdir, p["name"], "tuned.conf"), "w") as f:
                f.write(p["data"])
    variables = Variables()
    loader = Loader(Locator([os.path.join(TUNED_SRC, "profiles"), pdir]), Factory(), Merger(), None, variables)
    prof = loader.load([name])
    units = collections.OrderedDict()
    for uname, unit in prof.units.items():
        opts = collections.OrderedDict()
        for k, v in unit.options.items():
            opts[k] = variables.expand(v) if isinstance(v, str) else v
        # TuneD skips a unit whose cpuinfo_regex / uname_regex does not match the node
        # (plugins/instance: _check_cpuinfo_regex / _check_uname_regex); say whether it applies
        applies = True
        if unit.cpuinfo_regex is not None:
            applies = applies and re.search(unit.cpuinfo_regex, STATE["cpuinfo"], re.MULTILINE) is not None
        if unit.uname_regex is not None:
            applies = applies and re.search(unit.uname_regex, STATE["uname"], re.MULTILINE) is not None
        units[uname] = {"type": unit.type, "enabled": unit.enabled, "applies": applies, "options": opts}
    boot = ""
    if "bootloader" in prof.units and prof.units["bootloader"].enabled:
        raw = bootloader_cmdline(prof.units["bootloader"].options)
        boot = variables.expand(commands().unquote(raw)) if raw else ""
    inc = []
    res = {"profile": name, "recommend": rec and {"priority": rec[0], "machineConfigLabels": rec[2], "operand": rec[3]},
           "node": node, "rt_kernel": rt, "bootcmdline": boot, "bootcmdline_args": boot.split(),
           "units": units,
           "variables": {k.replace(consts.ENV_PREFIX, "", 1): v for k, v in variables.get_env().items()}}
    shutil.rmtree(pdir, ignore_errors=True)
    shutil.rmtree(STATE["root"], ignore_errors=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tuned", action="append", required=True)
    ap.add_argument("--sysinfo", required=True)
    ap.add_argument("--rt", action="store_true")
    ap.add_argument("--pool")
    ap.add_argument("--profile")
    ap.add_argument("--pmu-name")
    ap.add_argument("--json")
    a = ap.parse_args()
    import logging
    logging.getLogger("tuned").setLevel(logging.CRITICAL)
    r = evaluate(a.tuned, a.sysinfo, a.rt, a.pool, a.profile, a.pmu_name)
    s = json.dumps(r, indent=1, default=str)
    if a.json:
        with open(a.json, "w") as f:
            f.write(s + "\n")
    else:
        print(s)


if __name__ == "__main__":
    main()
