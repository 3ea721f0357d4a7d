//! Importers: other tools' outputs turned into lowlat result files.

pub mod fio;
