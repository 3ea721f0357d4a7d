//! `lowlat watch storage` and `lowlat watch cmd`: flags → `storage::watch` configs → one
//! storage call (live lines on stdout, JSON lines with `-o`, a Prometheus textfile).

use cli::args::watch::Command;
use storage::watch::StorageWatch;

use crate::exit::ExitCode;

/// Run `lowlat watch …`.
pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    util::signal::install();
    // Process names and command output come from the host: escaped on the way out.
    let mut escaped = util::term::Escaping::new(std::io::stdout());
    let (stop, out) = (util::signal::stop_flag(), &mut escaped);
    let outcome = match cmd {
        Command::Storage(a) => {
            let w = StorageWatch { dir: a.dir, write_size: a.write_size, burst: a.burst };
            let root = host::Root::live();
            storage::watch::watch_storage(&a.common.config(), &w, &root, stop, out)?
        }
        Command::Cmd(a) => storage::watch::watch_cmd(&a.common.config(), &a.command, stop, out)?,
    };
    Ok(outcome.exit_code())
}
