//! The report's section model: what the report says, independent of how it is drawn. HTML,
//! the terminal summary and the golden tests all read this model; charts are data here
//! (series of points) and become SVG only in `chart`.

use serde::Serialize;

/// A verdict, ordered from best to worst so the overall verdict is the maximum.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Informational, no judgement.
    Info,
    Pass,
    /// Skipped (not available, no privileges); never worse than a warning.
    Skipped,
    Warn,
    Fail,
}

impl Verdict {
    /// Upper-case label (`PASS`, `FAIL`, …).
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Info => "INFO",
            Verdict::Pass => "PASS",
            Verdict::Skipped => "SKIPPED",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        }
    }

    /// CSS class name.
    pub fn class(self) -> &'static str {
        match self {
            Verdict::Info => "info",
            Verdict::Pass => "pass",
            Verdict::Skipped => "skipped",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        }
    }
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Report {
    pub title: String,
    /// Tool and version that wrote the report.
    pub generator: String,
    pub verdict: Verdict,
    /// One line per finding that decided the verdict, worst first.
    pub headlines: Vec<Headline>,
    /// Loud banners (virtualization, partial results, skipped steps).
    pub banners: Vec<Note>,
    /// System context rows (label, value).
    pub context: Vec<(String, String)>,
    pub sections: Vec<Section>,
    /// The input files, with their kinds.
    pub inputs: Vec<(String, String)>,
    /// The exact commands to run next, with why (`lowlat check` gives them; empty elsewhere).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub next: Vec<NextStep>,
}

/// A command to run next and why.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct NextStep {
    pub command: String,
    pub why: String,
}

/// A verdict line for the header and the terminal summary.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Headline {
    pub verdict: Verdict,
    pub text: String,
}

/// A note with a level.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Note {
    pub verdict: Verdict,
    pub text: String,
}

/// One section of the report (one plug-in's output).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Section {
    /// Anchor id (`timer`, `fsync`, …), unique within the report.
    pub id: String,
    pub title: String,
    pub verdict: Verdict,
    /// Verdict lines shown under the title and in the terminal summary.
    pub headlines: Vec<Headline>,
    pub blocks: Vec<Block>,
}

/// A piece of a section.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Paragraph {
        text: String,
    },
    Note(Note),
    Table(Table),
    Chart(Chart),
    /// Rows (CPUs) × columns coloured by value: what scales to hundreds of CPUs.
    Heatmap(Heatmap),
    Grid(Grid),
    /// Label/value pairs.
    Facts {
        rows: Vec<(String, String)>,
    },
}

/// A table; cells may carry a verdict for colouring.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Table {
    pub caption: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// One table cell.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Cell {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Right-aligned (numbers).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub numeric: bool,
    /// A relative link the text points to (another report beside this one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Self {
        Self { text: s.into(), verdict: None, numeric: false, link: None }
    }
    pub fn num(s: impl Into<String>) -> Self {
        Self { text: s.into(), verdict: None, numeric: true, link: None }
    }
    pub fn verdict(v: Verdict) -> Self {
        Self { text: v.label().to_string(), verdict: Some(v), numeric: false, link: None }
    }
    /// Text that links to `href` (relative: a file beside the report).
    pub fn link(s: impl Into<String>, href: impl Into<String>) -> Self {
        Self { link: Some(href.into()), ..Self::text(s) }
    }
    pub fn with_verdict(mut self, v: Verdict) -> Self {
        self.verdict = Some(v);
        self
    }
}

/// Axis scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    Linear,
    Log,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeriesStyle {
    Line,
    /// Dashed line (the "before" side of a comparison).
    Dashed,
    /// Points only.
    Points,
    /// A histogram drawn as steps (OSADL's plots): each point is a bin's left edge and its
    /// count, held flat until the next point; the last point closes the last bin (its right
    /// edge, repeating that bin's count), as [`crate::sections::bin_histogram`] returns them.
    Steps,
    /// Steps, dashed (the "before" side of a comparison).
    DashedSteps,
}

/// A chart as data: title, axes with units, series, vertical markers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Chart {
    /// Unique id within the report (used as the SVG's id).
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub y_scale: Scale,
    pub series: Vec<Series>,
    /// Vertical lines (thresholds), at x with a label.
    pub markers: Vec<Marker>,
    /// Horizontal lines (thresholds on a time series): `x` holds the y value.
    pub y_markers: Vec<Marker>,
    /// Explanation under the chart (e.g. "downsampled: max of 86 s per point").
    pub caption: String,
}

