//! lowlat's command line: the clap definition of every command and its help, and the mapping
//! of arguments to the libraries' typed requests where that is a plain mapping. The `lowlat`
//! binary parses [`Cli`] and runs it; this crate runs nothing.
//!
//! Why a crate of its own (docs/ARCHITECTURE.md, "The command line"): the definitions and
//! their help are most of the command line's text, and they are declarations, not wiring; kept
//! here, the binary is the wiring (arguments → one library call → a view) and the library
//! crates still never see clap. The surface tests (examples in every `--help`, `-q`/`--json`
//! everywhere, the README's options table) test this definition.

pub mod args;

use clap::{Parser, Subcommand};

/// `--version` text: the crate version and, in a git checkout, the revision (`build.rs`).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("LOWLAT_VERSION_SUFFIX"));

/// lowlat takes a Linux node from "unknown" to "proven low-latency": inspect it, plan a CPU
/// partition, render boot/TuneD/OpenShift configuration, apply the runtime part reversibly,
/// verify effects, measure latency, and report.
#[derive(Debug, Parser)]
#[command(name = "lowlat", version = VERSION, propagate_version = true)]
#[command(after_help = "Start with `lowlat check` (no arguments): it inspects this host, \
measures briefly and writes lowlat-report.html.\nExit codes: 0 ok, 1 check/threshold failed, \
2 usage/input error, 3 runtime error, 4 partial apply (run `lowlat revert`), 130 interrupted.")]
pub struct Cli {
    /// No progress and no human summary, on every command (errors still go to stderr; a
    /// command's own output — JSON, a render, an export — is still written).
    #[arg(short = 'q', long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The main job: inspect, verify against an evaluation plan, measure, write a report.
    Check(args::check::Args),
    /// Show topology, kernel, power, IRQs, what runs where, and findings.
    Inspect(args::inspect::Args),
    /// Capture the files `inspect` reads into a tarball for analysis elsewhere.
    Snapshot(args::snapshot::Args),
    /// Compute a CPU partition (housekeeping / isolated / offline) and write a plan file.
    Plan(args::plan::Args),
    /// Render a plan as kernel args, boot loader edits, TuneD, OpenShift, systemd, …
    Render(args::render::Args),
    /// Apply the runtime tier of a plan, journaled so it can be reverted.
    Apply(args::apply::Args),
    /// Undo an `apply` from its journal.
    Revert(args::apply::RevertArgs),
    /// Check the host against a plan by effects.
    Verify(args::verify::Args),
    /// What is applied now, which boot arguments run or wait for a reboot, and drift.
    Status(args::verify::StatusArgs),
    /// Measure timer latency, OS noise, ticks, fsync latency.
    #[command(subcommand)]
    Measure(args::measure::Command),
    /// Convert cyclictest / oslat / fio output into a lowlat result file.
    Import(args::import::Args),
    /// Write a timer / noise result in cyclictest's or oslat's text, for their plotting scripts.
    Export(args::import::ExportArgs),
    /// Long-running watchers (storage canary, command duration) with cliff detection.
    #[command(subcommand)]
    Watch(args::watch::Command),
    /// Build the self-contained HTML report (and a terminal summary) from result files.
    Report(args::report::Args),
    /// Kubernetes: nodes, a fleet check (one Job per node), snapshot, apply, clean.
    Cluster(args::cluster::Args),
    /// Print shell completions or the man page.
    #[command(subcommand)]
    Generate(args::generate::Command),
}

#[cfg(test)]
mod surface {
    use clap::CommandFactory as _;

    /// Every visible leaf command, with its path (`lowlat measure timer`).
    fn leaves(c: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        let subs: Vec<_> =
            c.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help").collect();
        if subs.is_empty() {
            out.push((path.to_string(), c.clone()));
        }
        for s in subs {
            leaves(s, &format!("{path} {}", s.get_name()), out);
        }
    }

    /// One CLI surface: every command a user can type teaches by example in its `--help`.
    #[test]
    fn every_command_has_examples_in_its_help() {
        let mut all = Vec::new();
        leaves(&super::Cli::command(), "lowlat", &mut all);
        assert!(all.len() > 20, "{}", all.len());
        let missing: Vec<&str> = all
            .iter()
            .filter(|(_, c)| {
                !c.get_after_help().is_some_and(|h| h.to_string().contains("Examples"))
            })
            .map(|(p, _)| p.as_str())
            .collect();
        assert!(missing.is_empty(), "no examples in --help: {missing:?}");
    }

