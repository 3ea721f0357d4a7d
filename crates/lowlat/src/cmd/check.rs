//! `lowlat check`, the main job: inspect this host, compute a default evaluation plan
//! (housekeeping = CPU 0's core plus one core per NUMA node, the rest isolated; nothing is
//! applied), verify the host against it, measure timer latency on the candidate isolated CPUs
//! under CPU load on housekeeping, OS noise, ticks and an fsync probe in a temporary
//! directory, then write every result file, `lowlat-report.html` and a terminal summary with
//! the top findings and the exact next commands.
//!
//! Each step runs this same binary's subcommand as a child process (`lowlat measure timer
//! --json …`), so the result files are exactly those the single commands write, a step that
//! fails, lacks privileges or is not in this build becomes a note in the output and the
//! report (never a crash), and a hung step is stopped at its time limit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::exit::ExitCode;

/// Arguments of `lowlat check`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Writes into --out DIR (default ./lowlat-out): inspect.json, plan.yaml, \
verify.json, timer.json, noise.json, ticks.json, fsync.json and lowlat-report.html.\n\
Nothing on the host is changed: the plan is for evaluation only.\n\
Exit: 0 when nothing failed, 1 when a check or latency threshold failed.")]
pub struct Args {
    /// About 20 s in all (timer 9 s, noise 3 s, ticks 2 s, fsync 3 s) instead of about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Timer-latency run length (`30s`, `10m`, `12h`); noise and fsync run a third of it,
    /// ticks a sixth. Default 30s (9s with --quick).
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_positive_span)]
    pub duration: Option<Duration>,
    /// Directory for the result files and lowlat-report.html.
    #[arg(long, value_name = "DIR", default_value = "lowlat-out")]
    pub out: PathBuf,
    /// Directory the fsync probe writes in (default: a temporary directory under --out, removed
    /// afterwards). Point it at the filesystem you care about (e.g. /var/lib/etcd).
    #[arg(long, value_name = "DIR")]
    pub fsync_dir: Option<PathBuf>,
    /// Timer latency each isolated CPU must stay below.
    #[arg(long, value_name = "DURATION", value_parser = super::report::parse_ns, default_value = "100us")]
    pub threshold: u64,
    /// Skip steps by name: inspect, plan, verify, timer, noise, ticks, fsync.
    #[arg(long, value_name = "STEP", value_delimiter = ',')]
    pub skip: Vec<String>,
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// Its result file was written.
    Done,
    /// Not run, with the reason.
    Skipped(String),
    /// Ran but produced no result, with the reason.
    Failed(String),
    Interrupted,
}

/// One step of the job: a subcommand writing one file.
struct Step {
    name: &'static str,
    what: String,
    args: Vec<String>,
    /// The file the step writes (stdout is captured into it when `stdout_to_file`).
    file: PathBuf,
    stdout_to_file: bool,
    /// Expected run time, for progress and the time limit.
    expect: Duration,
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}s", s as u64)
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Last lines of a child's stderr, for a note.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(2);
    lines.get(start..).map(|l| l.join(" / ")).unwrap_or_default()
}

