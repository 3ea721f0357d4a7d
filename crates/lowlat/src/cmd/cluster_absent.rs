//! `lowlat cluster …` in a binary built without the `cluster` feature: the subcommand is
//! still listed, and says how to get a lowlat that has it, instead of "unrecognized
//! subcommand".

use cli::args::cluster::Args;

use crate::exit::ExitCode;

/// Say how to get `lowlat cluster`.
pub fn run(_: Args) -> anyhow::Result<ExitCode> {
    Err(crate::exit::usage(
        "this lowlat was built without the `cluster` feature (Kubernetes support is optional): \
         build it with `cargo build --release --features cluster`, or use the image \
         (`image/build.sh`), which has it",
    ))
}
