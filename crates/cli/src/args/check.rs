//! The arguments of `lowlat check`, with their help.

use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `lowlat check`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Which partition is judged: --plan FILE when given; else, on a host \
already booted with isolation (isolcpus/nohz_full), the host's own isolated CPUs (as `lowlat \
verify` without --plan); else a default evaluation plan.\n\
Writes into --out DIR (default ./lowlat-out): inspect.json, plan.yaml, \
verify.json, timer.json, noise.json, ticks.json, fsync.json and lowlat-report.html.\n\
Nothing on the host is changed: the plan is for evaluation only.\n\
Examples:\n  lowlat check --quick\n  sudo lowlat check --plan plan.yaml --duration 12h --out after\n  \
lowlat check --cpus 4-7 --fsync-dir /var/lib/etcd\n\
Exit: 0 when nothing failed, 1 when a check or latency threshold failed.")]
pub struct Args {
    /// About 20 s in all (timer 9 s, noise 3 s, ticks 2 s, fsync 3 s) instead of about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Timer-latency run length (`30s`, `10m`, `12h`); noise and fsync run a third of it,
    /// ticks a sixth. Default 30s (9s with --quick).
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_positive_span)]
    pub duration: Option<Duration>,
    /// Directory for the result files and lowlat-report.html.
    #[arg(long, value_name = "DIR", default_value = "lowlat-out", value_parser = super::common::out_dir)]
    pub out: PathBuf,
    /// Directory the fsync probe writes in (default: a temporary directory under --out, removed
    /// afterwards). Point it at the filesystem you care about (e.g. /var/lib/etcd).
    #[arg(long, value_name = "DIR")]
    pub fsync_dir: Option<PathBuf>,
    /// Timer latency each isolated CPU must stay below.
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_latency, default_value = "100us")]
    pub threshold: Duration,
    /// The plan to verify and measure (default: the host's own isolation when it is booted
    /// with one, else a default evaluation plan).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Measure these CPUs (default: the partition's isolated CPUs).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<cpuset::CpuSet>,
    #[command(flatten)]
    pub json: super::common::JsonArg,
    /// Write JUnit XML here: a suite per report section (hostname, timestamp, time), a test
    /// case per verdict line, for CI (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<super::common::Output>,
    /// Also write Prometheus text for node_exporter's textfile collector: the verdict and each
    /// section's, one-hot (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<super::common::Output>,
    /// Skip steps by name: inspect, plan, verify, timer, noise, ticks, fsync.
    #[arg(long, value_name = "STEP", value_delimiter = ',')]
    pub skip: Vec<String>,
    /// Run the timer and noise steps from a cgroup with an RT budget (`root`, or a cgroup path
    /// such as /rt) and move back afterwards, as `lowlat measure --rt-cgroup` (root only).
    #[arg(long, value_name = "root|PATH", value_parser = |s: &str| s.parse::<measure::rt_cgroup::RtCgroup>())]
    pub rt_cgroup: Option<measure::rt_cgroup::RtCgroup>,
}
