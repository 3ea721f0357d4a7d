//! The `lowlat` binary: parses arguments (clap derive) into typed configs and hands them to
//! the library crates. No logic lives here beyond wiring and error-to-exit-code mapping.

mod cli;
mod cmd;
mod exit;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let code = match cmd::run(cli) {
        Ok(code) => code,
        Err(err) => {
            let code = exit::classify(&err);
            eprintln!("lowlat: error: {err:#}");
            code
        }
    };
    std::process::exit(code as i32);
}
