//! `lowlat cluster …` in a binary built without the `cluster` feature: the subcommand is
//! still listed, and says how to get a lowlat that has it, instead of "unrecognized
//! subcommand".

use crate::exit::ExitCode;

/// Arguments of `lowlat cluster` when it is not built in: anything, for the message.
#[derive(Debug, clap::Args)]
#[command(
    about = "Kubernetes fleet commands (not in this build: built without the `cluster` feature)",
    after_help = "Examples:\n  cargo install --path crates/lowlat --features cluster   # a lowlat with it\n  \
image/build.sh                                           # the image has it"
)]
pub struct Args {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

/// Say how to get `lowlat cluster`.
pub fn run(_: Args) -> anyhow::Result<ExitCode> {
    Err(crate::exit::usage(
        "this lowlat was built without the `cluster` feature (Kubernetes support is optional): \
         build it with `cargo build --release --features cluster`, or use the image \
         (`image/build.sh`), which has it",
    ))
}
