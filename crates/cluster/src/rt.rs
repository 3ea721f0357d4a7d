//! Real-time budget for a pod on a kernel with RT group scheduling (`CONFIG_RT_GROUP_SCHED`,
//! cgroup v1 `cpu` controller): the kubelet's cgroups (`/kubepods`, its QoS levels, the pod,
//! the container) all have `cpu.rt_runtime_us = 0`, so nothing in a pod gets SCHED_FIFO. From
//! a privileged pod, [`Chain::grant`] writes a budget into every level of the pod's own chain,
//! parents first (a child may never hold more than its parent, nor siblings more than their
//! parent together), and [`Chain::restore`] writes the old values back, children first, once
//! the real-time threads are gone. `ci/k8s/README.md` ("Real-time in pods") has the facts.
//!
//! The pure parts (which line of `/proc/self/cgroup`, the chain of levels, what to write) are
//! separate from the I/O, which works on any directory laid out like the hierarchy (tests use a
//! temporary one). The generic "why is there no real-time here" diagnosis belongs to `host`;
//! this is the cluster's remedy.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file that holds a cgroup's RT budget (µs per period).
pub const RUNTIME: &str = "cpu.rt_runtime_us";

/// The cgroup v1 hierarchy holding the `cpu` controller, from `/proc/self/cgroup`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuCgroup {
    /// The controller list as the kernel names it (`cpu` or `cpu,cpuacct`): the mount options.
    pub controllers: String,
    /// This process's path in that hierarchy (`/kubepods/burstable/pod…/…`).
    pub path: String,
}

/// Find the v1 `cpu` hierarchy in `/proc/self/cgroup` text (`ID:CONTROLLERS:PATH` lines;
/// cgroup v2 is the line with an empty controller list and has no RT group budget).
pub fn parse_proc_cgroup(text: &str) -> Option<CpuCgroup> {
    host::rt::cpu_v1_line(text).map(|(controllers, path)| CpuCgroup {
        controllers: controllers.to_string(),
        path: path.trim().to_string(),
    })
}

/// Every level from the top down: `/a/b/c` → `/a`, `/a/b`, `/a/b/c` (the root is not a level:
/// its budget is the system's, `kernel.sched_rt_runtime_us`).
pub fn levels(path: &str) -> Vec<String> {
    host::rt::levels(path).into_iter().skip(1).collect()
}

/// One level's budget before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Level {
    pub path: String,
    /// `cpu.rt_runtime_us` found there.
    pub before: i64,
    /// What lowlat wrote (`None`: left alone, it already had enough).
    pub granted: Option<i64>,
    /// What was written back at the end (`None`: not restored, see `restore_error`).
    pub restored: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_error: Option<String>,
}

/// What happened to the real-time budget on one node: written into the node's results
/// (`rt-budget.json`) and shown per node in the fleet report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub state: State,
    /// One sentence for the reader.
    pub detail: String,
    /// The cgroup path of the measuring process (`None` without a v1 `cpu` hierarchy).
    pub cgroup: Option<String>,
    pub budget_us: i64,
    #[serde(default)]
    pub levels: Vec<Level>,
    /// Grants that earlier runs left on record and that this run looked at before its own
    /// (a killed pod never gave its budget back): see [`recover`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recovered: Vec<Recovered>,
}

/// Closed set of outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// No RT group scheduling in the way (cgroup v2 only, or no `cpu.rt_runtime_us`).
    NotNeeded,
    /// Every level already had the budget.
    AlreadyGranted,
    /// lowlat granted the budget (and restored it afterwards: see the levels).
    Granted,
    /// It could not: the measurement runs without real-time (see `detail`).
    Failed,
}

/// A pod's chain, read from a directory where the hierarchy is mounted.
#[derive(Debug)]
pub struct Chain {
    root: PathBuf,
    pub levels: Vec<Level>,
    pub budget_us: i64,
}

fn read_value(path: &Path) -> Result<i64, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    text.trim().parse().map_err(|_| format!("{}: not a number: {:?}", path.display(), text.trim()))
}

fn write_value(path: &Path, v: i64) -> std::io::Result<()> {
    // A plain write(2) of the number: the kernel checks it against the parent and siblings.
    std::fs::write(path, format!("{v}\n"))
}

