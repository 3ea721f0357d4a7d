//! `lowlat apply` and `lowlat revert`: the runtime tier of a plan, journaled before every
//! write, all-or-nothing, and undone from the journal alone.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use tune::journal::{self, Journal, Lock, Record, DEFAULT_JOURNAL};
use tune::real::RealWriter;
use tune::txn::{self, ApplyError, Done, RevertError};
use tune::{Allow, Options, Writer};

use crate::exit::{usage, CodedError, ExitCode};

/// Arguments of `lowlat apply`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan file (YAML, from `lowlat plan`).
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    /// Print the changes (target, old → new) and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Journal of every change, written before the change (what `revert` reads).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_JOURNAL)]
    pub journal: PathBuf,
    /// Also move user tasks off the isolated CPUs (never tasks in kubepods cgroups).
    #[arg(long)]
    pub move_tasks: bool,
    /// A workload task to leave on the isolated CPUs with --move-tasks: a PID or a comm
    /// (repeatable).
    #[arg(long, value_name = "COMM|PID")]
    pub allow: Vec<String>,
    /// Apply to a directory laid out like / instead of the live host (tests, rehearsals;
    /// task affinities are skipped there).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,
    /// Pause this many milliseconds after each change (crash testing: kill it midway, then
    /// `lowlat revert`).
    #[arg(long, value_name = "MS", hide = true, default_value_t = 0)]
    pub step_delay: u64,
}

/// Load and check a plan file; problems are usage errors naming the file.
pub fn load_plan(path: &Path) -> anyhow::Result<plan::Plan> {
    Ok(plan::Plan::load(path)?)
}

fn open(sysroot: &Option<PathBuf>) -> anyhow::Result<(host::Root, RealWriter)> {
    match sysroot {
        Some(dir) => {
            let root = host::Root::open(dir).map_err(|e| usage(e.to_string()))?;
            Ok((root, RealWriter::under(dir)))
        }
        None => Ok((host::Root::live(), RealWriter::live())),
    }
}

