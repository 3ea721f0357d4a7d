//! The arguments of `lowlat cluster` in a build without the `cluster` feature, with their help.

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
