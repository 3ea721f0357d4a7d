//! Browser test: Debian's `chromium` loads the report headless. The test asserts no console

#![allow(clippy::expect_used)]
//! or page errors, every chart SVG has a non-zero rendered size, nothing is fetched from
//! anywhere (a CSP violation or a resource-timing entry would say so), and saves a screenshot
//! (`target/tmp/report-screenshot.png`, `report-compare-screenshot.png`) for a person to look at.
//!
//! Needs a `chromium` (or `chromium-browser`/`google-chrome`) binary; `.ci/run` installs it.
//! Set `LOWLAT_SKIP_BROWSER=1` to skip on a machine without one.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{docs, opts};

fn browser() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|b| {
        std::env::var_os("PATH")?
            .to_str()?
            .split(':')
            .map(|d| Path::new(d).join(b))
            .find(|p| p.is_file())
    })
}

/// Run chromium headless with a fresh profile directory (named after `profile`, made unique
/// per run, removed afterwards) so no stale lock from an earlier run can get in the way.
fn chromium(bin: &Path, profile: &Path, extra: &[&str], url: &str) -> std::process::Output {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let profile = profile.with_extension(format!("{}-{nanos}", std::process::id()));
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    out
}

/// Load `html` with the probe injected; returns the probe's JSON.
fn probe(bin: &Path, dir: &Path, name: &str, html: &str) -> serde_json::Value {
    probe_at(bin, dir, name, html, 1400)
}

/// Headless chromium's narrowest window.
const MIN_WINDOW: u32 = 500;

