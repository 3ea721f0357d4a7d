//! CPU partition planner and kernel-argument rules: pure functions from a host model and
//! options to a versioned [`Plan`]. The plan file (YAML) is the contract between `plan`,
//! `render`, `apply`, `revert` and `verify`.

pub mod error;
pub mod layout;
pub mod model;
pub mod partition;
pub mod ppc;

pub use error::PlanError;
pub use model::*;
pub mod build;
pub mod rules;

pub use build::{default_plan, make_plan, PlanRequest};
pub mod cluster;
pub mod summary;
