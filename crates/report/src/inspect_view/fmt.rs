//! Small formatting helpers shared by the view's sections.

use std::fmt::Write as _;

use cpuset::CpuSet;

use crate::term::{Paint, Style};

pub(super) fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "unknown".to_string(), |x| x.to_string())
}

pub(super) fn set_or(v: &Option<CpuSet>, none: &str) -> String {
    match v {
        Some(s) if s.is_empty() => "none".into(),
        Some(s) => s.to_list(),
        None => none.into(),
    }
}

pub(super) fn kv(out: &mut String, st: &Style, key: &str, val: &str) {
    let _ = writeln!(out, "  {:<16} {}", st.paint(Paint::Dim, key), val);
}