impl Chain {
    /// Read every level of `cgroup_path` under `root` (where the hierarchy is mounted).
    pub fn read(root: &Path, cgroup_path: &str, budget_us: i64) -> Result<Self, String> {
        let levels = levels(cgroup_path)
            .into_iter()
            .map(|p| {
                let before = read_value(&root.join(p.trim_start_matches('/')).join(RUNTIME))?;
                Ok(Level { path: p, before, granted: None, restored: None, restore_error: None })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Self { root: root.to_path_buf(), levels, budget_us })
    }

    fn file(&self, level: &str) -> PathBuf {
        self.root.join(level.trim_start_matches('/')).join(RUNTIME)
    }

    /// Values of the siblings of `level` (for the message when a write is refused).
    fn siblings(&self, level: &str) -> String {
        let dir = self.root.join(level.trim_start_matches('/'));
        let Some(parent) = dir.parent() else { return String::new() };
        let mut out = Vec::new();
        if let Ok(rd) = std::fs::read_dir(parent) {
            for e in rd.flatten() {
                let p = e.path();
                if p != dir && p.join(RUNTIME).is_file() {
                    if let Ok(v) = read_value(&p.join(RUNTIME)) {
                        if v > 0 {
                            out.push(format!("{}={v}", e.file_name().to_string_lossy()));
                        }
                    }
                }
            }
        }
        out.sort();
        out.join(", ")
    }

    /// Grant the budget, parents first, skipping levels that already have at least that much.
    /// On a refusal, stop there (the rest cannot succeed) and say which level and why.
    pub fn grant(&mut self) -> Result<State, String> {
        let mut wrote = false;
        for i in 0..self.levels.len() {
            if self.levels[i].before >= self.budget_us {
                continue;
            }
            let path = self.levels[i].path.clone();
            if let Err(e) = write_value(&self.file(&path), self.budget_us) {
                let parent = match i {
                    0 => read_value(&self.root.join(RUNTIME))
                        .map(|v| format!("the root has {v}"))
                        .unwrap_or_else(|e| e),
                    _ => format!("{} has {}", self.levels[i - 1].path, self.current(i - 1)),
                };
                let sib = self.siblings(&path);
                let sib = if sib.is_empty() {
                    String::new()
                } else {
                    format!("; siblings holding budget: {sib}")
                };
                return Err(format!(
                    "writing {} µs to {path}/{RUNTIME} failed: {e} ({parent}{sib})",
                    self.budget_us
                ));
            }
            self.levels[i].granted = Some(self.budget_us);
            wrote = true;
        }
        Ok(if wrote { State::Granted } else { State::AlreadyGranted })
    }

    fn current(&self, i: usize) -> i64 {
        self.levels[i].granted.unwrap_or(self.levels[i].before)
    }

    /// Put back what was there, children first. A level another user still needs refuses
    /// (EINVAL/EBUSY): that is recorded, not fatal — the kernel keeps the budget consistent.
    /// Returns whether every granted level got its old value back.
    pub fn restore(&mut self) -> bool {
        let mut all = true;
        for i in (0..self.levels.len()).rev() {
            if self.levels[i].granted.is_none() {
                continue;
            }
            let file = self.file(&self.levels[i].path);
            let before = self.levels[i].before;
            match write_value(&file, before) {
                Ok(()) => self.levels[i].restored = Some(before),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    // the pod's own levels can vanish with it: nothing left to restore
                    self.levels[i].restored = Some(before);
                }
                Err(e) => {
                    self.levels[i].restore_error = Some(e.to_string());
                    all = false;
                }
            }
        }
        all
    }
}

/// Where the agent keeps its grant records on the node: a `hostPath` volume (`DirectoryOrCreate`)
/// mounted at the same path in the pod, so a record outlives a killed pod.
pub const LEDGER_DIR: &str = "/var/lib/lowlat/rt-grants";

/// Largest record read back (a chain has a handful of levels).
const MAX_RECORD: u64 = 64 * 1024;

/// What a grant puts on record on the node **before** writing any level, and removes once every
/// level is back: the levels it is about to write, with their old values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Record {
    /// The granting container's own cgroup: while it exists, the grant is in use.
    pub cgroup: String,
    pub budget_us: i64,
    /// Only the levels the grant writes (`granted` set), top-down.
    pub levels: Vec<Level>,
}

impl Record {
    /// The record of what `chain.grant()` is about to write.
    pub fn of(chain: &Chain, cgroup: &str) -> Self {
        let levels = chain
            .levels
            .iter()
            .filter(|l| l.before < chain.budget_us)
            .map(|l| Level { granted: Some(chain.budget_us), ..l.clone() })
            .collect();
        Self { cgroup: cgroup.to_string(), budget_us: chain.budget_us, levels }
    }

    /// Its file name in the ledger.
    pub fn file_name(&self) -> String {
        record_file(&self.cgroup)
    }
}

