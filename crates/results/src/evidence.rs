//! The one rule every verdict goes through: **a verdict needs evidence.** A result with no
//! samples, unusable samples, a failed producer or a partial run can never be a PASS, in any
//! command (`measure`, `import`, `report`, `report --compare`, `check`, `cluster check`), and
//! the reason is shown. Each result type says here, and only here, whether it holds evidence
//! ([`Evidence::no_evidence`]); callers turn the answer into their own exit code or banner.

use crate::fsync::{EtcdResult, FsyncResult, WatchSample};
use crate::latency::{LatencyResult, ThreadResult, TicksResult};
use crate::Envelope;

/// Why a result cannot support a PASS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoEvidence {
    /// The tool that produced the numbers reported a failure (what it said).
    Failed(String),
    /// The run was cut short: its numbers cover only what ran (the `CUT SHORT` note when
    /// there is one).
    Partial(Option<String>),
    /// Nothing was measured (what is missing, in the result's own words).
    Empty(String),
    /// Numbers are there but cannot be used (why).
    Unusable(String),
}

impl NoEvidence {
    /// `true` when the numbers exist but the run did not complete (partial, failed): a gate
    /// fails (exit 1); otherwise nothing can be judged at all (an input error for
    /// `report --strict`, exit 2).
    pub fn is_failed_run(&self) -> bool {
        matches!(self, NoEvidence::Failed(_) | NoEvidence::Partial(_))
    }
}

impl std::fmt::Display for NoEvidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoEvidence::Failed(why) => write!(f, "the measuring tool failed: {why}"),
            NoEvidence::Partial(Some(note)) => write!(f, "partial: {note}"),
            NoEvidence::Partial(None) => {
                f.write_str("partial: the run was cut short; its numbers cover only what ran")
            }
            NoEvidence::Empty(what) => write!(f, "no evidence: {what}"),
            NoEvidence::Unusable(why) => write!(f, "unusable numbers: {why}"),
        }
    }
}

/// Whether a result holds the evidence a verdict needs.
pub trait Evidence {
    /// `None` when the result can be judged; else the first reason it cannot.
    fn no_evidence(&self) -> Option<NoEvidence>;
}

/// What the envelope alone says: a failed producer, then a partial run.
fn envelope(e: &Envelope, notes: &[String]) -> Option<NoEvidence> {
    if let Some(why) = &e.failed {
        return Some(NoEvidence::Failed(why.clone()));
    }
    e.partial
        .then(|| NoEvidence::Partial(notes.iter().find(|n| n.starts_with("CUT SHORT")).cloned()))
}

impl Evidence for LatencyResult {
    fn no_evidence(&self) -> Option<NoEvidence> {
        if let Some(n) = envelope(&self.envelope, &self.notes) {
            return Some(n);
        }
        if self.threads.is_empty() {
            return Some(NoEvidence::Empty("no CPU was measured".into()));
        }
        if !self.measured() {
            return Some(NoEvidence::Empty(format!(
                "no samples on {} measured CPU(s)",
                self.threads.len()
            )));
        }
        self.threads.iter().find_map(thread_unusable).map(NoEvidence::Unusable)
    }
}

/// Why one thread's numbers contradict each other (`None`: they do not): a minimum above
/// the maximum, percentiles that fall, histogram buckets out of order or overlapping, or a
/// histogram whose buckets do not add up to its count or to the thread's.
fn thread_unusable(t: &ThreadResult) -> Option<String> {
    let who = t.cpu.map_or_else(|| "a thread".to_string(), |c| format!("CPU {c}"));
    let s = &t.stats;
    if !t.max_known() {
        return None;
    }
    if s.min_ns > s.max_ns {
        return Some(format!(
            "{who}: its minimum ({} ns) is above its maximum ({} ns)",
            s.min_ns, s.max_ns
        ));
    }
    let known: Vec<u64> =
        [s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns, s.p9999_ns].into_iter().flatten().collect();
    if known.windows(2).any(|p| p[0] > p[1]) {
        return Some(format!("{who}: percentiles that fall (p50 … p99.99: {known:?} ns)"));
    }
    let h = &t.histogram;
    let mut prev_hi = 0;
    for b in &h.buckets {
        if b.lo_ns >= b.hi_ns || b.lo_ns < prev_hi {
            return Some(format!(
                "{who}: histogram bucket {} … {} ns out of order or overlapping the one before (ending at {prev_hi} ns)",
                b.lo_ns, b.hi_ns
            ));
        }
        prev_hi = b.hi_ns;
    }
    if h.buckets.is_empty() || h.count == 0 {
        return None;
    }
    let held = h.buckets.iter().fold(h.overflow, |a, b| a.saturating_add(b.count));
    if held != h.count {
        return Some(format!(
            "{who}: the histogram's buckets and overflow hold {held} samples but its count is {}",
            h.count
        ));
    }
    (s.count > 0 && s.count != h.count)
        .then(|| format!("{who}: {} samples, but its histogram holds {}", s.count, h.count))
}

impl Evidence for TicksResult {
    fn no_evidence(&self) -> Option<NoEvidence> {
        envelope(&self.envelope, &self.notes).or_else(|| {
            self.cpus.is_empty().then(|| NoEvidence::Empty("no CPU was measured".into()))
        })
    }
}

impl Evidence for FsyncResult {
    fn no_evidence(&self) -> Option<NoEvidence> {
        let notes: Vec<String> =
            self.scenarios.iter().flat_map(|s| s.notes.iter().cloned()).collect();
        if let Some(n) = envelope(&self.envelope, &notes) {
            return Some(n);
        }
        if self.ops == 0 && self.scenarios.iter().all(|s| s.ops == 0) {
            return Some(NoEvidence::Empty("no write + sync completed (0 ops)".into()));
        }
        let l = self.lat_ns;
        (l.min > l.max || l.p99 > l.max).then(|| {
            NoEvidence::Unusable(format!(
                "latencies that contradict each other (min {} ns, p99 {} ns, max {} ns)",
                l.min, l.p99, l.max
            ))
        })
    }
}

