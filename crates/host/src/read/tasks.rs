//! Tasks: every `/proc/PID/task/TID` — `stat` (state, flags, last CPU, policy, RT priority,
//! nice, start time), `status` (`Cpus_allowed_list`, context switches), and per process
//! `cgroup` and `cmdline`. Processes that exit while being read are skipped silently.

use cpuset::CpuSet;

use super::Ctx;
use crate::model::Task;
use crate::parse::task::{self as ptask, PF_KTHREAD, PF_NO_SETAFFINITY};
use crate::root::ReadError;

/// Every process's threads (`None` when `proc` is absent or holds no process directories,
/// noted as unknown). Touches nothing but `cx`, so it can run beside the other areas.
pub(super) fn read(
    cx: &mut Ctx,
    max_processes: Option<usize>,
    skip_cmdline: bool,
) -> Option<Vec<Task>> {
    let Some(names) = cx.list("tasks", "proc") else {
        cx.unknown("tasks", "proc", "not present".into());
        return None;
    };
    let mut pids: Vec<u32> = names.iter().filter_map(|n| n.parse().ok()).collect();
    if pids.is_empty() {
        cx.unknown(
            "tasks",
            "proc/<pid>",
            "no process directories (a must-gather or a snapshot without tasks)".into(),
        );
        return None;
    }
    pids.sort_unstable();
    if let Some(m) = max_processes {
        pids.truncate(m);
    }
    Some(read_parallel(cx, &pids, skip_cmdline))
}

/// Processes per worker below which threads are not worth starting.
const PER_WORKER: usize = 512;

/// Read processes on a few threads (contiguous PID ranges, results joined in PID order):
/// tens of thousands of small procfs reads are syscall-bound, and the cores are otherwise idle.
fn read_parallel(cx: &mut Ctx, pids: &[u32], skip_cmdline: bool) -> Vec<Task> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let workers = (pids.len() / PER_WORKER).clamp(1, cores);
    if workers == 1 {
        let mut tasks = Vec::with_capacity(pids.len() * 2);
        let mut sc = Scratch::default();
        for &pid in pids {
            read_process(cx, pid, skip_cmdline, &mut tasks, &mut sc);
        }
        return tasks;
    }
    let root = cx.root;
    let chunk = pids.len().div_ceil(workers);
    let parts: Vec<(Vec<Task>, Ctx)> = std::thread::scope(|s| {
        let handles: Vec<_> = pids
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    let mut local = Ctx::new(root);
                    let mut tasks = Vec::with_capacity(part.len() * 2);
                    let mut sc = Scratch::default();
                    for &pid in part {
                        read_process(&mut local, pid, skip_cmdline, &mut tasks, &mut sc);
                    }
                    (tasks, local)
                })
            })
            .collect();
        // A worker that panicked (it cannot: parsing returns errors) loses only its range.
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let mut tasks = Vec::with_capacity(pids.len() * 2);
    for (t, local) in parts {
        tasks.extend(t);
        cx.absorb(local);
    }
    tasks
}

/// One worker's reusable state: the path being built, the file buffers, and the last
/// `Cpus_allowed_list` parsed (threads of a process, and most processes, share one).
#[derive(Default)]
struct Scratch {
    path: String,
    name: String,
    stat: Vec<u8>,
    status: Vec<u8>,
    other: Vec<u8>,
    allowed: Option<(String, Result<CpuSet, String>)>,
}

impl Scratch {
    /// `proc/{pid}/{rest}` in the reused path buffer.
    fn path(&mut self, pid: u32, rest: std::fmt::Arguments<'_>) -> &str {
        use std::fmt::Write as _;
        self.path.clear();
        // Writing to a String cannot fail.
        let _ = write!(self.path, "proc/{pid}/{rest}");
        &self.path
    }

    /// `name` (a path inside an open directory) in the reused name buffer.
    fn set_name(&mut self, name: std::fmt::Arguments<'_>) {
        use std::fmt::Write as _;
        self.name.clear();
        // Writing to a String cannot fail.
        let _ = self.name.write_fmt(name);
    }

