//! What a running measurement shows and leaves behind while it goes on: a progress line on a
//! terminal (stderr, once a second) and the partial result rewritten atomically every few
//! seconds, so a long run killed hard still leaves its numbers.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use results::LatencyResult;

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

/// Progress on a terminal and periodic checkpoints of the partial result.
#[derive(Debug)]
pub struct Progress {
    /// Show the progress line (stderr is a terminal and the user did not ask for quiet).
    pub tty: bool,
    /// The planned run length, when there is one.
    pub total: Option<Duration>,
    /// Where the partial result is rewritten.
    pub checkpoint: Option<PathBuf>,
}

impl Progress {
    /// At the end of a run: erase the progress line, then say loudly (even when quiet) if the
    /// numbers are not real-time ones.
    pub fn finish(&self, r: Option<&LatencyResult>) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
        let notes = r.map_or(&[][..], |r| &r.notes[..]);
        if let Some(n) = notes.iter().find(|n| n.starts_with("NOT REAL-TIME")) {
            eprintln!("lowlat: WARNING: {n}");
        }
    }
}

impl Observer for Progress {
    fn tick(&mut self, elapsed: Duration, live: &[Live]) {
        if self.tty {
            eprint!("\r\x1b[K{}", line(elapsed, self.total, live));
            let _ = std::io::stderr().flush();
        }
    }

    fn checkpoint(&mut self, partial: &LatencyResult) {
        if let Some(p) = &self.checkpoint {
            if let Err(e) = write_json(p, partial) {
                eprintln!("\nlowlat: warning: checkpoint {} not written: {e}", p.display());
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
        let mut p = Progress { tty: false, total: None, checkpoint: Some(path.clone()) };
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
        let mut p = Progress {
            tty: false,
            total: None,
            checkpoint: Some(PathBuf::from("/nonexistent/dir/t.json")),
        };
        p.checkpoint(&result());
    }
}
