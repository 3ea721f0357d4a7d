//! No value can inject into a generated file (issue 11). Every target is rendered from a plan
//! whose every string field holds `;`, `$( )`, backquotes, quotes, newlines and `../` (built
//! directly: loading a plan file refuses such names, this proves the sinks quote whatever
//! reaches them), and from the same plan with harmless strings. Then:
//! - every generated shell script runs with stub commands first on PATH (`oc`, `grubby`,
//!   `rpm-ostree`, and a `pwned`/`touch` canary): only the stubs run, with the hostile text
//!   as one literal argument;
//! - the GRUB drop-in and the `/etc/default/grub` edit are sourced by `sh` (as grub-mkconfig
//!   does) and the irqbalance file too: only the intended variable is set, to the literal text;
//! - line-based files (TuneD, systemd, irqbalance, GRUB, BLS) have the same lines, line for
//!   line, as the harmless render, and YAML the same keys: nothing became a statement;
//! - `render -o DIR` writes nothing outside DIR.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use cpuset::CpuSet;
use plan::{
    HugepageRequest, KernelArg, Plan, PlanOptions, Power, RuntimeItem, Style, TopologyPolicy,
};
use render::{files, OutFile, RenderOptions, Target};

/// Every kind of syntax a shell, an INI file, systemd, GRUB or a path could act on.
const EVIL: &str =
    "x;pwned;#\n$(pwned)`pwned`'\"$'\\'\"'\\\n../../ESCAPED %n ${HOME} ${f:exec:pwned} \r|touch PWNED&";
const GOOD: &str = "harmless";

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s).unwrap()
}

fn plan(v: &str) -> Plan {
    let v = v.to_string();
    let arg = |key: &str, value: Option<String>| KernelArg {
        key: key.to_string(),
        value,
        reason: v.clone(),
    };
    Plan {
        schema_version: 1,
        name: v.clone(),
        host: Some(v.clone()),
        reserved: set("0,4"),
        isolated: set("1-3,5-7"),
        offlined: set("8"),
        options: PlanOptions {
            style: Style::Lowlat,
            power: Power::UltraLowLatency,
            rt_kernel: true,
            topology_policy: Some(TopologyPolicy::SingleNumaNode),
            hugepages: vec![HugepageRequest { size: v.clone(), count: 4, node: Some(0) }],
            near_device: Some(v.clone()),
            isolcpus_domain: true,
            mcp_name: Some(v.clone()),
            node_selector: Some((v.clone(), v.clone())),
            mcp_selector: Some((v.clone(), v.clone())),
            workload_hints: true,
            ..Default::default()
        },
        kernel_args: vec![
            arg(&v, Some(v.clone())),
            arg("nohz", Some("on".into())),
            arg("nohz_full", Some(format!("1-3{v}"))),
            arg(&v, None),
        ],
        runtime: vec![
            RuntimeItem::Sysctl { name: v.clone(), value: v.clone(), reason: v.clone() },
            RuntimeItem::File {
                path: format!("sys/devices/system/node/node0/hugepages/hugepages-2048kB/{v}"),
                value: v.clone(),
                reason: v.clone(),
            },
            RuntimeItem::File {
                path: "sys/kernel/mm/transparent_hugepage/enabled".into(),
                value: v.clone(),
                reason: v.clone(),
            },
            RuntimeItem::Governor { cpus: set("1-3"), governor: v.clone(), reason: v.clone() },
            RuntimeItem::IdleLimit {
                cpus: set("1-3"),
                max_latency_us: 0,
                disable_states: false,
                reason: v.clone(),
            },
            RuntimeItem::EnergyPerfBias { cpus: set("1-3"), value: v.clone(), reason: v.clone() },
        ],
        rationale: vec![v.clone()],
        smt_disabled: CpuSet::new(),
    }
}

fn options(v: &str, target: Target) -> RenderOptions {
    let input = match target {
        Target::Grub => Some((
            format!("/etc/{v}/grub"),
            "A=1\nGRUB_CMDLINE_LINUX=\"quiet\"\nGRUB_TIMEOUT=5\n".to_string(),
        )),
        Target::Bls => Some((
            format!("/boot/loader/entries/{v}.conf"),
            "title t\nlinux /vmlinuz\noptions root=/dev/sda1 quiet\n".to_string(),
        )),
        _ => None,
    };
    RenderOptions {
        input,
        role: Some(v.to_string()),
        image: v.to_string(),
        namespace: v.to_string(),
        runtime_class: Some(v.to_string()),
        rt_packages: vec![v.to_string(), format!("./{v}.rpm")],
        ..Default::default()
    }
}

