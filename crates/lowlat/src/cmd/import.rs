//! `lowlat import cyclictest|oslat|fio FILE`: another tool's output (text or JSON, detected by
//! content; fio JSON only) turned into a lowlat result file.

use std::path::PathBuf;

use anyhow::Context as _;

use crate::exit::{usage, ExitCode};

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Tool {
    /// cyclictest text (with or without -h histograms, rt-tests <=2.6 and >=2.7) or --json.
    Cyclictest,
    /// oslat text or --json.
    Oslat,
    /// fio --output-format=json (the sync latency block; `normal,json` output works too).
    Fio,
}

/// Arguments of `lowlat import`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which tool wrote FILE.
    #[arg(value_enum)]
    pub tool: Tool,
    /// The tool's output (`-` = stdin).
    pub file: PathBuf,
    /// Write the lowlat result here (default: JSON on stdout).
    #[arg(long, short = 'o', value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Print the per-CPU table instead of JSON (when no --output).
    #[arg(long)]
    pub table: bool,
}

/// Run `lowlat import`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let text = if args.file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading stdin")?
    } else {
        std::fs::read_to_string(&args.file).map_err(|e| {
            usage(format!("{}: {e}; pass the file cyclictest/oslat wrote", args.file.display()))
        })?
    };
    let bad = |e: &dyn std::fmt::Display| usage(format!("{}: {e}", args.file.display()));
    let (json, table) = match args.tool {
        Tool::Fio => {
            let r = results::import::fio::import(&text).map_err(|e| bad(&e))?;
            (serde_json::to_string_pretty(&r)?, None)
        }
        Tool::Cyclictest | Tool::Oslat => {
            let r = match args.tool {
                Tool::Cyclictest => results::import::cyclictest::import(&text),
                _ => results::import::oslat::import(&text),
            }
            .map_err(|e| bad(&e))?;
            (serde_json::to_string_pretty(&r)?, Some(results::export::table::latency(&r)))
        }
    };
    match (&args.output, table) {
        (Some(out), _) => std::fs::write(out, json + "\n")
            .with_context(|| format!("writing {}", out.display()))?,
        (None, Some(t)) if args.table => print!("{t}"),
        (None, _) => println!("{json}"),
    }
    Ok(ExitCode::Ok)
}
