//! Timer, noise and tick measurements with real-time threads, and load generators.
