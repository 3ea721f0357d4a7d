//! How apply's and revert's outcomes read in a terminal: one row per change (target, old →
//! new, note), the notes on what is left alone, and the "pending reboot" block for boot-tier
//! arguments the running kernel lacks.

use std::fmt::{self, Display, Formatter};

use crate::changes::Note;
use crate::journal::SetAside;
use crate::site::{Applied, DryRun, Pending, Reverted};
use crate::txn::Done;

fn row(f: &mut Formatter<'_>, target: &str, old: &str, new: &str, note: &str) -> fmt::Result {
    let line = format!("  {target:<58} {old:>12} → {new:<12} {note}");
    writeln!(f, "{}", line.trim_end())
}

fn notes(f: &mut Formatter<'_>, notes: &[Note]) -> fmt::Result {
    if notes.is_empty() {
        return Ok(());
    }
    writeln!(f, "left alone on purpose:")?;
    for n in notes {
        writeln!(f, "  {:<40} {}", n.what, n.why)?;
    }
    Ok(())
}

/// The "skipped:" block shared by apply's and revert's summaries (nothing when empty).
fn skipped(f: &mut Formatter<'_>, skipped: &[Done]) -> fmt::Result {
    if skipped.is_empty() {
        return Ok(());
    }
    writeln!(f, "skipped:")?;
    for d in skipped {
        writeln!(f, "  {:<58} {}", d.target.to_string(), d.message.as_deref().unwrap_or(""))?;
    }
    Ok(())
}

impl Display for Pending {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let plan = self.plan_file.display();
        if self.args.is_empty() {
            if self.planned > 0 {
                writeln!(
                    f,
                    "boot tier: every planned kernel argument is on the running command line"
                )?;
            }
            return Ok(());
        }
        let tokens: Vec<String> = self.args.iter().map(|a| a.token()).collect();
        writeln!(f, "pending reboot ({} kernel arguments not on /proc/cmdline; apply does not touch the boot loader):", self.args.len())?;
        for a in &self.args {
            writeln!(f, "  {:<40} {}", a.token(), a.reason)?;
        }
        writeln!(f, "  make them with:  lowlat render --plan {plan} grubby   (or bls, grub, rpm-ostree, openshift; `cmdline` prints them)")?;
        writeln!(
            f,
            "              or:  grubby --update-kernel=ALL --args=\"{}\"",
            tokens.join(" ")
        )?;
        writeln!(f, "  then reboot and run `lowlat verify --plan {plan}`")
    }
}

impl Display for DryRun {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, "dry run: nothing is written")?;
        let todo = self.rows.iter().filter(|r| !r.unchanged).count();
        writeln!(f, "{todo} change(s), {} already in place:", self.rows.len() - todo)?;
        let mut last_why = "";
        for r in self.rows.iter().filter(|r| !r.unchanged) {
            // One heading per plan item: its reason.
            let why = r.why.split(" (").next().unwrap_or(&r.why);
            if why != last_why {
                writeln!(f, "  # {why}")?;
                last_why = why;
            }
            let old = r.old.clone().unwrap_or_else(|e| format!("({e})"));
            row(f, &r.target.to_string(), &old, &r.new, "")?;
        }
        notes(f, &self.notes)?;
        write!(f, "{}", self.pending)
    }
}

impl Display for Applied {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let rep = &self.report;
        let journal = self.journal.display();
        writeln!(
            f,
            "applied {} change(s) ({} already in place, {} refused by the kernel, {} skipped); journal: {journal}",
            rep.applied.len(),
            rep.unchanged.len(),
            rep.refused.len(),
            rep.skipped.len(),
        )?;
        for d in &rep.applied {
            row(f, &d.target.to_string(), &d.old, &d.new, "")?;
        }
        if !rep.refused.is_empty() {
            writeln!(f, "refused (classified, not failures):")?;
            for d in &rep.refused {
                row(f, &d.target.to_string(), &d.old, &d.new, d.message.as_deref().unwrap_or(""))?;
            }
        }
        skipped(f, &rep.skipped)?;
        notes(f, &self.notes)?;
        write!(f, "{}", self.pending)?;
        writeln!(f, "undo with: lowlat revert --journal {journal}")
    }
}

impl Display for Reverted {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Reverted::NoJournal { journal } => {
                writeln!(f, "nothing to revert: no journal at {}", journal.display())
            }
            Reverted::Forgotten { journal, kept_as, why } => {
                writeln!(f, "{why}\nmoved {} to {}", journal.display(), kept_as.display())
            }
            Reverted::Restored { journal, report, kept_as } => {
                writeln!(
                    f,
                    "restored {} value(s) from {} ({} already at their old value, {} refused by the kernel, {} skipped, {} failed)",
                    report.restored.len(),
                    journal.display(),
                    report.already,
                    report.refused.len(),
                    report.skipped.len(),
                    report.failed.len()
                )?;
                for d in &report.restored {
                    let note = d.message.as_deref().unwrap_or("");
                    row(f, &d.target.to_string(), &d.new, &d.old, note)?;
                }
                if !report.refused.is_empty() {
                    writeln!(f, "refused (classified, not failures):")?;
                    for d in &report.refused {
                        let note = d.message.as_deref().unwrap_or("");
                        row(f, &d.target.to_string(), &d.new, &d.old, note)?;
                    }
                }
                skipped(f, &report.skipped)?;
                if !report.failed.is_empty() {
                    writeln!(f, "NOT restored:")?;
                    for (d, e) in &report.failed {
                        writeln!(
                            f,
                            "  {:<58} still {}, was {}: {}",
                            d.target.to_string(),
                            d.new,
                            d.old,
                            e.message
                        )?;
                    }
                }
                match kept_as {
                    Some(kept) => writeln!(f, "journal kept as {}", kept.display()),
                    None => Ok(()),
                }
            }
        }
    }
}

impl Display for SetAside {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} was from boot {} (values reset by reboot); kept as {}",
            self.journal.display(),
            self.boot,
            self.kept_as.display()
        )
    }
}
