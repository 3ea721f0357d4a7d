//! The arguments of `lowlat cluster …`, with their help.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser};

/// Where the cluster is (kubectl's conventions).
#[derive(Debug, clap::Args)]
pub struct ConnArgs {
    /// kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the in-cluster service account).
    #[arg(long, value_name = "FILE", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// kubeconfig context to use.
    #[arg(long, value_name = "NAME", global = true)]
    pub context: Option<String>,
    /// Namespace for the Jobs (default: the context's, else `default`).
    #[arg(short, long, value_name = "NS", global = true)]
    pub namespace: Option<String>,
}

/// How each node's pod is started (`check`, `snapshot`, `clean`).
#[derive(Debug, clap::Args)]
pub struct PodArgs {
    /// Image holding lowlat (default: the one `image/build.sh` builds).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// imagePullPolicy of the pods: Never (image imported on every node), IfNotPresent, Always.
    #[arg(long, value_name = "POLICY", default_value = "Never", value_parser = pull_policy)]
    pub pull_policy: cluster::pod::PullPolicy,
    /// Report a node whose pod has not started after this long (Pending, image missing, …).
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_positive_span, default_value = "2m")]
    pub start_timeout: Duration,
}

fn pull_policy(s: &str) -> Result<cluster::pod::PullPolicy, String> {
    s.parse()
}

/// One of `names` (listed in help and errors), made into its library type.
fn parsed<T>(names: impl IntoIterator<Item = &'static str>) -> impl TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    PossibleValuesParser::new(names).try_map(|s| s.parse::<T>().map_err(|e| e.to_string()))
}

impl PodArgs {
    /// The pod settings, the image defaulting to the one `image/build.sh` builds.
    pub fn pod(self) -> cluster::pod::Pod {
        cluster::pod::Pod {
            image: self.image.unwrap_or_else(render::default_image),
            pull_policy: self.pull_policy,
            start_timeout: self.start_timeout,
        }
    }
}

