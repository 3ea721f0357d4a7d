//! `lowlat report`: the self-contained HTML report and the terminal summary from result files,
//! or a comparison of two sets (`--compare BEFORE… --vs AFTER…`), by the `report` crate.

use anyhow::Context as _;
use cli::args::report::Args;

use crate::exit::{usage, ExitCode};

/// Refuse an output that is one of the inputs: writing it would replace the input.
fn refuse_overwriting_inputs(args: &Args) -> anyhow::Result<()> {
    let json = match &args.json.json {
        Some(super::common::Output::File(p)) => Some(p),
        _ => None,
    };
    let inputs = args.results.iter().chain(&args.compare).chain(&args.vs);
    for input in inputs {
        for (flag, out) in [("-o", args.output.file()), ("--json", json.map(|p| p.as_path()))] {
            if out.is_some_and(|o| util::fs::same_file(input, o)) {
                return Err(usage(format!(
                    "{flag} {} is an input of this report: writing it would replace the input; choose another file",
                    input.display()
                )));
            }
        }
    }
    Ok(())
}

/// Run `lowlat report`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    refuse_overwriting_inputs(&args)?;
    // (-o FILE is not checked here: the report creates its directory)
    super::common::documents(&[
        ("-o", args.output.is_stdout().then_some(&args.output)),
        ("--json", args.json.json.as_ref()),
        ("--junit", args.junit.as_ref()),
    ])?;
    let opts = report::Options {
        title: args.title.clone(),
        generator: format!("lowlat {}", super::VERSION),
        timer_threshold_ns: u64::try_from(args.threshold.as_nanos()).unwrap_or(u64::MAX),
        ..report::Options::default()
    };
    let (model, docs) = if !args.compare.is_empty() {
        let (before, after) = (report::load_all(&args.compare)?, report::load_all(&args.vs)?);
        (report::compare::build(&before, &after, &opts), [before, after].concat())
    } else if args.results.is_empty() {
        return Err(usage(
            "no result files given: `lowlat report RESULT… -o report.html` (results come from \
             `lowlat measure … --json`, `lowlat import`, `lowlat verify --json`), or \
             `--compare BEFORE… --vs AFTER…`",
        ));
    } else {
        let docs = report::load_all(&args.results)?;
        (report::build(&docs, &opts), docs)
    };
    let bytes = match &args.output {
        super::common::Output::File(p) => {
            report::html::write(&model, p).with_context(|| format!("writing {}", p.display()))?
        }
        super::common::Output::Stdout => {
            let html = report::html::render(&model);
            args.output.write(html.as_bytes())?;
            html.len()
        }
    };
    if let Some(out) = &args.json.json {
        out.write_json(&model)?;
    }
    if let Some(path) = &args.junit {
        let meta = report::junit::Meta {
            hostname: None,
            timestamp: std::time::SystemTime::now(),
            time: None,
        };
        let xml = report::junit::write(&model.title, &report::junit::sections(&model, None), &meta);
        super::common::write_junit(path, &xml)?;
    }
    // The summary: on stdout, or on stderr when a document (the HTML, the JUnit) takes it.
    if !args.json.to_stdout() {
        super::common::print_view(format!(
            "{}wrote {} ({} KiB)\n",
            report::summary::render(&model),
            args.output,
            bytes.div_ceil(1024)
        ))?;
    }
    // Strict: inputs that cannot be judged are an input error (exit 2, the report is
    // written first so it can be read); a FAIL or a partial result fails the gate.
    let fail = args.strict && report::strict(&docs, model.verdict)?;
    Ok(if fail { ExitCode::CheckFailed } else { ExitCode::Ok })
}
