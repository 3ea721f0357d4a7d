//! `lowlat import cyclictest|oslat|fio FILE`: another tool's output (text or JSON, detected by
//! content) turned into a lowlat result file by `results::import`. An input cut short imports
//! as `partial`, a failed tool run (cyclictest's `return_code`, a fio job's `error`) with
//! `failed`, each with a warning on stderr.

use anyhow::Context as _;
use cli::args::import::{Args, ExportArgs};

use super::common::Output;
use crate::exit::{usage, ExitCode};

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
