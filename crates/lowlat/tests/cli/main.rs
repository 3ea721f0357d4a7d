//! The `lowlat` binary as a user runs it: one test binary for every command (one link instead
//! of fifteen), a module per command, and the helpers they share in [`support`]. The cluster
//! tests (`cluster_k8s`, needing a live cluster and the `cluster` feature) stay apart.

mod support;

mod apply;
mod check;
mod compat;
mod fsync;
mod generate;
mod hostile_input;
mod import;
mod inspect;
mod knobs;
mod measure;
mod nto_oracle;
mod pipe;
mod plan;
mod render;
mod report;
mod schemas;
mod verdicts;
mod verify;
mod watch;
