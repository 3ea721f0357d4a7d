//! The arguments of `lowlat generate …`, with their help.

use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Shell completions, on stdout (e.g. `lowlat generate completions bash >
    /// /etc/bash_completion.d/lowlat`).
    #[command(
        after_help = "Examples:\n  lowlat generate completions bash > /etc/bash_completion.d/lowlat\n  \
lowlat generate completions zsh > \"${fpath[1]}/_lowlat\""
    )]
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// The man page (roff) on stdout, or with --dir one page per command (`lowlat.1`,
    /// `lowlat-check.1`, …) written into DIR.
    #[command(after_help = "Examples:\n  lowlat generate man | man -l -\n  \
lowlat generate man --dir /usr/local/share/man/man1")]
    Man {
        /// Write `lowlat.1` and a page per subcommand here instead of printing `lowlat.1`.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}
