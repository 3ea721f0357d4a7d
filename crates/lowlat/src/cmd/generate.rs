//! `lowlat generate completions SHELL` and `lowlat generate man`: shell completions and man
//! pages generated from the clap definition, so they never drift from the real options.

use std::io::Write as _;

use anyhow::Context as _;
use cli::args::generate::Command;

use crate::exit::ExitCode;

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
