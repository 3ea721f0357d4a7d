//! The text the kernel's tracers write to `trace_pipe`, one line at a time, parsed without
//! I/O (tested on lines captured from Debian's 6.1 PREEMPT_RT kernel in the lab). A line is
//! `TASK-PID [CPU] FLAGS TIMESTAMP: BODY`; the bodies lowlat reads are the timerlat and
//! osnoise tracers' own entries, the `osnoise:*` events, the hwlat tracer's entries, and the
//! ring buffer's `CPU:N [LOST K EVENTS]` marker. Anything else is [`Line::Other`].
//!
//! Formats (kernel/trace/trace_output.c, include/trace/events/osnoise.h, 5.15 … 6.x):
//! - timerlat: `#SEQ context irq|thread timer_latency NS ns`
//! - osnoise period: `RUNTIME_US NOISE_US AVAIL% MAX_SINGLE_US HW NMI IRQ SIRQ THREAD`
//! - `sample_threshold: start S.NS duration NS ns interference N`
//! - `irq_noise: NAME:VECTOR start S.NS duration NS ns` (also `softirq_noise`, and
//!   `thread_noise: COMM:PID …`), `nmi_noise: start S.NS duration NS ns`
//! - hwlat: `#SEQ inner/outer(us): IN/OUT ts:S.NS count:N` (and `nmi-total:… nmi-count:…`
//!   when NMIs fell in the sample)

/// Which context a timerlat sample measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// The timer's hard IRQ handler: from the timer's expiry to the IRQ running.
    Irq,
    /// The timerlat thread: from the expiry to the thread running.
    Thread,
}

pub use results::tracer::NoiseSource as Source;

/// One parsed line.
#[derive(Debug, Clone, PartialEq)]
pub enum Line<'a> {
    Timerlat {
        cpu: u32,
        ts_ns: u64,
        seq: u64,
        context: Context,
        latency_ns: u64,
    },
    /// One osnoise period of one CPU (the tracer's summary entry).
    OsnoisePeriod {
        cpu: u32,
        ts_ns: u64,
        runtime_us: u64,
        noise_us: u64,
        max_single_us: u64,
        hw: u64,
        nmi: u64,
        irq: u64,
        softirq: u64,
        thread: u64,
    },
    /// A gap the osnoise thread saw above the threshold, with how many interference events
    /// (IRQs, softirqs, threads, NMIs) the kernel recorded inside it.
    Threshold {
        cpu: u32,
        start_ns: u64,
        duration_ns: u64,
        interference: u64,
    },
    /// An interference event: what ran on the CPU instead of the osnoise thread.
    Noise {
        cpu: u32,
        source: Source,
        name: &'a str,
        start_ns: u64,
        duration_ns: u64,
    },
    Hwlat {
        cpu: u32,
        ts_ns: u64,
        seq: u64,
        inner_us: u64,
        outer_us: u64,
        nmi_total_us: Option<u64>,
        nmi_count: Option<u64>,
    },
    /// The ring buffer overran: `lost` events of `cpu` are missing.
    Lost {
        cpu: u32,
        lost: u64,
    },
    /// A line written to `trace_marker` (`tracing_mark_write: TEXT`), with its timestamp.
    Marker {
        ts_ns: u64,
        text: &'a str,
    },
    Other,
}

/// `S.FRACTION` seconds (a trace timestamp, 6 digits; or an event's `start`, 9) in ns.
pub fn seconds_ns(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let mut f: u64 = if frac.is_empty() { 0 } else { frac.parse().ok()? };
    for _ in frac.len()..9 {
        f *= 10;
    }
    whole.checked_mul(1_000_000_000)?.checked_add(f)
}

