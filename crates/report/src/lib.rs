//! Terminal views and the self-contained HTML report.

pub mod inspect_view;
pub mod term;
