//! The report's test inputs, written by the real producers so they cannot drift from what
//! lowlat writes: the host model is `host::read` of the fixture root `fixtures/rt-worker-1/`
//! (a 16-CPU, 2-socket PREEMPT_RT host booted with the evaluation plan's kernel arguments, its
//! runtime tier not yet applied: one IRQ, named `<script>alert(1)</script>` to prove escaping,
//! still fires on isolated CPU 5; the tree is hand-written, no capture), the plan is
//! `plan::default_plan` of that host, the verify reports are `verify::verify` of host × plan
//! (before and after the IRQ moved), and every measurement is built with the `results` types
//! (histograms, statistics, envelopes and the host summary) from fixed, deterministic samples.
//!
//! `tests/fixtures.rs` checks that the committed files are exactly these; after a producer
//! changes its shape, run `LOWLAT_BLESS_FIXTURES=1 cargo test -p report --test fixtures` and
//! review the golden reports that follow.

#![allow(clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

use results::fsync::{
    etcd_buckets, verdicts, worst_windows, BulkRun, Cliff, DState, FsyncResult, LatNs, Scenario,
    StorageEnv, WatchSample, Window,
};
use results::{
    Attribution, Breach, CpuTicks, Envelope, Histogram, HistogramConfig, HostContext, Kind,
    LatencyResult, LoadInfo, ThreadResult, TicksResult,
};
use serde_json::json;

/// The fixture root of the host every input comes from.
pub fn root_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rt-worker-1")
}

/// The host model, as `lowlat inspect --root fixtures/rt-worker-1` reads it.
pub fn host() -> host::Host {
    let root = host::Root::open(&root_dir()).expect("fixture root opens");
    let mut h = host::read(&root);
    // Where the checkout lives is not part of the model under test.
    h.source.path = "rt-worker-1".into();
    h
}

/// The same host after `lowlat apply`: the stray IRQ moved to a housekeeping CPU.
fn host_applied(h: &host::Host) -> host::Host {
    let mut h = h.clone();
    for irq in h.irqs.iter_mut().filter(|i| i.irq == 31) {
        irq.affinity = Some(cpuset::CpuSet::from_cpus([0, 4, 8, 12]));
        irq.effective_affinity = Some(cpuset::CpuSet::from_cpus([0]));
    }
    h
}

/// The same host with SMT switched off (`echo off > /sys/devices/system/cpu/smt/control`):
/// the second threads (8-15) go offline.
fn host_smt_off(h: &host::Host) -> host::Host {
    let mut h = h.clone();
    h.topology.smt_control = Some("off".into());
    h.topology.smt_active = Some(false);
    h.topology.threads_per_core = 1;
    for c in h.topology.cpus.iter_mut().filter(|c| c.cpu >= 8) {
        c.online = false;
    }
    h.cpus.online = Some(cpuset::CpuSet::from_cpus(0..8));
    h.cpus.offline = Some(cpuset::CpuSet::from_cpus(8..16));
    h
}

/// `lowlat plan` on the host (the evaluation plan `lowlat check` writes).
pub fn plan(h: &host::Host) -> plan::Plan {
    plan::default_plan(h).expect("the fixture host has a default plan")
}

/// `lowlat verify --root … --plan plan.yaml` (not live: live-only checks are n.a.).
fn verify(h: &host::Host, p: &plan::Plan) -> verify::Report {
    verify::verify(&verify::Input {
        host: h,
        plan: p,
        live: false,
        boot_entries: Vec::new(),
        irqbalance: None,
        window: None,
        allow: Vec::new(),
        rt: host::rt::Containers::default(),
        files: Default::default(),
        sysctl_conf: Vec::new(),
        plan_arg: "plan.yaml".into(),
    })
}

/// A fixed pseudo-random sequence (no rand dependency).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() % 1_000_000) as f64 / 1e6
    }
}

fn envelope(kind: Kind, host: &host::Host, started: &str, secs: u64) -> Envelope {
    let mut e = Envelope::new(kind, "lowlat 0.1.0");
    e.started_at = Some(started.to_string());
    e.duration_ns = secs * 1_000_000_000;
    e.host = HostContext::from_host(host);
    e
}

