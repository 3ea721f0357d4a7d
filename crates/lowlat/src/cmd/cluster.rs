//! `lowlat cluster …` (the `cluster` crate): arguments → a `cluster` config → one library call
//! → a view.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;

use crate::exit::ExitCode;

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
pub struct NodesArgs {
    /// Label selector (`node-role.kubernetes.io/worker-rt=`, `a=b,c!=d`); default all nodes.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
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
    #[arg(long, value_name = "DIR", default_value = "lowlat-fleet")]
    pub out: PathBuf,
    /// Report a node whose pod has not started after this long (Pending, image missing, …).
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_positive_span, default_value = "2m")]
    pub start_timeout: Duration,
    /// Image holding lowlat (default: the one `image/build.sh` builds).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// imagePullPolicy of the pods: Never (image imported on every node), IfNotPresent, Always.
    #[arg(long, value_name = "POLICY", default_value = "Never", value_parser = ["Never", "IfNotPresent", "Always"])]
    pub pull_policy: String,
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
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Reads back with `lowlat inspect --must-gather DIR --node NAME` (and every \
command that takes --must-gather)."
)]
pub struct SnapshotArgs {
    /// Label selector of the nodes.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: String,
    /// The must-gather directory to write (DIR/nodes/<node>/sysinfo.tgz).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Report a node whose pod has not started after this long.
    #[arg(long, value_name = "DURATION", value_parser = util::duration::parse_positive_span, default_value = "2m")]
    pub start_timeout: Duration,
    /// Image holding lowlat (default: the one `image/build.sh` builds).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// imagePullPolicy of the pods.
    #[arg(long, value_name = "POLICY", default_value = "Never", value_parser = ["Never", "IfNotPresent", "Always"])]
    pub pull_policy: String,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Without --dry-run=none nothing is stored: the API server validates and \
defaults every object and lowlat prints what would change. Objects that exist and that lowlat \
never managed are refused unless --force-conflicts.")]
pub struct ApplyArgs {
    /// The plan file.
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    /// What to render and apply: openshift, performance-profile, k8s-latency-test.
    #[arg(long, value_name = "TARGET", default_value = "openshift")]
    pub target: render::Target,
    /// `server`: server-side dry run (default); `none`: apply for real.
    #[arg(long, value_name = "MODE", default_value = "server", value_parser = ["server", "none"])]
    pub dry_run: String,
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
pub struct CleanArgs {
    /// Only in the namespace given by --namespace (default: every namespace).
    #[arg(long)]
    pub this_namespace: bool,
}

#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    #[arg(long, default_value_t = 100_000)]
    pub rt_budget_us: i64,
    #[arg(long)]
    pub out: PathBuf,
    /// The lowlat subcommand to run.
    #[arg(last = true, required = true)]
    pub args: Vec<String>,
}

/// Where the in-pod check writes.
const POD_OUT: &str = "/tmp/lowlat-out";

fn conn(a: &ConnArgs) -> cluster::Conn {
    cluster::Conn {
        kubeconfig: a.kubeconfig.clone(),
        context: a.context.clone(),
        namespace: a.namespace.clone(),
    }
}

/// Run `lowlat cluster`. With `LOWLAT_API_STATS=1` in the environment, the number of HTTP
/// requests sent to the API server is printed on stderr at the end (`bench/cluster-scale.sh`).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let r = dispatch(args);
    if std::env::var_os("LOWLAT_API_STATS").is_some_and(|v| v == "1") {
        eprintln!("lowlat: api requests: {}", cluster::conn::api_requests());
    }
    r
}

fn dispatch(args: Args) -> anyhow::Result<ExitCode> {
    let conn = conn(&args.conn);
    match args.command {
        Command::Nodes(a) => {
            let rows = cluster::nodes::list(&conn, a.selector.as_deref())?;
            if a.json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                print!("{}", cluster::nodes::table(&rows));
            }
            Ok(ExitCode::Ok)
        }
        Command::Check(a) => check(&conn, a),
        Command::Snapshot(a) => snapshot(&conn, a),
        Command::Apply(a) => apply(&conn, a),
        Command::Clean(a) => {
            let progress = cluster::view::Progress::default();
            let ns = if a.this_namespace {
                args.conn.namespace.as_deref().or(Some("default"))
            } else {
                None
            };
            let done = cluster::clean::clean(&conn, ns, &mut |e| print!("{}", progress.line(e)))?;
            let left = cluster::clean::leftovers(&conn)?;
            println!("cleaned {} namespace(s); labelled objects left: {}", done.len(), left.len());
            for l in &left {
                println!("  {l}");
            }
            Ok(if left.is_empty() { ExitCode::Ok } else { ExitCode::Runtime })
        }
        Command::Agent(a) => {
            let cfg = cluster::agent::Config {
                budget_us: a.rt_budget_us,
                out: a.out,
                exe: std::env::current_exe().context("finding the lowlat binary")?,
                args: a.args,
                mount_dir: PathBuf::from("/tmp/lowlat-cgroup-cpu"),
            };
            std::process::exit(cluster::agent::run(&cfg));
        }
    }
}

