//! Exporters: render a result in another tool's format so existing scripts keep working.

pub mod cyclictest;
pub mod oslat;
pub mod table;
pub mod tracer;
