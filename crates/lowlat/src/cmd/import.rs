//! `lowlat import cyclictest|oslat|fio FILE`: another tool's output (text or JSON, detected by
//! content) turned into a lowlat result file by `results::import`. An input cut short imports
//! as `partial`, a failed tool run (cyclictest's `return_code`, a fio job's `error`) with
//! `failed`, each with a warning on stderr.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use results::import::Tool;

use super::common::Output;
use crate::exit::{usage, ExitCode};

/// Arguments of `lowlat import`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  cyclictest -m -S -p95 -h400 -q -D 10m > ct.txt; lowlat import cyclictest ct.txt -o timer.json\n  \
lowlat import oslat oslat.txt --table\n  fio etcd.fio --output-format=json | lowlat import fio - -o fsync.json\n  \
lowlat report timer.json -o report.html"
)]
pub struct Args {
    /// Which tool wrote FILE: cyclictest (text, with or without -h histograms, rt-tests <=2.6
    /// and >=2.7, or --json), oslat (text or --json), or fio (its normal text, json or
    /// normal,json output: the sync latency block).
    #[arg(value_parser = PossibleValuesParser::new(["cyclictest", "oslat", "fio"]).try_map(|s| s.parse::<Tool>()))]
    pub tool: Tool,
    /// The tool's output (`-` = stdin).
    pub file: PathBuf,
    /// Write the lowlat result here, atomically (default: JSON on stdout).
    #[arg(long, short = 'o', value_name = "OUT")]
    pub output: Option<Output>,
    /// Print the per-CPU table instead of JSON (when no --output).
    #[arg(long)]
    pub table: bool,
    /// The lowlat result as JSON, as on every command: `--json FILE` is `-o FILE`, `--json`
    /// alone stdout (the default).
    #[command(flatten)]
    pub json: super::common::JsonArg,
}

/// Run `lowlat import`.
pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    if args.output.is_none() {
        args.output = args.json.json.take();
    } else if args.json.json.is_some() {
        return Err(usage("give -o FILE or --json FILE, not both (they are the same output)"));
    }
    let file = args.file.display();
    // Bounded (results::input): over 64 MiB is refused with what to do, not read into
    // gigabytes of memory.
    let text = results::input::read_text_or_stdin(&args.file).map_err(|e| match e {
        results::input::InputError::Read { source, .. } => {
            usage(format!("{file}: {source}; pass the file {} wrote", args.tool.as_str()))
        }
        e => usage(e.to_string()),
    })?;
    if let Some(Output::File(out)) = &args.output {
        if util::fs::same_file(&args.file, out) {
            return Err(usage(format!(
                "-o {file} is the input: writing it would replace the input; choose another file"
            )));
        }
    }
    let r = results::import::import(args.tool, &text).with_context(|| file.to_string())?;
    if let Some(why) = r.cut_short() {
        eprintln!("lowlat: warning: {file}: imported as partial: {why}");
    } else if let Some(why) = r.no_evidence() {
        // A failed producer or an empty run: imported as it is, never judged a pass.
        eprintln!("lowlat: warning: {file}: imported, but no report will pass it: {why}");
    }
    match (&args.output, r.table()) {
        (Some(out), _) => out.write_json(&r)?,
        (None, Some(t)) if args.table => print!("{t}"),
        (None, _) => println!("{}", serde_json::to_string_pretty(&r)?),
    }
    Ok(ExitCode::Ok)
}

/// Arguments of `lowlat export`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat export cyclictest timer.json -H 400 > timer.hist   # for mklatencyplot / gnuplot\n  \
lowlat export oslat noise.json\n\
`lowlat import cyclictest|oslat` reads these back."
)]
pub struct ExportArgs {
    /// The format: cyclictest (`T:` lines, `-h`-style histogram, `# Max Latencies:`) or oslat
    /// (its summary block: 1 µs bucket rows, Minimum/Average/Maximum/Duration).
    #[arg(value_parser = ["cyclictest", "oslat"])]
    pub format: String,
    /// A lowlat timer or noise result (`measure timer|noise --json`, `import`); `-` reads
    /// standard input.
    pub file: PathBuf,
    /// Histogram rows of 1 µs (cyclictest's -h N, default none; oslat's -b N, default 32).
    #[arg(long, short = 'H', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub histogram: Option<u32>,
}

/// Run `lowlat export`.
pub fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let doc = report::Doc::load(&args.file)?;
    let report::Body::Latency(r) = &doc.body else {
        return Err(usage(format!(
            "{}: a {} document; export takes a timer or noise result",
            args.file.display(),
            doc.kind
        )));
    };
    let text = match args.format.as_str() {
        "oslat" => results::export::oslat::to_text(
            r,
            args.histogram.unwrap_or(results::export::oslat::DEFAULT_BUCKETS),
        ),
        _ => results::export::cyclictest::to_text(r, args.histogram),
    };
    print!("{text}");
    Ok(ExitCode::Ok)
}
