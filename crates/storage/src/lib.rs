//! fsync latency probe, OS-update interference, mitigations, storage watch.
