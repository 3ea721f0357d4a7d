//! `lowlat render --plan FILE TARGET [-o DIR]`: read a plan file, render one target, print it
//! or write it (the BLS target patches its input in place, keeping a backup).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use render::{RenderOptions, Target};

use crate::exit::{usage, ExitCode};

fn target_help() -> String {
    Target::ALL.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// Arguments of `lowlat render`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Targets: cmdline, grubby, grub, bls, rpm-ostree, tuned, openshift, performance-profile, \
systemd, irqbalance, k8s-latency-test.\nExamples:\n  lowlat render --plan plan.yaml cmdline --explain\n  \
lowlat render --plan plan.yaml bls --input /boot/loader/entries/boot.conf\n  \
lowlat render --plan plan.yaml openshift -o manifests/"
)]
pub struct Args {
    /// The plan file (`lowlat plan -o plan.yaml`).
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    /// What to render.
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Write the files into this directory instead of printing them.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// cmdline: print each argument with the reason for it.
    #[arg(long)]
    pub explain: bool,
    /// grub: the /etc/default/grub to edit; bls: the loader entry to patch (in place unless -o).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// OpenShift role / MachineConfigPool name (default: the plan's pool, or worker-rt / worker-lowlat).
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// k8s-latency-test: container image holding lowlat (and stress-ng for the load).
    #[arg(long, value_name = "IMAGE", default_value = "quay.io/lowlat/lowlat:latest")]
    pub image: String,
    /// k8s-latency-test: namespace.
    #[arg(long, value_name = "NS", default_value = "lowlat-latency")]
    pub namespace: String,
    /// k8s-latency-test: how long to measure (`10m`, `12h`).
    #[arg(long, value_name = "DURATION", env = "LATENCY_TEST_RUNTIME", default_value = "10m")]
    pub duration: String,
    /// k8s-latency-test: pass threshold in µs.
    #[arg(long, value_name = "US", env = "MAXIMUM_LATENCY", default_value_t = 20)]
    pub max_latency_us: u64,
    /// k8s-latency-test: CPUs for the test pod, one of them for the main thread (default 2..5).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub test_cpus: usize,
    /// k8s-latency-test: RuntimeClass (default performance-<plan name>).
    #[arg(long, value_name = "NAME")]
    pub runtime_class: Option<String>,
    /// rpm-ostree: a kernel-rt RPM to install (repeat for core, modules, modules-extra).
    #[arg(long = "rt-package", value_name = "FILE.rpm")]
    pub rt_packages: Vec<String>,
}

fn valid_duration(s: &str) -> bool {
    let t = s.trim();
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &t[digits.len()..];
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && matches!(unit, "" | "s" | "m" | "h" | "d")
}

/// Run `lowlat render`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let target = Target::from_name(&args.target).ok_or_else(|| {
        usage(format!("unknown render target `{}`; choose one of: {}", args.target, target_help()))
    })?;
    let text = std::fs::read_to_string(&args.plan).map_err(|e| {
        usage(format!(
            "--plan {}: {e} (make one with `lowlat plan -o plan.yaml`)",
            args.plan.display()
        ))
    })?;
    let plan = plan::Plan::from_yaml(&text, &args.plan.display().to_string())
        .map_err(|e| usage(e.to_string()))?;
    if args.explain && target != Target::Cmdline {
        return Err(usage("--explain goes with the cmdline target"));
    }
    if args.input.is_some() && !matches!(target, Target::Grub | Target::Bls) {
        return Err(usage("--input goes with the grub and bls targets"));
    }
    if !valid_duration(&args.duration) {
        return Err(usage(format!(
            "--duration {}: use a number with s, m, h or d (e.g. 10m, 12h)",
            args.duration
        )));
    }
    let input = match &args.input {
        Some(p) => Some((
            p.display().to_string(),
            std::fs::read_to_string(p)
                .map_err(|e| usage(format!("--input {}: {e}", p.display())))?,
        )),
        None => None,
    };
    let opts = RenderOptions {
        explain: args.explain,
        input,
        role: args.role.clone(),
        image: args.image.clone(),
        namespace: args.namespace.clone(),
        duration: args.duration.clone(),
        max_latency_us: args.max_latency_us,
        test_cpus: args.test_cpus,
        runtime_class: args.runtime_class.clone(),
        rt_packages: args.rt_packages.clone(),
    };
    let files = render::render(&plan, target, &opts).map_err(|e| usage(e.to_string()))?;

    if let Some(dir) = &args.output {
        for f in &files {
            write_file(&dir.join(&f.name), &f.contents, f.executable)?;
            println!("wrote {}", dir.join(&f.name).display());
        }
        return Ok(ExitCode::Ok);
    }
    if target == Target::Bls {
        // Patch in place, original kept beside it.
        let Some(input) = &args.input else { return Err(usage("bls needs --input")) };
        let backup = PathBuf::from(format!("{}.lowlat-bak", input.display()));
        if let Some(orig) = files.iter().find(|f| f.name.ends_with(".lowlat-bak")) {
            write_file(&backup, &orig.contents, false)?;
        }
        if let Some(patched) = files.iter().find(|f| !f.name.ends_with(".lowlat-bak")) {
            write_file(input, &patched.contents, false)?;
        }
        println!("patched {} (backup {})", input.display(), backup.display());
        return Ok(ExitCode::Ok);
    }
    if files.len() == 1 {
        print!("{}", files[0].contents);
    } else {
        for f in &files {
            println!("# ==> {} <==", f.name);
            print!("{}", f.contents);
        }
    }
    Ok(ExitCode::Ok)
}

fn write_file(path: &Path, contents: &str, executable: bool) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("making {} executable", path.display()))?;
    }
    Ok(())
}
