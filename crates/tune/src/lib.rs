//! Apply and revert the runtime tier of a plan through a journaled writer.
//!
//! - [`writer::Writer`] is the one seam every host write goes through ([`real::RealWriter`]
//!   live, [`fake::FakeWriter`] in memory);
//! - [`changes`] turns a plan and a host model into the changes to make (pure);
//! - [`journal`] records each change, flushed, before it is made;
//! - [`txn`] applies all-or-nothing (rollback in reverse on failure) and reverts from the
//!   journal alone.

pub mod changes;
pub mod fake;
pub mod journal;
pub mod real;
pub mod target;
pub mod txn;
pub mod writer;

pub use changes::{pending_kernel_args, plan_changes, Allow, Change, Changes, Note, Options};
pub use target::{Format, Target};
pub use writer::{ErrorKind, WriteError, Writer};
