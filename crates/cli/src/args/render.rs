//! The arguments of `lowlat render`, with their help.

use std::path::PathBuf;

use render::Target;

/// Arguments of `lowlat render`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Targets: cmdline, grubby, grub, bls, rpm-ostree, tuned, openshift, performance-profile, \
systemd, irqbalance, k8s-latency-test, cluster-rbac (no plan: what `lowlat cluster` needs, in --namespace).\nExamples:\n  lowlat render --plan plan.yaml cmdline --explain\n  \
lowlat render --plan plan.yaml bls --input /boot/loader/entries/boot.conf\n  \
lowlat render --plan plan.yaml openshift -o manifests/            # exactly NTO's settings\n  \
lowlat render --plan plan.yaml openshift --beyond-nto -o manifests/  # plus lowlat's boot-time extras"
)]
pub struct Args {
    /// The plan file (`lowlat plan -o plan.yaml`); every target but cluster-rbac needs one.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// What to render.
    #[arg(value_name = "TARGET")]
    pub target: Target,
    /// Write the files into this directory instead of printing them (`-`: print them).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// cmdline: print each argument with the reason for it.
    #[arg(long)]
    pub explain: bool,
    /// grub: the /etc/default/grub to edit; bls: the loader entry to patch (in place unless -o).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// OpenShift role / MachineConfigPool name (default: the plan's pool, else worker-cnf).
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// k8s-latency-test: container image holding lowlat and busybox (default: what
    /// image/build.sh builds).
    #[arg(long, value_name = "IMAGE", default_value_t = render::default_image())]
    pub image: String,
    /// k8s-latency-test, cluster-rbac: namespace.
    #[arg(long, value_name = "NS", default_value = "lowlat-latency")]
    pub namespace: String,
    /// k8s-latency-test: how long to measure (`10m`, `12h`; a bare number is seconds).
    #[arg(long, value_name = "DURATION", env = "LATENCY_TEST_RUNTIME", default_value = "10m")]
    pub duration: String,
    /// k8s-latency-test: pass threshold in µs.
    #[arg(long, value_name = "US", env = "MAXIMUM_LATENCY", default_value_t = 20)]
    pub max_latency_us: u64,
    /// k8s-latency-test: CPUs for the test pod, one of them for the main thread (default 2..5).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub test_cpus: usize,
    /// k8s-latency-test: RuntimeClass (default performance-<plan name>, created by the openshift
    /// and performance-profile targets; `''` leaves it out).
    #[arg(long, value_name = "NAME")]
    pub runtime_class: Option<String>,
    /// rpm-ostree: a kernel-rt RPM to install (repeat for core, modules, modules-extra).
    #[arg(long = "rt-package", value_name = "FILE.rpm")]
    pub rt_packages: Vec<String>,
    /// openshift: add lowlat's deliberate extras beyond what NTO writes (irqaffinity and
    /// kthread_cpus on the boot line, kernel.watchdog_cpumask in the Tuned, systemd.cpu_affinity
    /// over the housekeeping CPUs only); without it the node gets exactly NTO's settings.
    #[arg(long)]
    pub beyond_nto: bool,
    /// Accepted for old scripts: NTO's settings are now the default (see --beyond-nto).
    #[arg(long, hide = true, conflicts_with = "beyond_nto")]
    pub nto_exact: bool,
    /// The rendered files as one JSON document (`{schema_version, kind: "render", target,
    /// files[] {name, executable, contents}}`), for programs; alone it goes to stdout instead
    /// of the listing.
    #[command(flatten)]
    pub json: super::common::JsonArg,
}
