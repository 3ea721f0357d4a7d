//! Prometheus / OpenMetrics text for node_exporter's textfile collector: one writer for every
//! command that exports metrics (`watch`, `measure`, `verify`, `check` with `--prometheus FILE`).
//! Each metric family is declared once (`# HELP`, `# TYPE gauge`) before its first sample, and
//! label values are escaped as the exposition format requires, so a hostile name (a node, a CPU
//! model, a check id) can neither break a line nor add a label. Written atomically (through
//! `util::output::Output`, or `util::fs::write_atomic` for `watch`): the collector never reads
//! half a file.

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// A metrics document being built.
#[derive(Debug, Default)]
pub struct Metrics {
    text: String,
    declared: BTreeSet<String>,
}

/// A label value as the exposition format quotes it: `\`, `"` and newline escaped.
fn escape(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

impl Metrics {
    pub fn new() -> Self {
        Self::default()
    }

    /// A gauge sample: `name{labels} value`, its family declared with `help` the first time.
    /// `name` and the label names are the caller's constants (`[a-z_]+`).
    pub fn gauge(&mut self, name: &str, help: &str, labels: &[(&str, &str)], value: f64) {
        if self.declared.insert(name.to_string()) {
            let _ = writeln!(self.text, "# HELP {name} {}", help.replace('\n', " "));
            let _ = writeln!(self.text, "# TYPE {name} gauge");
        }
        self.text.push_str(name);
        if !labels.is_empty() {
            let l: Vec<String> =
                labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
            let _ = write!(self.text, "{{{}}}", l.join(","));
        }
        let v = if value.is_nan() { "NaN".to_string() } else { format!("{value}") };
        let _ = writeln!(self.text, " {v}");
    }

    /// The document.
    pub fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_once_labels_escaped() {
        let mut m = Metrics::new();
        m.gauge("lowlat_x", "An x.", &[("cpu", "1")], 0.5);
        m.gauge("lowlat_x", "An x.", &[("cpu", "2\"}\nevil{a=\"b")], 2.0);
        m.gauge("lowlat_y", "A y.", &[], f64::NAN);
        assert_eq!(
            m.text(),
            "# HELP lowlat_x An x.\n# TYPE lowlat_x gauge\nlowlat_x{cpu=\"1\"} 0.5\n\
             lowlat_x{cpu=\"2\\\"}\\nevil{a=\\\"b\"} 2\n# HELP lowlat_y A y.\n# TYPE lowlat_y gauge\n\
             lowlat_y NaN\n"
        );
        assert_eq!(m.text().lines().count(), 7, "no sample spans two lines");
    }
}
