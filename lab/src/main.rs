//! `rtlab` — the real-time kernel lab (docs/LAB.md). Boots Debian's PREEMPT_RT kernel under
//! QEMU with the arguments lowlat renders and runs lowlat inside; the host judges what comes
//! back. `cargo run -p rtlab --release` runs the whole lab; exit 0 when every proof holds.

mod cpio;
mod fetch;
mod image;
mod lab;
mod parity;
mod payload;
mod proof;
mod qemu;
mod tracers;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "rtlab",
    version,
    about = "The real-time kernel lab: lowlat on Debian's PREEMPT_RT kernel under QEMU"
)]
struct Cli {
    /// The lowlat binary to put in the guest (static; default: `image/build.sh --binary`).
    #[arg(long, global = true, value_name = "PATH")]
    lowlat: Option<PathBuf>,
    /// `auto` (KVM when the guest boots under it, else TCG), `kvm` or `tcg`.
    #[arg(long, global = true, default_value = "auto")]
    accel: qemu::AccelChoice,
    /// Work directory: package cache, images, one directory per boot, `summary.json`.
    #[arg(long, global = true, default_value = "target/rtlab")]
    dir: PathBuf,
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// The whole lab: boot proof, runtime round trip, tracer parity (the default).
    Run {
        /// Skip the tracer measurements and the rtla comparison.
        #[arg(long)]
        no_tracers: bool,
        /// Rounds of the interleaved lowlat / rtla comparison.
        #[arg(long, default_value_t = 2)]
        rounds: u32,
        /// Seconds of each run of the comparison.
        #[arg(long, default_value_t = 10)]
        seconds: u32,
    },
    /// Only the tracer boot (after the probe boot that plans): the rtla comparison, for
    /// bench/tracers-vs-rtla.sh.
    Parity {
        #[arg(long, default_value_t = 3)]
        rounds: u32,
        #[arg(long, default_value_t = 20)]
        seconds: u32,
    },
    /// Fetch and unpack the Debian packages only.
    Fetch,
    /// One boot with a job script of yours; the guest's /out lands in DIR/NAME/out.
    Boot {
        /// Kernel arguments after the lab's console arguments.
        #[arg(long, default_value = "")]
        append: String,
        /// The job (a busybox sh script; /lab/lib.sh has `step` and `dump_state`).
        #[arg(long)]
        job: PathBuf,
        /// Files for /job/NAME in the guest (NAME=PATH, repeatable).
        #[arg(long = "file", value_name = "NAME=PATH")]
        files: Vec<String>,
        #[arg(long, default_value = "boot")]
        name: String,
        /// Time limit of the boot, in seconds.
        #[arg(long, default_value_t = 300)]
        timeout: u64,
    },
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

fn static_lowlat() -> Result<PathBuf> {
    let root = repo_root();
    eprintln!("[rtlab] image/build.sh --binary (the static lowlat)");
    let mut cmd = Command::new("bash");
    cmd.arg(root.join("image/build.sh")).arg("--binary");
    // `cargo run` puts rtlab's own package variables (CARGO_PKG_NAME, CARGO_MANIFEST_DIR, …) in
    // our environment; ring's build script declares rerun-if-env-changed on them, so passing
    // them on would make cargo rebuild ring and everything above it (2–3 min) although the
    // image stage built the same binary a moment before.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k == "CARGO" || k.starts_with("CARGO_PKG_") || k.starts_with("CARGO_MANIFEST_") {
            cmd.env_remove(k.as_ref());
        }
    }
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running image/build.sh --binary")?;
    if !out.status.success() {
        bail!("image/build.sh --binary failed ({})", out.status);
    }
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !p.is_file() {
        bail!("image/build.sh --binary printed {}, which is not a file", p.display());
    }
    Ok(p)
}

fn tools() -> Result<()> {
    let mut missing = Vec::new();
    for (cmd, pkg) in [
        ("qemu-system-x86_64", "qemu-system-x86"),
        ("dpkg-deb", "dpkg"),
        ("apt-get", "apt"),
        ("strip", "binutils"),
    ] {
        if Command::new("sh")
            .args(["-c", &format!("command -v {cmd}")])
            .output()
            .map(|o| !o.status.success())
            .unwrap_or(true)
        {
            missing.push(pkg);
        }
    }
    if !missing.is_empty() {
        bail!("missing: {} (apt-get install {})", missing.join(", "), missing.join(" "));
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("rtlab: error: {e:#}");
            ExitCode::from(3)
        }
    }
}

fn real_main(cli: Cli) -> Result<bool> {
    tools()?;
    let dir = if cli.dir.is_absolute() { cli.dir.clone() } else { repo_root().join(&cli.dir) };
    std::fs::create_dir_all(&dir)?;
    // One lab at a time per directory: boots share the base image and the run directory.
    let lock = std::fs::File::create(dir.join("lock"))?;
    // SAFETY: flock on a file descriptor this process owns; no memory is involved.
    if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX | libc::LOCK_NB) }
        != 0
    {
        bail!("another rtlab runs in {} (its lock file is held)", dir.display());
    }
    let pk = fetch::fetch(&dir.join("cache"))?;
    eprintln!("[rtlab] kernel {} ({})", pk.kernel_package, pk.kernel_version);
    let cmd = cli.cmd.unwrap_or(Cmd::Run { no_tracers: false, rounds: 2, seconds: 10 });
    if matches!(cmd, Cmd::Fetch) {
        return Ok(true);
    }
    let lowlat = match &cli.lowlat {
        Some(p) => p.clone(),
        None => static_lowlat()?,
    };
    // The guest gets lowlat without its line tables (a third of the size), as the image does.
    let stripped = dir.join("lowlat.stripped");
    let st = Command::new("strip")
        .arg("--strip-debug")
        .arg("-o")
        .arg(&stripped)
        .arg(&lowlat)
        .status()?;
    if !st.success() {
        bail!("strip --strip-debug {} failed", lowlat.display());
    }
    let base = dir.join("base.cpio");
    image::base(&pk, &stripped, &base)?;
    let machine = qemu::Machine {
        vmlinuz: pk.vmlinuz.clone(),
        topology: qemu::Topology::SMT_NUMA,
        accel: qemu::Accel::Tcg,
    };
    let accel = cli.accel;
    let mut lab = lab::Lab::new(dir.join("run"), base, machine, accel);
    if let qemu::AccelChoice::Only(a) = accel {
        lab.machine.accel = a;
    }
    match cmd {
        Cmd::Fetch => Ok(true),
        Cmd::Boot { append, job, files, name, timeout } => {
            let job = std::fs::read_to_string(&job)
                .with_context(|| format!("reading {}", job.display()))?;
            let mut fs = Vec::new();
            for f in files {
                let (n, p) =
                    f.split_once('=').with_context(|| format!("--file {f}: use NAME=PATH"))?;
                fs.push((n.to_string(), std::fs::read(p).with_context(|| format!("reading {p}"))?));
            }
            let g = lab.boot(&name, &append, false, &job, &fs, Duration::from_secs(timeout))?;
            println!("{}", g.out.display());
            for s in &g.steps {
                println!("  {:<20} rc {:<3} {} s", s.name, s.rc, s.secs);
            }
            Ok(true)
        }
        Cmd::Run { no_tracers, rounds, seconds } => {
            proof::run(&mut lab, &pk, &lowlat, (!no_tracers).then_some((rounds, seconds)), false)
        }
        Cmd::Parity { rounds, seconds } => {
            proof::run(&mut lab, &pk, &lowlat, Some((rounds, seconds)), true)
        }
    }
}
