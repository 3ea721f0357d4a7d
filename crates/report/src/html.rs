//! The self-contained HTML report: one file, inline CSS and inline SVG charts, no script, no
//! external resource (a Content-Security-Policy forbids any fetch), printable. Every string
//! from the input is HTML-escaped here.

use std::fmt::Write as _;

use crate::chart;
pub use crate::markup::escape;
use crate::model::{Block, Cell, Grid, Note, Report, Section, Table, Verdict};

/// Escape, keeping line breaks as `<br>`.
fn escape_lines(s: &str) -> String {
    s.trim_end().split('\n').map(escape).collect::<Vec<_>>().join("<br>")
}

/// The content security policy: nothing may be fetched; inline styles only.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

const CSS: &str = r#"
:root{--pass:#1a7f37;--warn:#b35900;--fail:#c0111f;--info:#57606a;--skipped:#6e7781;--bg:#fff;--fg:#1f2328;--muted:#57606a;--line:#d0d7de}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1180px;padding:16px 24px}
h1{font-size:24px;margin:0}
h2{font-size:19px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line);display:flex;gap:10px;align-items:center}
header.top{border:1px solid var(--line);border-left:10px solid var(--info);border-radius:6px;padding:14px 18px;display:grid;grid-template-columns:1fr auto;gap:8px}
header.top.pass{border-left-color:var(--pass)}header.top.warn{border-left-color:var(--warn)}header.top.fail{border-left-color:var(--fail)}
.big{font-size:30px;font-weight:700;align-self:start}
.sub{color:var(--muted)}
ul.headlines{list-style:none;padding:0;margin:6px 0 0;grid-column:1/3}
ul.headlines li{margin:2px 0}
.badge{display:inline-block;min-width:58px;text-align:center;font-size:11px;font-weight:700;border-radius:4px;padding:1px 6px;color:#fff;background:var(--info);margin-right:6px;vertical-align:1px}
.badge.pass{background:var(--pass)}.badge.warn{background:var(--warn)}.badge.fail{background:var(--fail)}.badge.skipped{background:var(--skipped)}
.pass-t{color:var(--pass)}.warn-t{color:var(--warn)}.fail-t{color:var(--fail)}.fail-t,.warn-t{font-weight:600}
.banner{border-radius:6px;padding:10px 14px;margin:10px 0;border:2px solid var(--info);background:#f6f8fa}
.banner.warn{border-color:var(--warn);background:#fff4e5;font-weight:600}.banner.fail{border-color:var(--fail);background:#ffebe9;font-weight:600}
nav{margin:14px 0;color:var(--muted)}nav a{margin-right:12px;color:#0969da;text-decoration:none}
table{border-collapse:collapse;margin:8px 0 14px;width:100%;font-size:13px}
caption{text-align:left;color:var(--muted);padding:2px 0 6px}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.pass{background:#dafbe1}td.warn{background:#fff1d6}td.fail{background:#ffdcd7;font-weight:600}td.skipped{background:#eaeef2}
table.facts th{width:170px;white-space:nowrap}
table.facts td{word-break:break-word}
figure{margin:10px 0 18px}
figure svg{width:100%;height:auto;max-width:960px;display:block;border:1px solid var(--line);border-radius:4px}
figcaption{color:var(--muted);font-size:12px;margin-top:4px}
.note{color:var(--muted);margin:6px 0}.note.warn{color:var(--warn)}.note.fail{color:var(--fail)}
.grid-group{margin:8px 0}.grid-label{font-weight:600;margin-bottom:4px}
.cores{display:flex;flex-wrap:wrap;gap:6px}
.core{display:flex;gap:2px;border:1px solid var(--line);border-radius:5px;padding:2px;background:#f6f8fa}
.cpu{width:58px;height:42px;border-radius:3px;font-size:12px;display:flex;flex-direction:column;align-items:center;justify-content:center;color:#fff;font-weight:600}
.cpu small{font-weight:400;font-size:10px}
.cpu.lat-pass{box-shadow:0 0 0 3px var(--pass)}.cpu.lat-fail{box-shadow:0 0 0 3px var(--fail)}
.role-housekeeping{background:#6e7781}.role-isolated{background:#0969da}.role-offline{background:#d0d7de;color:#57606a}.role-unassigned{background:#bf8700}
.legend{display:flex;gap:14px;margin:6px 0;font-size:12px;color:var(--muted)}.legend span.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;vertical-align:-2px}
footer{margin-top:30px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);padding-top:8px}
.tw{overflow-x:auto;max-width:100%}
body{overflow-wrap:anywhere}
@media (max-width:700px){body{padding:10px}header.top{grid-template-columns:1fr}ul.headlines{grid-column:1}.legend{flex-wrap:wrap}}
@media print{body{max-width:none;padding:0}nav{display:none}section{break-inside:avoid-page}figure{break-inside:avoid}h2{break-after:avoid}}
"#;

/// Render the report and write it to `path` atomically (a reader never sees half a page),
/// creating the directory; returns its size in bytes.
pub fn write(report: &Report, path: &std::path::Path) -> std::io::Result<usize> {
    let html = render(report);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    util::fs::write_atomic(path, html.as_bytes(), 0o644)?;
    Ok(html.len())
}

/// Render the report as one self-contained HTML document.
pub fn render(report: &Report) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"{}\">\n<title>{} — {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        escape(&report.generator),
        escape(&report.title),
        report.verdict.label()
    );
    // Header: the verdict and the lines that decided it.
    let _ = write!(
        h,
        "<header class=\"top {}\" id=\"verdict\"><div><h1>{}</h1><div class=\"sub\">{}</div></div>\
         <div class=\"big {}-t\">{}</div><ul class=\"headlines\">",
        report.verdict.class(),
        escape(&report.title),
        escape(&report.generator),
        report.verdict.class(),
        report.verdict.label()
    );
    for l in &report.headlines {
        let _ = write!(h, "<li>{}{}</li>", badge(l.verdict), escape(&l.text));
    }
    h.push_str("</ul></header>\n");
    for b in &report.banners {
        let _ =
            writeln!(h, "<div class=\"banner {}\">{}</div>", b.verdict.class(), escape(&b.text));
    }
    if !report.sections.is_empty() {
        h.push_str("<nav>Sections: <a href=\"#context\">System</a>");
        for s in &report.sections {
            let _ = write!(h, "<a href=\"#{}\">{}</a>", escape(&s.id), escape(&s.title));
        }
        if !report.next.is_empty() {
            h.push_str("<a href=\"#next\">Next steps</a>");
        }
        h.push_str("</nav>\n");
    }
    h.push_str("<section id=\"context\"><h2>System</h2>");
    if report.context.is_empty() {
        h.push_str("<p class=\"note\">No system context in the inputs.</p>");
    } else {
        facts(&mut h, &report.context);
    }
    h.push_str("</section>\n");
    for s in &report.sections {
        section(&mut h, s);
    }
    if !report.next.is_empty() {
        h.push_str("<section id=\"next\"><h2>Next steps</h2><div class=\"tw\"><table><tbody>");
        for n in &report.next {
            let _ = write!(
                h,
                "<tr><td><code>{}</code></td><td>{}</td></tr>",
                escape(&n.command),
                escape(&n.why)
            );
        }
        h.push_str("</tbody></table></div></section>\n");
    }
    h.push_str("<footer>Inputs: ");
    let inputs: Vec<String> =
        report.inputs.iter().map(|(p, k)| format!("{} ({})", escape(p), escape(k))).collect();
    h.push_str(&inputs.join(", "));
    let _ = write!(h, ". Written by {}. Self-contained: no network access needed to view or print.</footer>\n</body>\n</html>\n", escape(&report.generator));
    h
}

fn badge(v: Verdict) -> String {
    format!("<span class=\"badge {}\">{}</span>", v.class(), v.label())
}

fn section(h: &mut String, s: &Section) {
    let _ = write!(h, "<section id=\"{}\"><h2>{}", escape(&s.id), escape(&s.title));
    if s.verdict != Verdict::Info {
        h.push_str(&badge(s.verdict));
    }
    h.push_str("</h2>");
    if !s.headlines.is_empty() {
        h.push_str("<ul class=\"headlines\">");
        for l in &s.headlines {
            let _ = write!(h, "<li>{}{}</li>", badge(l.verdict), escape(&l.text));
        }
        h.push_str("</ul>");
    }
    for b in &s.blocks {
        match b {
            Block::Paragraph { text } => {
                let _ = write!(h, "<p>{}</p>", escape_lines(text));
            }
            Block::Note(n) => note(h, n),
            Block::Table(t) => table(h, t),
            Block::Chart(c) => {
                let svg = chart::render_svg(c);
                let _ = write!(
                    h,
                    "<figure class=\"chart\" id=\"chart-{}\" role=\"img\" aria-label=\"{}\">{}<figcaption>{}</figcaption></figure>",
                    escape(&c.id),
                    escape(&c.title),
                    strip_xml_decl(&svg),
                    escape(&c.caption)
                );
            }
            Block::Heatmap(m) => {
                let _ = write!(
                    h,
                    "<figure class=\"chart heatmap\" id=\"chart-{}\" role=\"img\" aria-label=\"{}\">{}<figcaption>{}</figcaption></figure>",
                    escape(&m.id),
                    escape(&m.title),
                    crate::heatmap::render_svg(m),
                    escape(&m.caption)
                );
            }
            Block::Grid(g) => grid(h, g),
            Block::Facts { rows } => facts(h, rows),
        }
    }
    h.push_str("</section>\n");
}

fn strip_xml_decl(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

fn note(h: &mut String, n: &Note) {
    let _ = write!(h, "<p class=\"note {}\">{}</p>", n.verdict.class(), escape_lines(&n.text));
}

fn facts(h: &mut String, rows: &[(String, String)]) {
    h.push_str("<table class=\"facts\">");
    for (k, v) in rows {
        let class =
            if k == "Virtualization" && !v.starts_with("none") { " class=\"warn-t\"" } else { "" };
        let _ = write!(h, "<tr><th>{}</th><td{class}>{}</td></tr>", escape(k), escape_lines(v));
    }
    h.push_str("</table>");
}

fn cell(h: &mut String, c: &Cell) {
    let mut classes = Vec::new();
    if c.numeric {
        classes.push("num");
    }
    if let Some(v) = c.verdict {
        classes.push(v.class());
    }
    let text = match &c.link {
        Some(href) => format!("<a href=\"{}\">{}</a>", escape(href), escape_lines(&c.text)),
        None => escape_lines(&c.text),
    };
    if classes.is_empty() {
        let _ = write!(h, "<td>{text}</td>");
    } else {
        let _ = write!(h, "<td class=\"{}\">{text}</td>", classes.join(" "));
    }
}

fn table(h: &mut String, t: &Table) {
    // In its own scrolling box: a wide table scrolls on a narrow screen, the page does not.
    let _ =
        write!(h, "<div class=\"tw\"><table><caption>{}</caption><thead><tr>", escape(&t.caption));
    for c in &t.headers {
        let _ = write!(h, "<th>{}</th>", escape(c));
    }
    h.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        h.push_str("<tr>");
        for c in r {
            cell(h, c);
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table></div>");
}

fn grid(h: &mut String, g: &Grid) {
    h.push_str("<div class=\"legend\">");
    for (role, text) in &g.legend {
        let _ = write!(
            h,
            "<span><span class=\"sw role-{}\"></span>{}</span>",
            escape(role),
            escape(text)
        );
    }
    h.push_str("</div>");
    for grp in &g.groups {
        let _ = write!(
            h,
            "<div class=\"grid-group\"><div class=\"grid-label\">{}</div><div class=\"cores\">",
            escape(&grp.label)
        );
        for core in &grp.cells {
            h.push_str("<div class=\"core\">");
            for c in core {
                let lat = c.verdict.map_or(String::new(), |v| format!(" lat-{}", v.class()));
                let worst = if c.note.is_empty() {
                    String::new()
                } else {
                    format!(" · worst {}", escape(&c.note))
                };
                let _ = write!(
                    h,
                    "<div class=\"cpu role-{}{lat}\" title=\"CPU {} · {}{worst}\">{}<small>{}</small></div>",
                    escape(&c.role),
                    c.cpu,
                    escape(&c.role),
                    c.cpu,
                    escape(&c.note)
                );
            }
            h.push_str("</div>");
        }
        h.push_str("</div></div>");
    }
    let _ = write!(h, "<p class=\"note\">{}</p>", escape(&g.caption));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(escape_lines("a<b\nc"), "a&lt;b<br>c");
    }
}