    /// One CLI surface: `-q` on every command (one global flag, one meaning), and `--json
    /// [FILE]` on every command that produces a document. The exceptions write something that
    /// is not a JSON document: an archive, another tool's text, JSON lines, shell or roff.
    #[test]
    fn every_command_takes_q_and_every_document_command_json() {
        let mut all = Vec::new();
        let mut root = super::Cli::command();
        root.build();
        leaves(&root, "lowlat", &mut all);
        let no_document = [
            "lowlat snapshot",
            "lowlat export",
            "lowlat watch storage",
            "lowlat watch cmd",
            "lowlat generate completions",
            "lowlat generate man",
            "lowlat cluster",
            "lowlat cluster clean",
            "lowlat cluster snapshot",
        ];
        for (path, c) in &all {
            let has = |id: &str| c.get_arguments().any(|a| a.get_id() == id);
            assert!(has("quiet"), "{path}: no -q");
            let json = c.get_arguments().find(|a| a.get_id() == "json");
            if no_document.contains(&path.as_str()) {
                continue;
            }
            let json = json.unwrap_or_else(|| panic!("{path}: no --json"));
            assert!(json.get_long() == Some("json"), "{path}");
        }
    }
    /// The README's "Options every command shares" table: its "on" column is generated from
    /// the CLI (the commands that take each option), so the README cannot drift from the
    /// parser. `UPDATE_README=1 cargo test -p cli --all-features readme` rewrites the column.
    #[test]
    fn readme_options_table_names_the_commands_that_take_each_option() {
        let mut root = super::Cli::command();
        root.build();
        let mut all = Vec::new();
        leaves(&root, "lowlat", &mut all);
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        let readme = std::fs::read_to_string(path).expect("README.md");
        let start = readme.find("## Options every command shares").expect("the README's table");
        let mut out = readme[..start].to_string();
        let mut checked = 0;
        let mut stale = Vec::new();
        for line in readme[start..].split_inclusive('\n') {
            let cells: Vec<&str> = line.trim_end().split(" | ").collect();
            // rows naming an option: `| `--long …` | on | meaning |`
            let long = cells.first().and_then(|c| {
                let c = c.trim_start_matches("| ");
                let rest = &c[c.starts_with("`-").then(|| c.find("--"))?? + 2..];
                Some(rest.split([' ', '`']).next().unwrap_or_default().to_string())
            });
            let (Some(long), 3) = (long, cells.len()) else {
                out.push_str(line);
                continue;
            };
            let on: Vec<&str> = all
                .iter()
                .filter(|(_, c)| c.get_arguments().any(|a| a.get_long() == Some(long.as_str())))
                .map(|(p, _)| p.strip_prefix("lowlat ").unwrap_or(p))
                .collect();
            assert!(!on.is_empty(), "README names --{long}, which no command takes");
            let want = if on.len() == all.len() {
                "every command".to_string()
            } else {
                on.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
            };
            // without the cluster feature `lowlat cluster` has no subcommands: compare the rest
            let keep = |cell: &str| -> String {
                if cfg!(feature = "cluster") {
                    return cell.to_string();
                }
                let v: Vec<&str> =
                    cell.split(", ").filter(|p| !p.starts_with("`cluster")).collect();
                v.join(", ")
            };
            if keep(cells[1]) != keep(&want) {
                stale.push(format!("--{long}: README says {}, the CLI {want}", cells[1]));
            }
            checked += 1;
            out.push_str(&format!("{} | {want} | {}\n", cells[0], cells[2]));
        }
        assert!(checked >= 6, "only {checked} option rows found in the README's table");
        if std::env::var_os("UPDATE_README").is_some() {
            std::fs::write(path, out).expect("write README.md");
        } else {
            assert!(
                stale.is_empty(),
                "README.md's options table is stale (UPDATE_README=1 cargo test -p cli \
                 --all-features readme rewrites it):\n{}",
                stale.join("\n")
            );
        }
    }
}