/// Run one step as a child process with a time limit.
fn run_step(exe: &Path, step: &Step) -> (Outcome, String) {
    let mut cmd = Command::new(exe);
    cmd.args(&step.args).stdin(Stdio::null()).stderr(Stdio::piped());
    let _ = std::fs::remove_file(&step.file);
    if step.stdout_to_file {
        match std::fs::File::create(&step.file) {
            Ok(f) => {
                cmd.stdout(f);
            }
            Err(e) => {
                return (
                    Outcome::Failed(format!("cannot create {}: {e}", step.file.display())),
                    String::new(),
                )
            }
        }
    } else {
        cmd.stdout(Stdio::null());
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return (Outcome::Failed(format!("cannot start {}: {e}", exe.display())), String::new())
        }
    };
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut e) = stderr {
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
        }
        s
    });
    let limit = step.expect + Duration::from_secs(30) + step.expect / 2;
    let started = Instant::now();
    let mut signalled_at: Option<Instant> = None;
    let mut forwarded = false;
    let status = loop {
        if signalled_at.is_none() && util::signal::interrupted() {
            signalled_at = Some(Instant::now());
        }
        match child.try_wait() {
            Ok(Some(_)) if signalled_at.is_some() => break None,
            Ok(Some(st)) => break Some(st),
            // Ctrl-C reaches the child too (same process group). If only we were signalled
            // (SIGTERM to our pid), pass an interrupt on to our child so it writes its partial
            // result, and stop it outright if it has not finished 5 s later.
            Ok(None)
                if !forwarded
                    && signalled_at.is_some_and(|t| t.elapsed() > Duration::from_millis(500)) =>
            {
                forwarded = true;
                let _ = Command::new("kill")
                    .args(["-INT", &child.id().to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
            Ok(None) if signalled_at.is_some_and(|t| t.elapsed() > Duration::from_secs(5)) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) if started.elapsed() > limit => {
                // Our own child, by its handle.
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(_) => break None,
        }
    };
    let err = reader.join().unwrap_or_default();
    let produced = std::fs::read_to_string(&step.file).ok().is_some_and(|t| {
        serde_json::from_str::<serde_json::Value>(&t).is_ok()
            || step.file.extension().is_some_and(|e| e == "yaml") && !t.is_empty()
    });
    let outcome = match status {
        None if signalled_at.is_some() => Outcome::Interrupted,
        None => Outcome::Failed(format!("stopped after {} (time limit)", secs(limit))),
        Some(st) if st.code() == Some(130) => Outcome::Interrupted,
        Some(_) if produced => Outcome::Done,
        Some(st) if err.contains("not available in this build") => Outcome::Skipped(format!(
            "`lowlat {}` is not in this build yet (exit {})",
            step.args.first().map_or("", |s| s.as_str()),
            st.code().unwrap_or(-1)
        )),
        Some(st) => Outcome::Failed(format!("exit {}: {}", st.code().unwrap_or(-1), tail(&err))),
    };
    (outcome, err)
}

/// Run `lowlat check`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const STEPS: [&str; 7] = ["inspect", "plan", "verify", "timer", "noise", "ticks", "fsync"];
    if let Some(bad) = args.skip.iter().find(|s| !STEPS.contains(&s.as_str())) {
        return Err(crate::exit::usage(format!(
            "--skip {bad}: no such step; the steps are {}",
            STEPS.join(", ")
        )));
    }
    let exe = std::env::current_exe().context("finding the lowlat binary to run the steps")?;
    // First Ctrl-C: the running step writes its partial result, the rest is skipped and the
    // report is still written (exit 130); a second Ctrl-C exits at once.
    util::signal::install();
    let out = args.out.clone();
    std::fs::create_dir_all(&out).with_context(|| format!("creating --out {}", out.display()))?;
    let timer_d = args.duration.unwrap_or(if args.quick {
        Duration::from_secs(9)
    } else {
        Duration::from_secs(30)
    });
    // Whole seconds: every step's --duration takes them.
    let timer_d = Duration::from_secs(timer_d.as_secs().max(1));
    let noise_d = Duration::from_secs((timer_d.as_secs() / 3).max(2));
    let ticks_d = Duration::from_secs((timer_d.as_secs() / 6).max(2));
    let fsync_d = Duration::from_secs((timer_d.as_secs() / 3).max(2));
    let root = is_root();
    let p = |f: &str| out.join(f);
    let s = |x: &Path| x.display().to_string();
    let mut notes: Vec<report::model::Note> = Vec::new();
    let note = |v: report::Verdict, t: String| report::model::Note { verdict: v, text: t };
    if !root {
        notes.push(note(
            report::Verdict::Skipped,
            "Not root: timer and noise run without SCHED_FIFO and memory locking (numbers are \
             pessimistic), /dev/cpu_dma_latency is not held, and some checks cannot read every \
             task. Run `sudo lowlat check` for a full evaluation."
                .into(),
        ));
    }

    println!(
        "lowlat check: evaluating this host (nothing is changed); results go to {}/",
        out.display()
    );
    let total = Duration::from_secs(3) + timer_d + noise_d + ticks_d + fsync_d;
    println!(
        "  about {} in all{}",
        secs(Duration::from_secs(total.as_secs())),
        if root { "" } else { " (not root: some steps degrade)" }
    );

    let mut docs: Vec<report::Doc> = Vec::new();
    let mut interrupted = false;
    let mut done_s = Duration::ZERO;
    let mut isolated = String::new();
    let mut housekeeping = String::new();
    let fsync_dir = args.fsync_dir.clone().unwrap_or_else(|| p("fsync-probe.tmp"));
    let temp_fsync = args.fsync_dir.is_none();

    let mut steps: Vec<Step> = vec![
        Step {
            name: "inspect",
            what: "read the host".into(),
            args: vec!["inspect".into(), "--json".into()],
            file: p("inspect.json"),
            stdout_to_file: true,
            expect: Duration::from_secs(1),
        },
        Step {
            name: "plan",
            what: "default evaluation plan".into(),
            args: vec!["plan".into(), "-o".into(), s(&p("plan.yaml"))],
            file: p("plan.yaml"),
            stdout_to_file: false,
            expect: Duration::from_secs(1),
        },
        Step {
            name: "verify",
            what: "check the host against the plan".into(),
            args: vec!["verify".into(), "--plan".into(), s(&p("plan.yaml")), "--json".into()],
            file: p("verify.json"),
            stdout_to_file: true,
            expect: Duration::from_secs(3),
        },
    ];
    let n_steps = 7;
    let mut idx = 0;
    let mut run_list = |steps: &mut Vec<Step>,
                        docs: &mut Vec<report::Doc>,
                        notes: &mut Vec<report::model::Note>,
                        interrupted: &mut bool| {
        for step in steps.drain(..) {
            idx += 1;
            if *interrupted || util::signal::interrupted() {
                *interrupted = true;
                break;
            }
            if args.skip.iter().any(|k| k == step.name) {
                println!("  [{idx}/{n_steps}] {:<7} skipped (--skip)", step.name);
                notes.push(note(
                    report::Verdict::Skipped,
                    format!("{} skipped (--skip {}).", step.what, step.name),
                ));
                continue;
            }
            println!(
                "  [{idx}/{n_steps}] {:<7} {} ({} elapsed of ~{})…",
                step.name,
                step.what,
                secs(Duration::from_secs(done_s.as_secs())),
                secs(Duration::from_secs(total.as_secs()))
            );
            let started = Instant::now();
            let (outcome, _err) = run_step(&exe, &step);
            done_s += started.elapsed();
            match outcome {
                Outcome::Done => {
                    println!(
                        "          done in {:.1}s → {}",
                        started.elapsed().as_secs_f64(),
                        step.file.display()
                    );
                    if step.name == "plan" {
                        let yaml = std::fs::read_to_string(&step.file).unwrap_or_default();
                        match report::input::plan_from_yaml(&yaml) {
                            Some(plan) => docs.push(report::Doc::from_value(s(&step.file), plan)),
                            None => notes.push(note(
                                report::Verdict::Warn,
                                format!("{} is not a plan file", step.file.display()),
                            )),
                        }
                    } else {
                        match report::Doc::load(&step.file) {
                            Ok(d) => docs.push(d),
                            Err(e) => notes
                                .push(note(report::Verdict::Warn, format!("{}: {e}", step.what))),
                        }
                    }
                }
                Outcome::Skipped(why) => {
                    println!("          skipped: {why}");
                    notes.push(note(
                        report::Verdict::Skipped,
                        format!("{} skipped: {why}", step.what),
                    ));
                }
                Outcome::Failed(why) => {
                    println!("          failed: {why}");
                    notes.push(note(
                        report::Verdict::Warn,
                        format!("{} did not complete: {why}", step.what),
                    ));
                }
                Outcome::Interrupted => {
                    println!("          interrupted");
                    // A measurement writes its partial result on Ctrl-C: keep it.
                    if let Ok(d) = report::Doc::load(&step.file) {
                        docs.push(d);
                    }
                    notes.push(note(
                        report::Verdict::Warn,
                        format!("{} interrupted (Ctrl-C): results are partial.", step.what),
                    ));
                    *interrupted = true;
                }
            }
        }
    };
    run_list(&mut steps, &mut docs, &mut notes, &mut interrupted);

    // The measurement CPUs: the plan's isolated CPUs, else (no plan) every CPU but 0.
    if let Some(plan) = docs.iter().find(|d| d.kind == "plan") {
        isolated = plan.value["isolated"].as_str().unwrap_or_default().to_string();
        housekeeping = plan.value["reserved"].as_str().unwrap_or_default().to_string();
    }
    let cpus_arg = if isolated.is_empty() { None } else { Some(isolated.clone()) };
    if cpus_arg.is_none() {
        notes.push(note(
            report::Verdict::Warn,
            "No isolated CPUs in the evaluation plan (single-core host, or no plan): timer, noise \
             and ticks measure the measurement tools' default CPUs."
                .into(),
        ));
    }
    let with_cpus = |mut a: Vec<String>| {
        if let Some(c) = &cpus_arg {
            a.push("--cpus".into());
            a.push(c.clone());
        }
        a
    };
    let thr = format!("{}us", args.threshold.div_ceil(1000).max(1));
    let _ = std::fs::create_dir_all(&fsync_dir);
    let mut steps = vec![
        Step {
            name: "timer",
            what: format!(
                "timer latency under CPU load on housekeeping {}",
                if housekeeping.is_empty() {
                    "CPUs".to_string()
                } else if housekeeping.contains([',', '-']) {
                    format!("CPUs {housekeeping}")
                } else {
                    format!("CPU {housekeeping}")
                }
            ),
            args: with_cpus(vec![
                "measure".into(),
                "timer".into(),
                "-q".into(),
                "--load".into(),
                "cpu".into(),
                "-D".into(),
                secs(timer_d),
                "--threshold".into(),
                thr.clone(),
                "--json".into(),
                s(&p("timer.json")),
            ]),
            file: p("timer.json"),
            stdout_to_file: false,
            expect: timer_d,
        },
        Step {
            name: "noise",
            what: "OS noise".into(),
            args: with_cpus(vec![
                "measure".into(),
                "noise".into(),
                "-q".into(),
                "-D".into(),
                secs(noise_d),
                "--json".into(),
                s(&p("noise.json")),
            ]),
            file: p("noise.json"),
            stdout_to_file: false,
            expect: noise_d,
        },
        Step {
            name: "ticks",
            what: "timer ticks under a spinner".into(),
            args: with_cpus(vec![
                "measure".into(),
                "ticks".into(),
                "-q".into(),
                "-D".into(),
                secs(ticks_d),
                "--json".into(),
                s(&p("ticks.json")),
            ]),
            file: p("ticks.json"),
            stdout_to_file: false,
            expect: ticks_d,
        },
        Step {
            name: "fsync",
            what: format!("fsync probe in {}", fsync_dir.display()),
            args: vec![
                "measure".into(),
                "fsync".into(),
                "--dir".into(),
                s(&fsync_dir),
                "--duration".into(),
                secs(fsync_d),
                "--json".into(),
                s(&p("fsync.json")),
            ],
            file: p("fsync.json"),
            stdout_to_file: false,
            expect: fsync_d,
        },
    ];
    run_list(&mut steps, &mut docs, &mut notes, &mut interrupted);
    if temp_fsync {
        let _ = std::fs::remove_dir_all(&fsync_dir);
    }

    let host_name = docs
        .iter()
        .find(|d| d.kind == "inspect")
        .and_then(|d| d.value.get("hostname").and_then(|h| h.as_str()).map(String::from));
    let title = match host_name {
        Some(h) => format!("lowlat check: {h}"),
        None => "lowlat check".to_string(),
    };
    let mut opts = super::report::options(&title, args.threshold);
    opts.notes = notes;
    let model = report::build(&docs, &opts);
    let html = p("lowlat-report.html");
    println!();
    super::report::write(&model, &html, false)?;
    print_next(&model, &out, &docs);
    Ok(if interrupted {
        ExitCode::Interrupted
    } else if model.verdict == report::Verdict::Fail {
        ExitCode::CheckFailed
    } else {
        ExitCode::Ok
    })
}

/// Top findings and the exact next commands.
fn print_next(model: &report::Report, out: &Path, docs: &[report::Doc]) {
    // One finding per section first (worst first), so one noisy section does not hide others.
    let mut firsts: Vec<&report::model::Headline> = model
        .sections
        .iter()
        .filter_map(|s| s.headlines.iter().min_by_key(|h| std::cmp::Reverse(h.verdict)))
        .filter(|h| h.verdict >= report::Verdict::Warn)
        .collect();
    firsts.sort_by_key(|h| std::cmp::Reverse(h.verdict));
    let rest = model.headlines.iter().filter(|h| h.verdict >= report::Verdict::Warn);
    let mut top: Vec<&report::model::Headline> = Vec::new();
    for h in firsts.into_iter().chain(rest) {
        if top.len() < 6 && !top.contains(&h) {
            top.push(h);
        }
    }
    top.sort_by_key(|h| std::cmp::Reverse(h.verdict));
    if !top.is_empty() {
        println!("\ntop findings:");
        for h in top {
            println!("  {:<5} {}", h.verdict.label(), report::summary::short(&h.text));
        }
    }
    for (cmd, why) in next_commands(out, docs.iter().any(|d| d.kind == "plan")) {
        if cmd.is_empty() {
            println!("\n{why}");
        } else {
            println!("  {cmd:<52} # {why}");
        }
    }
}

/// (command, why) lines; an empty command is a heading.
fn next_commands(out: &Path, have_plan: bool) -> Vec<(String, String)> {
    let plan = out.join("plan.yaml");
    let plan = plan.display();
    let mut v = vec![(String::new(), "next:".to_string())];
    if have_plan {
        v.extend([
            (
                "lowlat plan -o plan.yaml".to_string(),
                format!("adjust the partition ({plan} is the default)"),
            ),
            (
                format!("lowlat render --plan {plan} cmdline --explain"),
                "the kernel arguments and why".into(),
            ),
            (
                format!("lowlat apply --plan {plan} --dry-run"),
                "what the runtime tier would change".into(),
            ),
            (
                format!("sudo lowlat apply --plan {plan}"),
                "apply it (journaled; `lowlat revert` undoes)".into(),
            ),
            (format!("lowlat verify --plan {plan}"), "check the effects".into()),
        ]);
    } else {
        v.push(("lowlat plan -o plan.yaml".into(), "compute a partition".into()));
    }
    v.push(("lowlat check --duration 12h --out after".into(), "a long run after tuning".into()));
    v.push((
        format!(
            "lowlat report --compare {}/*.json --vs after/*.json -o compare.html",
            out.display()
        ),
        "before vs after".into(),
    ));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_the_cli_reads_them() {
        assert_eq!(secs(Duration::from_secs(30)), "30s");
        assert_eq!(secs(Duration::from_millis(1500)), "1500ms");
        assert_eq!(tail("a\n\nb\nc\n"), "b / c");
    }
}
