//! Effect-based checks of a host against a plan.
