//! The arguments of `lowlat measure fsync` and `lowlat measure etcd`, with their help.

use std::path::PathBuf;
use std::time::Duration;

use storage::units::parse_size;
use storage::{BulkMode, MitigationSet, SyncMode};
use util::duration::parse_positive_span as span;

use super::common::{JsonArg, Output};

/// Arguments of `lowlat measure fsync`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  lowlat measure fsync --dir /var/lib/etcd --duration 20s\n  \
lowlat measure fsync --dir /var/lib/etcd --size 22m --bs 2300 --fio-json fio.json   # the etcd fio recipe\n  \
lowlat measure fsync --interference syncfs-at-end --mitigation scheduler=bfq+ionice-idle\n  \
lowlat measure fsync --matrix --duration 15s --json matrix.json\n  \
lowlat measure fsync --dir /var/lib/etcd --interference-cmd 'rpm-ostree upgrade' --mitigation ionice-idle")]
pub struct Args {
    /// Directory on the filesystem to test (e.g. /var/lib/etcd); scratch files go in a
    /// subdirectory that is removed afterwards.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Bytes per write (etcd's average WAL write is ~2300 B; OpenShift's etcd-perf uses 8000).
    #[arg(long, default_value = "2300", value_parser = parse_size)]
    pub bs: u64,
    /// Write this many bytes then stop (fio --size); conflicts with --duration.
    #[arg(long, value_parser = parse_size, conflicts_with = "duration")]
    pub size: Option<u64>,
    /// Run this long (default 10s when --size is not given). With interference the probe runs
    /// at least until the bulk writer finishes.
    #[arg(long, value_parser = span)]
    pub duration: Option<Duration>,
    /// fdatasync (etcd, fio --fdatasync=1), fsync, or dsync (O_DSYNC writes).
    #[arg(long, default_value = "fdatasync")]
    pub sync: SyncMode,
    /// IOPS budget for the probe (so it cannot drain cloud burst credits itself).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Window of the per-window series.
    #[arg(long, default_value = "1s", value_parser = span)]
    pub window: Duration,
    /// Probe file preallocation (default: --size, or 256m in duration mode; wraps around).
    #[arg(long, value_parser = parse_size)]
    pub file_size: Option<u64>,
    /// Bulk writer imitating an OS update: fsync-per-file, syncfs-at-end, no-sync, trickle
    /// (comma-separated or repeated with --matrix).
    #[arg(long, value_delimiter = ',')]
    pub interference: Vec<BulkMode>,
    /// A real update command as the interferer instead (`sh -c` in --dir, in its own process
    /// group, ended with the scenario; `$LOWLAT_SCRATCH` is removed afterwards), e.g.
    /// 'ostree --repo=repo pull-local tmp/repo COMMIT'.
    #[arg(long, value_name = "CMD", conflicts_with = "interference")]
    pub interference_cmd: Option<String>,
    /// ionice-idle, scheduler=none|mq-deadline|bfq|kyber, throttle=MB/s, rate=MB/s,
    /// outstanding=N, `none`; combine with + (comma-separated or repeated with --matrix).
    #[arg(long, value_delimiter = ',')]
    pub mitigation: Vec<MitigationSet>,
    /// Baseline plus every interference × mitigation, and the comparison table.
    #[arg(long)]
    pub matrix: bool,
    /// Bytes the bulk writer writes.
    #[arg(long, default_value = "1g", value_parser = parse_size)]
    pub bulk_size: u64,
    /// When the bulk writer starts after the probe.
    #[arg(long, default_value = "2s", value_parser = span)]
    pub bulk_delay: Duration,
    /// Bulk writer files in flight (worker threads) unless a mitigation sets it.
    #[arg(long, default_value = "4")]
    pub outstanding: usize,
    #[command(flatten)]
    pub json: JsonArg,
    /// Also write the result as Prometheus text for node_exporter's textfile collector
    /// (latency quantiles, operations, the worst window; partial, evidence), atomically
    /// (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<Output>,
    /// Write fio's JSON shape here (`jobs[0].sync.lat_ns.percentile["99.000000"]`).
    #[arg(long, value_name = "FILE")]
    pub fio_json: Option<PathBuf>,
}

/// Arguments of `lowlat measure etcd`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat measure etcd --endpoint http://127.0.0.1:2379 --duration 60s --interval 5s\n  \
lowlat measure etcd --endpoint https://10.0.0.5:2379 --cacert ca.crt --cert peer.crt --key peer.key\n  \
lowlat measure etcd --prometheus-url https://thanos-querier.openshift-monitoring.svc:9091 \\\n      \
--token-file token --cacert service-ca.crt --selector 'job=\"etcd\"' --duration 1h --interval 1m"
)]
pub struct EtcdArgs {
    /// etcd's metrics URL, http:// or https:// (a client URL, or --listen-metrics-urls);
    /// `/metrics` is appended when no path is given.
    #[arg(long, required_unless_present = "prometheus_url", conflicts_with = "prometheus_url")]
    pub endpoint: Option<String>,
    /// Read etcd's histograms from this Prometheus (or Thanos querier) base URL instead: the
    /// window that ends now, by increase() over --duration and every --interval. (Named apart
    /// from `--prometheus FILE`, which writes a textfile everywhere else.)
    #[arg(long, value_name = "URL")]
    pub prometheus_url: Option<String>,
    /// With --prometheus-url: label matchers for etcd's series, e.g. 'job="etcd",instance=~"m0.*"'
    /// (default: every series, summed).
    #[arg(long, requires = "prometheus_url", default_value = "")]
    pub selector: String,
    /// CA bundle (PEM) that verifies the server's certificate (https://).
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Client certificate (PEM) for servers that require one (etcd --client-cert-auth).
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Bearer token sent with every request (e.g. `oc whoami -t` for OpenShift's monitoring).
    #[arg(
        long,
        env = "LOWLAT_BEARER_TOKEN",
        hide_env_values = true,
        conflicts_with = "token_file"
    )]
    pub token: Option<String>,
    /// Read the bearer token from this file (e.g. a service account's token).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Window to measure (bucket deltas between the first and the last scrape).
    #[arg(long, default_value = "30s", value_parser = span)]
    pub duration: Duration,
    /// Scrape this often for the per-interval series (with --prometheus-url: the series' step,
    /// whole seconds, at least twice Prometheus' scrape interval).
    #[arg(long, default_value = "5s", value_parser = span)]
    pub interval: Duration,
    #[command(flatten)]
    pub json: JsonArg,
    /// Also write the result as Prometheus text for node_exporter's textfile collector
    /// (etcd's WAL fsync and backend commit percentiles, operations; partial, evidence),
    /// atomically (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<Output>,
}
