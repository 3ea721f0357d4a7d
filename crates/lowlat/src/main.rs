//! The `lowlat` binary: parses the command line the `cli` crate defines and hands the typed
//! configs to the library crates. What lives here: wiring, views, and the mapping from errors
//! to the documented exit codes (`exit.rs`).

mod cmd;
mod exit;

use clap::Parser;

fn main() {
    // A closed stdout (`lowlat render … | head -1`) ends the program quietly with status 0, as
    // `head` users expect: the print that hit the closed pipe unwinds to here instead of
    // printing a panic message. Every other panic keeps the default report.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !exit::is_broken_pipe_panic(info.payload()) {
            default_hook(info);
        }
    }));
    let outcome = std::panic::catch_unwind(|| cmd::run(cli::Cli::parse()));
    let code = match outcome {
        Ok(Ok(code)) => code,
        Ok(Err(err)) if exit::is_broken_pipe(&err) => util::exit::ExitCode::Ok,
        Ok(Err(err)) => {
            let code = exit::classify(&err);
            eprintln!("lowlat: error: {}", util::term::sanitize(&format!("{err:#}"), true));
            code
        }
        Err(payload) if exit::is_broken_pipe_panic(payload.as_ref()) => util::exit::ExitCode::Ok,
        Err(_) => util::exit::ExitCode::Runtime,
    };
    std::process::exit(code.code());
}
