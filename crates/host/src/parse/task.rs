//! `/proc/PID/task/TID/{stat,status}` and `/proc/PID/cgroup`.

/// PF_KTHREAD: the task is a kernel thread.
pub const PF_KTHREAD: u64 = 0x0020_0000;
/// PF_NO_SETAFFINITY: userland may not change the affinity (per-CPU kthreads).
pub const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

/// The fields of `stat` lowlat uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stat {
    pub comm: String,
    pub state: String,
    pub flags: u64,
    pub nice: i32,
    pub start_time: u64,
    /// Field 39: CPU last run on.
    pub processor: Option<usize>,
    pub rt_priority: u32,
    pub policy: u32,
}

/// Parse one `stat` line. `comm` may hold spaces and parentheses: it runs from the first `(`
/// to the last `)`.
pub fn stat(text: &str) -> Result<Stat, String> {
    let open = text.find('(').ok_or("no `(` before comm")?;
    let close = text.rfind(')').ok_or("no `)` after comm")?;
    if close < open {
        return Err("`)` before `(`".into());
    }
    let comm = text[open + 1..close].to_string();
    // Fields 3 (state) to 41 (policy), on the stack: this runs once per thread on the host.
    let mut rest: [Option<&str>; 39] = [None; 39];
    for (slot, f) in rest.iter_mut().zip(text[close + 1..].split_whitespace()) {
        *slot = Some(f);
    }
    // rest[0] is field 3 (state); field n is rest[n - 3].
    let field = |n: usize| rest.get(n - 3).copied().flatten();
    let num = |n: usize| -> Result<u64, String> {
        let f = field(n).ok_or_else(|| format!("truncated: no field {n}"))?;
        f.parse()
            .map_err(|_| format!("field {n} \"{}\" is not a number", util::term::excerpt(f, 40)))
    };
    let state = field(3).ok_or("truncated: no state")?.to_string();
    let nice: i32 = field(19)
        .ok_or("truncated: no field 19")?
        .parse()
        .map_err(|_| "field 19 (nice) is not a number")?;
    Ok(Stat {
        comm,
        state,
        flags: num(9)?,
        nice,
        start_time: num(22)?,
        // Fields 39-41 appeared in 2.5/2.6; treat their absence as unknown, not an error.
        processor: field(39).and_then(|f| f.parse().ok()),
        rt_priority: field(40).and_then(|f| f.parse().ok()).unwrap_or(0),
        policy: field(41).and_then(|f| f.parse().ok()).unwrap_or(0),
    })
}

/// ps's abbreviation of a scheduling policy.
pub fn policy_name(p: u32) -> &'static str {
    match p {
        0 => "TS",
        1 => "FF",
        2 => "RR",
        3 => "B",
        5 => "IDL",
        6 => "DLN",
        _ => "?",
    }
}

/// The fields of `status` lowlat uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    pub cpus_allowed_list: Option<String>,
    pub voluntary_ctxt_switches: Option<u64>,
    pub nonvoluntary_ctxt_switches: Option<u64>,
}

/// Parse `status` (only the lines lowlat uses; the rest is skipped).
pub fn status(text: &str) -> Status {
    let mut s = Status::default();
    for l in text.lines() {
        let Some((k, v)) = l.split_once(':') else { continue };
        let v = v.trim();
        match k {
            "Cpus_allowed_list" => s.cpus_allowed_list = Some(v.to_string()),
            "voluntary_ctxt_switches" => s.voluntary_ctxt_switches = v.parse().ok(),
            "nonvoluntary_ctxt_switches" => s.nonvoluntary_ctxt_switches = v.parse().ok(),
            _ => {}
        }
    }
    s
}

/// The cgroup path that decides CPU placement: the v1 `cpuset` controller's line when
/// there is one, else the v2 unified (`0::`) line.
pub fn cgroup(text: &str) -> Option<String> {
    let mut unified = None;
    for l in text.lines() {
        let mut it = l.splitn(3, ':');
        let (Some(id), Some(ctrls), Some(path)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if ctrls.split(',').any(|c| c == "cpuset") {
            return Some(path.to_string());
        }
        if id == "0" && ctrls.is_empty() {
            unified = Some(path.to_string());
        }
    }
    unified
}

#[cfg(test)]
mod tests {
    use super::*;

    // A real kthread line (migration/0, FIFO 99, PF_NO_SETAFFINITY|PF_KTHREAD).
    const MIGRATION: &str = "15 (migration/0) S 2 0 0 0 -1 69238848 0 0 0 0 0 12 0 0 -100 0 1 0 3 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 99 1 0 0 0 0 0 0 0 0 0 0 0\n";

    #[test]
    fn kthread_stat() {
        let s = stat(MIGRATION).unwrap();
        assert_eq!(s.comm, "migration/0");
        assert_eq!(s.state, "S");
        assert_ne!(s.flags & PF_KTHREAD, 0);
        assert_ne!(s.flags & PF_NO_SETAFFINITY, 0);
        assert_eq!(s.processor, Some(0));
        assert_eq!(s.rt_priority, 99);
        assert_eq!(policy_name(s.policy), "FF");
        assert_eq!(s.nice, 0);
        assert_eq!(s.start_time, 3);
    }

    #[test]
    fn comm_with_parens_and_spaces() {
        let s = stat("7 (a) b (c) R 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0").unwrap();
        assert_eq!(s.comm, "a) b (c");
        assert_eq!(s.start_time, 99);
        assert_eq!(s.processor, None);
    }

    #[test]
    fn malformed_stat() {
        assert!(stat("").is_err());
        assert!(stat("1 (x").is_err());
        assert!(stat("1 (x) S 1 2").is_err());
        assert!(stat("1 (x) S 1 1 1 0 -1 zz 0 0 0 0 0 0 0 0 20 0 1 0 99").is_err());
    }

    #[test]
    fn status_and_cgroup() {
        let st = status("Name:\tbash\nCpus_allowed_list:\t0-1\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\tx\n");
        assert_eq!(st.cpus_allowed_list.as_deref(), Some("0-1"));
        assert_eq!(st.voluntary_ctxt_switches, Some(12));
        assert_eq!(st.nonvoluntary_ctxt_switches, None);
        assert_eq!(cgroup("0::/user.slice/x.scope\n").as_deref(), Some("/user.slice/x.scope"));
        assert_eq!(cgroup("3:cpu,cpuacct:/a\n2:cpuset:/rt\n0::/u\n").as_deref(), Some("/rt"));
        assert_eq!(cgroup("garbage"), None);
    }
}
