//! Chart rendering: a [`Chart`] (data) becomes an inline SVG string through `plotters`' SVG
//! backend, with a caption, axis descriptions with units, tick labels, a legend and optional
//! vertical threshold markers. Log-y charts clamp empty values to the axis floor (OSADL's
//! `yrange [0.8:*]`) so a single sample stays visible.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::model::{Chart, Scale, SeriesStyle};

/// Chart size in SVG pixels (scaled to the page width by CSS).
pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 420;

/// Colour-blind-friendly palette (Okabe–Ito, then Tableau), indexed by series colour.
const PALETTE: [RGBColor; 12] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(120, 94, 240),
    RGBColor(60, 60, 60),
    RGBColor(178, 34, 34),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
];

/// Tick label: short, no float noise (`0.5`, `12`, `1.2k`, `3M`).
pub(crate) fn tick(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Render a chart to SVG text. Errors become an SVG that says so (never a panic).
pub fn render_svg(chart: &Chart) -> String {
    let mut buf = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, chart).and_then(|()| root.present().map_err(|e| e.to_string()))
    };
    match result {
        Ok(()) => buf,
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"60\"><text x=\"10\" y=\"30\">chart could not be drawn: {}</text></svg>",
            crate::markup::escape(&e)
        ),
    }
}

/// A step path through histogram points (bin left edge, count; the last point closes the last
/// bin): flat across each bin, vertical at each edge.
fn steps(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(pts.len() * 2);
    let mut push = |p: (f64, f64)| {
        if out.last() != Some(&p) {
            out.push(p);
        }
    };
    for w in pts.windows(2) {
        push(w[0]);
        push((w[1].0, w[0].1));
    }
    if let Some(last) = pts.last() {
        push(*last);
    }
    out
}

fn bounds(chart: &Chart) -> (f64, f64, f64, f64) {
    let pts = chart.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut ymin_pos = f64::INFINITY;
    let mut ymin = f64::INFINITY;
    for (x, y) in pts {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y1 = y1.max(*y);
        ymin = ymin.min(*y);
        if *y > 0.0 {
            ymin_pos = ymin_pos.min(*y);
        }
    }
    for m in &chart.markers {
        x0 = x0.min(m.x);
        x1 = x1.max(m.x);
    }
    for m in &chart.y_markers {
        y1 = y1.max(m.x);
        ymin = ymin.min(m.x);
        if m.x > 0.0 {
            ymin_pos = ymin_pos.min(m.x);
        }
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    // CPU numbers: half a CPU of room each side so edge points are not on the axis.
    let cpu_axis = chart.x_label == "CPU";
    if cpu_axis {
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let (y0, y1) = match chart.y_scale {
        Scale::Log => {
            // Counts keep OSADL's 0.8 floor (a single sample stays visible); other values start
            // at the power of ten below their smallest.
            let lo = if !ymin_pos.is_finite() {
                0.8
            } else if chart.y_label.starts_with("samples") {
                (ymin_pos * 0.8).min(0.8)
            } else {
                10f64.powf(ymin_pos.log10().floor())
            };
            let hi = if y1.is_finite() && y1 > lo { y1 * 2.0 } else { lo * 10.0 };
            (lo, hi)
        }
        Scale::Linear => {
            let lo = if ymin.is_finite() { ymin.min(0.0) } else { 0.0 };
            let hi = if y1.is_finite() && y1 > lo { y1 * 1.1 } else { lo + 1.0 };
            (lo, hi)
        }
    };
    if cpu_axis {
        return (x0, x1, y0, y1);
    }
    // A little room right of the last point.
    (x0, x1 + (x1 - x0) * 0.02, y0, y1)
}

macro_rules! plot_body {
    ($root:expr, $chart:expr, $x:expr, $y:expr, $ylo:expr, $yhi:expr, $xr:expr) => {{
        let c = $chart;
        // CPU numbers are integers: no 2.5 tick.
        let int_x = c.x_label == "CPU";
        let x_fmt =
            move |v: &f64| if int_x && v.fract().abs() > 1e-9 { String::new() } else { tick(*v) };
        let mut cc = ChartBuilder::on($root)
            .caption(&c.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d($x, $y)
            .map_err(|e| e.to_string())?;
        cc.configure_mesh()
            .x_desc(&c.x_label)
            .y_desc(&c.y_label)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(|e| e.to_string())?;
        for s in &c.series {
            let color = PALETTE[s.color % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s.points.iter().map(|(x, y)| (*x, y.max($ylo))).collect();
            let style = color.stroke_width(2);
            let anno = match s.style {
                SeriesStyle::Line => cc.draw_series(LineSeries::new(pts, style)),
                SeriesStyle::Dashed => cc.draw_series(DashedLineSeries::new(pts, 6, 4, style)),
                SeriesStyle::Steps => cc.draw_series(LineSeries::new(steps(&pts), style)),
                SeriesStyle::DashedSteps => {
                    cc.draw_series(DashedLineSeries::new(steps(&pts), 6, 4, style))
                }
                SeriesStyle::Points => {
                    cc.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, color.filled())))
                }
            }
            .map_err(|e| e.to_string())?;
            let dashed = matches!(s.style, SeriesStyle::Dashed | SeriesStyle::DashedSteps);
            anno.label(s.name.clone()).legend(move |(x, y)| {
                if dashed {
                    PathElement::new(vec![(x, y), (x + 6, y)], color.stroke_width(2))
                } else {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                }
            });
        }
        for m in &c.markers {
            let red = RGBColor(200, 0, 0);
            cc.draw_series(DashedLineSeries::new(
                vec![(m.x, $ylo), (m.x, $yhi)],
                4,
                4,
                red.stroke_width(1),
            ))
            .map_err(|e| e.to_string())?
            .label(m.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], red.stroke_width(1)));
        }
        for m in &c.y_markers {
            let red = RGBColor(200, 0, 0);
            let (xa, xb) = $xr;
            cc.draw_series(DashedLineSeries::new(
                vec![(xa, m.x), (xb, m.x)],
                4,
                4,
                red.stroke_width(1),
            ))
            .map_err(|e| e.to_string())?
            .label(m.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], red.stroke_width(1)));
        }
        if !c.series.is_empty() {
            cc.configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(180, 180, 180))
                .label_font(("sans-serif", 13))
                .draw()
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }};
}

