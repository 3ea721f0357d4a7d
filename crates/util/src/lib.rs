//! One home for the utilities every lowlat crate shares, each written once:
//!
//! | module | what |
//! |---|---|
//! | [`duration`] | run lengths (`10s`, `12h`; a bare number is seconds) and latencies (`100us`; a bare number is µs) |
//! | [`time`] | RFC 3339 UTC timestamps |
//! | [`signal`] | SIGINT/SIGTERM: first one asks to stop, second one runs the registered async-signal-safe undo and exits 130 |
//! | [`term`] | is this a terminal, colours (`NO_COLOR`), terminal width |
//! | [`privilege`] | effective root, effective capabilities |
//! | [`sched`] | CPU affinity and scheduling-policy syscalls |
//! | [`stats`] | the percentile rule (nearest rank) |
//! | [`fs`] | writes that never follow a planted symlink and never leave a half-written file |
//! | [`output`] | where a document goes: stdout (`-`) or a file replaced atomically |
//! | [`exit`] | the documented exit codes, and the trait library errors use to say theirs |
//!
//! The `/proc/interrupts` parser lives in `host` (it is a kernel file, read through `Root`).

pub mod duration;
pub mod exit;
pub mod fs;
pub mod output;
pub mod privilege;
pub mod prom;
pub mod sched;
pub mod signal;
pub mod stats;
pub mod term;
pub mod time;