/// A scratch tree: `base/` holds everything the test makes; the render goes to
/// `base/a/b/out` and scripts run in `base/a/b/work`, so `../../ESCAPED` from either lands
/// inside `base` where the final walk finds it.
struct Scratch {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    stubs: PathBuf,
    log: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_path_buf();
        let stubs = base.join("stubs");
        std::fs::create_dir_all(&stubs).unwrap();
        std::fs::create_dir_all(base.join("a/b/work")).unwrap();
        let log = base.join("log");
        std::fs::write(&log, "").unwrap();
        // Stubs record their name after \x01 and each argument after \x02, so an argument
        // holding newlines is still one argument in the log.
        let stub = "#!/bin/sh\nprintf '\\001%s' \"${0##*/}\" >> \"$LOG\"\nfor a in \"$@\"; do printf '\\002%s' \"$a\" >> \"$LOG\"; done\n";
        // kubectl also prints what the script greps its logs for.
        let kubectl = format!("{stub}echo Latencies\n");
        let canary = "#!/bin/sh\nprintf '\\001PWNED-%s' \"${0##*/}\" >> \"$LOG\"\n";
        for (name, body) in [
            ("oc", stub),
            ("grubby", stub),
            ("rpm-ostree", stub),
            ("kubectl", kubectl.as_str()),
            ("pwned", canary),
            ("touch", canary),
            ("id", canary),
        ] {
            let p = stubs.join(name);
            std::fs::write(&p, body).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // The real tools the scripts use.
        for tool in ["dirname", "grep"] {
            let real = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(tool))
                .find(|p| p.exists())
                .unwrap_or_else(|| panic!("{tool} not found in /usr/bin or /bin"));
            std::os::unix::fs::symlink(real, stubs.join(tool)).unwrap();
        }
        Scratch { _tmp: tmp, base, stubs, log }
    }

    fn out(&self, target: Target) -> PathBuf {
        self.base.join("a/b/out").join(target.name())
    }

    /// Run `sh ARGS` in the work directory with only the stubs on PATH.
    fn sh(&self, args: &[&str]) -> std::process::Output {
        Command::new("/bin/sh")
            .args(args)
            .current_dir(self.base.join("a/b/work"))
            .env_clear()
            .env("PATH", &self.stubs)
            .env("LOG", &self.log)
            .env("HOME", self.base.join("home"))
            .output()
            .unwrap()
    }

    /// The commands the stubs saw since the last call: (name, arguments).
    fn take_log(&self) -> Vec<(String, Vec<String>)> {
        let s = std::fs::read_to_string(&self.log).unwrap();
        std::fs::write(&self.log, "").unwrap();
        s.split('\x01')
            .filter(|r| !r.is_empty())
            .map(|r| {
                let mut it = r.split('\x02').map(str::to_string);
                (it.next().unwrap_or_default(), it.collect())
            })
            .collect()
    }

    /// Every path under `base`, relative.
    fn tree(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut stack = vec![self.base.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                out.insert(p.strip_prefix(&self.base).unwrap().display().to_string());
                if e.file_type().unwrap().is_dir() {
                    stack.push(p);
                }
            }
        }
        out
    }
}

/// What each line of a line-based file is: comment, blank, a section header (kept as is), or
/// an assignment. A newline that escaped its quoting adds or changes a line here.
fn line_kinds(text: &str) -> Vec<String> {
    text.split(['\n', '\r'])
        .map(|l| {
            let t = l.trim_start();
            if t.is_empty() {
                "blank".to_string()
            } else if t.starts_with('#') {
                "comment".to_string()
            } else if t.starts_with('[') {
                t.to_string()
            } else if t.starts_with("options ") {
                "options".to_string()
            } else if let Some((k, _)) = t.split_once('=') {
                if k.contains(GOOD) || k.contains("x;pwned") {
                    "custom=".to_string()
                } else {
                    format!("{k}=")
                }
            } else {
                format!("other: {t}")
            }
        })
        .collect()
}

