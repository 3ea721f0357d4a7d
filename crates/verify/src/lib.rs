//! Effect-based checks of a host against a plan. Each check is a small unit with an id, a
//! status (pass / fail / warn / expected-residue / pending-reboot / n.a.), evidence, and a fix
//! naming the lowlat step. The checks are pure: [`verify`] turns an [`Input`] (host model,
//! plan, live window, boot loader entries) into the [`Report`]; [`gather`] reads that
//! evidence through a `host::Root` ([`gather::run`] does both).

pub mod boot;
pub mod gather;
pub mod implied;
pub mod irq;
pub mod knobs;
pub mod model;
pub mod render;
pub mod sets;
pub mod status;
pub mod tasks;

pub use gather::{run, Request, Verified};
pub use implied::implied_plan;
pub use model::*;

/// Run every check.
pub fn verify(input: &Input<'_>) -> Report {
    let sets = sets::Sets::of(input.plan, input.host);
    let mut checks = boot::checks(input, &sets);
    checks.extend(irq::checks(input, &sets));
    checks.extend(tasks::checks(input, &sets));
    checks.extend(knobs::checks(input, &sets));
    Report::new(checks)
}
