//! osnoise's gaps and what ran in them. The tracer emits one event per interference as it
//! ends (`irq_noise`, `softirq_noise`, `thread_noise`, `nmi_noise`, each with its start and
//! its own duration, nested ones already subtracted) and, when its thread sees a gap at or
//! above the threshold, a `sample_threshold` event with the gap's start and length. Every gap
//! gets the events that started inside it, by name; what no event explains is `hw` (hardware,
//! firmware, or a hypervisor that took the CPU). Unlike `rtla … -a`, which explains the one
//! sample that stopped the trace, this explains every gap, and sums the causes over the run.
//!
//! Pure: fed parsed lines in order, off the measured CPUs (the reader thread). Memory is
//! bounded: a short window of recent events per CPU, the longest [`MAX_GAPS`] gaps per CPU,
//! and at most [`MAX_NAMES`] distinct cause names (more are summed as `(other)`).

use std::collections::{BTreeMap, VecDeque};

use results::tracer::{Cause, Gap, GapCause, NoiseSource, OsnoiseCpu, MAX_CAUSES, MAX_GAPS};

use super::parse;

/// Recent interference events kept per CPU while waiting for their gap.
const RECENT: usize = 512;

/// Most distinct (source, name) pairs tracked over a run.
pub const MAX_NAMES: usize = 1024;

#[derive(Debug, Clone)]
struct Event {
    source: NoiseSource,
    name: String,
    start_ns: u64,
    duration_ns: u64,
}

#[derive(Debug, Default)]
struct CauseAcc {
    total_ns: u64,
    events: u64,
    gaps: u64,
    max_ns: u64,
    cpus: cpuset::CpuSet,
}

/// One CPU's state.
#[derive(Debug, Default)]
struct Cpu {
    recent: VecDeque<Event>,
    gaps: Vec<Gap>,
    osnoise: OsnoiseCpu,
}

/// The attribution of one run.
#[derive(Debug)]
pub struct Attributor {
    cpus: BTreeMap<u32, Cpu>,
    causes: BTreeMap<(NoiseSource, String), CauseAcc>,
    /// Trace-clock time the measurement started at (gap times are relative to it).
    start_ns: u64,
}

impl Attributor {
    pub fn new(cpus: &[u32], start_ns: u64) -> Self {
        Attributor {
            cpus: cpus.iter().map(|&c| (c, Cpu::default())).collect(),
            causes: BTreeMap::new(),
            start_ns,
        }
    }

    /// Set the trace-clock start (the first line's time, when the start was not known).
    pub fn set_start(&mut self, start_ns: u64) {
        self.start_ns = start_ns;
    }

    /// An interference event on `cpu`.
    pub fn noise(
        &mut self,
        cpu: u32,
        source: NoiseSource,
        name: &str,
        start_ns: u64,
        duration_ns: u64,
    ) {
        let Some(c) = self.cpus.get_mut(&cpu) else { return };
        if c.recent.len() == RECENT {
            c.recent.pop_front();
        }
        let name = parse::source_name(source, name).to_string();
        c.recent.push_back(Event { source, name, start_ns, duration_ns });
    }

    /// One osnoise period of `cpu` (the tracer's own summary).
    #[allow(clippy::too_many_arguments)]
    pub fn period(
        &mut self,
        cpu: u32,
        runtime_us: u64,
        noise_us: u64,
        max_single_us: u64,
        counts: [u64; 5],
    ) {
        let Some(c) = self.cpus.get_mut(&cpu) else { return };
        let o = &mut c.osnoise;
        o.periods += 1;
        o.runtime_ns = o.runtime_ns.saturating_add(runtime_us.saturating_mul(1000));
        o.noise_ns = o.noise_ns.saturating_add(noise_us.saturating_mul(1000));
        o.max_period_noise_ns = o.max_period_noise_ns.max(noise_us.saturating_mul(1000));
        o.max_single_ns = o.max_single_ns.max(max_single_us.saturating_mul(1000));
        let [hw, nmi, irq, softirq, thread] = counts;
        o.counts.hw += hw;
        o.counts.nmi += nmi;
        o.counts.irq += irq;
        o.counts.softirq += softirq;
        o.counts.thread += thread;
    }

    /// A gap at or above the threshold on `cpu`: what ran inside it.
    pub fn gap(&mut self, cpu: u32, start_ns: u64, duration_ns: u64, interference: u64) {
        let Some(c) = self.cpus.get_mut(&cpu) else { return };
        let end = start_ns.saturating_add(duration_ns);
        let mut by_name: BTreeMap<(NoiseSource, &str), (u64, u64)> = BTreeMap::new();
        for e in c.recent.iter().filter(|e| e.start_ns >= start_ns && e.start_ns <= end) {
            let v = by_name.entry((e.source, e.name.as_str())).or_default();
            v.0 = v.0.saturating_add(e.duration_ns);
            v.1 += 1;
        }
        let explained: u64 = by_name.values().map(|v| v.0).sum::<u64>().min(duration_ns);
        let unexplained = duration_ns - explained;
        let mut causes: Vec<GapCause> = by_name
            .iter()
            .map(|((s, n), (d, k))| GapCause {
                source: *s,
                name: (*n).to_string(),
                duration_ns: *d,
                events: *k,
            })
            .collect();
        causes.sort_by(|a, b| b.duration_ns.cmp(&a.duration_ns).then(a.name.cmp(&b.name)));
        // Sum the causes over the run.
        let add = |causes: &mut BTreeMap<(NoiseSource, String), CauseAcc>,
                   s: NoiseSource,
                   n: &str,
                   d: u64,
                   k: u64| {
            let key = if causes.len() >= MAX_NAMES && !causes.contains_key(&(s, n.to_string())) {
                (s, "(other)".to_string())
            } else {
                (s, n.to_string())
            };
            let acc = causes.entry(key).or_default();
            acc.total_ns = acc.total_ns.saturating_add(d);
            acc.events += k;
            acc.gaps += 1;
            acc.max_ns = acc.max_ns.max(d);
            acc.cpus.insert(cpu as usize);
        };
        for gc in &causes {
            add(&mut self.causes, gc.source, &gc.name, gc.duration_ns, gc.events);
        }
        if unexplained > 0 {
            add(&mut self.causes, NoiseSource::Hw, "hw", unexplained, 0);
        }
        for gc in &causes {
            c.osnoise.time_ns.add(gc.source, gc.duration_ns);
        }
        c.osnoise.time_ns.add(NoiseSource::Hw, unexplained);
        // Events up to the gap's end are spent.
        while c.recent.front().is_some_and(|e| e.start_ns <= end) {
            c.recent.pop_front();
        }
        let g = Gap {
            t_ns: start_ns.saturating_sub(self.start_ns),
            duration_ns,
            interference,
            causes,
            unexplained_ns: unexplained,
        };
        // The longest MAX_GAPS, kept sorted longest first.
        let at = c.gaps.partition_point(|x| x.duration_ns >= g.duration_ns);
        if at < MAX_GAPS {
            c.gaps.insert(at, g);
            c.gaps.truncate(MAX_GAPS);
        }
    }