/// The key structure of every YAML document (leaf values ignored, the test's strings
/// normalized): an injected key or document shows here.
fn yaml_keys(text: &str, v: &str) -> Vec<String> {
    use serde::Deserialize as _;
    fn walk(prefix: &str, value: &serde_norway::Value, v: &str, out: &mut Vec<String>) {
        match value {
            serde_norway::Value::Mapping(m) => {
                for (k, val) in m {
                    let k = k.as_str().unwrap_or("?").replace(v, "V");
                    let p = format!("{prefix}/{k}");
                    out.push(p.clone());
                    walk(&p, val, v, out);
                }
            }
            serde_norway::Value::Sequence(s) => {
                for (i, val) in s.iter().enumerate() {
                    walk(&format!("{prefix}[{i}]"), val, v, out);
                }
            }
            _ => {}
        }
    }
    let mut out = vec![];
    for (i, d) in serde_norway::Deserializer::from_str(text).enumerate() {
        let value = serde_norway::Value::deserialize(d).unwrap();
        walk(&format!("doc{i}"), &value, v, &mut out);
    }
    out
}

fn is_yaml(f: &OutFile) -> bool {
    f.name.ends_with(".yaml")
}

fn is_line_based(target: Target, f: &OutFile) -> bool {
    matches!(
        target,
        Target::Tuned | Target::Systemd | Target::Irqbalance | Target::Grub | Target::Bls
    ) && !f.name.ends_with("INSTALL")
}

#[test]
fn no_value_injects_into_any_generated_file() {
    let sc = Scratch::new();
    let before = sc.tree();
    let (evil, good) = (plan(EVIL), plan(GOOD));
    let mut scripts_run = 0;
    for (_, target) in Target::ALL {
        let bad = render::render(&evil, target, &options(EVIL, target)).unwrap();
        let fine = render::render(&good, target, &options(GOOD, target)).unwrap();
        assert_eq!(bad.len(), fine.len(), "{target}");
        // On disk: everything under DIR, nothing beside it.
        let out = sc.out(target);
        let written = files::write_dir(&out, &bad).unwrap();
        for p in &written {
            assert!(p.starts_with(&out), "{target}: {} outside {}", p.display(), out.display());
        }
        for (b, f) in bad.iter().zip(&fine) {
            let what = format!("{target} {}", f.name);
            if is_yaml(f) {
                assert_eq!(yaml_keys(&b.contents, EVIL), yaml_keys(&f.contents, GOOD), "{what}");
            }
            if is_line_based(target, f) {
                assert_eq!(
                    line_kinds(&b.contents),
                    line_kinds(&f.contents),
                    "{what}:\n{}",
                    b.contents
                );
            }
            if f.executable || f.name.ends_with(".sh") {
                let path = out.join(&b.name);
                let run = sc.sh(&[path.to_str().unwrap()]);
                let log = sc.take_log();
                assert!(
                    run.status.success(),
                    "{what} failed: {}\n{log:?}",
                    String::from_utf8_lossy(&run.stderr)
                );
                assert!(!log.is_empty(), "{what}: no stub ran");
                for (name, _) in &log {
                    assert!(
                        ["oc", "kubectl", "grubby", "rpm-ostree"].contains(&name.as_str()),
                        "{what} ran {name}:\n{log:?}\n{}",
                        b.contents
                    );
                }
                scripts_run += 1;
                check_arguments(target, &evil, &log);
            }
        }
        // The GRUB files are sourced by grub-mkconfig's shell; irqbalance's by its unit.
        match target {
            Target::Grub => {
                let path = out.join(&bad[0].name);
                let run = sc.sh(&[
                    "-c",
                    "GRUB_CMDLINE_LINUX=base; . \"$1\"; printf '%s' \"$GRUB_CMDLINE_LINUX\"",
                    "sh",
                    path.to_str().unwrap(),
                ]);
                assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
                assert!(sc.take_log().is_empty(), "sourcing the grub edit ran something");
                let value = String::from_utf8(run.stdout).unwrap();
                assert!(value.starts_with("quiet "), "{value}");
                assert!(value.contains(&format!("nohz_full=1-3{}", one_line(EVIL))), "{value}");
                // The drop-in (no input file).
                let mut o = options(EVIL, target);
                o.input = None;
                let dropin = render::render(&evil, target, &o).unwrap();
                let dir = sc.base.join("a/b/out/grub-dropin");
                let path = &files::write_dir(&dir, &dropin).unwrap()[0];
                let run = sc.sh(&[
                    "-c",
                    "GRUB_CMDLINE_LINUX=base; . \"$1\"; printf '%s' \"$GRUB_CMDLINE_LINUX\"",
                    "sh",
                    path.to_str().unwrap(),
                ]);
                assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
                assert!(sc.take_log().is_empty(), "sourcing the grub drop-in ran something");
                let value = String::from_utf8(run.stdout).unwrap();
                assert_eq!(value, format!("base {}", one_line(&render::cmdline::line(&evil))));
            }
            Target::Irqbalance => {
                let path = out.join(&bad[0].name);
                let run = sc.sh(&[
                    "-c",
                    ". \"$1\"; printf '%s' \"$IRQBALANCE_BANNED_CPULIST\"",
                    "sh",
                    path.to_str().unwrap(),
                ]);
                assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
                assert!(sc.take_log().is_empty());
                assert_eq!(String::from_utf8(run.stdout).unwrap(), "1-3,5-7");
            }
            _ => {}
        }
    }
    assert_eq!(
        scripts_run, 4,
        "grubby.sh, rpm-ostree.sh, openshift's and k8s-latency-test's apply.sh"
    );
    // Nothing appeared outside the render directories (`../../ESCAPED` would land in `a/`).
    let after = sc.tree();
    let new: Vec<&String> = after.difference(&before).collect();
    for p in &new {
        assert!(p.starts_with("a/b/out"), "written outside the render directory: {p}");
    }
}

