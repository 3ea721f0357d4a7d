//! What every CLI test module shares.

use assert_cmd::cargo::CommandCargoExt as _;

/// A CPU-lock directory of its own for each run (`LOWLAT_CPU_LOCK_DIR`, under the build's
/// `CARGO_TARGET_TMPDIR`): the tests measure in parallel on one CPU, which lowlat otherwise
/// refuses (a measurement owns its CPUs). Mode 0755, so a run as `nobody` can use it.
pub fn lock_dir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cpu-lock-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    d
}

/// The binary under test, as `assert_cmd` drives it: plain output (no colour, 120 columns),
/// none of the environment variables that change a render's defaults, a CPU-lock directory
/// of its own.
pub fn lowlat() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("lowlat").unwrap_or_else(|e| panic!("{e}"));
    c.env("LOWLAT_CPU_LOCK_DIR", lock_dir())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .env_remove("LATENCY_TEST_RUNTIME")
        .env_remove("MAXIMUM_LATENCY");
    c
}

/// The same as a `std::process::Command`, for tests that spawn, signal or pipe it.
pub fn lowlat_std() -> std::process::Command {
    let mut c = std::process::Command::cargo_bin("lowlat").unwrap_or_else(|e| panic!("{e}"));
    c.env("LOWLAT_CPU_LOCK_DIR", lock_dir())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .env_remove("LATENCY_TEST_RUNTIME")
        .env_remove("MAXIMUM_LATENCY");
    c
}

/// A JUnit file validates against the format CI systems read (`testdata/junit/junit.xsd`,
/// checked by libxml2's `xmllint`, which `.ci/run` installs).
pub fn assert_junit_valid(path: &std::path::Path) {
    let xsd = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/junit/junit.xsd");
    let out = std::process::Command::new("xmllint")
        .args(["--noout", "--schema", xsd])
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("xmllint (apt-get install libxml2-utils): {e}"));
    assert!(
        out.status.success(),
        "{} does not validate as JUnit:\n{}\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(path).unwrap_or_default()
    );
}

/// The commands the README's shared-options table names for the option whose row starts
/// with `option` (`` `--plan FILE` ``): its "on" column, which `cli::surface` keeps equal to
/// the CLI, as written there (`` `render` ``, `` `cluster apply` ``).
pub fn readme_commands_taking(option: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .unwrap_or_else(|e| panic!("README.md: {e}"));
    let row = readme
        .lines()
        .find(|l| l.starts_with(&format!("| {option} |")))
        .unwrap_or_else(|| panic!("no {option} row in the README's options table"));
    let on = row.split(" | ").nth(1).unwrap_or_default();
    on.split(", ").map(str::to_string).collect()
}