    /// The per-CPU parts: (cpu, osnoise summary, longest gaps).
    pub fn per_cpu(&self) -> Vec<(u32, OsnoiseCpu, Vec<Gap>)> {
        self.cpus.iter().map(|(&cpu, c)| (cpu, c.osnoise.clone(), c.gaps.clone())).collect()
    }

    /// The causes over the run, most total time first (at most [`MAX_CAUSES`]).
    pub fn causes(&self) -> Vec<Cause> {
        let mut v: Vec<Cause> = self
            .causes
            .iter()
            .map(|((s, n), a)| Cause {
                source: *s,
                name: n.clone(),
                total_ns: a.total_ns,
                events: a.events,
                gaps: a.gaps,
                max_ns: a.max_ns,
                cpus: a.cpus.to_list(),
            })
            .collect();
        v.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
        v.truncate(MAX_CAUSES);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use NoiseSource as S;

    #[test]
    fn every_gap_gets_the_events_inside_it_and_the_rest_is_hw() {
        let mut a = Attributor::new(&[2, 3], 1_000);
        // gap 1 on CPU 2: an IRQ and a thread inside, 2 µs unexplained
        a.noise(2, S::Irq, "local_timer:236", 10_000, 3_000);
        a.noise(2, S::Thread, "kworker/2:1:77", 14_000, 5_000);
        a.gap(2, 9_000, 10_000, 2);
        // an event before the next gap, outside it
        a.noise(2, S::Irq, "local_timer:236", 50_000, 1_000);
        // gap 2: nothing explains it (a hypervisor took the CPU)
        a.gap(2, 100_000, 40_000, 0);
        // gap on CPU 3 with the same IRQ
        a.noise(3, S::Irq, "local_timer:236", 200_000, 2_000);
        a.gap(3, 199_000, 2_500, 1);
        let per = a.per_cpu();
        let (_, o2, gaps2) = &per[0];
        assert_eq!(gaps2.len(), 2);
        assert_eq!(gaps2[0].duration_ns, 40_000, "longest first");
        assert_eq!(gaps2[0].unexplained_ns, 40_000);
        assert_eq!(gaps2[0].t_ns, 99_000);
        let g = &gaps2[1];
        assert_eq!(
            g.causes.iter().map(|c| (c.name.as_str(), c.duration_ns)).collect::<Vec<_>>(),
            [("kworker/2:1", 5_000), ("local_timer", 3_000)]
        );
        assert_eq!(g.unexplained_ns, 2_000);
        assert_eq!((o2.time_ns.irq, o2.time_ns.thread, o2.time_ns.hw), (3_000, 5_000, 42_000));
        let causes = a.causes();
        assert_eq!(causes[0].name, "hw");
        assert_eq!(causes[0].total_ns, 42_500);
        let timer = causes.iter().find(|c| c.name == "local_timer").unwrap();
        assert_eq!(
            (timer.total_ns, timer.events, timer.gaps, timer.cpus.as_str()),
            (5_000, 2, 2, "2-3")
        );
    }

    #[test]
    fn periods_sum_like_rtla_osnoise_top() {
        let mut a = Attributor::new(&[1], 0);
        a.period(1, 1_000_000, 190, 9, [18, 0, 1007, 18, 1]);
        a.period(1, 1_000_000, 10, 12, [1, 0, 5, 0, 0]);
        let o = &a.per_cpu()[0].1;
        assert_eq!(
            (o.periods, o.runtime_ns, o.noise_ns, o.max_period_noise_ns, o.max_single_ns),
            (2, 2_000_000_000, 200_000, 190_000, 12_000)
        );
        assert_eq!(
            (o.counts.hw, o.counts.irq, o.counts.softirq, o.counts.thread),
            (19, 1012, 18, 1)
        );
        assert!((o.available_pct().unwrap() - 99.99).abs() < 1e-9);
    }

    #[test]
    fn memory_stays_bounded() {
        let mut a = Attributor::new(&[0], 0);
        for i in 0..5_000u64 {
            a.noise(0, S::Thread, &format!("t{i}:{i}"), i * 100, 10);
            if i % 2 == 0 {
                a.gap(0, i * 100, 50, 1);
            }
        }
        assert!(a.per_cpu()[0].2.len() <= MAX_GAPS);
        assert!(a.causes.len() <= MAX_NAMES + 1);
        assert!(a.causes().len() <= MAX_CAUSES);
    }
}
