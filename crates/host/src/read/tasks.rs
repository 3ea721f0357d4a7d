//! Tasks: every `/proc/PID/task/TID` — `stat` (state, flags, last CPU, policy, RT priority,
//! nice, start time), `status` (`Cpus_allowed_list`, context switches), and per process
//! `cgroup` and `cmdline`. Processes that exit while being read are skipped silently.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use cpuset::CpuSet;

use super::Ctx;
use crate::model::Task;
use crate::parse::task::{self as ptask, PF_KTHREAD, PF_NO_SETAFFINITY};
use crate::root::ReadError;

/// Every process's threads, read on this thread (`None` when `proc` is absent or holds no
/// process directories, noted as unknown).
pub(super) fn read(
    cx: &mut Ctx,
    max_processes: Option<usize>,
    skip_cmdline: bool,
) -> Option<Vec<Task>> {
    let work = Work::new(cx, max_processes, skip_cmdline)?;
    work.help();
    Some(work.finish(cx))
}

/// Processes per batch: the unit a reading thread takes at a time. Small enough that the
/// threads finish together (processes differ in thread count), big enough that taking one
/// costs nothing next to reading it.
const BATCH: usize = 32;
/// Processes per reading thread below which another thread is not worth starting.
const PER_WORKER: usize = 512;

/// The processes to read, shared by every thread that helps: each takes the next batch of
/// PIDs until none is left; [`Work::finish`] puts the batches back in PID order, so the tasks,
/// unknowns and warnings are those of one thread reading every PID in order. Tens of thousands
/// of small procfs reads are syscall-bound: on a big host they are most of the work.
pub(super) struct Work<'a> {
    root: &'a crate::root::Root,
    pids: Vec<u32>,
    skip_cmdline: bool,
    next: AtomicUsize,
    done: Mutex<Vec<(usize, Vec<Task>, Ctx<'a>)>>,
}

impl<'a> Work<'a> {
    /// List the processes (`None` when `proc` is absent or holds no process directories,
    /// noted as unknown in `cx`); at most `max_processes`, lowest PIDs first.
    pub(super) fn new(
        cx: &mut Ctx<'a>,
        max_processes: Option<usize>,
        skip_cmdline: bool,
    ) -> Option<Self> {
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
        Some(Self {
            root: cx.root,
            pids,
            skip_cmdline,
            next: AtomicUsize::new(0),
            done: Mutex::new(Vec::new()),
        })
    }

    /// How many threads besides the caller are worth starting: up to 8 readers in all, one
    /// per `PER_WORKER` processes, and at least one beside the caller when there is a second
    /// core (the caller has other areas to read first).
    pub(super) fn helpers(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        (self.pids.len() / PER_WORKER).clamp(1, cores).min(cores - 1)
    }

    /// Read batches until none is left.
    pub(super) fn help(&self) {
        let mut sc = Scratch::default();
        let mut done = Vec::new();
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(part) = self.pids.chunks(BATCH).nth(i) else { break };
            let mut cx = Ctx::new(self.root);
            let mut tasks = Vec::with_capacity(part.len() * 4);
            for &pid in part {
                read_process(&mut cx, pid, self.skip_cmdline, &mut tasks, &mut sc);
            }
            done.push((i, tasks, cx));
        }
        match self.done.lock() {
            Ok(mut g) => g.append(&mut done),
            Err(p) => p.into_inner().append(&mut done),
        }
    }

    /// The tasks in PID order; what the batches noted goes to `cx` in the same order.
    pub(super) fn finish(self, cx: &mut Ctx) -> Vec<Task> {
        let mut done = match self.done.into_inner() {
            Ok(d) => d,
            Err(p) => p.into_inner(),
        };
        done.sort_unstable_by_key(|(i, ..)| *i);
        let mut tasks = Vec::with_capacity(done.iter().map(|(_, t, _)| t.len()).sum());
        for (_, t, local) in done {
            tasks.extend(t);
            cx.absorb(local);
        }
        tasks
    }
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