/// One measured CPU: `per_s` samples a second for `secs` seconds around `typical_ns` (at most
/// 4× it), plus `spikes` (second, value) — the worst of which is the thread's maximum.
struct Run {
    cpu: u32,
    typical_ns: u64,
    spikes: &'static [(u64, u64)],
    /// timer: wake-ups more than one interval late.
    overruns: u64,
    seed: u64,
}

/// Record a run into a latency histogram; returns the thread (without its noise fields) and
/// the samples per second.
fn record(r: &Run, secs: u64, per_s: u64) -> (ThreadResult, Vec<Vec<u64>>) {
    let mut rng = Lcg(r.seed);
    let mut h = Histogram::new(HistogramConfig::LATENCY);
    let mut seconds = Vec::with_capacity(secs as usize);
    for s in 0..secs {
        let mut v: Vec<u64> = (0..per_s)
            .map(|_| {
                let base = r.typical_ns as f64 * (0.6 + 0.8 * rng.unit());
                let tail =
                    if rng.unit() < 0.01 { r.typical_ns as f64 * 2.6 * rng.unit() } else { 0.0 };
                (base + tail) as u64
            })
            .collect();
        for (_, value) in r.spikes.iter().filter(|(at, _)| *at == s) {
            v[(rng.next() % per_s) as usize] = *value;
        }
        for x in &v {
            h.record(*x);
        }
        seconds.push(v);
    }
    let t = ThreadResult {
        cpu: Some(r.cpu),
        stats: h.summary(),
        histogram: h.to_data(),
        per_second_max_ns: seconds.iter().map(|v| v.iter().copied().max().unwrap_or(0)).collect(),
        ..Default::default()
    };
    (t, seconds)
}

/// `lowlat measure timer --cpus 1-3,5 --load cpu -D 60s --threshold 50us`.
fn timer(host: &host::Host, runs: &[Run], secs: u64, threshold_us: Option<u64>) -> LatencyResult {
    let mut env = envelope(Kind::Timer, host, "2026-11-22T02:00:00Z", secs);
    let threshold_ns = threshold_us.map(|t| t * 1000);
    env.params = results::Params::read(
        env.kind,
        json!({
            "kind": "timer", "cpus": "1-3,5", "main_cpu": 0, "policy": "fifo", "priority": 95,
            "interval_ns": 1_000_000, "duration_ns": env.duration_ns, "threshold_ns": threshold_ns,
            "stop_on_threshold": false, "dma_latency": true,
        }),
    )
    .expect("params");
    let mut breaches = Vec::new();
    let threads = runs
        .iter()
        .map(|r| {
            let (mut t, seconds) = record(r, secs, 1000);
            let mut per_minute = vec![0u64; (secs as usize).div_ceil(60).max(1)];
            for (s, v) in seconds.iter().enumerate() {
                for (i, x) in v.iter().enumerate() {
                    if threshold_ns.is_some_and(|th| *x >= th) {
                        let t_ns = s as u64 * 1_000_000_000 + i as u64 * 1_000_000;
                        breaches.push(Breach { cpu: t.cpu, t_ns, value_ns: *x });
                        per_minute[s / 60] += 1;
                    }
                }
            }
            // As `measure` writes them: every breach counted, per CPU and per minute.
            let count: u64 = per_minute.iter().sum();
            t.breach_count = threshold_ns.map(|_| count);
            if count > 0 {
                t.breaches_per_minute = per_minute;
            }
            t.priority = Some(95);
            t.interval_ns = Some(1_000_000);
            t.overruns = r.overruns;
            t
        })
        .collect();
    let breaches = results::worst_breaches(breaches, results::latency::MAX_BREACHES);
    LatencyResult {
        envelope: env,
        realtime: true,
        series_step_s: 1,
        threads,
        breaches,
        load: Some(LoadInfo {
            kind: "cpu".into(),
            cpus: Some("0,4,8,12".into()),
            command: None,
            exit: None,
        }),
        notes: Vec::new(),
        tracer: None,
    }
}

