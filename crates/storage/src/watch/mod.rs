//! `lowlat watch storage` and `lowlat watch cmd`: sample until stopped (or for a duration or a
//! number of samples), print a live line, append JSON lines, detect a cliff (a step change
//! that stays), and keep a Prometheus textfile up to date.

mod recorder;
pub mod sample;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use util::exit::ExitCode;

use crate::error::StorageError;
use crate::text;
use recorder::Recorder;
pub use recorder::WatchConfig;
use sample::{read_psi, scan_dstate, Canary, DStateTracker};

/// What `watch storage` samples.
#[derive(Debug, Clone)]
pub struct StorageWatch {
    /// Directory on the filesystem to watch (canary files are removed on exit).
    pub dir: PathBuf,
    /// Bytes of the O_DSYNC canary write.
    pub write_size: u64,
    /// fdatasyncs in the short burst after the canary write.
    pub burst: usize,
}

/// How a watcher ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOutcome {
    /// A cliff was found.
    pub cliff: bool,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
}

impl WatchOutcome {
    /// 130 when interrupted, 1 when a cliff was found, 0 otherwise.
    pub fn exit_code(&self) -> ExitCode {
        if self.interrupted {
            ExitCode::Interrupted
        } else if self.cliff {
            ExitCode::CheckFailed
        } else {
            ExitCode::Ok
        }
    }
}

fn outcome(rec: &Recorder<'_>, stop: &AtomicBool) -> WatchOutcome {
    WatchOutcome { cliff: rec.found_cliff(), interrupted: stop.load(Ordering::SeqCst) }
}

fn line(out: &mut dyn Write, text: &str) -> Result<(), StorageError> {
    writeln!(out, "{text}").map_err(StorageError::View)
}

/// Watch storage: every interval an `O_DSYNC` canary write plus an fdatasync burst (on their
/// own thread, so a write that hangs is reported while it hangs), the threads in D state and
/// PSI io, read from `root`. Live lines go to `out`; `stop` ends the watch.
pub fn watch_storage(
    cfg: &WatchConfig,
    w: &StorageWatch,
    root: &host::Root,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<WatchOutcome, StorageError> {
    let dir = |m: String| StorageError::Input(format!("the directory {}: {m}", w.dir.display()));
    let md = std::fs::metadata(&w.dir).map_err(|e| dir(e.to_string()))?;
    if !md.is_dir() {
        return Err(dir("not a directory".into()));
    }
    if w.write_size == 0 {
        return Err(StorageError::Input("a canary write of 0 bytes: expected at least 1".into()));
    }
    let mut rec = Recorder::new(cfg, stop)?;
    let mut canary = Canary::new(&w.dir, w.write_size, w.burst)
        .map_err(|e| dir(format!("cannot create canary files: {e}")))?;
    let interval = cfg.interval;
    let head = format!(
        "lowlat watch storage: {} every {interval:?}: O_DSYNC write of {} B + {} fdatasyncs; D-state threads; PSI io",
        w.dir.display(),
        w.write_size,
        w.burst
    );
    line(out, &head)?;
    let (req_tx, req_rx) = mpsc::channel::<()>();
    let (res_tx, res_rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        while req_rx.recv().is_ok() {
            if res_tx.send(canary.run_once()).is_err() {
                break;
            }
        }
        drop(canary);
    });
    let mut tracker = DStateTracker::default();
    let mut in_flight: Option<Instant> = None;
    let mut failure = None;
    while !rec.done() {
        let tick = Instant::now();
        if in_flight.is_none() {
            req_tx.send(()).ok();
            in_flight = Some(Instant::now());
        }
        let mut s = rec.sample("storage");
        match res_rx.recv_timeout(interval.max(Duration::from_millis(10))) {
            Ok(Ok(r)) => {
                s.value_ns = r.write_ns;
                s.burst_p50_ns = Some(r.burst_p50_ns);
                s.burst_max_ns = Some(r.burst_max_ns);
                in_flight = None;
            }
            Ok(Err(e)) => {
                failure = Some(StorageError::io("canary write in", &w.dir, e));
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let blocked = in_flight.map_or(Duration::ZERO, |t| t.elapsed());
                s.value_ns = blocked.as_nanos() as u64;
                s.error =
                    Some(format!("sync write still blocked after {:.1} s", blocked.as_secs_f64()));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let e = std::io::Error::other("the canary thread ended");
                failure = Some(StorageError::io("canary write in", &w.dir, e));
                break;
            }
        }
        s.dstate = tracker.update(scan_dstate(root), interval);
        (s.psi_some_avg10, s.psi_full_avg10) = read_psi(root);
        let step = line(out, &text::watch_storage_line(SystemTime::now(), &s))
            .and_then(|()| rec.record(s))
            .and_then(|cliff| cliff.map_or(Ok(()), |m| line(out, &m)));
        if let Err(e) = step {
            failure = Some(e);
            break;
        }
        if in_flight.is_none() {
            rec.sleep_until(tick + interval);
        }
    }
    drop(req_tx);
    // A canary stuck in the kernel cannot be cancelled: wait briefly, then leave its files.
    let end = Instant::now() + Duration::from_secs(10);
    while !worker.is_finished() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    if worker.is_finished() {
        let _ = worker.join();
    } else {
        eprintln!(
            "lowlat: canary write still blocked at exit; its files in {} stay",
            w.dir.display()
        );
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(outcome(&rec, stop)),
    }
}