    /// The CPU set of a `Cpus_allowed_list` value, parsed once per distinct value in a row.
    fn allowed(&mut self, list: &str) -> &Result<CpuSet, String> {
        if !matches!(&self.allowed, Some((l, _)) if l == list) {
            self.allowed = None;
        }
        &self
            .allowed
            .get_or_insert_with(|| {
                (list.to_string(), CpuSet::parse_list(list).map_err(|e| e.to_string()))
            })
            .1
    }
}

fn read_process(cx: &mut Ctx, pid: u32, skip_cmdline: bool, out: &mut Vec<Task>, sc: &mut Scratch) {
    // The task directory stays open: each thread's files are then opened by their short name.
    let dir = cx.root.open_dir(sc.path(pid, format_args!("task")));
    let Ok(tids) = dir.list() else { return };
    let mut tids: Vec<u32> = tids.iter().filter_map(|t| t.parse().ok()).collect();
    tids.sort_unstable();
    let mut cgroup: Option<Option<String>> = None;
    let mut cmdline: Option<Option<String>> = None;
    for tid in tids {
        sc.set_name(format_args!("{tid}/stat"));
        match dir.read_record_into(&sc.name, &mut sc.stat) {
            Ok(()) => {}
            Err(ReadError::NotFound { .. }) => continue,
            Err(e) => {
                cx.unknown("tasks[]", &dir.path_of(&sc.name), e.reason());
                continue;
            }
        }
        let st = match ptask::stat(&String::from_utf8_lossy(&sc.stat)) {
            Ok(s) => s,
            Err(m) => {
                cx.warn(&dir.path_of(&sc.name), Some(1), m);
                continue;
            }
        };
        let kthread = st.flags & PF_KTHREAD != 0;
        // `TID/stat` → `TID/status`.
        sc.name.push_str("us");
        let status = match dir.read_record_into(&sc.name, &mut sc.status) {
            Ok(()) => ptask::status(&String::from_utf8_lossy(&sc.status)),
            Err(e) => {
                if !e.is_not_found() {
                    cx.unknown("tasks[].allowed_cpus", &dir.path_of(&sc.name), e.reason());
                }
                ptask::Status::default()
            }
        };
        let allowed_cpus = match status.cpus_allowed_list.as_deref() {
            None => None,
            Some(l) => match sc.allowed(l) {
                Ok(s) => Some(s.clone()),
                Err(e) => {
                    let message = format!("Cpus_allowed_list: {e}");
                    cx.warn(&dir.path_of(&sc.name), None, message);
                    None
                }
            },
        };
        let cg = cgroup
            .get_or_insert_with(|| {
                sc.path(pid, format_args!("cgroup"));
                cx.root
                    .read_record_into(&sc.path, &mut sc.other)
                    .ok()
                    .and_then(|()| ptask::cgroup(&String::from_utf8_lossy(&sc.other)))
            })
            .clone();
        let cmd = if kthread || skip_cmdline {
            None
        } else {
            cmdline
                .get_or_insert_with(|| {
                    sc.path(pid, format_args!("cmdline"));
                    cx.root.read_record_into(&sc.path, &mut sc.other).ok().and_then(|()| {
                        let s: String = String::from_utf8_lossy(&sc.other)
                            .replace('\0', " ")
                            .trim()
                            .to_string();
                        (!s.is_empty()).then_some(s)
                    })
                })
                .clone()
        };
        out.push(Task {
            pid,
            tid,
            comm: st.comm,
            cmdline: cmd,
            state: st.state,
            cpu: st.processor,
            policy: ptask::policy_name(st.policy).to_string(),
            rt_priority: st.rt_priority,
            nice: st.nice,
            kthread,
            per_cpu_kthread: kthread && st.flags & PF_NO_SETAFFINITY != 0,
            allowed_cpus,
            cgroup: cg,
            start_time: st.start_time,
            voluntary_ctxt_switches: status.voluntary_ctxt_switches,
            nonvoluntary_ctxt_switches: status.nonvoluntary_ctxt_switches,
        });
    }
}
