//! What every CLI test module shares.

use assert_cmd::cargo::CommandCargoExt as _;

/// The binary under test, as `assert_cmd` drives it: plain output (no colour, 120 columns)
/// and none of the environment variables that change a render's defaults.
pub fn lowlat() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("lowlat").unwrap_or_else(|e| panic!("{e}"));
    c.env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .env_remove("LATENCY_TEST_RUNTIME")
        .env_remove("MAXIMUM_LATENCY");
    c
}

/// The same as a `std::process::Command`, for tests that spawn, signal or pipe it.
pub fn lowlat_std() -> std::process::Command {
    let mut c = std::process::Command::cargo_bin("lowlat").unwrap_or_else(|e| panic!("{e}"));
    c.env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .env_remove("LATENCY_TEST_RUNTIME")
        .env_remove("MAXIMUM_LATENCY");
    c
}