/// `lowlat measure noise --cpus 1-3,5 -D 30s`: gaps of a busy loop, with the loop's floor, the
/// noise per second and the worst seconds attributed.
fn noise(host: &host::Host, runs: &[Run]) -> LatencyResult {
    const SECS: u64 = 30;
    const FLOOR_NS: u64 = 1_200;
    let mut env = envelope(Kind::Noise, host, "2026-11-22T02:02:00Z", SECS);
    env.params = results::Params::read(
        env.kind,
        json!({
            "kind": "noise", "cpus": "1-3,5", "main_cpu": 0, "policy": "other",
            "duration_ns": env.duration_ns, "noise_threshold_ns": FLOOR_NS,
        }),
    )
    .expect("params");
    let threads = runs
        .iter()
        .map(|r| {
            let (mut t, seconds) = record(r, SECS, 10_000);
            let noise: Vec<u64> = seconds
                .iter()
                .map(|v| v.iter().filter(|x| **x > FLOOR_NS).map(|x| x - FLOOR_NS).sum())
                .collect();
            let mut worst: Vec<(usize, u64)> =
                t.per_second_max_ns.iter().copied().enumerate().collect();
            worst.sort_by_key(|(s, m)| (std::cmp::Reverse(*m), *s));
            t.worst_seconds = worst
                .iter()
                .take(2)
                .map(|(s, m)| Attribution {
                    second: *s as u64,
                    max_ns: *m,
                    noise_ns: noise[*s],
                    interrupts: vec![("LOC".into(), 1)],
                    softirqs: vec![("TIMER".into(), 1)],
                    context_switches: Some(0),
                    text: format!(
                        "max {:.1} µs at t={s} s while CPU {} took 1 LOC, 1 TIMER softirq",
                        *m as f64 / 1e3,
                        r.cpu
                    ),
                })
                .collect();
            t.total_noise_ns = Some(noise.iter().sum());
            t.per_second_noise_ns = noise;
            t.floor_ns = Some(FLOOR_NS);
            t
        })
        .collect();
    LatencyResult {
        envelope: env,
        realtime: true,
        series_step_s: 1,
        threads,
        breaches: Vec::new(),
        load: None,
        notes: Vec::new(),
        tracer: None,
    }
}

/// `lowlat measure ticks --cpus 0-7 -D 5s`: the rates and verdict the measurement writes for
/// each CPU (the `expected`/`verdict` wording of `measure::ticks::rates`).
fn ticks(host: &host::Host, loc: [f64; 8]) -> TicksResult {
    let mut env = envelope(Kind::Ticks, host, "2026-11-22T02:03:00Z", 5);
    env.params = results::Params::read(
        env.kind,
        json!({ "cpus": "0-7", "duration_ns": env.duration_ns, "main_cpu": 0 }),
    )
    .expect("params");
    let nohz = host.nohz_full_cpus();
    let cpus = (0..8u32)
        .map(|cpu| {
            let nohz_full = nohz.contains(cpu as usize);
            let l = loc[cpu as usize];
            let (expected, verdict) = if nohz_full {
                (
                    "about 1/s (nohz_full with one runnable task)".to_string(),
                    if l <= 2.0 {
                        "ok: the tick is stopped".to_string()
                    } else {
                        format!("tick NOT stopped: {l}/s on a nohz_full CPU (another runnable task, timers, or RCU callbacks here)")
                    },
                )
            } else {
                (
                    "about 1000/s (periodic tick: CPU not in nohz_full)".to_string(),
                    "periodic tick: add the CPU to nohz_full to stop it".to_string(),
                )
            };
            let res = if nohz_full { 0.4 } else { 12.0 };
            CpuTicks {
                cpu,
                nohz_full,
                isolated: host.isolated_cpus().contains(cpu as usize),
                loc_per_s: l,
                expected,
                rates: vec![("LOC".into(), l), ("RES".into(), res)],
                softirq_rates: vec![("TIMER".into(), l), ("RCU".into(), res)],
                verdict,
            }
        })
        .collect();
    TicksResult { envelope: env, cpus, notes: Vec::new() }
}

/// One fsync scenario: `ops` write + fdatasync latencies over `secs` seconds around
/// `typical_ns`, of which the slowest 1% start at `p99_ns` and reach `max_ns`.
struct Fsync {
    name: &'static str,
    interference: Option<&'static str>,
    mitigation: Option<&'static str>,
    ops: u64,
    typical_ns: u64,
    p99_ns: u64,
    max_ns: u64,
    seed: u64,
}