impl Evidence for EtcdResult {
    fn no_evidence(&self) -> Option<NoEvidence> {
        if let Some(n) = envelope(&self.envelope, &[]) {
            return Some(n);
        }
        let w = &self.wal_fsync;
        if w.count == 0 {
            return Some(NoEvidence::Empty(
                "no fsyncs observed in the window (etcd wrote nothing, or the counters did not move)"
                    .into(),
            ));
        }
        // A live scrape adds up exactly; Prometheus' increase() is fractional and each bucket
        // is truncated on its own: at most one lost per bucket.
        let in_buckets = w.buckets.iter().fold(0u64, |a, b| a.saturating_add(b.count));
        if in_buckets.abs_diff(w.count) > w.buckets.len() as u64 {
            return Some(NoEvidence::Unusable(format!(
                "{}: the buckets hold {in_buckets} fsyncs but the count is {}",
                w.metric, w.count
            )));
        }
        let les: Vec<u64> = w.buckets.iter().map(|b| b.le_ns.unwrap_or(u64::MAX)).collect();
        if les.windows(2).any(|p| p[0] >= p[1])
            || w.buckets.last().is_some_and(|b| b.le_ns.is_some())
        {
            return Some(NoEvidence::Unusable(format!(
                "{}: bucket bounds not ascending to +Inf",
                w.metric
            )));
        }
        None
    }
}

impl Evidence for [WatchSample] {
    fn no_evidence(&self) -> Option<NoEvidence> {
        if self.is_empty() {
            return Some(NoEvidence::Empty("no sample".into()));
        }
        self.iter()
            .all(|s| s.error.is_some())
            .then(|| NoEvidence::Empty("every sample failed".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsync::{EtcdBucket, EtcdHistogram, EtcdSource};
    use crate::latency::ThreadResult;
    use crate::{Kind, Summary};

    fn timer(threads: Vec<ThreadResult>) -> LatencyResult {
        LatencyResult {
            envelope: Envelope::new(Kind::Timer, "t"),
            realtime: true,
            series_step_s: 1,
            threads,
            breaches: Vec::new(),
            load: None,
            notes: Vec::new(),
            tracer: None,
        }
    }

    fn sampled(count: u64, max_ns: u64) -> ThreadResult {
        ThreadResult {
            stats: Summary { count, max_ns, ..Summary::default() },
            ..ThreadResult::default()
        }
    }

    #[test]
    fn latency_needs_samples_a_whole_run_and_a_producer_that_did_not_fail() {
        assert_eq!(timer(vec![sampled(10, 5)]).no_evidence(), None);
        assert!(matches!(timer(Vec::new()).no_evidence(), Some(NoEvidence::Empty(_))));
        assert!(matches!(timer(vec![sampled(0, 0)]).no_evidence(), Some(NoEvidence::Empty(_))));
        let unknown = ThreadResult { count_unknown: true, ..sampled(0, 84_000) };
        assert_eq!(timer(vec![unknown]).no_evidence(), None, "max known, count unknown");
        let mut cut = timer(vec![sampled(10, 5)]);
        cut.envelope.partial = true;
        cut.notes.push("CUT SHORT: here".into());
        let n = cut.no_evidence().unwrap();
        assert!(n.is_failed_run() && n.to_string().contains("CUT SHORT: here"), "{n}");
        let mut failed = timer(vec![sampled(10, 5)]);
        failed.envelope.failed = Some("cyclictest return_code 1".into());
        let n = failed.no_evidence().unwrap();
        assert!(n.is_failed_run() && n.to_string().contains("return_code 1"), "{n}");
    }

    fn etcd(count: u64, buckets: Vec<EtcdBucket>) -> EtcdResult {
        EtcdResult {
            envelope: Envelope::new(Kind::Etcd, "t"),
            endpoint: String::new(),
            source: EtcdSource::Metrics,
            tls: false,
            query: None,
            wal_fsync: EtcdHistogram { metric: "wal".into(), count, buckets, ..Default::default() },
            backend_commit: None,
            windows: Vec::new(),
            verdicts: Vec::new(),
            caveat: String::new(),
        }
    }

    #[test]
    fn etcd_needs_fsyncs_and_buckets_that_add_up() {
        let b = |le: Option<u64>, count| EtcdBucket { le_ns: le, count };
        let good = etcd(5, vec![b(Some(1_000_000), 4), b(None, 1)]);
        assert_eq!(good.no_evidence(), None);
        let idle = etcd(0, vec![b(Some(1_000_000), 0), b(None, 0)]).no_evidence().unwrap();
        assert!(idle.to_string().contains("no fsyncs observed"), "{idle}");
        assert!(matches!(
            etcd(400, vec![b(Some(1_000_000), 0), b(None, 0)]).no_evidence(),
            Some(NoEvidence::Unusable(_))
        ));
        assert!(matches!(
            etcd(5, vec![b(Some(2_000_000), 4), b(Some(1_000_000), 1)]).no_evidence(),
            Some(NoEvidence::Unusable(_))
        ));
    }

    #[test]
    fn watch_needs_a_sample_that_did_not_fail() {
        let ok = WatchSample::default();
        let bad = WatchSample { error: Some("timeout".into()), ..WatchSample::default() };
        assert_eq!([ok.clone()].as_slice().no_evidence(), None);
        assert!([bad].as_slice().no_evidence().is_some());
        assert!(Vec::<WatchSample>::new().as_slice().no_evidence().is_some());
    }
}