/// Print to stdout; a closed pipe (`| head`) ends output quietly instead of panicking.
pub(crate) fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// The host-wide apply/revert lock (under the sandbox root with `--sysroot`).
fn host_lock(sysroot: &Option<PathBuf>) -> anyhow::Result<Lock> {
    let root = sysroot.clone().unwrap_or_else(|| PathBuf::from("/"));
    Lock::host(&root).map_err(|e| usage(e.to_string()))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The "pending reboot" block: boot-tier arguments not on the running command line.
fn pending_block(plan: &plan::Plan, host: &host::Host, plan_path: &Path) -> String {
    let pending = tune::pending_kernel_args(plan, host);
    let mut out = String::new();
    if pending.is_empty() {
        if !plan.kernel_args.is_empty() {
            out.push_str(
                "boot tier: every planned kernel argument is on the running command line\n",
            );
        }
        return out;
    }
    let tokens: Vec<String> = pending.iter().map(|a| a.token()).collect();
    let _ = writeln!(out, "pending reboot ({} kernel arguments not on /proc/cmdline; apply does not touch the boot loader):", pending.len());
    for a in &pending {
        let _ = writeln!(out, "  {:<40} {}", a.token(), a.reason);
    }
    let _ =
        writeln!(out, "  make them with:  lowlat render --plan {} grubby   (or bls, grub, rpm-ostree, openshift; `cmdline` prints them)", plan_path.display());
    let _ = writeln!(
        out,
        "              or:  grubby --update-kernel=ALL --args=\"{}\"",
        tokens.join(" ")
    );
    let _ = writeln!(out, "  then reboot and run `lowlat verify --plan {}`", plan_path.display());
    out
}

fn notes_block(notes: &[tune::Note]) -> String {
    let mut out = String::new();
    if !notes.is_empty() {
        let _ = writeln!(out, "left alone on purpose:");
        for n in notes {
            let _ = writeln!(out, "  {:<40} {}", n.what, n.why);
        }
    }
    out
}

fn row(target: &str, old: &str, new: &str, note: &str) -> String {
    format!("  {target:<58} {old:>12} → {new:<12} {note}").trim_end().to_string() + "\n"
}

/// Run `lowlat apply`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let plan = load_plan(&args.plan)?;
    let (root, mut writer) = open(&args.sysroot)?;
    let host = host::read(&root);
    let opts = Options {
        move_tasks: args.move_tasks,
        allow: args.allow.iter().map(|a| Allow::parse(a)).collect(),
    };
    let changes = tune::plan_changes(&plan, &host, &opts);

    if args.dry_run {
        let rows = txn::preview(&mut writer, &changes.changes);
        let mut out = String::from("dry run: nothing is written\n");
        let todo = rows.iter().filter(|r| !r.unchanged).count();
        let _ = writeln!(out, "{todo} change(s), {} already in place:", rows.len() - todo);
        let mut last_why = "";
        for r in rows.iter().filter(|r| !r.unchanged) {
            // One heading per plan item: its reason.
            let why = r.why.split(" (").next().unwrap_or(&r.why);
            if why != last_why {
                let _ = writeln!(out, "  # {why}");
                last_why = why;
            }
            let old = r.old.clone().unwrap_or_else(|e| format!("({e})"));
            out.push_str(&row(&r.target.to_string(), &old, &r.new, ""));
        }
        out.push_str(&notes_block(&changes.notes));
        out.push_str(&pending_block(&plan, &host, &args.plan));
        emit(&out)?;
        return Ok(ExitCode::Ok);
    }

    if args.sysroot.is_none() && !is_root() {
        return Err(usage("`lowlat apply` writes /proc/irq, /sys and task affinities: run it as root (or use --dry-run to see the changes)"));
    }
    let _host_lock = host_lock(&args.sysroot)?;
    let _lock = Lock::acquire(&args.journal).map_err(|e| usage(e.to_string()))?;
    set_aside_other_boots(&args.journal, &writer.boot_id())?;
    let mut j = Journal::open(&args.journal).context("opening the journal")?;
    let delay = std::time::Duration::from_millis(args.step_delay);
    interrupt::install();
    let mut pace = |_: usize| {
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        !interrupt::requested()
    };
    let plan_name = Some(args.plan.display().to_string());
    let result = txn::apply_with(&mut writer, &mut j, &changes.changes, plan_name, &mut pace);
    match result {
        Ok(rep) => {
            let mut out = String::new();
            let _ = writeln!(
                out,
                "applied {} change(s) ({} already in place, {} refused by the kernel, {} skipped); journal: {}",
                rep.applied.len(),
                rep.unchanged.len(),
                rep.refused.len(),
                rep.skipped.len(),
                args.journal.display()
            );
            for d in &rep.applied {
                out.push_str(&row(&d.target.to_string(), &d.old, &d.new, ""));
            }
            if !rep.refused.is_empty() {
                let _ = writeln!(out, "refused (classified, not failures):");
                for d in &rep.refused {
                    out.push_str(&row(
                        &d.target.to_string(),
                        &d.old,
                        &d.new,
                        d.message.as_deref().unwrap_or(""),
                    ));
                }
            }
            skipped_lines(&mut out, &rep.skipped);
            out.push_str(&notes_block(&changes.notes));
            out.push_str(&pending_block(&plan, &host, &args.plan));
            let _ = writeln!(out, "undo with: lowlat revert --journal {}", args.journal.display());
            emit(&out)?;
            Ok(ExitCode::Ok)
        }
        Err(e @ ApplyError::RolledBack { .. }) if interrupt::requested() => {
            Err(CodedError { code: ExitCode::Interrupted, message: e.to_string() }.into())
        }
        Err(e @ ApplyError::Partial { .. }) => {
            Err(CodedError { code: ExitCode::PartialApply, message: e.to_string() }.into())
        }
        Err(e) => Err(CodedError { code: ExitCode::Runtime, message: e.to_string() }.into()),
    }
}

