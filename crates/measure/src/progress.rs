//! What a running measurement shows and leaves behind while it goes on: a progress line on a
//! terminal (stderr, once a second) and the partial result rewritten atomically every few
//! seconds, so a long run killed hard still leaves its numbers.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use results::LatencyResult;

use util::term::Escaping;

use crate::runner::{Live, Observer};

/// How often a running measurement rewrites its result file.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);

/// Write `value` as pretty JSON with a final newline to `path`, atomically (a temporary file
/// beside it, then rename).
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(value)?;
    text.push(b'\n');
    util::fs::write_atomic(path, &text, 0o644)
}

/// One progress line: `3s/10s  CPU1 max 12.3µs  CPU2 max 4.0µs` (at most 8 CPUs).
pub fn line(elapsed: Duration, total: Option<Duration>, live: &[Live]) -> String {
    let cpus: Vec<String> = live
        .iter()
        .take(8)
        .map(|l| format!("CPU{} max {:.1}µs", l.cpu, l.max_ns as f64 / 1000.0))
        .collect();
    let total = total.map_or(String::new(), |t| format!("/{}s", t.as_secs()));
    format!("{}s{total}  {}", elapsed.as_secs(), cpus.join("  "))
}

/// Progress on a terminal and periodic checkpoints of the partial result. Everything it
/// prints goes through `util::term::Escaping`: a note or a path that holds a cgroup's or a
/// file's name cannot send control sequences; only its own line erase passes.
pub struct Progress {
    /// Show the progress line (stderr is a terminal and the user did not ask for quiet).
    pub tty: bool,
    /// The planned run length, when there is one.
    pub total: Option<Duration>,
    /// Where the partial result is rewritten.
    pub checkpoint: Option<PathBuf>,
    out: Escaping<Box<dyn Write>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("tty", &self.tty)
            .field("total", &self.total)
            .field("checkpoint", &self.checkpoint)
            .finish_non_exhaustive()
    }
}

/// Back to the start of the line and erase it.
const ERASE: &str = "\r\x1b[K";

impl Progress {
    /// Progress on stderr.
    pub fn new(tty: bool, total: Option<Duration>, checkpoint: Option<PathBuf>) -> Self {
        Self::to(Box::new(std::io::stderr()), tty, total, checkpoint)
    }

    /// Progress on `out`.
    pub fn to(
        out: Box<dyn Write>,
        tty: bool,
        total: Option<Duration>,
        checkpoint: Option<PathBuf>,
    ) -> Self {
        Progress { tty, total, checkpoint, out: Escaping::new(out) }
    }

    /// At the end of a run: erase the progress line, then say loudly (even when quiet) if the
    /// numbers are not real-time ones.
    pub fn finish(&mut self, r: Option<&LatencyResult>) {
        if self.tty {
            let _ = self.out.control(ERASE);
        }
        let notes = r.map_or(&[][..], |r| &r.notes[..]);
        if let Some(n) = notes.iter().find(|n| n.starts_with("NOT REAL-TIME")) {
            let _ = writeln!(self.out, "lowlat: WARNING: {n}");
        }
        let _ = self.out.flush();
    }
}

impl Observer for Progress {
    fn tick(&mut self, elapsed: Duration, live: &[Live]) {
        if self.tty {
            let _ = self.out.control(ERASE);
            let _ = write!(self.out, "{}", line(elapsed, self.total, live));
            let _ = self.out.flush();
        }
    }

    fn checkpoint(&mut self, partial: &LatencyResult) {
        if let Some(p) = &self.checkpoint {
            if let Err(e) = write_json(p, partial) {
                let _ = writeln!(
                    self.out,
                    "\nlowlat: warning: checkpoint {} not written: {e}",
                    p.display()
                );
                let _ = self.out.flush();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> LatencyResult {
        LatencyResult {
            envelope: results::Envelope::new(results::Kind::Timer, "lowlat test"),
            realtime: false,
            series_step_s: 1,
            threads: Vec::new(),
            breaches: Vec::new(),
            load: None,
            notes: Vec::new(),
            tracer: None,
        }
    }

    #[test]
    fn progress_line_shows_time_and_worst_per_cpu() {
        let live = [
            Live { cpu: 1, count: 10, max_ns: 12_345, overruns: 0 },
            Live { cpu: 2, count: 10, max_ns: 4_000, overruns: 0 },
        ];
        let l = line(Duration::from_secs(3), Some(Duration::from_secs(10)), &live);
        assert_eq!(l, "3s/10s  CPU1 max 12.3µs  CPU2 max 4.0µs");
        let many: Vec<Live> = (0..12).map(|cpu| Live { cpu, ..live[0] }).collect();
        assert_eq!(line(Duration::ZERO, None, &many).matches("CPU").count(), 8);
    }

    #[test]
    fn checkpoints_replace_the_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        let mut p = Progress::new(false, None, Some(path.clone()));
        let mut r = result();
        r.envelope.partial = true;
        p.checkpoint(&r);
        let back: LatencyResult =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(back.envelope.partial);
        r.envelope.partial = false;
        p.checkpoint(&r);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("}\n") && text.contains("\"partial\": false"), "{text}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary left");
    }

    #[test]
    fn an_unwritable_checkpoint_is_only_a_warning() {
        let mut p = Progress::new(false, None, Some(PathBuf::from("/nonexistent/dir/t.json")));
        p.checkpoint(&result());
    }

    /// A sink the test can read after the progress wrote to it.
    #[derive(Clone, Default)]
    struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn host_text_in_progress_output_cannot_send_escapes() {
        let sink = Shared::default();
        let dir = tempfile::tempdir().unwrap();
        // A checkpoint path under a directory that is not there, named with an escape.
        let bad = dir.path().join("\x1b]0;owned\x07/t.json");
        let mut p = Progress::to(Box::new(sink.clone()), true, None, Some(bad));
        let live = [Live { cpu: 1, count: 10, max_ns: 12_345, overruns: 0 }];
        p.tick(Duration::from_secs(1), &live);
        let mut r = result();
        p.checkpoint(&r);
        // The cause names the cgroup the process runs in, which the host names.
        r.notes
            .push("NOT REAL-TIME (no RT budget in cgroup /x\x1b[2J\x1b[H; ran SCHED_OTHER)".into());
        p.finish(Some(&r));
        drop(p);
        let text = String::from_utf8(sink.0.borrow().clone()).unwrap();
        assert!(text.starts_with("\r\x1b[K1s  CPU1 max 12.3µs"), "{text:?}");
        assert!(
            text.contains("checkpoint ") && text.contains("\\u{1b}]0;owned\\u{7}/t.json"),
            "{text:?}"
        );
        assert!(text.contains("cgroup /x\\u{1b}[2J\\u{1b}[H; ran"), "{text:?}");
        // The only escapes left are the progress line's own erases.
        assert_eq!(text.matches('\x1b').count(), text.matches(ERASE).count(), "{text:?}");
        assert_eq!(text.matches(ERASE).count(), 2, "{text:?}");
    }
}