fn draw(root: &DrawingArea<SVGBackend<'_>, Shift>, chart: &Chart) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (x0, x1, y0, y1) = bounds(chart);
    match chart.y_scale {
        Scale::Log => plot_body!(root, chart, x0..x1, (y0..y1).log_scale(), y0, y1, (x0, x1)),
        Scale::Linear => plot_body!(root, chart, x0..x1, y0..y1, y0, y1, (x0, x1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Marker, Series};

    fn chart(scale: Scale) -> Chart {
        Chart {
            id: "c".into(),
            title: "T <&> title".into(),
            x_label: "latency (µs)".into(),
            y_label: "samples".into(),
            y_scale: scale,
            series: vec![Series {
                name: "CPU <1>".into(),
                style: SeriesStyle::Line,
                color: 1,
                points: vec![(0.0, 0.0), (1.0, 10.0), (2.0, 1.0)],
            }],
            markers: vec![Marker { x: 1.5, label: "threshold".into() }],
            y_markers: Vec::new(),
            caption: String::new(),
        }
    }

    #[test]
    fn svg_has_axes_legend_and_escaped_text() {
        for s in [Scale::Log, Scale::Linear] {
            let svg = render_svg(&chart(s));
            assert!(svg.starts_with("<svg"), "{svg}");
            assert!(svg.contains("latency (µs)"));
            assert!(svg.contains("CPU &lt;1&gt;"), "legend escaped");
            assert!(svg.contains("T &lt;&amp;&gt; title"));
            assert!(!svg.contains("could not be drawn"));
        }
    }

    #[test]
    fn empty_chart_still_renders() {
        let mut c = chart(Scale::Log);
        c.series.clear();
        c.markers.clear();
        assert!(render_svg(&c).contains("<svg"));
    }

    #[test]
    fn histogram_steps_are_flat_across_each_bin() {
        // bins [0,1) = 5, [1,3) = 0 (a collapsed run), [3,4) = 0, [4,5) = 3, closed at 5
        let pts = [(0.0, 5.0), (1.0, 0.0), (3.0, 0.0), (4.0, 3.0), (5.0, 3.0)];
        assert_eq!(
            steps(&pts),
            [(0.0, 5.0), (1.0, 5.0), (1.0, 0.0), (3.0, 0.0), (4.0, 0.0), (4.0, 3.0), (5.0, 3.0)]
        );
        assert!(steps(&[]).is_empty());
        let mut c = chart(Scale::Log);
        c.series[0].style = SeriesStyle::Steps;
        assert!(render_svg(&c).contains("<polyline"), "a step series draws one path");
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(1000.0), "1000");
        assert_eq!(tick(25_000.0), "25k");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(2_000_000.0), "2M");
    }
}
