//! Heat maps for many CPUs: one row per CPU, one column per x bin, each cell coloured on a
//! logarithmic scale (viridis; empty cells white; cells at or above the threshold red). The
//! cells are one indexed-colour PNG (a `data:` URI, allowed by the report's CSP), scaled
//! without smoothing inside an SVG that draws the axes, the labels and the colour legend:
//! 256 CPUs × 240 seconds is a few kilobytes, where one SVG rectangle per cell would be
//! megabytes.

use std::fmt::Write as _;
use std::io::Write as _;

use crate::chart::tick;
use crate::markup::{base64, escape};
use crate::model::Heatmap;

/// Width of the SVG in pixels (scaled to the page by CSS, like the charts).
pub const WIDTH: u32 = 960;
const LEFT: u32 = 64;
const RIGHT: u32 = 120;
const TOP: u32 = 40;
const BOTTOM: u32 = 52;
/// Colour ramp entries (palette 1..=RAMP); 0 is white (empty), RAMP + 1 red (breach).
const RAMP: usize = 62;
const BREACH: [u8; 3] = [209, 0, 31];

/// Viridis anchors, interpolated to the ramp.
const VIRIDIS: [[u8; 3]; 9] = [
    [68, 1, 84],
    [71, 45, 123],
    [59, 82, 139],
    [44, 114, 142],
    [33, 145, 140],
    [40, 174, 128],
    [94, 201, 98],
    [173, 220, 48],
    [253, 231, 37],
];

fn palette() -> Vec<[u8; 3]> {
    let mut p = vec![[255, 255, 255]];
    for i in 0..RAMP {
        let f = i as f64 / (RAMP - 1) as f64 * (VIRIDIS.len() - 1) as f64;
        let (a, t) = (f.floor() as usize, f.fract());
        let b = (a + 1).min(VIRIDIS.len() - 1);
        let mix = |k: usize| (VIRIDIS[a][k] as f64 * (1.0 - t) + VIRIDIS[b][k] as f64 * t).round();
        p.push([mix(0) as u8, mix(1) as u8, mix(2) as u8]);
    }
    p.push(BREACH);
    p
}

/// The colour scale: smallest and largest positive value below the threshold.
fn range(m: &Heatmap) -> Option<(f64, f64)> {
    let below = |v: f64| m.threshold.is_none_or(|t| v < t);
    let vals = m.cells.iter().flatten().copied().filter(|v| *v > 0.0 && below(*v));
    let (lo, hi) = vals.fold((f64::INFINITY, 0f64), |(l, h), v| (l.min(v), h.max(v)));
    lo.is_finite().then_some((lo, hi))
}

fn index(v: f64, range: Option<(f64, f64)>, threshold: Option<f64>) -> u8 {
    if v.is_nan() || v <= 0.0 {
        return 0;
    }
    if threshold.is_some_and(|t| v >= t) {
        return (RAMP + 1) as u8;
    }
    let Some((lo, hi)) = range else { return RAMP as u8 };
    if hi <= lo {
        return RAMP as u8;
    }
    let f = ((v.ln() - lo.ln()) / (hi.ln() - lo.ln())).clamp(0.0, 1.0);
    1 + (f * (RAMP - 1) as f64).round() as u8
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_be_bytes());
}