/// Arguments of `lowlat cluster`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Everything `cluster` creates carries the label lowlat.io/run=<run id> and \
is deleted at the end, on Ctrl-C, and by `lowlat cluster clean`.\nExit: 0 ok, 1 a node failed or \
did not run, 2 usage (bad selector, no node matched, no kubeconfig), 3 API error (403 names the \
missing permission), 130 interrupted."
)]
pub struct Args {
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Nodes: roles, pool, kernel (PREEMPT_RT?), CPUs, kubelet CPU/topology manager, Ready.
    Nodes(NodesArgs),
    /// Run `lowlat check` on every selected node (one Job each) and write a fleet report.
    Check(CheckArgs),
    /// Gather `lowlat snapshot` from every selected node into a must-gather-shaped directory.
    Snapshot(SnapshotArgs),
    /// Server-side apply of a plan's rendered manifests (field manager lowlat; dry run by default).
    Apply(ApplyArgs),
    /// Delete every object a `lowlat cluster` run left behind (label lowlat.io/run).
    Clean(CleanArgs),
    /// In-pod side of `check`/`snapshot`: RT budget, the measurement, results on stdout.
    #[command(hide = true)]
    Agent(AgentArgs),
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat cluster nodes\n  lowlat cluster nodes -l node-role.kubernetes.io/worker-rt= -o wide\n  \
lowlat cluster nodes -o yaml"
)]
pub struct NodesArgs {
    /// Label selector (`node-role.kubernetes.io/worker-rt=`, `a=b,c!=d`); default all nodes.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Output format, as kubectl's -o: wide (more kubelet columns, kubelet version, OS image),
    /// json, yaml, name.
    #[arg(short = 'o', long, value_name = "FORMAT", value_parser = parsed::<cluster::nodes::Format>(cluster::nodes::Format::NAMES))]
    pub output: Option<cluster::nodes::Format>,
    /// Same as -o json.
    #[arg(long, conflicts_with = "output")]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat cluster check -l node-role.kubernetes.io/worker-rt= --quick\n  \
lowlat cluster check -l kubernetes.io/hostname=worker1 --guaranteed-cpus 4 --duration 10m --junit fleet.xml"
)]
pub struct CheckArgs {
    /// Label selector of the nodes to check (required: every match gets a privileged pod).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: String,
    /// About 20 s of measuring per node (timer 9 s) instead of about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Timer run length per node (noise and fsync a third of it, ticks a sixth). Default 30s (9s with --quick).
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_positive_span)]
    pub duration: Option<Duration>,
    /// Directory for DIR/<node>/… and the fleet report.
    #[arg(long, value_name = "DIR", default_value = "lowlat-fleet", value_parser = super::common::out_dir)]
    pub out: PathBuf,
    #[command(flatten)]
    pub pod: PodArgs,
    /// Timer latency each measured CPU must stay below.
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_latency, default_value = "100us")]
    pub threshold: Duration,
    /// Real-time budget granted down each pod's cgroup chain, µs per second (0: none).
    #[arg(long, value_name = "US", default_value_t = 100_000, value_parser = clap::value_parser!(i64).range(0..=950_000))]
    pub rt_budget_us: i64,
    /// Whole CPUs per pod with requests = limits (Guaranteed QoS; exclusive CPUs under the
    /// static CPU manager). Default: Burstable, 100m requested.
    #[arg(long, value_name = "N")]
    pub guaranteed_cpus: Option<u32>,
    /// Also write JUnit XML for CI: a suite per node (its name as hostname), the node's verdict
    /// a test case (a node that did not run fails with the API's reason); `-`: stdout.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<super::common::Output>,
    /// The fleet document (what DIR/fleet.json holds) to FILE, or alone on stdout.
    #[command(flatten)]
    pub json: super::common::JsonArg,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Reads back with `lowlat inspect --must-gather DIR --node NAME` (and every \
command that takes --must-gather).\nExamples:\n  lowlat cluster snapshot -l node-role.kubernetes.io/worker= -o mg/\n  \
lowlat plan --must-gather mg/ --node worker1 -o plan.yaml"
)]
pub struct SnapshotArgs {
    /// Label selector of the nodes.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: String,
    /// The must-gather directory to write (DIR/nodes/<node>/sysinfo.tgz).
    #[arg(short, long, value_name = "DIR", value_parser = super::common::out_dir)]
    pub output: PathBuf,
    #[command(flatten)]
    pub pod: PodArgs,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Without --dry-run=none nothing is stored: the API server validates and \
defaults every object and lowlat prints what would change. Objects that exist and that lowlat \
never managed are refused unless --force-conflicts.\nExamples:\n  lowlat cluster apply --plan plan.yaml\n  \
lowlat cluster apply --plan plan.yaml --dry-run none\n  \
lowlat cluster apply --plan plan.yaml --target k8s-latency-test --dry-run client")]
pub struct ApplyArgs {
    /// The plan file.
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    /// What to render and apply: openshift, performance-profile, k8s-latency-test.
    #[arg(long, value_name = "TARGET", default_value = "openshift")]
    pub target: render::Target,
    /// `server`: server-side dry run, validated and defaulted by the API server (default);
    /// `client`: print the objects that would be sent, as YAML, contacting no cluster;
    /// `none`: apply for real (kubectl's values).
    #[arg(long, value_name = "MODE", default_value = "server", value_parser = parsed::<cluster::apply::DryRun>(cluster::apply::DryRun::NAMES))]
    pub dry_run: cluster::apply::DryRun,
    /// Take over fields and objects other managers own.
    #[arg(long)]
    pub force_conflicts: bool,
    /// OpenShift role / MachineConfigPool name (as for `lowlat render`).
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// k8s-latency-test: the image (default: the one `image/build.sh` builds).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// JSON instead of one line per object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lowlat cluster clean\n  lowlat cluster clean -n lowlat --this-namespace --objects-only"
)]
pub struct CleanArgs {
    /// Only in the namespace given by --namespace (default: every namespace).
    #[arg(long)]
    pub this_namespace: bool,
    /// Nodes whose real-time budget a killed run may have left granted (default: every node).
    #[arg(short = 'l', long, value_name = "SELECTOR", default_value = "")]
    pub selector: String,
    /// Delete the objects only: no pass on the nodes to give back RT budget.
    #[arg(long)]
    pub objects_only: bool,
    #[command(flatten)]
    pub pod: PodArgs,
}

#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    #[arg(long, default_value_t = 100_000)]
    pub rt_budget_us: i64,
    #[arg(long)]
    pub out: PathBuf,
    /// Only give back the RT budget killed runs left on the node's record (no grant, no child).
    #[arg(long)]
    pub recover_only: bool,
    /// The lowlat subcommand to run.
    #[arg(last = true, required_unless_present = "recover_only")]
    pub args: Vec<String>,
}

impl ConnArgs {
    /// Where the cluster is, as the `cluster` crate takes it.
    pub fn conn(&self) -> cluster::Conn {
        cluster::Conn {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    /// The argv each task renders is what lowlat's hidden `cluster agent` parses back.
    #[test]
    fn every_task_argv_parses_as_the_agent_command() {
        let schedule = check::Schedule::for_run(true, None);
        let threshold = std::time::Duration::from_micros(100);
        let tasks = [
            cluster::pod::Task::Check { rt_budget_us: 5_000, schedule, threshold },
            cluster::pod::Task::Snapshot,
            cluster::pod::Task::RecoverRt,
        ];
        for t in tasks {
            let argv = t.argv();
            let cli = crate::Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            let crate::Command::Cluster(c) = cli.command else { panic!("{argv:?}") };
            let super::Command::Agent(a) = c.command else { panic!("{argv:?}") };
            assert_eq!(a.out, std::path::Path::new(cluster::pod::POD_OUT), "{argv:?}");
            assert_eq!(a.recover_only, t == cluster::pod::Task::RecoverRt);
            if let cluster::pod::Task::Check { .. } = t {
                assert_eq!(a.rt_budget_us, 5_000);
                let child = crate::Cli::try_parse_from(
                    std::iter::once("lowlat".to_string()).chain(a.args.clone()),
                );
                assert!(child.is_ok(), "the in-pod check parses: {:?}", a.args);
            }
        }
    }
}