fn scenario(f: &Fsync, secs: u64) -> Scenario {
    let mut rng = Lcg(f.seed);
    // The tail: exactly the samples ranked at or above p99 (nearest rank).
    let tail = f.ops - util::stats::rank(0.99, f.ops) + 1;
    let every = f.ops / tail;
    let mut h = Histogram::new(HistogramConfig::STORAGE);
    let mut windows = Vec::new();
    let per_window = f.ops / secs;
    let mut tail_seen = 0;
    for w in 0..secs {
        let mut v: Vec<u64> = (0..per_window)
            .map(|i| {
                let n = w * per_window + i;
                if n % every == every - 1 && tail_seen < tail {
                    tail_seen += 1;
                    let step = (f.max_ns - f.p99_ns) * (tail_seen - 1) / (tail - 1).max(1);
                    f.p99_ns + step / 500_000 * 500_000
                } else {
                    // Whole 20 µs steps: the file stays small (few distinct buckets).
                    (f.typical_ns as f64 * (0.4 + 1.2 * rng.unit())) as u64 / 20_000 * 20_000
                }
            })
            .collect();
        v.iter().for_each(|x| h.record(*x));
        v.sort_unstable();
        let q = |p| util::stats::quantile_sorted(&v, p).unwrap_or(0);
        windows.push(Window {
            start_ns: w * 1_000_000_000,
            ops: per_window,
            p50_ns: q(0.5),
            p99_ns: q(0.99),
            max_ns: v.last().copied().unwrap_or(0),
            truncated: false,
        });
    }
    let lat = LatNs::from_histogram(&h);
    let (worst_p99, worst_max) = worst_windows(&windows);
    Scenario {
        name: f.name.into(),
        interference: f.interference.map(String::from),
        mitigation: f.mitigation.map(String::from),
        ops: h.count(),
        iops: h.count() as f64 / secs as f64,
        duration_ns: secs * 1_000_000_000,
        lat_ns: lat,
        windows,
        worst_window_p99_ns: worst_p99,
        worst_window_max_ns: worst_max,
        etcd_buckets: etcd_buckets(&h),
        verdicts: verdicts(lat.p99),
        bulk: f.interference.map(|_| BulkRun {
            mode: "per-file-fsync".into(),
            bytes: 2 << 30,
            files: 2048,
            start_ns: 2_000_000_000,
            duration_ns: (secs - 4) * 1_000_000_000,
            sync_ns: None,
            unfinished: false,
            ..Default::default()
        }),
        notes: f.mitigation.map(|m| vec![format!("{m} (restored)")]).unwrap_or_default(),
        histogram: h.to_data(),
    }
}

/// `lowlat measure fsync --dir /var/lib/etcd -D 30s [--matrix]`.
fn fsync(host: &host::Host, specs: &[Fsync]) -> FsyncResult {
    const SECS: u64 = 30;
    let mut env = envelope(Kind::Fsync, host, "2026-11-22T02:04:00Z", SECS * specs.len() as u64);
    env.params = results::Params::read(
        env.kind,
        json!({
            "dir": "/var/lib/etcd", "block_size": 2300, "window_ns": 1_000_000_000u64,
            "matrix": specs.len() > 1,
        }),
    )
    .expect("params");
    let storage = StorageEnv {
        dir: "/var/lib/etcd".into(),
        device: Some("nvme0n1".into()),
        devno: Some("259:0".into()),
        scheduler: Some("mq-deadline".into()),
        schedulers_available: ["none", "mq-deadline", "kyber", "bfq"].map(String::from).to_vec(),
        wbt_lat_usec: Some(2000),
        write_cache: Some("write back".into()),
        rotational: Some(false),
        fs_type: Some("xfs".into()),
        mount_point: Some("/".into()),
        mount_source: Some("/dev/nvme0n1p3".into()),
        mount_options: Some("rw,relatime,attr2,inode64".into()),
        dirty: [("dirty_ratio".to_string(), 20), ("dirty_background_ratio".to_string(), 10)]
            .into_iter()
            .collect(),
        cgroup_version: Some("v2".into()),
        free_bytes: Some(412 << 30),
    };
    FsyncResult::new(env, storage, specs.iter().map(|s| scenario(s, SECS)).collect())
}