/// A journal whose changes were made in another boot describes values the reboot already
/// reset: move it aside (kept for the record) so this boot starts a fresh one.
fn set_aside_other_boots(path: &Path, boot: &str) -> anyhow::Result<()> {
    let Some(records) = journal::read(path).map_err(|e| usage(e.to_string()))? else {
        return Ok(());
    };
    let other = records.iter().find_map(|r| match r {
        Record::Change { boot_id, .. } | Record::Begin { boot_id, .. } if boot_id != boot => {
            Some(boot_id.clone())
        }
        _ => None,
    });
    if let Some(old) = other {
        let aside = with_suffix(path, &format!("boot-{old}"));
        std::fs::rename(path, &aside)
            .with_context(|| format!("moving the old journal to {}", aside.display()))?;
        eprintln!(
            "note: {} was from boot {old} (values reset by reboot); kept as {}",
            path.display(),
            aside.display()
        );
    }
    Ok(())
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

/// Arguments of `lowlat revert`.
#[derive(Debug, clap::Args)]
pub struct RevertArgs {
    /// The journal written by `lowlat apply`.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_JOURNAL)]
    pub journal: PathBuf,
    /// The journal is from another boot: move it aside instead of refusing.
    #[arg(long)]
    pub forget: bool,
    /// Revert a directory laid out like / (see `apply --sysroot`).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,
}

/// The "skipped:" block shared by apply's and revert's summaries (nothing when empty).
fn skipped_lines(out: &mut String, skipped: &[Done]) {
    if skipped.is_empty() {
        return;
    }
    let _ = writeln!(out, "skipped:");
    for d in skipped {
        let _ =
            writeln!(out, "  {:<58} {}", d.target.to_string(), d.message.as_deref().unwrap_or(""));
    }
}

fn done_line(d: &Done) -> String {
    row(&d.target.to_string(), &d.new, &d.old, d.message.as_deref().unwrap_or(""))
}

/// Run `lowlat revert`.
pub fn revert(args: RevertArgs) -> anyhow::Result<ExitCode> {
    let (_, mut writer) = open(&args.sysroot)?;
    let _host_lock = host_lock(&args.sysroot)?;
    let _lock = Lock::acquire(&args.journal).map_err(|e| usage(e.to_string()))?;
    let Some(records) = journal::read(&args.journal).map_err(|e| usage(e.to_string()))? else {
        emit(&format!("nothing to revert: no journal at {}\n", args.journal.display()))?;
        return Ok(ExitCode::Ok);
    };
    let rep = match txn::revert(&mut writer, &records) {
        Ok(r) => r,
        Err(e @ RevertError::OtherBoot { .. }) => {
            if args.forget {
                let aside = with_suffix(&args.journal, "forgotten");
                std::fs::rename(&args.journal, &aside)
                    .with_context(|| format!("moving the journal to {}", aside.display()))?;
                emit(&format!("{e}\nmoved {} to {}\n", args.journal.display(), aside.display()))?;
                return Ok(ExitCode::Ok);
            }
            return Err(usage(format!("refusing to revert {}: {e}", args.journal.display())));
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "restored {} value(s) from {} ({} already at their old value, {} skipped, {} failed)",
        rep.restored.len(),
        args.journal.display(),
        rep.already,
        rep.skipped.len(),
        rep.failed.len()
    );
    for d in &rep.restored {
        out.push_str(&done_line(d));
    }
    skipped_lines(&mut out, &rep.skipped);
    if !rep.failed.is_empty() {
        let _ = writeln!(out, "NOT restored:");
        for (d, e) in &rep.failed {
            let _ = writeln!(
                out,
                "  {:<58} still {}, was {}: {}",
                d.target.to_string(),
                d.new,
                d.old,
                e.message
            );
        }
        emit(&out)?;
        return Err(CodedError {
            code: ExitCode::PartialApply,
            message: format!(
                "{} value(s) could not be restored; fix the cause and run `lowlat revert` again",
                rep.failed.len()
            ),
        }
        .into());
    }
    let mut j = Journal::open(&args.journal).context("opening the journal")?;
    j.append(&Record::Reverted {
        time: journal::now_rfc3339(),
        restored: rep.restored.len(),
        skipped: rep.skipped.len(),
    })?;
    drop(j);
    let done = with_suffix(&args.journal, "reverted");
    std::fs::rename(&args.journal, &done)
        .with_context(|| format!("moving the journal to {}", done.display()))?;
    let _ = writeln!(out, "journal kept as {}", done.display());
    emit(&out)?;
    Ok(ExitCode::Ok)
}

/// Ctrl-C / SIGTERM during `apply`: finish the current write, then roll back everything
/// (all-or-nothing) instead of dying half-applied.
mod interrupt {
    use std::sync::atomic::{AtomicBool, Ordering};

    static REQUESTED: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_signal(_: libc::c_int) {
        // Only an atomic store: async-signal-safe.
        REQUESTED.store(true, Ordering::SeqCst);
    }

    /// Route SIGINT and SIGTERM to the flag.
    pub fn install() {
        let handler: extern "C" fn(libc::c_int) = on_signal;
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
            unsafe { libc::signal(sig, handler as libc::sighandler_t) };
        }
    }

    /// Whether a signal arrived.
    pub fn requested() -> bool {
        REQUESTED.load(Ordering::SeqCst)
    }
}