fn check(conn: &cluster::Conn, a: CheckArgs) -> anyhow::Result<ExitCode> {
    let timer = a.duration.unwrap_or(Duration::from_secs(if a.quick { 9 } else { 30 }));
    let t = timer.as_secs().max(1);
    // lowlat check's own schedule: inspect/plan/verify ~3 s, timer, noise t/3, ticks t/6, fsync t/3.
    let expected =
        Duration::from_secs(3 + t + (t / 3).max(2) + (t / 6).max(2) + (t / 3).max(2) + 10);
    let span = util::duration::format;
    let mut command: Vec<String> =
        ["lowlat", "cluster", "agent", "--rt-budget-us"].map(String::from).to_vec();
    command.extend([a.rt_budget_us.to_string(), "--out".into(), POD_OUT.into(), "--".into()]);
    command.extend([
        "check".into(),
        "--out".into(),
        POD_OUT.into(),
        "--duration".into(),
        span(timer),
    ]);
    command.extend(["--threshold".into(), span(a.threshold)]);
    let cfg = cluster::check::Config {
        selector: a.selector,
        out: a.out.clone(),
        image: a.image.unwrap_or_else(cluster::default_image),
        pull_policy: a.pull_policy,
        command,
        expected,
        start_timeout: a.start_timeout,
        guaranteed_cpus: a.guaranteed_cpus,
        timer_threshold_ns: a.threshold.as_nanos() as u64,
        generator: format!("lowlat {}", super::VERSION),
    };
    let progress = cluster::view::Progress::default();
    let fleet = cluster::check::run(conn, &cfg, &mut |e| print!("{}", progress.line(e)))?;
    print!("{}", cluster::view::fleet_summary(&fleet, &a.out));
    Ok(fleet.exit_code())
}

fn snapshot(conn: &cluster::Conn, a: SnapshotArgs) -> anyhow::Result<ExitCode> {
    let file = format!("{POD_OUT}/{}", cluster::snapshot::SYSINFO);
    let mut command: Vec<String> =
        ["lowlat", "cluster", "agent", "--rt-budget-us", "0", "--out", POD_OUT, "--"]
            .map(String::from)
            .to_vec();
    command.extend(["snapshot".into(), "-o".into(), file]);
    let cfg = cluster::snapshot::Config {
        selector: a.selector,
        out: a.output.clone(),
        image: a.image.unwrap_or_else(cluster::default_image),
        pull_policy: a.pull_policy,
        command,
        start_timeout: a.start_timeout,
    };
    let progress = cluster::view::Progress::default();
    let (nodes, interrupted) =
        cluster::snapshot::run(conn, &cfg, &mut |e| print!("{}", progress.line(e)))?;
    let ok: Vec<&str> = nodes
        .iter()
        .filter(|g| g.files.iter().any(|f| f == cluster::snapshot::SYSINFO))
        .map(|g| g.node.as_str())
        .collect();
    // Node names come from the API server, the path from the user: through the escaping writer.
    let mut text = format!(
        "must-gather in {}: {} of {} node(s) captured\n",
        a.output.display(),
        ok.len(),
        nodes.len()
    );
    if let Some(first) = ok.first() {
        text.push_str(&format!(
            "read back: lowlat inspect --must-gather {} --node {first}\n",
            a.output.display()
        ));
    }
    super::common::print_view(text)?;
    Ok(if interrupted {
        ExitCode::Interrupted
    } else if ok.len() == nodes.len() {
        ExitCode::Ok
    } else {
        ExitCode::CheckFailed
    })
}

fn apply(conn: &cluster::Conn, a: ApplyArgs) -> anyhow::Result<ExitCode> {
    let plan = plan::Plan::load(&a.plan)?;
    let mut opts = render::RenderOptions { role: a.role, ..Default::default() };
    opts.image = a.image.unwrap_or_else(cluster::default_image);
    if let Some(ns) = &conn.namespace {
        opts.namespace = ns.clone();
    }
    let files = render::render(&plan, a.target, &opts)?;
    let manifests = cluster::apply::manifests(&files)?;
    if manifests.is_empty() {
        return Err(crate::exit::usage(format!(
            "the {} target renders no Kubernetes objects",
            a.target
        )));
    }
    let dry = a.dry_run == "server";
    let rows = cluster::apply::apply(conn, &manifests, dry, a.force_conflicts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", cluster::apply::view(&rows, dry));
    }
    let refused = rows.iter().filter(|r| r.action == cluster::apply::Action::Refused).count();
    if refused > 0 {
        eprintln!("{refused} object(s) refused: they exist and lowlat does not manage them (--force-conflicts takes them over)");
        return Ok(ExitCode::CheckFailed);
    }
    Ok(ExitCode::Ok)
}
