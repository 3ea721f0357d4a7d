//! `lowlat report`: build the self-contained HTML report and print the terminal summary from
//! result files, or compare two sets (`--compare BEFORE… --vs AFTER…`).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::exit::{usage, ExitCode};

/// Arguments of `lowlat report`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat report timer.json noise.json fsync.json -o report.html\n  \
lowlat report --compare before/*.json --vs after/*.json -o compare.html"
)]
pub struct Args {
    /// Result files (lowlat `measure … --json`, `import`, `verify --json`, `inspect --json`).
    #[arg(value_name = "RESULT", conflicts_with = "compare")]
    pub results: Vec<PathBuf>,
    /// Compare: the "before" result files (use with --vs).
    #[arg(long, value_name = "BEFORE", num_args = 1.., requires = "vs")]
    pub compare: Vec<PathBuf>,
    /// Compare: the "after" result files.
    #[arg(long, value_name = "AFTER", num_args = 1.., requires = "compare")]
    pub vs: Vec<PathBuf>,
    /// Where to write the HTML report.
    #[arg(short, long, value_name = "FILE", default_value = "lowlat-report.html")]
    pub output: PathBuf,
    /// Report title.
    #[arg(long, default_value = "lowlat report")]
    pub title: String,
    /// Timer latency each CPU must stay below (e.g. 50us, 1ms), unless a result says otherwise.
    #[arg(long, value_name = "DURATION", value_parser = parse_ns, default_value = "100us")]
    pub threshold: u64,
    /// Exit 1 when the overall verdict is FAIL (for CI gates).
    #[arg(long)]
    pub strict: bool,
    /// Also write the report's data (verdict, headlines, sections, tables, chart series) as
    /// JSON to FILE (`-` = stdout, then no terminal summary).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Parse a latency/duration: `850ns`, `50us`/`50µs`, `10ms`, `2s`; a bare number is µs.
pub fn parse_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 =
        num.parse().map_err(|_| format!("`{s}` is not a duration: use e.g. 50us, 2ms, 1s"))?;
    let mult = match unit.trim() {
        "ns" => 1.0,
        "" | "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => return Err(format!("unknown unit `{other}` in `{s}`: use ns, us, ms or s")),
    };
    Ok((n * mult).round() as u64)
}

/// Report options from the arguments.
pub fn options(title: &str, threshold_ns: u64) -> report::Options {
    report::Options {
        title: title.to_string(),
        generator: format!("lowlat {}", super::VERSION),
        timer_threshold_ns: threshold_ns,
        ..report::Options::default()
    }
}

/// Write the HTML and print the summary; returns the exit code for `strict`.
pub fn write(model: &report::Report, output: &Path, strict: bool) -> anyhow::Result<ExitCode> {
    let bytes = write_html(model, output)?;
    print!("{}", report::summary::render(model));
    println!("wrote {} ({} KiB)", output.display(), bytes.div_ceil(1024));
    Ok(strict_code(model, strict))
}

fn load(paths: &[PathBuf]) -> anyhow::Result<Vec<report::Doc>> {
    report::load_all(paths).map_err(|e| usage(format!("{e}")))
}

/// Run `lowlat report`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = options(&args.title, args.threshold);
    let model = if !args.compare.is_empty() {
        report::compare::build(&load(&args.compare)?, &load(&args.vs)?, &opts)
    } else {
        if args.results.is_empty() {
            return Err(usage(
                "no result files given: `lowlat report RESULT… -o report.html` (results come from \
                 `lowlat measure … --json`, `lowlat import`, `lowlat verify --json`), or \
                 `--compare BEFORE… --vs AFTER…`",
            ));
        }
        report::build(&load(&args.results)?, &opts)
    };
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&model).context("serializing the report model")?;
        if path.as_os_str() == "-" {
            write_html(&model, &args.output)?;
            println!("{text}");
            return Ok(strict_code(&model, args.strict));
        }
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    write(&model, &args.output, args.strict)
}

/// Render and write the HTML (creating the directory); returns its size in bytes.
fn write_html(model: &report::Report, output: &Path) -> anyhow::Result<usize> {
    let html = report::html::render(model);
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(output, &html).with_context(|| format!("writing {}", output.display()))?;
    Ok(html.len())
}

fn strict_code(model: &report::Report, strict: bool) -> ExitCode {
    if strict && model.verdict == report::Verdict::Fail {
        ExitCode::CheckFailed
    } else {
        ExitCode::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_ns("50us"), Ok(50_000));
        assert_eq!(parse_ns("50µs"), Ok(50_000));
        assert_eq!(parse_ns("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_ns("20"), Ok(20_000));
        assert!(parse_ns("fast").is_err());
        assert!(parse_ns("5h").is_err());
    }
}
