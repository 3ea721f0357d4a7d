//! Arguments shared by the read-only commands: where the host model comes from.
