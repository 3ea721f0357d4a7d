//! `lowlat generate completions SHELL` and `lowlat generate man`: shell completions and man
//! pages generated from the clap definition, so they never drift from the real options.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;

use crate::exit::ExitCode;

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

fn roff(cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf).context("rendering the man page")?;
    Ok(buf)
}

/// Run `lowlat generate …` for the command-line definition `cli`.
pub fn run(cmd: Command, mut cli: clap::Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Completions { shell } => {
            let mut out = std::io::stdout().lock();
            clap_complete::generate(shell, &mut cli, "lowlat", &mut out);
            out.flush().context("writing completions")?;
        }
        Command::Man { dir: None } => {
            std::io::stdout().lock().write_all(&roff(cli)?).context("writing the man page")?;
        }
        Command::Man { dir: Some(dir) } => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(cli, &dir)
                .with_context(|| format!("writing man pages into {}", dir.display()))?;
            let mut pages: Vec<String> = std::fs::read_dir(&dir)
                .with_context(|| format!("listing {}", dir.display()))?
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with("lowlat") && n.ends_with(".1"))
                .collect();
            pages.sort();
            println!("wrote {} man pages into {}: {}", pages.len(), dir.display(), pages.join(" "));
        }
    }
    Ok(ExitCode::Ok)
}
