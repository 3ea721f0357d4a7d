//! Apply and revert the runtime tier of a plan through a journaled writer.
