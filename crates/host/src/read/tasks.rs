//! Tasks: every `/proc/PID/task/TID` — `stat` (state, flags, last CPU, policy, RT priority,
//! nice, start time), `status` (`Cpus_allowed_list`, context switches), and per process
//! `cgroup` and `cmdline`. Processes that exit while being read are skipped silently.

use cpuset::CpuSet;

use super::Ctx;
use crate::model::{Host, Task};
use crate::parse::task::{self as ptask, PF_KTHREAD, PF_NO_SETAFFINITY};
use crate::root::ReadError;

pub(super) fn read(
    cx: &mut Ctx,
    host: &mut Host,
    max_processes: Option<usize>,
    skip_cmdline: bool,
) {
    let Some(names) = cx.list("tasks", "proc") else {
        cx.unknown("tasks", "proc", "not present".into());
        return;
    };
    let mut pids: Vec<u32> = names.iter().filter_map(|n| n.parse().ok()).collect();
    if pids.is_empty() {
        cx.unknown(
            "tasks",
            "proc/<pid>",
            "no process directories (a must-gather or a snapshot without tasks)".into(),
        );
        return;
    }
    pids.sort_unstable();
    if let Some(m) = max_processes {
        pids.truncate(m);
    }
    host.tasks = Some(read_parallel(cx, &pids, skip_cmdline));
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
        for &pid in pids {
            read_process(cx, pid, skip_cmdline, &mut tasks);
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
                    for &pid in part {
                        read_process(&mut local, pid, skip_cmdline, &mut tasks);
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
        for u in local.unknown {
            cx.unknown(&u.field, &u.path, u.reason);
        }
        cx.warnings.extend(local.warnings);
    }
    tasks
}

fn read_process(cx: &mut Ctx, pid: u32, skip_cmdline: bool, out: &mut Vec<Task>) {
    let Ok(tids) = cx.root.list_dir(&format!("proc/{pid}/task")) else { return };
    let mut tids: Vec<u32> = tids.iter().filter_map(|t| t.parse().ok()).collect();
    tids.sort_unstable();
    let mut cgroup: Option<Option<String>> = None;
    let mut cmdline: Option<Option<String>> = None;
    for tid in tids {
        let base = format!("proc/{pid}/task/{tid}");
        let stat_path = format!("{base}/stat");
        let stat = match cx.root.read_record_string(&stat_path) {
            Ok(s) => s,
            Err(ReadError::NotFound { .. }) => continue,
            Err(e) => {
                cx.unknown("tasks[]", &stat_path, e.reason());
                continue;
            }
        };
        let st = match ptask::stat(&stat) {
            Ok(s) => s,
            Err(m) => {
                cx.warn(&stat_path, Some(1), m);
                continue;
            }
        };
        let kthread = st.flags & PF_KTHREAD != 0;
        let status_path = format!("{base}/status");
        let status = match cx.root.read_record_string(&status_path) {
            Ok(s) => ptask::status(&s),
            Err(e) => {
                if !e.is_not_found() {
                    cx.unknown("tasks[].allowed_cpus", &status_path, e.reason());
                }
                ptask::Status::default()
            }
        };
        let allowed_cpus =
            status.cpus_allowed_list.as_deref().and_then(|l| match CpuSet::parse_list(l) {
                Ok(s) => Some(s),
                Err(e) => {
                    cx.warn(&status_path, None, format!("Cpus_allowed_list: {e}"));
                    None
                }
            });
        let cg = cgroup
            .get_or_insert_with(|| {
                cx.root
                    .read_string(&format!("proc/{pid}/cgroup"))
                    .ok()
                    .and_then(|s| ptask::cgroup(&s))
            })
            .clone();
        let cmd = if kthread || skip_cmdline {
            None
        } else {
            cmdline
                .get_or_insert_with(|| {
                    cx.root.read_record(&format!("proc/{pid}/cmdline")).ok().and_then(|b| {
                        let s: String =
                            String::from_utf8_lossy(&b).replace('\0', " ").trim().to_string();
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
