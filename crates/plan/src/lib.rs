//! CPU partition planner and kernel-argument rules: from a host model and options to a
//! versioned [`Plan`]. The plan file (YAML) is the contract between `plan`, `render`, `apply`,
//! `revert` and `verify`. [`Request::plan`] is `lowlat plan`: it reads the host the request
//! names (live, snapshot, must-gather node or pool) and computes the plan; everything below it
//! is pure.

pub mod build;
pub mod cluster;
pub mod error;
pub mod file;
pub mod layout;
pub mod model;
pub mod partition;
pub mod ppc;
pub mod request;
pub mod rules;
pub mod summary;
pub mod validate;

pub use build::{default_plan, make_plan, PlanRequest};
pub use error::{PlanError, UnknownName};
pub use model::*;
pub use request::{Planned, Request, Source};