/// A heat map as data: one row per CPU, one column per x bin, a value per cell (0 = empty),
/// drawn with a logarithmic colour scale; cells at or above `threshold` are drawn red.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Heatmap {
    /// Unique id within the report.
    pub id: String,
    pub title: String,
    pub x_label: String,
    /// Row labels (CPU numbers), top to bottom.
    pub rows: Vec<u32>,
    /// Tick labels on the x axis: (position in columns from the left edge, label).
    pub x_ticks: Vec<(f64, String)>,
    /// `rows.len()` rows of equally many values.
    #[serde(skip)]
    pub cells: Vec<Vec<f64>>,
    /// What a cell's colour means, with unit (`samples`, `max latency (µs)`).
    pub value_label: String,
    /// Cells at or above are a breach (red); `None` when no threshold applies.
    pub threshold: Option<f64>,
    /// A vertical marker (threshold) at this column position, with its label.
    pub x_marker: Option<(f64, String)>,
    pub caption: String,
}

/// One line of a chart.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Series {
    pub name: String,
    pub style: SeriesStyle,
    /// Palette index (same CPU, same colour across charts).
    pub color: usize,
    pub points: Vec<(f64, f64)>,
}

/// A vertical marker line.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

/// A grid of cells coloured by role (the topology view).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Grid {
    pub caption: String,
    /// Groups (e.g. one per NUMA node / package), each a list of rows (cores).
    pub groups: Vec<GridGroup>,
    /// Role → explanation, in legend order.
    pub legend: Vec<(String, String)>,
}

/// A labelled group of grid rows.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GridGroup {
    pub label: String,
    /// Each row is one physical core's hardware threads.
    pub cells: Vec<Vec<GridCell>>,
}

/// One CPU in the grid.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GridCell {
    pub cpu: usize,
    /// `housekeeping`, `isolated`, `offline`, `measured`, `unknown`.
    pub role: String,
    /// Small text under the CPU number (e.g. the worst latency measured there).
    pub note: String,
    /// How the worst latency measured there compares with the run's threshold (none when not
    /// measured): the cell is outlined in the verdict's colour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

impl Section {
    /// A section whose verdict is the worst of its headlines (Info when none).
    pub fn new(id: &str, title: &str, headlines: Vec<Headline>, blocks: Vec<Block>) -> Self {
        let verdict = headlines.iter().map(|h| h.verdict).max().unwrap_or(Verdict::Info);
        Self { id: id.to_string(), title: title.to_string(), verdict, headlines, blocks }
    }
}

impl Headline {
    pub fn new(verdict: Verdict, text: impl Into<String>) -> Self {
        Self { verdict, text: text.into() }
    }
}

/// Nanoseconds as a short human text with unit (`850 ns`, `12.3 µs`, `4.56 ms`, `1.20 s`).
pub fn fmt_ns(ns: u64) -> String {
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{} µs", trim3(f / 1e3))
    } else if ns < 1_000_000_000 {
        format!("{} ms", trim3(f / 1e6))
    } else {
        format!("{} s", trim3(f / 1e9))
    }
}

/// An optional duration: `n/a` when not known.
pub fn fmt_opt_ns(ns: Option<u64>) -> String {
    ns.map_or_else(|| "n/a".to_string(), fmt_ns)
}

/// Three significant digits.
fn trim3(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A signed delta in ns with unit and percentage (`−9.0 µs (−10.5%)`).
pub fn fmt_delta_ns(before: u64, after: u64) -> String {
    let d = after as i128 - before as i128;
    let sign = if d < 0 {
        "−"
    } else if d > 0 {
        "+"
    } else {
        "±"
    };
    let pct = if before > 0 {
        format!(" ({sign}{:.1}%)", (d.abs() as f64) * 100.0 / before as f64)
    } else {
        String::new()
    };
    format!("{sign}{}{pct}", fmt_ns(d.unsigned_abs() as u64))
}

/// A count with thousands separators.
pub fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration in seconds as `1h 02m 03s` / `20s`.
pub fn fmt_duration_s(secs: u64) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if h > 0 {
        format!("{h}h {m:02}m {s:02}s")
    } else if m > 0 {
        format!("{m}m {s:02}s")
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(fmt_ns(850), "850 ns");
        assert_eq!(fmt_ns(12_345), "12.3 µs");
        assert_eq!(fmt_ns(4_560_000), "4.56 ms");
        assert_eq!(fmt_ns(150_000_000), "150 ms");
        assert_eq!(fmt_delta_ns(86_000, 77_000), "−9.00 µs (−10.5%)");
        assert_eq!(fmt_delta_ns(0, 0), "±0 ns");
        assert_eq!(fmt_count(1_234_567), "1,234,567");
        assert_eq!(fmt_duration_s(3723), "1h 02m 03s");
    }

    #[test]
    fn verdicts_order_worst_last() {
        assert!(Verdict::Fail > Verdict::Warn && Verdict::Warn > Verdict::Skipped);
        assert!(Verdict::Skipped > Verdict::Pass && Verdict::Pass > Verdict::Info);
    }
}