/// The kernel line as GRUB's shell reads it back: control characters are spaces.
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// The hostile text reaches the stubs as one literal argument.
fn check_arguments(target: Target, evil: &Plan, log: &[(String, Vec<String>)]) {
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match target {
        Target::Openshift => {
            let label: Vec<_> =
                log.iter().filter(|(_, a)| a.first().is_some_and(|a| a == "label")).collect();
            assert_eq!(label.len(), 1, "{log:?}");
            assert_eq!(label[0].0, "oc");
            assert_eq!(label[0].1, args(&["label", "node", EVIL, &format!("{EVIL}={EVIL}")]));
            assert!(log.iter().all(|(n, _)| n == "oc"), "{log:?}");
        }
        Target::K8sLatencyTest => {
            // Every namespaced call names the hostile namespace as one argument.
            let namespaced: Vec<_> =
                log.iter().filter(|(_, a)| a.first().is_some_and(|a| a == "-n")).collect();
            assert!(!namespaced.is_empty(), "{log:?}");
            for (name, a) in namespaced {
                assert_eq!(name, "kubectl");
                assert_eq!(a[1], EVIL, "{log:?}");
            }
        }
        Target::Grubby => {
            let line = format!("--args={}", render::cmdline::line(evil));
            assert_eq!(log, [("grubby".to_string(), args(&["--update-kernel=ALL", &line]))]);
        }
        Target::RpmOstree => {
            // `rpm-ostree kargs` (the current line), the appends, the status check, then the
            // RT override with each package one argument.
            assert_eq!(log[0], ("rpm-ostree".to_string(), args(&["kargs"])), "{log:?}");
            let last = &log.last().unwrap().1;
            let pkg = format!("./{EVIL}.rpm");
            assert!(last.ends_with(&args(&["--install", EVIL, "--install", &pkg])), "{log:?}");
        }
        _ => panic!("unexpected script from {target}"),
    }
}

#[test]
fn a_plan_from_a_hostile_host_is_refused_where_it_comes_in() {
    // The host's name becomes the plan's `host` (and the node in apply.sh): refused by the
    // planner, so no plan file can carry it.
    let mut host = host::Host { hostname: Some(EVIL.to_string()), ..Default::default() };
    host.cpus.online = Some(set("0-7"));
    for cpu in 0..8 {
        host.topology.cpus.push(host::CpuTopo {
            cpu,
            online: true,
            siblings: CpuSet::from_cpus([cpu]),
            model: Some(EVIL.to_string()),
            ..Default::default()
        });
    }
    let req = plan::PlanRequest {
        name: "p".into(),
        host_name: host.hostname.clone(),
        ..Default::default()
    };
    let e = plan::make_plan(&host, &req).unwrap_err().to_string();
    assert!(e.contains("host"), "{e}");
    assert!(!e.contains('\n') && !e.contains('\r'), "{e}");
    let req = plan::PlanRequest { name: "../x".into(), host_name: None, ..Default::default() };
    assert!(plan::make_plan(&host, &req).unwrap_err().to_string().contains("name"));
}