/// The header part: CPU, timestamp and the body after `TIMESTAMP: `.
fn header(line: &str) -> Option<(u32, u64, &str)> {
    // The CPU is the first `[digits]` field: the task name before it may hold anything,
    // brackets included ("<idle>-0", "kworker/1:1-123").
    let mut from = 0;
    let (cpu, after) = loop {
        let open = from + line[from..].find('[')?;
        let close = open + line[open..].find(']')?;
        let inner = &line[open + 1..close];
        if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
            break (inner.parse().ok()?, &line[close + 1..]);
        }
        from = open + 1;
    };
    // FLAGS is absent with the `noirq-info` option: then the first word is the timestamp.
    let (first, rest) = word(after);
    let (ts, rest) = if first.ends_with(':') { (first, rest) } else { word(rest) };
    if !ts.ends_with(':') {
        return None;
    }
    let ts_ns = seconds_ns(ts.trim_end_matches(':'))?;
    Some((cpu, ts_ns, rest.trim_start()))
}

/// The first whitespace-separated word of `s` and what follows it.
fn word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

fn num(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// `… start S.NS duration NS ns` → (start, duration).
fn start_duration(s: &str) -> Option<(u64, u64)> {
    let rest = s.trim().strip_prefix("start ")?;
    let (start, rest) = rest.split_once(" duration ")?;
    let d = rest.trim().strip_suffix(" ns").or_else(|| rest.trim().split(" ns").next())?;
    Some((seconds_ns(start.trim())?, num(d.trim())?))
}

/// Parse one `trace_pipe` line.
pub fn line(l: &str) -> Line<'_> {
    let t = l.trim();
    if t.is_empty() || t.starts_with('#') {
        return Line::Other;
    }
    if let Some(rest) = t.strip_prefix("CPU:") {
        // CPU:2 [LOST 123 EVENTS]
        if let Some((cpu, more)) = rest.split_once(' ') {
            let lost = more.trim().strip_prefix("[LOST ").and_then(|m| m.strip_suffix(" EVENTS]"));
            if let (Ok(cpu), Some(Ok(lost))) = (cpu.parse(), lost.map(str::parse)) {
                return Line::Lost { cpu, lost };
            }
        }
        return Line::Other;
    }
    let Some((cpu, ts_ns, body)) = header(t) else { return Line::Other };
    body_of(cpu, ts_ns, body).unwrap_or(Line::Other)
}

fn body_of(cpu: u32, ts_ns: u64, body: &str) -> Option<Line<'_>> {
    if let Some(rest) = body.strip_prefix('#') {
        let mut w = rest.split_whitespace();
        let seq = num(w.next()?)?;
        match w.next()? {
            "context" => {
                let context = match w.next()? {
                    "irq" => Context::Irq,
                    "thread" => Context::Thread,
                    _ => return None,
                };
                if w.next()? != "timer_latency" {
                    return None;
                }
                let latency_ns = num(w.next()?)?;
                return Some(Line::Timerlat { cpu, ts_ns, seq, context, latency_ns });
            }
            "inner/outer(us):" => {
                let (i, o) = w.next()?.split_once('/')?;
                let (mut nmi_total_us, mut nmi_count) = (None, None);
                for kv in w {
                    if let Some(v) = kv.strip_prefix("nmi-total:") {
                        nmi_total_us = num(v);
                    } else if let Some(v) = kv.strip_prefix("nmi-count:") {
                        nmi_count = num(v);
                    }
                }
                return Some(Line::Hwlat {
                    cpu,
                    ts_ns,
                    seq,
                    inner_us: num(i)?,
                    outer_us: num(o)?,
                    nmi_total_us,
                    nmi_count,
                });
            }
            _ => return None,
        }
    }
    if let Some(text) = body.strip_prefix("tracing_mark_write: ") {
        return Some(Line::Marker { ts_ns, text: text.trim_end() });
    }
    if let Some((event, rest)) = body.split_once(": ") {
        let rest = rest.trim_start();
        let source = match event {
            "sample_threshold" => {
                let (sd, more) = rest.split_once(" interference ")?;
                let (start_ns, duration_ns) = start_duration(sd)?;
                return Some(Line::Threshold {
                    cpu,
                    start_ns,
                    duration_ns,
                    interference: num(more.trim())?,
                });
            }
            "nmi_noise" => {
                let (start_ns, duration_ns) = start_duration(rest)?;
                return Some(Line::Noise {
                    cpu,
                    source: Source::Nmi,
                    name: "nmi",
                    start_ns,
                    duration_ns,
                });
            }
            "irq_noise" => Source::Irq,
            "softirq_noise" => Source::Softirq,
            "thread_noise" => Source::Thread,
            _ => return None,
        };
        let at = rest.rfind(" start ")?;
        let name = rest[..at].trim();
        let (start_ns, duration_ns) = start_duration(&rest[at..])?;
        return Some(Line::Noise { cpu, source, name, start_ns, duration_ns });
    }
    // The osnoise period entry: nine numbers, the third a percentage.
    let w: Vec<&str> = body.split_whitespace().collect();
    if let [runtime, noise, avail, single, hw, nmi, irq, sirq, thread] = w.as_slice() {
        if avail.parse::<f64>().is_ok() {
            return Some(Line::OsnoisePeriod {
                cpu,
                ts_ns,
                runtime_us: num(runtime)?,
                noise_us: num(noise)?,
                max_single_us: num(single)?,
                hw: num(hw)?,
                nmi: num(nmi)?,
                irq: num(irq)?,
                softirq: num(sirq)?,
                thread: num(thread)?,
            });
        }
    }
    None
}