/// `lowlat watch storage --every 1s` for two minutes: a step from 0.8 ms to 9 ms (burst
/// credits spent) at 85 s, with a journal thread seen in D state then.
fn watch() -> Vec<WatchSample> {
    (0..120u64)
        .map(|i| {
            let value_ns = match i {
                100 => 40_000_000,
                i if i >= 85 => 9_000_000,
                _ => 800_000,
            };
            let t = UNIX_EPOCH + Duration::from_secs(1_795_316_400 + i);
            WatchSample {
                time: util::time::rfc3339(t),
                t_ns: i * 1_000_000_000,
                watch: "storage".into(),
                value_ns,
                burst_p50_ns: Some(value_ns),
                burst_max_ns: Some(value_ns * 2),
                dstate: if i == 85 {
                    vec![DState {
                        pid: 412,
                        tid: 412,
                        comm: "jbd2/nvme0n1p3-8".into(),
                        wchan: Some("jbd2_journal_commit_transaction".into()),
                        seen_ns: 2_000_000_000,
                    }]
                } else {
                    Vec::new()
                },
                psi_some_avg10: Some(if i >= 85 { 4.2 } else { 0.0 }),
                psi_full_avg10: Some(if i >= 85 { 1.1 } else { 0.0 }),
                cliff: (i == 85).then(|| Cliff {
                    index: 85,
                    t_ns: 85_000_000_000,
                    time: Some(util::time::rfc3339(t)),
                    before_ns: 800_000,
                    after_ns: 9_000_000,
                    ratio: 11.25,
                }),
                ..Default::default()
            }
        })
        .collect()
}

/// A result of a kind this version does not know (`hwlat`, from a later lowlat): the same
/// envelope, its own fields, cut short.
fn future_kind(host: &host::Host) -> serde_json::Value {
    let mut env = envelope(Kind::Timer, host, "2026-11-22T02:05:00Z", 60);
    env.tool = "lowlat 0.2.0".into();
    env.partial = true;
    env.params = results::Params::read(env.kind, json!({})).expect("params");
    let mut v = serde_json::to_value(&env).expect("envelope serializes");
    v["kind"] = json!("hwlat");
    v["gaps"] = json!([1, 2, 3]);
    v["max_ns"] = json!(12_000);
    v
}

fn pretty<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).expect("serializes") + "\n"
}

