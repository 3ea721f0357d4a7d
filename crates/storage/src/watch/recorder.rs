//! What every watcher shares: its settings, and the loop state — the recent series, the cliff
//! detector, and the outputs (JSON lines appended to a file, a Prometheus textfile replaced atomically).

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use results::fsync::{Cliff, WatchSample};

use super::sample::{prometheus_text, write_textfile};
use crate::changepoint::{detect, CliffConfig};
use crate::error::StorageError;
use crate::units::fmt_ns;

/// What every watcher shares.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// Time between samples.
    pub interval: Duration,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Stop after this many samples.
    pub count: Option<u64>,
    /// Append the JSON-lines series here as it goes.
    pub output: Option<PathBuf>,
    /// Keep this Prometheus textfile-collector file up to date.
    pub prometheus: Option<PathBuf>,
    /// Smallest after/before ratio reported as a cliff (above 1).
    pub cliff_ratio: f64,
    /// Samples needed on each side of a cliff.
    pub cliff_samples: usize,
}

/// Samples kept for cliff detection.
const KEEP: usize = 4096;

/// Series, cliff detector, outputs.
#[derive(Debug)]
pub(crate) struct Recorder<'a> {
    cfg: &'a WatchConfig,
    stop: &'a AtomicBool,
    out: Option<std::fs::File>,
    values: VecDeque<f64>,
    times: VecDeque<(u64, String)>,
    pub(crate) samples: u64,
    cliff: Option<Cliff>,
    pub(crate) started: Instant,
}

impl<'a> Recorder<'a> {
    /// Check the settings and open the JSON-lines file (appending).
    pub(crate) fn new(cfg: &'a WatchConfig, stop: &'a AtomicBool) -> Result<Self, StorageError> {
        if cfg.cliff_ratio.is_nan() || cfg.cliff_ratio <= 1.0 {
            return Err(StorageError::Input(format!(
                "a cliff ratio of {}: must be above 1",
                cfg.cliff_ratio
            )));
        }
        let out = match &cfg.output {
            // Never through a symlink planted at the path; a new file is 0644 less the umask.
            Some(p) => Some(util::fs::open_append(p, 0o644).map_err(|e| {
                StorageError::Input(format!("the output file {}: {e}", p.display()))
            })?),
            None => None,
        };
        // Found now, not at the first sample: the textfile is replaced atomically beside it.
        if let Some(p) = &cfg.prometheus {
            util::fs::check_writable(p).map_err(|e| {
                StorageError::Input(format!(
                    "--prometheus {}: cannot be written ({e}); create its directory or choose another path",
                    p.display()
                ))
            })?;
        }
        Ok(Self {
            cfg,
            stop,
            out,
            values: VecDeque::new(),
            times: VecDeque::new(),
            samples: 0,
            cliff: None,
            started: Instant::now(),
        })
    }

    /// Stopped, or enough samples, or long enough.
    pub(crate) fn done(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
            || self.cfg.count.is_some_and(|c| self.samples >= c)
            || self.cfg.duration.is_some_and(|d| self.started.elapsed() >= d)
    }

    /// A sample of `watch` taken now, to be filled in.
    pub(crate) fn sample(&self, watch: &str) -> WatchSample {
        WatchSample {
            time: util::time::rfc3339_millis(std::time::SystemTime::now()),
            t_ns: self.started.elapsed().as_nanos() as u64,
            watch: watch.into(),
            ..Default::default()
        }
    }