/// [`probe`] with a window `width` px wide (a frame that wide when narrower than chromium
/// allows a window to be).
fn probe_at(bin: &Path, dir: &Path, name: &str, html: &str, width: u32) -> serde_json::Value {
    let probe = include_str!("browser/probe.html");
    // Allow only the inline probe script; every fetch stays forbidden.
    let csp = report::html::CSP;
    let instrumented = html
        .replacen(csp, &format!("{csp}; script-src 'unsafe-inline'"), 1)
        .replacen("<head>\n", &format!("<head>\n{probe}"), 1);
    assert!(instrumented.contains("script-src 'unsafe-inline'"), "CSP meta found");
    // Headless chromium widens a window narrower than 500 px to 500, so a narrower screen is
    // a frame of that width: the report gets its own 390 px viewport (media queries, layout),
    // and the probe hands its result up to the page (a srcdoc frame shares its origin).
    let (page, window) = if width < MIN_WINDOW {
        let doc = instrumented.replace('&', "&amp;").replace('"', "&quot;");
        let frame = format!(
            "<!doctype html><html><body style=\"margin:0\"><iframe width=\"{width}\" \
             height=\"1000\" style=\"border:0\" srcdoc=\"{doc}\"></iframe></body></html>"
        );
        (frame, 1400)
    } else {
        (instrumented, width)
    };
    let file = dir.join(format!("{name}-probe.html"));
    std::fs::write(&file, page).expect("write");
    let out = chromium(
        bin,
        &dir.join(format!("{name}-profile-probe")),
        &["--dump-dom", "--virtual-time-budget=3000", &format!("--window-size={window},1000")],
        &format!("file://{}", file.display()),
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start =
        dom.find("<pre id=\"lowlat-probe\">").map(|i| i + "<pre id=\"lowlat-probe\">".len());
    let Some(start) = start else {
        panic!("probe did not run; stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    };
    let end = start + dom[start..].find("</pre>").expect("probe end");
    let json = dom[start..end].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    serde_json::from_str(&json).expect("probe JSON")
}

fn check(bin: &Path, name: &str, html: &str, min_charts: usize) -> serde_json::Value {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let p = probe(bin, &dir, name, html);
    eprintln!("{name}: {p}");
    assert_eq!(p["errors"], serde_json::json!([]), "no console errors or blocked fetches");
    assert_eq!(p["resources"], serde_json::json!([]), "nothing fetched");
    assert_eq!(p["viewport"], 1400, "probed at 1400 px");
    assert_eq!(p["overflow"], 0, "nothing wider than the 1400 px window");
    let charts = p["charts"].as_array().expect("charts");
    assert!(charts.len() >= min_charts, "{} charts", charts.len());
    for c in charts {
        assert!(
            c["width"].as_f64() > Some(100.0) && c["height"].as_f64() > Some(50.0),
            "chart size: {c}"
        );
        assert!(c["texts"].as_u64() > Some(5), "chart has axis labels: {c}");
    }
    // The screenshot is of the report exactly as written (no probe).
    let file = dir.join(format!("{name}.html"));
    std::fs::write(&file, html).expect("write");
    let shot = dir.join(format!("{name}-screenshot.png"));
    let _ = std::fs::remove_file(&shot);
    let out = chromium(
        bin,
        &dir.join(format!("{name}-profile-shot")),
        &[&format!("--screenshot={}", shot.display()), "--window-size=1400,4000"],
        &format!("file://{}", file.display()),
    );
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 20_000,
        "screenshot written ({size} bytes): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("screenshot: {}", shot.display());
    // Printable: chromium prints it to PDF.
    let pdf = dir.join(format!("{name}.pdf"));
    let _ = std::fs::remove_file(&pdf);
    let out = chromium(
        bin,
        &dir.join(format!("{name}-profile-pdf")),
        &[&format!("--print-to-pdf={}", pdf.display()), "--no-pdf-header-footer"],
        &format!("file://{}", file.display()),
    );
    let pdf_bytes = std::fs::read(&pdf).unwrap_or_default();
    assert!(
        pdf_bytes.starts_with(b"%PDF") && pdf_bytes.len() > 20_000,
        "printed to PDF ({} bytes): {}",
        pdf_bytes.len(),
        String::from_utf8_lossy(&out.stderr)
    );
    p
}

#[test]
fn the_probe_catches_errors_and_fetches() {
    if std::env::var_os("LOWLAT_SKIP_BROWSER").is_some() {
        return;
    }
    let bin = browser().expect("chromium is installed (apt-get install chromium; .ci/run does)");
    let html = report::html::render(&report::build(&docs(&["ticks.json"]), &opts())).replacen(
        "</body>",
        "<img src=\"http://192.0.2.1/x.png\" onerror=\"null.x()\"></body>",
        1,
    );
    let p = probe(&bin, Path::new(env!("CARGO_TARGET_TMPDIR")), "bad", &html);
    let errors = p["errors"].to_string();
    assert!(errors.contains("blocked fetch: http://192.0.2.1/x.png"), "{errors}");
}

#[test]
fn report_renders_in_chromium_without_errors_or_fetches() {
    if std::env::var_os("LOWLAT_SKIP_BROWSER").is_some() {
        eprintln!("LOWLAT_SKIP_BROWSER set: browser test skipped");
        return;
    }
    let bin = browser().expect("chromium is installed (apt-get install chromium; .ci/run does)");
    let all = [
        "inspect.json",
        "verify.json",
        "timer.json",
        "noise.json",
        "ticks.json",
        "fsync.json",
        "future-kind.json",
    ];
    let html = report::html::render(&report::build(&docs(&all), &opts()));
    check(&bin, "report", &html, 7);
    let cmp = report::compare::build(
        &docs(&["timer.json", "fsync.json"]),
        &docs(&["timer-after.json", "fsync-after.json"]),
        &opts(),
    );
    check(&bin, "report-compare", &report::html::render(&cmp), 2);
}

/// Synthetic 128- and 256-CPU timer and noise results: the report draws heat maps and the
/// per-CPU chart instead of one line per CPU, renders without error or overflow at 1400 px,
/// and stays small. Sizes measured when this was written (256 CPUs × 600 s, timer + noise):
/// see `docs/commands/report.md`.
#[test]
fn many_cpu_reports_render_readably_at_1400px() {
    if std::env::var_os("LOWLAT_SKIP_BROWSER").is_some() {
        eprintln!("LOWLAT_SKIP_BROWSER set: browser test skipped");
        return;
    }
    let bin = browser().expect("chromium is installed (apt-get install chromium; .ci/run does)");
    for cpus in [128u32, 256] {
        let docs = vec![
            report::Doc::from_value(
                "timer.json",
                common::many_cpus(results::Kind::Timer, cpus, 600, 1),
            ),
            report::Doc::from_value(
                "noise.json",
                common::many_cpus(results::Kind::Noise, cpus, 600, 1),
            ),
        ];
        let html = report::html::render(&report::build(&docs, &opts()));
        eprintln!("{cpus} CPUs: report {} KiB", html.len() / 1024);
        assert!(html.len() < 1_200_000, "{cpus} CPUs: report is {} bytes", html.len());
        assert!(!html.contains("histogram per CPU, up to"), "no per-CPU line overlays");
        let p = check(&bin, &format!("report-{cpus}-cpus"), &html, 6);
        assert_eq!(p["heatmaps"], 4 * 2, "two heat maps per section, each a ramp and a map");
    }
}

/// A 256-CPU × 12 h result as `lowlat measure` bounds it (`series_step_s` 60 for timer, 120
/// for noise: 720 and 360 points per CPU): the heat maps say the step, their time axis
/// spans the 12 hours, and the report renders readably at 1400 px.
#[test]
fn a_stepped_12_hour_256_cpu_report_renders_readably_at_1400px() {
    if std::env::var_os("LOWLAT_SKIP_BROWSER").is_some() {
        eprintln!("LOWLAT_SKIP_BROWSER set: browser test skipped");
        return;
    }
    let bin = browser().expect("chromium is installed (apt-get install chromium; .ci/run does)");
    let secs = 12 * 3600;
    let docs = vec![
        report::Doc::from_value(
            "timer.json",
            common::many_cpus(results::Kind::Timer, 256, secs, 60),
        ),
        report::Doc::from_value(
            "noise.json",
            common::many_cpus(results::Kind::Noise, 256, secs, 120),
        ),
    ];
    let html = report::html::render(&report::build(&docs, &opts()));
    eprintln!("256 CPUs × 12 h, stepped: report {} KiB", html.len() / 1024);
    assert!(html.len() < 1_200_000, "report is {} bytes", html.len());
    assert!(html.contains("Timer latency: maximum per 1 min per CPU"), "timer heat map title");
    assert!(html.contains("OS noise: maximum per 2 min per CPU"), "noise heat map title");
    assert!(html.contains("12h 00m 00s"), "the time axis reaches 12 h");
    let p = check(&bin, "report-256-cpus-12h", &html, 6);
    assert_eq!(p["heatmaps"], 4 * 2, "two heat maps per section, each a ramp and a map");
}

/// A phone held upright (390 px, a frame that wide: headless chromium widens windows below
/// 500 px): nothing runs off the page — wide tables scroll inside their own box, charts
/// shrink to the width.
#[test]
fn report_reads_on_a_narrow_screen() {
    if std::env::var_os("LOWLAT_SKIP_BROWSER").is_some() {
        eprintln!("LOWLAT_SKIP_BROWSER set: browser test skipped");
        return;
    }
    let bin = browser().expect("chromium is installed (apt-get install chromium; .ci/run does)");
    let all =
        ["inspect.json", "verify.json", "timer.json", "noise.json", "ticks.json", "fsync.json"];
    let html = report::html::render(&report::build(&docs(&all), &opts()));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let p = probe_at(&bin, &dir, "report-narrow", &html, 390);
    eprintln!("narrow: {p}");
    assert_eq!(p["errors"], serde_json::json!([]));
    let width = p["viewport"].as_f64().expect("viewport");
    assert_eq!(width, 390.0, "probed at 390 px");
    assert_eq!(p["overflow"], 0, "nothing wider than the {width} px window");
    for c in p["charts"].as_array().expect("charts") {
        assert!(c["width"].as_f64().is_some_and(|w| w > 100.0 && w <= width), "chart fits: {c}");
    }
}
