//! Top-level command line: the subcommand enum. Each subcommand's arguments live beside its
//! runner in `cmd/<name>.rs`.

use clap::{Parser, Subcommand};

use crate::cmd;

/// lowlat takes a Linux node from "unknown" to "proven low-latency": inspect it, plan a CPU
/// partition, render boot/TuneD/OpenShift configuration, apply the runtime part reversibly,
/// verify effects, measure latency, and report.
#[derive(Debug, Parser)]
#[command(name = "lowlat", version = crate::cmd::VERSION, propagate_version = true)]
#[command(after_help = "Start with `lowlat check` (no arguments): it inspects this host, \
measures briefly and writes lowlat-report.html.\nExit codes: 0 ok, 1 check/threshold failed, \
2 usage/input error, 3 runtime error, 4 partial apply (run `lowlat revert`), 130 interrupted.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The main job: inspect, verify against an evaluation plan, measure, write a report.
    Check(cmd::check::Args),
    /// Show topology, kernel, power, IRQs, what runs where, and findings.
    Inspect(cmd::inspect::Args),
    /// Capture the files `inspect` reads into a tarball for analysis elsewhere.
    Snapshot(cmd::snapshot::Args),
    /// Compute a CPU partition (housekeeping / isolated / offline) and write a plan file.
    Plan(cmd::plan::Args),
    /// Render a plan as kernel args, boot loader edits, TuneD, OpenShift, systemd, …
    Render(cmd::render::Args),
    /// Apply the runtime tier of a plan, journaled so it can be reverted.
    Apply(cmd::apply::Args),
    /// Undo an `apply` from its journal.
    Revert(cmd::apply::RevertArgs),
    /// Check the host against a plan by effects.
    Verify(cmd::verify::Args),
    /// Measure timer latency, OS noise, ticks, fsync latency.
    #[command(subcommand)]
    Measure(cmd::measure::Command),
    /// Convert cyclictest / oslat / fio output into a lowlat result file.
    Import(cmd::import::Args),
    /// Long-running watchers (storage canary, command duration) with cliff detection.
    #[command(subcommand)]
    Watch(cmd::watch::Command),
    /// Build the self-contained HTML report (and a terminal summary) from result files.
    Report(cmd::report::Args),
    /// Print shell completions or the man page.
    #[command(subcommand)]
    Generate(cmd::generate::Command),
}