    /// Record a sample: cliff detection, JSON line, Prometheus file. Returns the cliff message
    /// when this sample reveals a new cliff.
    pub(crate) fn record(&mut self, mut s: WatchSample) -> Result<Option<String>, StorageError> {
        self.samples += 1;
        self.values.push_back(s.value_ns.max(1) as f64);
        self.times.push_back((s.t_ns, s.time.clone()));
        if self.values.len() > KEEP {
            self.values.pop_front();
            self.times.pop_front();
        }
        let cfg = CliffConfig {
            min_ratio: self.cfg.cliff_ratio,
            min_segment: self.cfg.cliff_samples.max(2),
            ..Default::default()
        };
        let series: Vec<f64> = self.values.iter().copied().collect();
        let mut msg = None;
        if let Some(c) = detect(&series, &cfg) {
            let (t_ns, time) = self.times.get(c.index).cloned().unwrap_or_default();
            let global = self.samples as usize - (series.len() - c.index);
            // The same step seen again (its index may wobble by a sample or two) is not new.
            let new =
                self.cliff.as_ref().is_none_or(|l| l.index.abs_diff(global) > cfg.min_segment);
            if new {
                let verb = if c.ratio >= 1.0 { "rose" } else { "fell" };
                let factor = if c.ratio >= 1.0 { c.ratio } else { 1.0 / c.ratio };
                let when = time.get(11..19).unwrap_or(&time).to_string();
                msg = Some(format!(
                    "CLIFF: latency {verb} {factor:.0}× at {when} ({} → {}) and stayed",
                    fmt_ns(c.before as u64),
                    fmt_ns(c.after as u64)
                ));
                let cliff = Cliff {
                    index: global,
                    t_ns,
                    time: Some(time),
                    before_ns: c.before as u64,
                    after_ns: c.after as u64,
                    ratio: c.ratio,
                };
                s.cliff = Some(cliff.clone());
                self.cliff = Some(cliff);
            }
        }
        if let (Some(f), Some(p)) = (&mut self.out, &self.cfg.output) {
            let line = serde_json::to_string(&s).map_err(std::io::Error::other);
            line.and_then(|l| writeln!(f, "{l}"))
                .map_err(|e| StorageError::io("append a sample to", p, e))?;
        }
        if let Some(p) = &self.cfg.prometheus {
            let text = prometheus_text(&s, self.samples, self.cliff.as_ref().map(|c| c.ratio));
            write_textfile(p, &text).map_err(|e| StorageError::io("write", p, e))?;
        }
        Ok(msg)
    }

    /// Was a cliff found?
    pub(crate) fn found_cliff(&self) -> bool {
        self.cliff.is_some()
    }

    /// Sleep until `t`, or less when the watch ends first (stopped, or its duration is up).
    pub(crate) fn sleep_until(&self, t: Instant) {
        let end = self.cfg.duration.map_or(t, |d| t.min(self.started + d));
        crate::pace::sleep_until(end, Duration::from_millis(50), self.stop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> WatchConfig {
        WatchConfig {
            interval: Duration::ZERO,
            duration: None,
            count: Some(3),
            output: None,
            prometheus: None,
            cliff_ratio: 5.0,
            cliff_samples: 5,
        }
    }

    #[test]
    fn a_step_is_reported_once_and_written_out() {
        let d = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.output = Some(d.path().join("w.jsonl"));
        c.prometheus = Some(d.path().join("w.prom"));
        let stop = AtomicBool::new(false);
        let mut r = Recorder::new(&c, &stop).unwrap();
        let mut msgs = Vec::new();
        for i in 0..30u64 {
            let mut s = r.sample("cmd");
            s.value_ns = if i < 12 { 1_000_000 } else { 20_000_000 };
            msgs.extend(r.record(s).unwrap());
        }
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert!(msgs[0].starts_with("CLIFF: latency rose 20× at "), "{msgs:?}");
        assert!(r.found_cliff() && r.done(), "count reached");
        let lines = std::fs::read_to_string(d.path().join("w.jsonl")).unwrap();
        assert_eq!(lines.lines().count(), 30);
        assert_eq!(lines.lines().filter(|l| l.contains("\"cliff\"")).count(), 1);
        let prom = std::fs::read_to_string(d.path().join("w.prom")).unwrap();
        assert!(prom.contains("lowlat_watch_samples{watch=\"cmd\"} 30"), "{prom}");
    }

    #[test]
    fn bad_settings_are_input_errors() {
        let stop = AtomicBool::new(false);
        let mut c = cfg();
        c.cliff_ratio = 1.0;
        assert!(Recorder::new(&c, &stop).unwrap_err().is_input());
        let mut c = cfg();
        c.output = Some("/nonexistent-lowlat/w.jsonl".into());
        let e = Recorder::new(&c, &stop).unwrap_err();
        assert!(e.is_input() && e.to_string().contains("nonexistent-lowlat"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = d.path().join("w.jsonl");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        c.output = Some(link);
        let e = Recorder::new(&c, &stop).unwrap_err();
        assert!(e.is_input() && e.to_string().contains("w.jsonl: is a symbolic link"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        c.output = None;
        let r = Recorder::new(&c, &stop).unwrap();
        stop.store(true, Ordering::SeqCst);
        assert!(r.done());
    }
}