/// The ledger's file name for a container cgroup's grant: one per cgroup, `[A-Za-z0-9_.-]` only.
pub fn record_file(cgroup: &str) -> String {
    let safe: String = cgroup
        .trim_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' })
        .collect();
    format!("grant-{safe}.json")
}

/// What became of one record found in the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// Its container is gone and every level is back to its old value: record removed.
    Restored,
    /// Its container still exists (a live run): left alone.
    InUse,
    /// A level refused (another user still holds budget below it) or the record is unreadable:
    /// kept for the next run or `cluster clean`.
    Failed,
}

/// One record looked at by [`recover`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recovered {
    /// The record's file name in the ledger.
    pub record: String,
    pub cgroup: String,
    pub outcome: Recovery,
    pub detail: String,
    #[serde(default)]
    pub levels: Vec<Level>,
}

/// Write `record` into `ledger` (atomically: a reader never sees half of it).
pub fn write_record(ledger: &Path, record: &Record) -> Result<PathBuf, String> {
    let path = ledger.join(record.file_name());
    let bytes = serde_json::to_vec_pretty(record).map_err(|e| e.to_string())?;
    util::fs::write_atomic(&path, &bytes, 0o600)
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// Give back, children first, what one record's container granted and never restored. A level
/// is written only while it still holds what was granted (someone else changed it since: left
/// alone); a level that is gone needs nothing.
fn restore_record(root: &Path, rec: &mut Record) -> (bool, Vec<String>) {
    let mut ok = true;
    let mut notes = Vec::new();
    for l in rec.levels.iter_mut().rev() {
        let dir = root.join(l.path.trim_start_matches('/'));
        if !dir.is_dir() {
            // the pod's own levels go with the pod: nothing left to give back
            l.restored = Some(l.before);
            continue;
        }
        let file = dir.join(RUNTIME);
        let now = match read_value(&file) {
            Ok(v) => v,
            Err(e) => {
                l.restore_error = Some(e);
                ok = false;
                continue;
            }
        };
        if now == l.before {
            l.restored = Some(l.before);
        } else if Some(now) != l.granted {
            notes.push(format!(
                "{} holds {now}, not the {} granted: left alone",
                l.path, rec.budget_us
            ));
            l.restored = Some(now);
        } else {
            match write_value(&file, l.before) {
                Ok(()) => l.restored = Some(l.before),
                Err(e) => {
                    l.restore_error = Some(e.to_string());
                    ok = false;
                }
            }
        }
    }
    (ok, notes)
}

/// Restore what killed runs left: every record in `ledger` whose container cgroup no longer
/// exists in the hierarchy mounted at `root` is given back (children first) and removed. Runs
/// at the start of every agent (before it reads its own chain, so its `before` values are the
/// real ones) and in `cluster clean`'s per-node pass. A missing ledger is an empty one.
pub fn recover(root: &Path, ledger: &Path) -> Vec<Recovered> {
    let mut names: Vec<String> = match std::fs::read_dir(ledger) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("grant-") && n.ends_with(".json"))
            .collect(),
        Err(_) => return vec![],
    };
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let path = ledger.join(&name);
        let parsed = util::fs::read_private(&path, MAX_RECORD)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<Record>(&b).map_err(|e| e.to_string()));
        let mut rec = match parsed {
            Ok(r) => r,
            Err(e) => {
                out.push(Recovered {
                    record: name,
                    cgroup: String::new(),
                    outcome: Recovery::Failed,
                    detail: format!("unreadable record {}: {e}", path.display()),
                    levels: vec![],
                });
                continue;
            }
        };
        let leaf = root.join(rec.cgroup.trim_start_matches('/'));
        if rec.cgroup.trim_matches('/').is_empty() || leaf.is_dir() {
            out.push(Recovered {
                record: name,
                cgroup: rec.cgroup.clone(),
                outcome: Recovery::InUse,
                detail: format!("{} still exists: its run is live, left alone", rec.cgroup),
                levels: rec.levels,
            });
            continue;
        }
        let (ok, notes) = restore_record(root, &mut rec);
        let (outcome, mut detail) = if ok {
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    (Recovery::Restored, format!("budget of the gone {} given back", rec.cgroup))
                }
                Err(e) => (
                    Recovery::Failed,
                    format!("budget given back, but removing {}: {e}", path.display()),
                ),
            }
        } else {
            let refused: Vec<String> = rec
                .levels
                .iter()
                .filter_map(|l| l.restore_error.as_ref().map(|e| format!("{}: {e}", l.path)))
                .collect();
            (
                Recovery::Failed,
                format!(
                    "refused ({}; someone still holds budget below it?): record kept for the next \
                     run or `cluster clean`",
                    refused.join("; ")
                ),
            )
        };
        if !notes.is_empty() {
            detail = format!("{detail}; {}", notes.join("; "));
        }
        out.push(Recovered {
            record: name,
            cgroup: rec.cgroup,
            outcome,
            detail,
            levels: rec.levels,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "12:pids:/kubepods/burstable/pod1/c1\n\
        5:cpu:/kubepods/burstable/pod1/c1\n4:cpuacct:/kubepods/burstable/pod1/c1\n\
        1:name=systemd:/kubepods/burstable/pod1/c1\n0::/\n";

    #[test]
    fn finds_the_cpu_hierarchy() {
        let c = parse_proc_cgroup(V1).unwrap();
        assert_eq!(c.controllers, "cpu");
        assert_eq!(c.path, "/kubepods/burstable/pod1/c1");
        let c = parse_proc_cgroup("3:cpu,cpuacct:/kubepods/podx/cy\n").unwrap();
        assert_eq!(c.controllers, "cpu,cpuacct");
        assert_eq!(parse_proc_cgroup("0::/system.slice/x.service\n"), None);
        assert_eq!(parse_proc_cgroup("4:cpuacct:/a\n"), None);
    }

    #[test]
    fn levels_top_down() {
        assert_eq!(
            levels("/lowlat-n2/kubepods/pod1/c"),
            [
                "/lowlat-n2",
                "/lowlat-n2/kubepods",
                "/lowlat-n2/kubepods/pod1",
                "/lowlat-n2/kubepods/pod1/c"
            ]
        );
        assert!(levels("/").is_empty());
    }

    fn tree(values: &[(&str, i64)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, v) in values {
            let dir = d.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(RUNTIME), format!("{v}\n")).unwrap();
        }
        d
    }

    #[test]
    fn grants_parents_first_and_restores_children_first() {
        let d = tree(&[
            ("/", 950000),
            ("/kubepods", 0),
            ("/kubepods/burstable", 200000),
            ("/kubepods/burstable/p", 0),
        ]);
        let mut c = Chain::read(d.path(), "/kubepods/burstable/p", 100000).unwrap();
        assert_eq!(c.grant().unwrap(), State::Granted);
        let get = |p: &str| read_value(&d.path().join(p).join(RUNTIME)).unwrap();
        assert_eq!(get("kubepods"), 100000);
        assert_eq!(get("kubepods/burstable"), 200000, "a level with enough is left alone");
        assert_eq!(c.levels[1].granted, None);
        assert!(c.restore());
        assert_eq!((get("kubepods"), get("kubepods/burstable/p")), (0, 0));
        assert_eq!(get("kubepods/burstable"), 200000);
    }

    #[test]
    fn a_refusal_names_the_level() {
        let d = tree(&[("/", 950000), ("/kubepods", 0)]);
        // a directory where the file should be: the write fails like a kernel refusal would
        let bad = d.path().join("kubepods/x");
        std::fs::create_dir_all(bad.join(RUNTIME)).unwrap();
        std::fs::write(d.path().join("kubepods/x").join("keep"), "").unwrap();
        let mut c = Chain { root: d.path().to_path_buf(), levels: vec![], budget_us: 100000 };
        c.levels = vec![
            Level {
                path: "/kubepods".into(),
                before: 0,
                granted: None,
                restored: None,
                restore_error: None,
            },
            Level {
                path: "/kubepods/x".into(),
                before: 0,
                granted: None,
                restored: None,
                restore_error: None,
            },
        ];
        let e = c.grant().unwrap_err();
        assert!(e.contains("/kubepods/x/cpu.rt_runtime_us"), "{e}");
        assert!(e.contains("/kubepods has 100000"), "{e}");
        assert!(c.restore());
        assert_eq!(read_value(&d.path().join("kubepods").join(RUNTIME)).unwrap(), 0);
    }

    #[test]
    fn record_names_are_plain_file_names() {
        assert_eq!(
            record_file("/lowlat-n2/kubepods/burstable/pod1-2/abc"),
            "grant-lowlat-n2_kubepods_burstable_pod1-2_abc.json"
        );
        assert_eq!(record_file("/../x y"), "grant-.._x_y.json");
        assert!(!record_file("/a/../../etc").contains('/'));
    }

    /// A killed pod: its grant is on record, its own levels are gone, the shared ones keep the
    /// budget. The next agent (or `cluster clean`) gives them back and drops the record; a live
    /// run's record is left alone.
    #[test]
    fn recover_gives_back_what_a_killed_pod_left() {
        let d = tree(&[
            ("/", 950000),
            ("/kubepods", 0),
            ("/kubepods/burstable", 0),
            ("/kubepods/burstable/pod1", 0),
            ("/kubepods/burstable/pod1/c1", 0),
            ("/kubepods/burstable/pod2", 0),
            ("/kubepods/burstable/pod2/c2", 0),
        ]);
        let ledger = tempfile::tempdir().unwrap();
        let get = |p: &str| read_value(&d.path().join(p).join(RUNTIME)).unwrap();
        // pod1 grants and is then killed (no restore); pod2 grants too and stays alive
        let mut c1 = Chain::read(d.path(), "/kubepods/burstable/pod1/c1", 100000).unwrap();
        let r1 = Record::of(&c1, "/kubepods/burstable/pod1/c1");
        assert_eq!(r1.levels.len(), 4);
        write_record(ledger.path(), &r1).unwrap();
        c1.grant().unwrap();
        let mut c2 = Chain::read(d.path(), "/kubepods/burstable/pod2/c2", 100000).unwrap();
        let r2 = Record::of(&c2, "/kubepods/burstable/pod2/c2");
        assert_eq!(r2.levels.len(), 2, "the shared levels already had enough: {r2:?}");
        write_record(ledger.path(), &r2).unwrap();
        c2.grant().unwrap();
        std::fs::remove_dir_all(d.path().join("kubepods/burstable/pod1")).unwrap();
        // (on a real hierarchy the kernel would refuse /kubepods/burstable while pod2 holds
        // budget below it and the record would stay: the k8s test sees the real thing)
        let got = recover(d.path(), ledger.path());
        assert_eq!(got.len(), 2, "{got:#?}");
        let live = got.iter().find(|r| r.cgroup.ends_with("c2")).unwrap();
        assert_eq!(live.outcome, Recovery::InUse);
        let dead = got.iter().find(|r| r.cgroup.ends_with("c1")).unwrap();
        assert_eq!(dead.outcome, Recovery::Restored, "{dead:#?}");
        assert_eq!((get("kubepods"), get("kubepods/burstable")), (0, 0));
        assert!(!ledger.path().join(r1.file_name()).exists(), "record dropped");
        assert!(ledger.path().join(r2.file_name()).exists(), "a live run's record stays");
        assert_eq!(get("kubepods/burstable/pod2/c2"), 100000, "a live grant is not touched");
        // nothing left on record for pod1: a second pass does nothing
        let again = recover(d.path(), ledger.path());
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].outcome, Recovery::InUse);
    }

    #[test]
    fn recover_leaves_a_level_someone_changed_and_keeps_a_refused_record() {
        let d = tree(&[("/", 950000), ("/kubepods", 0), ("/kubepods/p", 0), ("/kubepods/p/c", 0)]);
        let ledger = tempfile::tempdir().unwrap();
        let mut c = Chain::read(d.path(), "/kubepods/p/c", 100000).unwrap();
        let rec = Record::of(&c, "/kubepods/p/c");
        write_record(ledger.path(), &rec).unwrap();
        c.grant().unwrap();
        std::fs::remove_dir_all(d.path().join("kubepods/p/c")).unwrap();
        // an administrator raised /kubepods since: not ours to undo
        std::fs::write(d.path().join("kubepods").join(RUNTIME), "300000\n").unwrap();
        // the pod level cannot be written (a directory where the file is): refused
        let podfile = d.path().join("kubepods/p").join(RUNTIME);
        std::fs::remove_file(&podfile).unwrap();
        std::fs::create_dir(&podfile).unwrap();
        let got = recover(d.path(), ledger.path());
        assert_eq!(got[0].outcome, Recovery::Failed, "{got:#?}");
        assert!(ledger.path().join(rec.file_name()).exists(), "kept for the next pass");
        assert_eq!(read_value(&d.path().join("kubepods").join(RUNTIME)).unwrap(), 300000);
        assert!(got[0].detail.contains("left alone"), "{}", got[0].detail);
        // unreadable records are reported, not fatal
        std::fs::write(ledger.path().join("grant-x.json"), "{").unwrap();
        let got = recover(d.path(), ledger.path());
        assert!(got.iter().any(|r| r.record == "grant-x.json" && r.outcome == Recovery::Failed));
        assert!(recover(d.path(), &d.path().join("missing")).is_empty());
    }
}