/// An 8-bit indexed-colour PNG of `width` × rows.
pub fn png(width: usize, rows: &[Vec<u8>], palette: &[[u8; 3]]) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&(width as u32).to_be_bytes());
    ihdr.extend_from_slice(&(rows.len() as u32).to_be_bytes());
    ihdr.extend_from_slice(&[8, 3, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"PLTE", &palette.concat());
    let mut raw = Vec::with_capacity(rows.len() * (width + 1));
    for r in rows {
        raw.push(0);
        raw.extend((0..width).map(|i| r.get(i).copied().unwrap_or(0)));
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing into a Vec cannot fail.
    let _ = z.write_all(&raw);
    chunk(&mut out, b"IDAT", &z.finish().unwrap_or_default());
    chunk(&mut out, b"IEND", &[]);
    out
}

/// Pixels per row: tall enough to read for a few CPUs, at least 2 px for 256.
fn row_height(rows: usize) -> u32 {
    (560 / rows.max(1) as u32).clamp(2, 16)
}

/// Row labels: every row for a few CPUs, else every 2^k-th so at most ~32 labels.
fn label_step(rows: usize) -> usize {
    let mut step = 1;
    while rows.div_ceil(step) > 32 {
        step *= 2;
    }
    step
}

/// Render the heat map as an SVG element (no XML declaration).
pub fn render_svg(m: &Heatmap) -> String {
    let rows = m.cells.len().max(1);
    let cols = m.cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let rh = row_height(rows);
    let (pw, ph) = (WIDTH - LEFT - RIGHT, rh * rows as u32);
    let height = TOP + ph + BOTTOM;
    let range = range(m);
    let pal = palette();
    let pixels: Vec<Vec<u8>> =
        m.cells.iter().map(|r| r.iter().map(|v| index(*v, range, m.threshold)).collect()).collect();
    let img = base64(&png(cols, &pixels, &pal));
    let mut s = String::with_capacity(img.len() + 8 * 1024);
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\">\
         <rect width=\"{WIDTH}\" height=\"{height}\" fill=\"#fff\"/>\
         <text x=\"{}\" y=\"24\" font-size=\"18\" text-anchor=\"middle\">{}</text>\
         <image x=\"{LEFT}\" y=\"{TOP}\" width=\"{pw}\" height=\"{ph}\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{img}\"/>\
         <rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#57606a\"/>",
        LEFT + pw / 2,
        escape(&m.title)
    );
    // Hover: each row names its CPU and its worst cell (a pixel image has no per-cell title).
    for (i, cpu) in m.rows.iter().enumerate() {
        let worst = m.cells.get(i).map_or(0.0, |r| r.iter().copied().fold(0.0_f64, f64::max));
        let _ = write!(
            s,
            "<rect x=\"{LEFT}\" y=\"{}\" width=\"{pw}\" height=\"{rh}\" fill=\"transparent\"><title>CPU {cpu}: {} up to {}</title></rect>",
            TOP + rh * i as u32,
            escape(&m.value_label),
            crate::chart::tick(worst)
        );
    }
    // Rows: CPU labels.
    let step = label_step(rows);
    for (i, cpu) in m.rows.iter().enumerate().filter(|(i, _)| i % step == 0) {
        let y = TOP as f64 + (i as f64 + 0.5) * rh as f64;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{y:.1}\" font-size=\"11\" text-anchor=\"end\" dominant-baseline=\"middle\">{cpu}</text>",
            LEFT - 6
        );
    }
    let _ = write!(
        s,
        "<text transform=\"translate(16 {}) rotate(-90)\" font-size=\"13\" text-anchor=\"middle\">CPU</text>",
        TOP + ph / 2
    );
    // Columns: ticks and the axis label.
    let x_of = |pos: f64| LEFT as f64 + pos / cols as f64 * pw as f64;
    for (pos, label) in &m.x_ticks {
        let x = x_of(*pos);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{}\" y2=\"{}\" stroke=\"#57606a\"/><text x=\"{x:.1}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
            TOP + ph,
            TOP + ph + 5,
            TOP + ph + 19,
            escape(label)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\">{}</text>",
        LEFT + pw / 2,
        TOP + ph + 42,
        escape(&m.x_label)
    );
    if let Some((pos, label)) = &m.x_marker {
        let x = x_of(*pos);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{}\" stroke=\"#c8001e\" stroke-dasharray=\"4 4\"><title>{}</title></line>",
            TOP + ph,
            escape(label)
        );
    }
    legend(&mut s, m, range, &pal, TOP + ph);
    s.push_str("</svg>");
    s
}