/// Watch a command: run it in a loop (at most one start per interval), recording its
/// wall-clock duration and exit status. Live lines go to `out`; `stop` ends the watch.
pub fn watch_cmd(
    cfg: &WatchConfig,
    command: &[String],
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<WatchOutcome, StorageError> {
    let mut rec = Recorder::new(cfg, stop)?;
    let (prog, args) =
        command.split_first().ok_or_else(|| StorageError::Input("no command to run".into()))?;
    line(out, &format!("lowlat watch cmd: {} (every {:?})", command.join(" "), cfg.interval))?;
    while !rec.done() {
        let tick = Instant::now();
        let mut s = rec.sample("cmd");
        let status = std::process::Command::new(prog)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        s.value_ns = tick.elapsed().as_nanos() as u64;
        match status {
            Ok(st) => s.exit_code = st.code(),
            Err(e) if rec.samples == 0 => {
                return Err(StorageError::Input(format!("cannot run {prog:?}: {e}")))
            }
            Err(e) => s.error = Some(e.to_string()),
        }
        line(out, &text::watch_cmd_line(SystemTime::now(), rec.samples + 1, &s))?;
        if let Some(m) = rec.record(s)? {
            line(out, &m)?;
        }
        rec.sleep_until(tick + cfg.interval);
    }
    Ok(outcome(&rec, stop))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(count: u64) -> WatchConfig {
        WatchConfig {
            interval: Duration::from_millis(10),
            duration: None,
            count: Some(count),
            output: None,
            prometheus: None,
            cliff_ratio: 5.0,
            cliff_samples: 5,
        }
    }

    #[test]
    fn storage_watch_samples_and_removes_its_canary() {
        let d = tempfile::tempdir().unwrap();
        let w = StorageWatch { dir: d.path().into(), write_size: 4096, burst: 2 };
        let mut out = Vec::new();
        let stop = AtomicBool::new(false);
        let o = watch_storage(&cfg(2), &w, &host::Root::live(), &stop, &mut out).unwrap();
        assert_eq!(o.exit_code(), ExitCode::Ok);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.lines().nth(1).unwrap().contains(" sync-write "), "{text}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "canary files removed");
        let w = StorageWatch { dir: d.path().join("nope"), ..w };
        let e = watch_storage(&cfg(1), &w, &host::Root::live(), &stop, &mut Vec::new());
        assert!(e.unwrap_err().is_input());
    }

    #[test]
    fn cmd_watch_counts_runs_and_refuses_what_cannot_run() {
        let stop = AtomicBool::new(false);
        let mut out = Vec::new();
        let o = watch_cmd(&cfg(2), &["true".into()], &stop, &mut out).unwrap();
        assert_eq!(o, WatchOutcome { cliff: false, interrupted: false });
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("lowlat watch cmd: true (every 10ms)\n"), "{text}");
        assert!(text.contains(" #2 ") && text.ends_with("exit 0\n"), "{text}");
        let e = watch_cmd(&cfg(1), &["/nonexistent-lowlat".into()], &stop, &mut Vec::new());
        assert!(e.unwrap_err().is_input());
        stop.store(true, Ordering::SeqCst);
        let o = watch_cmd(&cfg(1), &["true".into()], &stop, &mut Vec::new()).unwrap();
        assert_eq!(o.exit_code(), ExitCode::Interrupted);
    }
}
