//! A column-aligned text table: headers, rows, right-aligned numeric columns, the last
//! column truncated to fit the width.

use super::{display_width, truncate, Paint, Style};

/// A table being built.
#[derive(Debug, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl Table {
    pub fn new(headers: &[&str]) -> Self {
        Self {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            right: vec![false; headers.len()],
        }
    }

    /// Right-align column `i` (numbers).
    pub fn right(mut self, cols: &[usize]) -> Self {
        for &c in cols {
            if let Some(r) = self.right.get_mut(c) {
                *r = true;
            }
        }
        self
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Render, indenting every line by `indent` spaces.
    pub fn render(&self, st: &Style, indent: usize) -> String {
        let n = self.headers.len();
        let mut w: Vec<usize> = self.headers.iter().map(|h| display_width(h)).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(display_width(c));
            }
        }
        // The last column gets what is left of the width.
        let used: usize = indent + w[..n.saturating_sub(1)].iter().map(|x| x + 2).sum::<usize>();
        let last_max = st.width.saturating_sub(used).max(12);
        let pad = " ".repeat(indent);
        let mut out = String::new();
        let line = |cells: &[String], head: bool| -> String {
            let mut s = pad.clone();
            for (i, wi) in w.iter().enumerate() {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                if i + 1 == n {
                    let c = if display_width(c) > last_max && !c.contains('\x1b') {
                        truncate(c, last_max)
                    } else {
                        c.to_string()
                    };
                    s.push_str(&c);
                } else {
                    let gap = wi.saturating_sub(display_width(c));
                    if self.right[i] {
                        s.push_str(&" ".repeat(gap));
                        s.push_str(c);
                    } else {
                        s.push_str(c);
                        s.push_str(&" ".repeat(gap));
                    }
                    s.push_str("  ");
                }
            }
            let s = s.trim_end().to_string();
            if head {
                st.paint(Paint::Dim, &s)
            } else {
                s
            }
        };
        out.push_str(&line(&self.headers, true));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r, false));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_and_truncates_last_column() {
        let mut t = Table::new(&["CPU", "NAME"]).right(&[0]);
        t.row(vec!["1".into(), "short".into()]);
        t.row(vec!["10".into(), "a very long name that will not fit".into()]);
        let s = t.render(&Style::plain(20), 2);
        assert_eq!(s, "  CPU  NAME\n    1  short\n   10  a very long …\n");
    }
}