/// The colour legend right of the plot: the ramp with its extremes, and the breach colour.
fn legend(s: &mut String, m: &Heatmap, range: Option<(f64, f64)>, pal: &[[u8; 3]], bottom: u32) {
    let x = WIDTH - RIGHT + 18;
    let top = TOP;
    let h = (bottom - top).clamp(60, 240);
    let ramp: Vec<Vec<u8>> = (1..=RAMP as u8).rev().map(|i| vec![i]).collect();
    let img = base64(&png(1, &ramp, pal));
    let _ = write!(
        s,
        "<text x=\"{x}\" y=\"{}\" font-size=\"11\">{}</text>\
         <image x=\"{x}\" y=\"{}\" width=\"14\" height=\"{h}\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{img}\"/>",
        top - 6,
        escape(&m.value_label),
        top + 4
    );
    let (lo, hi) = range.unwrap_or((0.0, 0.0));
    for (y, v) in [(top + 4, hi), (top + 4 + h, lo)] {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{y}\" font-size=\"11\" dominant-baseline=\"middle\">{}</text>",
            x + 18,
            tick(v)
        );
    }
    let mut y = top + h + 22;
    if let Some(t) = m.threshold {
        let _ = write!(
            s,
            "<rect x=\"{x}\" y=\"{y}\" width=\"14\" height=\"10\" fill=\"rgb({},{},{})\"/><text x=\"{}\" y=\"{}\" font-size=\"11\">≥ {}</text>",
            BREACH[0],
            BREACH[1],
            BREACH[2],
            x + 18,
            y + 9,
            tick(t)
        );
        y += 16;
    }
    let _ = write!(
        s,
        "<rect x=\"{x}\" y=\"{y}\" width=\"14\" height=\"10\" fill=\"#fff\" stroke=\"#aaa\"/><text x=\"{}\" y=\"{}\" font-size=\"11\">none</text>",
        x + 18,
        y + 9
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(rows: usize, cols: usize) -> Heatmap {
        Heatmap {
            id: "h".into(),
            title: "T <1>".into(),
            x_label: "latency".into(),
            rows: (0..rows as u32).collect(),
            x_ticks: vec![(0.0, "0".into()), (cols as f64, "end".into())],
            cells: (0..rows).map(|r| (0..cols).map(|c| ((r * c) % 97) as f64).collect()).collect(),
            value_label: "samples".into(),
            threshold: Some(90.0),
            x_marker: Some((3.0, "threshold".into())),
            caption: String::new(),
        }
    }

    #[test]
    fn colours_are_log_scaled_with_empty_and_breach_apart() {
        let r = Some((1.0, 1000.0));
        assert_eq!(index(0.0, r, None), 0);
        assert_eq!(index(f64::NAN, r, None), 0);
        assert_eq!(index(1.0, r, None), 1);
        assert_eq!(index(1000.0, r, None), RAMP as u8);
        assert_eq!(index(31.6, r, None), 1 + (RAMP as u8 - 1) / 2, "log middle");
        assert_eq!(index(5.0, r, Some(5.0)), RAMP as u8 + 1);
        assert_eq!(palette().len(), RAMP + 2);
    }

    #[test]
    fn png_is_well_formed() {
        let p = png(3, &[vec![0, 1, 2], vec![2, 1, 0]], &palette());
        assert!(p.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert_eq!(&p[12..16], b"IHDR");
        assert_eq!(&p[16..24], &[0, 0, 0, 3, 0, 0, 0, 2]);
        assert!(p.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]));
    }

    #[test]
    fn a_256_cpu_map_is_small_and_labelled() {
        let svg = render_svg(&map(256, 240));
        assert!(svg.len() < 80_000, "{} bytes", svg.len());
        assert!(svg.contains("T &lt;1&gt;"));
        assert_eq!(svg.matches("text-anchor=\"end\"").count(), 32, "every 8th CPU labelled");
        assert!(svg.contains(">255<") || svg.contains(">248<"));
    }

    #[test]
    fn every_row_names_its_cpu_and_worst_cell_on_hover() {
        let m = map(4, 10);
        let svg = render_svg(&m);
        assert_eq!(svg.matches("<title>CPU ").count(), 4, "{svg}");
        // row 3: cells (3*c) % 97 for c < 10, worst 27
        assert!(svg.contains("<title>CPU 3: samples up to 27</title>"), "{svg}");
    }
}
