//! Terminal views and the self-contained HTML report.