/// Every fixture: (file name under `tests/fixtures/`, contents).
pub fn all() -> Vec<(&'static str, String)> {
    let h = host();
    let p = plan(&h);
    let applied = host_applied(&h);
    let ht_off = host_smt_off(&h);
    let timer_before = [
        Run { cpu: 1, typical_ns: 2_800, spikes: &[(17, 16_100)], overruns: 0, seed: 1 },
        Run { cpu: 2, typical_ns: 2_600, spikes: &[(31, 13_000)], overruns: 0, seed: 2 },
        Run { cpu: 3, typical_ns: 2_700, spikes: &[(44, 18_500)], overruns: 0, seed: 3 },
        Run {
            cpu: 5,
            typical_ns: 3_000,
            spikes: &[(12, 21_000), (38, 63_400)],
            overruns: 1,
            seed: 4,
        },
    ];
    let timer_after = [
        Run { cpu: 1, typical_ns: 2_200, spikes: &[(17, 9_700)], overruns: 0, seed: 5 },
        Run { cpu: 2, typical_ns: 2_100, spikes: &[(31, 7_800)], overruns: 0, seed: 6 },
        Run { cpu: 3, typical_ns: 2_200, spikes: &[(44, 11_100)], overruns: 0, seed: 7 },
        Run { cpu: 5, typical_ns: 2_300, spikes: &[(38, 38_000)], overruns: 0, seed: 8 },
    ];
    let noise_runs = [
        Run { cpu: 1, typical_ns: 1_000, spikes: &[(7, 11_100)], overruns: 0, seed: 9 },
        Run { cpu: 2, typical_ns: 1_000, spikes: &[(12, 9_700)], overruns: 0, seed: 10 },
        Run { cpu: 3, typical_ns: 1_000, spikes: &[(20, 7_500)], overruns: 0, seed: 11 },
        Run { cpu: 5, typical_ns: 1_000, spikes: &[(25, 9_700)], overruns: 0, seed: 12 },
    ];
    let ht_on = [
        Run { cpu: 1, typical_ns: 3_000, spikes: &[(9, 84_000)], overruns: 0, seed: 13 },
        Run { cpu: 2, typical_ns: 3_000, spikes: &[(19, 84_000)], overruns: 0, seed: 14 },
        Run { cpu: 3, typical_ns: 3_000, spikes: &[(29, 84_000)], overruns: 0, seed: 15 },
        Run { cpu: 5, typical_ns: 3_000, spikes: &[(39, 86_000)], overruns: 0, seed: 16 },
    ];
    let ht_off_runs = [
        Run { cpu: 1, typical_ns: 2_900, spikes: &[(9, 82_000)], overruns: 0, seed: 17 },
        Run { cpu: 2, typical_ns: 2_900, spikes: &[(19, 80_000)], overruns: 0, seed: 18 },
        Run { cpu: 3, typical_ns: 2_900, spikes: &[(29, 78_000)], overruns: 0, seed: 19 },
        Run { cpu: 5, typical_ns: 2_900, spikes: &[(39, 77_000)], overruns: 0, seed: 20 },
    ];
    let fsync_matrix = [
        Fsync {
            name: "baseline",
            interference: None,
            mitigation: None,
            ops: 9000,
            typical_ns: 1_100_000,
            p99_ns: 14_500_000,
            max_ns: 29_000_000,
            seed: 21,
        },
        Fsync {
            name: "os-update",
            interference: Some("per-file-fsync"),
            mitigation: None,
            ops: 6000,
            typical_ns: 1_400_000,
            p99_ns: 41_000_000,
            max_ns: 90_000_000,
            seed: 22,
        },
        Fsync {
            name: "os-update + ionice idle",
            interference: Some("per-file-fsync"),
            mitigation: Some("ionice idle"),
            ops: 7500,
            typical_ns: 1_200_000,
            p99_ns: 22_000_000,
            max_ns: 48_000_000,
            seed: 23,
        },
        Fsync {
            name: "os-update + bfq",
            interference: Some("per-file-fsync"),
            mitigation: Some("scheduler bfq"),
            ops: 8100,
            typical_ns: 1_150_000,
            p99_ns: 16_000_000,
            max_ns: 31_000_000,
            seed: 24,
        },
    ];
    let fsync_after = [Fsync {
        name: "baseline",
        interference: None,
        mitigation: None,
        ops: 11_700,
        typical_ns: 420_000,
        p99_ns: 5_075_000,
        max_ns: 14_350_000,
        seed: 25,
    }];
    vec![
        ("inspect.json", pretty(&h)),
        ("plan.yaml", p.to_yaml().expect("plan serializes")),
        ("verify.json", pretty(&verify(&h, &p))),
        ("verify-after.json", pretty(&verify(&applied, &p))),
        ("timer.json", pretty(&timer(&h, &timer_before, 60, Some(50)))),
        ("timer-after.json", pretty(&timer(&applied, &timer_after, 60, Some(50)))),
        ("noise.json", pretty(&noise(&h, &noise_runs))),
        ("ticks.json", pretty(&ticks(&h, [1000.0, 1.0, 1.0, 1.0, 1000.0, 1.0, 250.0, 1.0]))),
        (
            "ticks-after.json",
            pretty(&ticks(&applied, [1000.0, 1.0, 1.0, 1.0, 1000.0, 1.0, 1.0, 1.0])),
        ),
        ("fsync.json", pretty(&fsync(&h, &fsync_matrix))),
        ("fsync-after.json", pretty(&fsync(&applied, &fsync_after))),
        (
            "watch-storage.jsonl",
            watch().iter().map(|s| serde_json::to_string(s).expect("sample") + "\n").collect(),
        ),
        ("future-kind.json", pretty(&future_kind(&h))),
        ("ht-on.json", pretty(&timer(&h, &ht_on, 60, None))),
        ("ht-off.json", pretty(&timer(&ht_off, &ht_off_runs, 60, None))),
    ]
}
