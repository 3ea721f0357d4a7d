#!/usr/bin/env python3
"""Regenerate the NTO oracle goldens (testdata/nto-oracle/cases/<name>/) from the real tools.

For every case in testdata/nto-oracle/cases.yaml:
  lowlat-pp.yaml     lowlat's PerformanceProfile (`lowlat plan …` then `render performance-profile`)
  ppc.yaml           the Performance Profile Creator's output for the same flags (ppc cases)
  webhook.txt        NTO's admission-webhook checks (pp-validate) on lowlat's and PPC's profile
  nto/*.yaml         NTO's `render` of the profile (PPC's when there is one, else lowlat's):
                     MachineConfig, KubeletConfig, Tuned, RuntimeClass
  nto-eval.json      NTO's Tuned evaluated by TuneD's own code on the case's node (tuned_eval.py)
  lowlat-tuned.yaml  lowlat's Tuned CR (render openshift 04-tuned.yaml) that was evaluated
  lowlat-eval.json   that Tuned evaluated the same way
  meta.json          the node, kernel flavour and the tools' commits
and, for hosted.yaml, hosted/<name>.yaml: PPC's ConfigMap for a hosted control plane's NodePool
(`--node-pool-name`), with hosted/<name>.webhook.txt, the webhook's checks on the profile in it.

The test (crates/lowlat/tests/nto_oracle.rs) re-runs lowlat and compares object by object; it
needs neither Go nor Python nor the network. Rerun this when NTO or lowlat's Tuned moves:

  ORACLE_BIN=/path/bin TUNED_SRC=/path/tuned NTO_SRC=/path/nto testdata/nto-oracle/regenerate.sh
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(ORACLE))
BIN = os.environ["ORACLE_BIN"]
TUNED_SRC = os.environ["TUNED_SRC"]
NTO_SRC = os.environ.get("NTO_SRC", "")
LOWLAT = os.environ.get("LOWLAT", os.path.join(REPO, "target", "debug", "lowlat"))


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return r.returncode, r.stdout, r.stderr


def must(cmd, **kw):
    rc, out, err = run(cmd, **kw)
    if rc != 0:
        sys.exit("failed (%d): %s\n%s%s" % (rc, " ".join(cmd), out, err))
    return out


def mg_root(mg):
    d = os.path.join(REPO, "testdata", "fixtures", mg)
    subs = [s for s in os.listdir(d) if os.path.isdir(os.path.join(d, s))]
    return d, os.path.join(d, subs[0])


def git_head(path):
    if not path:
        return ""
    rc, out, _ = run(["git", "-C", path, "rev-parse", "HEAD"])
    return out.strip() if rc == 0 else ""


def tuned_pin():
    """The TuneD commit NTO pins (its assets/tuned/tuned submodule)."""
    if not NTO_SRC:
        return ""
    rc, out, _ = run(["git", "-C", NTO_SRC, "ls-tree", "HEAD", "assets/tuned/tuned"])
    return out.split()[2] if rc == 0 and out.strip() else ""


MINIMAL_INFRA = {
    "apiVersion": "config.openshift.io/v1", "kind": "Infrastructure",
    "metadata": {"name": "cluster"},
    "spec": {"platformSpec": {"type": "BareMetal"}},
    "status": {"controlPlaneTopology": "HighlyAvailable", "infrastructureTopology": "HighlyAvailable",
               "platform": "BareMetal", "platformStatus": {"type": "BareMetal"}},
}


def one(case, out_root):
    name = case["name"]
    out = os.path.join(out_root, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "nto"))
    mg, inner = mg_root(case["must_gather"])
    ppc = shlex.split(case.get("ppc", ""))
    extra = shlex.split(case.get("lowlat", ""))
    tmp = tempfile.mkdtemp(prefix="nto-oracle-")
    plan = os.path.join(tmp, "plan.yaml")
    args = [LOWLAT, "plan", "--must-gather", mg] + (["--style", "ppc"] + ppc if ppc else []) + extra + ["-o", plan]
    must(args)
    p = yaml.safe_load(open(plan))
    node = p["host"]
    rt = bool(p["options"]["rt_kernel"])
    pool = p["options"].get("mcp_name") or "worker-cnf"
    pp = must([LOWLAT, "render", "--plan", plan, "performance-profile"])
    # the PerformanceProfile is the first document of the render (a patch Tuned may follow)
    pp_doc = pp.split("# ==> ", 2)
    if len(pp_doc) > 1:
        pp = pp_doc[1].split("<==\n", 1)[1]
    open(os.path.join(out, "lowlat-pp.yaml"), "w").write(pp)
    web = []
    rc, o, e = run([os.path.join(BIN, "pp-validate"), os.path.join(out, "lowlat-pp.yaml")])
    web.append("lowlat: rc=%d %s" % (rc, (o + e).strip().replace(out + "/", "")))
    profile_for_nto = os.path.join(out, "lowlat-pp.yaml")
    if ppc:
        ppc_mg = mg
        infra_dir = os.path.join(inner, "cluster-scoped-resources", "config.openshift.io", "infrastructures")
        if not os.path.isdir(infra_dir):
            # PAO-era must-gathers have no Infrastructure object, which current PPC needs
            # ("failed to determine if hypershift cluster"): give a copy the minimal one
            ppc_mg = os.path.join(tmp, "mg")
            shutil.copytree(mg, ppc_mg, symlinks=True)
            d = os.path.join(ppc_mg, os.path.basename(inner), "cluster-scoped-resources",
                             "config.openshift.io", "infrastructures")
            os.makedirs(d)
            yaml.safe_dump(MINIMAL_INFRA, open(os.path.join(d, "cluster.yaml"), "w"))
        rc, o, e = run([os.path.join(BIN, "ppc"), "--must-gather-dir-path", ppc_mg] + ppc)
        cpu = (yaml.safe_load(o) or {}).get("spec", {}).get("cpu", {}) if rc == 0 else {}
        if rc != 0:
            errs = [l for l in (o + e).splitlines() if "rror" in l] or (o + e).strip().splitlines()[-1:]
            open(os.path.join(out, "ppc.err"), "w").write(errs[0].replace(tmp, "$TMP") + "\n")
        elif not cpu.get("reserved") or not cpu.get("isolated"):
            # current PPC reads no CPUs from PAO-era sysinfo (no node meminfo): not comparable
            warn = [l for l in e.splitlines() if "WARN" in l][:1]
            open(os.path.join(out, "ppc.err"), "w").write(
                "PPC read no CPUs from this must-gather (empty reserved/isolated)%s\n"
                % (": " + warn[0].split("WARN:", 1)[1].strip().split(":")[0] if warn else ""))
        else:
            open(os.path.join(out, "ppc.yaml"), "w").write(o)
            if not extra:
                # with lowlat-only flags (huge pages …) NTO renders lowlat's profile
                profile_for_nto = os.path.join(out, "ppc.yaml")
            rc, o, e = run([os.path.join(BIN, "pp-validate"), os.path.join(out, "ppc.yaml")])
            web.append("ppc: rc=%d %s" % (rc, (o + e).strip().replace(out + "/", "")))
    open(os.path.join(out, "webhook.txt"), "w").write("\n".join(web) + "\n")
    # NTO render: the profile, the pools, the Infrastructure object
    ind = os.path.join(tmp, "in")
    os.makedirs(ind)
    shutil.copy(profile_for_nto, os.path.join(ind, "pp.yaml"))
    mcps = os.path.join(inner, "cluster-scoped-resources", "machineconfiguration.openshift.io", "machineconfigpools")
    for f in os.listdir(mcps):
        shutil.copy(os.path.join(mcps, f), os.path.join(ind, "mcp-" + f))
    infra = os.path.join(inner, "cluster-scoped-resources", "config.openshift.io", "infrastructures", "cluster.yaml")
    if os.path.exists(infra):
        shutil.copy(infra, os.path.join(ind, "infra.yaml"))
    else:
        yaml.safe_dump(MINIMAL_INFRA, open(os.path.join(ind, "infra.yaml"), "w"))
    ntod = os.path.join(tmp, "nto")
    must([os.path.join(BIN, "cluster-node-tuning-operator"), "render", "--asset-input-dir", ind,
          "--asset-output-dir", ntod])
    for f in sorted(os.listdir(ntod)):
        shutil.copy(os.path.join(ntod, f), os.path.join(out, "nto", f))
    sysinfo = os.path.join(inner, "nodes", node, "sysinfo.tgz")
    ev = [sys.executable, os.path.join(HERE, "tuned_eval.py"), "--sysinfo", sysinfo, "--pool", pool]
    if rt:
        ev.append("--rt")
    env = dict(os.environ, TUNED_SRC=TUNED_SRC)

    def evaluate(tuned, dst):
        o = must(ev + ["--tuned", tuned], env=env)
        o = o.replace(TUNED_SRC, "$TUNED_SRC")
        open(dst, "w").write(o)

    tuned = [f for f in sorted(os.listdir(ntod)) if f.endswith("_tuned.yaml")]
    evaluate(os.path.join(ntod, tuned[0]), os.path.join(out, "nto-eval.json"))
    osd = os.path.join(tmp, "os")
    must([LOWLAT, "render", "--plan", plan, "openshift", "-o", osd])
    shutil.copy(os.path.join(osd, "04-tuned.yaml"), os.path.join(out, "lowlat-tuned.yaml"))
    evaluate(os.path.join(osd, "04-tuned.yaml"), os.path.join(out, "lowlat-eval.json"))
    meta = {"node": node, "rt_kernel": rt, "pool": pool,
            "nto_commit": git_head(NTO_SRC), "tuned_commit": git_head(TUNED_SRC) or tuned_pin(),
            "nto_input": "ppc.yaml" if profile_for_nto.endswith("ppc.yaml") else "lowlat-pp.yaml"}
    json.dump(meta, open(os.path.join(out, "meta.json"), "w"), indent=1, sort_keys=True)
    open(os.path.join(out, "meta.json"), "a").write("\n")
    shutil.rmtree(tmp, ignore_errors=True)
    print("%s: node %s%s" % (name, node, ", RT" if rt else ""))


def info():
    """PPC's `info --json` for the must-gathers it reads (lowlat's `plan --info --json`)."""
    os.makedirs(os.path.join(ORACLE, "info"), exist_ok=True)
    for mg in ("nto/must-gather/must-gather.bare-metal", "nto/must-gather/must-gather.sno"):
        out = must([os.path.join(BIN, "ppc"), "info", "--must-gather-dir-path", mg_root(mg)[0], "--json"])
        open(os.path.join(ORACLE, "info", os.path.basename(mg) + ".json"), "w").write(out)
    # a hosted control plane's must-gather: PPC groups the nodes by NodePool
    mg = "hosted/must-gather.sno-hosted"
    out = must([os.path.join(BIN, "ppc"), "info", "--must-gather-dir-path", mg_root(mg)[0], "--json"])
    open(os.path.join(ORACLE, "info", "must-gather.sno-hosted.json"), "w").write(out)


def hosted():
    """PPC's hosted-control-plane output (`--node-pool-name`: the PerformanceProfile in a
    ConfigMap) for the cases of hosted.yaml, and the webhook's checks on the profile inside."""
    d = os.path.join(ORACLE, "hosted")
    os.makedirs(d, exist_ok=True)
    for c in yaml.safe_load(open(os.path.join(ORACLE, "hosted.yaml"))):
        mg = os.path.join(REPO, "testdata", "fixtures", c["must_gather"])
        out = must([os.path.join(BIN, "ppc"), "--must-gather-dir-path", mg] + shlex.split(c["ppc"]))
        open(os.path.join(d, c["name"] + ".yaml"), "w").write(out)
        tmp = tempfile.mkdtemp(prefix="nto-oracle-")
        pp = os.path.join(tmp, "pp.yaml")
        open(pp, "w").write(yaml.safe_load(out)["data"]["tuning"])
        rc, o, e = run([os.path.join(BIN, "pp-validate"), pp])
        open(os.path.join(d, c["name"] + ".webhook.txt"), "w").write(
            "ppc: rc=%d %s\n" % (rc, (o + e).strip().replace(tmp + "/", "")))
        shutil.rmtree(tmp, ignore_errors=True)
        print("hosted %s" % c["name"])


def main():
    cases = yaml.safe_load(open(os.path.join(ORACLE, "cases.yaml")))
    only = set(sys.argv[1:])
    if not only:
        info()
        hosted()
    out_root = os.path.join(ORACLE, "cases")
    for c in cases:
        if not only or c["name"] in only:
            one(c, out_root)


if __name__ == "__main__":
    main()