/// An interference event's name without the thread's pid (`kworker/1:1:123` →
/// `kworker/1:1`) or the IRQ's vector (`local_timer:236` → `local_timer`), so that one
/// source is one row however often it ran; IRQ vectors stay when the name alone is a number.
pub fn source_name(source: Source, name: &str) -> &str {
    match source {
        Source::Thread | Source::Irq | Source::Softirq => match name.rsplit_once(':') {
            Some((n, id)) if !n.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => name,
        },
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timerlat_lines() {
        let l = "          <idle>-0       [002] d..h1..     3.406776: #1     context    irq timer_latency    110639 ns";
        assert_eq!(
            line(l),
            Line::Timerlat {
                cpu: 2,
                ts_ns: 3_406_776_000,
                seq: 1,
                context: Context::Irq,
                latency_ns: 110_639
            }
        );
        let l = "      timerlat/7-253     [007] .......    14.043203: #1     context thread timer_latency    105165 ns";
        assert!(matches!(
            line(l),
            Line::Timerlat { cpu: 7, context: Context::Thread, latency_ns: 105_165, .. }
        ));
        // without the irq-info flags column
        let l = "  <...>-235 [006] 3.407190: #1 context thread timer_latency 369502 ns";
        assert!(matches!(line(l), Line::Timerlat { cpu: 6, ts_ns: 3_407_190_000, .. }));
    }

    #[test]
    fn osnoise_period_and_events() {
        let l = "       osnoise/3-244     [003] .......     7.645058: 1000260     792495  20.77109   64072     72      0     49      0      1";
        assert_eq!(
            line(l),
            Line::OsnoisePeriod {
                cpu: 3,
                ts_ns: 7_645_058_000,
                runtime_us: 1_000_260,
                noise_us: 792_495,
                max_single_us: 64_072,
                hw: 72,
                nmi: 0,
                irq: 49,
                softirq: 0,
                thread: 1
            }
        );
        let l = "       osnoise/3-244     [003] .......     7.292975: sample_threshold: start 7.284875745 duration 7776784 ns interference 1";
        assert_eq!(
            line(l),
            Line::Threshold {
                cpu: 3,
                start_ns: 7_284_875_745,
                duration_ns: 7_776_784,
                interference: 1
            }
        );
        let l = "       osnoise/2-243     [002] d.Lh2..     7.812371: irq_noise: call_function_single:251 start 7.812365346 duration 5077 ns";
        assert_eq!(
            line(l),
            Line::Noise {
                cpu: 2,
                source: Source::Irq,
                name: "call_function_single:251",
                start_ns: 7_812_365_346,
                duration_ns: 5077
            }
        );
        let l = "   osnoise/1-9 [001] d..s2..  9.1: softirq_noise:    TIMER:1 start 9.000000100 duration 300 ns";
        assert_eq!(
            line(l),
            Line::Noise {
                cpu: 1,
                source: Source::Softirq,
                name: "TIMER:1",
                start_ns: 9_000_000_100,
                duration_ns: 300
            }
        );
        let l = "   osnoise/1-9 [001] ....... 9.2: thread_noise: kworker/1:1:123 start 9.100000000 duration 4000 ns";
        assert_eq!(
            line(l),
            Line::Noise {
                cpu: 1,
                source: Source::Thread,
                name: "kworker/1:1:123",
                start_ns: 9_100_000_000,
                duration_ns: 4000
            }
        );
        let l = "   osnoise/1-9 [001] d.h.... 9.3: nmi_noise: start 9.200000000 duration 77 ns";
        assert!(matches!(line(l), Line::Noise { source: Source::Nmi, duration_ns: 77, .. }));
    }

    #[test]
    fn hwlat_lost_and_other_lines() {
        let l = "           <...>-265     [003] d......    21.285362: #3     inner/outer(us): 4940/4933  ts:1795794392.507981804 count:198";
        assert_eq!(
            line(l),
            Line::Hwlat {
                cpu: 3,
                ts_ns: 21_285_362_000,
                seq: 3,
                inner_us: 4940,
                outer_us: 4933,
                nmi_total_us: None,
                nmi_count: None
            }
        );
        let l = " <...>-1 [000] d... 5.0: #9 inner/outer(us): 12/13 ts:1.000000000 count:2 nmi-total:4 nmi-count:1";
        assert!(matches!(line(l), Line::Hwlat { nmi_total_us: Some(4), nmi_count: Some(1), .. }));
        assert_eq!(line("CPU:2 [LOST 123 EVENTS]"), Line::Lost { cpu: 2, lost: 123 });
        let l =
            "              sh-120     [000] .....    55.100001: tracing_mark_write: lowlat-start";
        assert_eq!(line(l), Line::Marker { ts_ns: 55_100_001_000, text: "lowlat-start" });
        for other in [
            "",
            "# tracer: osnoise",
            "garbage",
            "  x-1 [abc] 1.0: #1 context irq timer_latency 5 ns",
            " a-1 [001] .... 1.0: sched_switch: prev=x",
        ] {
            assert_eq!(line(other), Line::Other, "{other:?}");
        }
    }

    #[test]
    fn names_lose_pids_and_vectors() {
        assert_eq!(source_name(Source::Thread, "kworker/1:1:123"), "kworker/1:1");
        assert_eq!(source_name(Source::Irq, "local_timer:236"), "local_timer");
        assert_eq!(source_name(Source::Softirq, "TIMER:1"), "TIMER");
        assert_eq!(source_name(Source::Irq, ":236"), ":236");
        assert_eq!(seconds_ns("7.284875745"), Some(7_284_875_745));
        assert_eq!(seconds_ns("3.406776"), Some(3_406_776_000));
        assert_eq!(seconds_ns("3.1234567891"), None);
    }

    /// Every line captured from the lab's PREEMPT_RT guest parses to what it is.
    #[test]
    fn captured_lines_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tracefs");
        let text = std::fs::read_to_string(dir.join("timerlat-tcg-6.1-rt.txt")).unwrap();
        assert!(text.lines().all(|l| matches!(line(l), Line::Timerlat { .. })));
        let text = std::fs::read_to_string(dir.join("osnoise-events-tcg-6.1-rt.txt")).unwrap();
        let parsed: Vec<Line<'_>> = text.lines().map(line).collect();
        assert!(
            parsed.iter().all(|l| !matches!(l, Line::Other)),
            "{:?}",
            text.lines().zip(&parsed).find(|(_, p)| matches!(p, Line::Other))
        );
        assert!(parsed.iter().any(|l| matches!(l, Line::OsnoisePeriod { .. })));
        assert!(parsed.iter().any(|l| matches!(l, Line::Noise { source: Source::Irq, .. })));
        let text = std::fs::read_to_string(dir.join("hwlat-tcg-6.1-rt.txt")).unwrap();
        assert!(text.lines().all(|l| matches!(line(l), Line::Hwlat { .. })));
    }
}
