//! Apply and revert the runtime tier of a plan through a journaled writer.
//!
//! - [`writer::Writer`] is the one seam every host write goes through ([`real::RealWriter`]
//!   live, [`fake::FakeWriter`] in memory);
//! - [`changes`] turns a plan and a host model into the changes to make (pure);
//! - [`journal`] records each change, flushed, before it is made, and keeps journals of other
//!   boots, forgotten and reverted ones aside;
//! - [`txn`] applies all-or-nothing (rollback in reverse on failure) and reverts from the
//!   journal alone;
//! - [`fault`] injects crashes and failures at any step of a transaction (crash tests);
//! - [`site`] is where it happens (the live host or a directory laid out like `/`): the lock
//!   order and the journal's lifecycle around a transaction, for `lowlat apply` and `revert`;
//! - [`view`] shows their outcomes in a terminal.

pub mod changes;
pub mod fake;
pub mod fault;
pub mod journal;
pub mod real;
pub mod site;
pub mod target;
pub mod txn;
pub mod view;
pub mod writer;

pub use changes::{pending_kernel_args, plan_changes, Allow, Change, Changes, Note, Options};
pub use site::{Applied, ApplyRequest, DryRun, Pending, RevertError, Reverted, Site, SiteError};
pub use target::{Format, NotAllowed, Target};
pub use writer::{ErrorKind, WriteError, Writer};
