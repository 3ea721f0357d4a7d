//! `lowlat apply` and `lowlat revert`: the runtime tier of a plan, journaled before every
//! write, all-or-nothing, and undone from the journal alone (the `tune` crate's `Site`).

use std::time::Duration;

use cli::args::apply::{Args, RevertArgs};
use tune::{ApplyRequest, Options, Site};

use crate::exit::{usage, ExitCode};

/// The outcome as people read it, and as JSON where `--json` says (alone on stdout: the human
/// view then goes to stderr).
fn show<T: serde::Serialize + std::fmt::Display>(
    json: &cli::args::common::JsonArg,
    kind: &'static str,
    body: &T,
    extra: &str,
) -> anyhow::Result<()> {
    if let Some(out) = &json.json {
        out.write_json(&tune::site::Document::new(kind, body))?;
    }
    if json.to_stdout() {
        eprint!("{}{extra}", util::term::sanitize(&body.to_string(), true));
    } else {
        super::common::print_view(format_args!("{body}{extra}"))?;
    }
    Ok(())
}

/// Run `lowlat apply`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let plan = plan::Plan::load(&args.plan)?;
    let mut site = Site::open(args.sysroot.as_deref())?;
    let req = ApplyRequest {
        plan: &plan,
        plan_file: &args.plan,
        journal: &args.journal,
        options: Options { move_tasks: args.move_tasks, allow: args.allow },
        step_delay: Duration::from_millis(args.step_delay),
    };
    if args.dry_run {
        show(&args.json, "apply-dry-run", &site.dry_run(&req)?, "")?;
        return Ok(ExitCode::Ok);
    }
    if site.is_live() && !util::privilege::is_root() {
        return Err(usage("`lowlat apply` writes /proc/irq, /sys and task affinities: run it as root (or use --dry-run to see the changes)"));
    }
    // Ctrl-C / SIGTERM: finish the current write, then roll everything back.
    util::signal::install_flag_only();
    let applied = site.apply(&req, &util::signal::interrupted, &mut |note| {
        eprintln!("note: {}", util::term::sanitize(&note.to_string(), false))
    })?;
    let plan = args.plan.display();
    let persistence = format!(
        "these runtime changes last until reboot: `lowlat render --plan {plan} tuned` (or \
         systemd) makes them persistent; `lowlat status` shows what is applied\n"
    );
    show(&args.json, "apply", &applied, &persistence)?;
    Ok(ExitCode::Ok)
}

/// Run `lowlat revert`.
pub fn revert(args: RevertArgs) -> anyhow::Result<ExitCode> {
    let mut site = Site::open(args.sysroot.as_deref())?;
    // As apply: refused before the host lock under /run, which only root can take (it was
    // a runtime error, exit 3, about a lock file the user never heard of).
    if site.is_live() && !util::privilege::is_root() {
        return Err(usage(format!(
            "`lowlat revert` restores /proc/irq, /sys and task affinities: run it as root (`sudo lowlat revert --journal {}`)",
            args.journal.display()
        )));
    }
    let reverted = site.revert(&args.journal, args.forget)?;
    show(&args.json, "revert", &reverted, "")?;
    reverted.check()?;
    Ok(ExitCode::Ok)
}
