//! Render a plan into cmdline, boot loader, TuneD, OpenShift and Kubernetes outputs.
//! Every target is a pure function from a [`Plan`] (plus small typed options) to a list of
//! [`OutFile`]s, so the same input always gives byte-identical output; [`files`] reads the
//! input file a target patches and puts a render on disk.

pub mod boot;
pub mod cmdline;
pub mod files;
pub mod k8s;
pub mod misc;
pub mod openshift;
pub mod quote;
pub mod rbac;
mod shfile;
pub mod tuned;
pub mod yaml;

use std::path::PathBuf;

use plan::Plan;

/// One rendered file: a relative name and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFile {
    /// File name relative to the output directory (`openshift/02-machineconfig.yaml`).
    pub name: String,
    pub contents: String,
    /// Whether the file is a script meant to be executable.
    pub executable: bool,
    /// The Kubernetes objects the file holds, in order, as the documents `contents` was
    /// written from (empty for every other file): what `cluster apply` sends, so nothing
    /// reads the YAML text back.
    pub objects: Vec<serde_norway::Value>,
}

impl OutFile {
    pub fn new(name: impl Into<String>, contents: impl Into<String>) -> Self {
        OutFile {
            name: name.into(),
            contents: contents.into(),
            executable: false,
            objects: Vec::new(),
        }
    }
    pub fn script(name: impl Into<String>, contents: impl Into<String>) -> Self {
        OutFile { executable: true, ..Self::new(name, contents) }
    }
    /// A manifest file of `objects` after a `header` comment ([`yaml::docs`]).
    pub(crate) fn yaml(
        name: impl Into<String>,
        header: &str,
        objects: Vec<serde_norway::Value>,
    ) -> Self {
        Self::manifest(name, yaml::docs(header, &objects), &objects)
    }
    /// A manifest file: `contents` written from `objects`.
    pub(crate) fn manifest(
        name: impl Into<String>,
        contents: impl Into<String>,
        objects: &[serde_norway::Value],
    ) -> Self {
        OutFile { objects: objects.to_vec(), ..Self::new(name, contents) }
    }
}

/// What to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Cmdline,
    Grubby,
    Grub,
    Bls,
    RpmOstree,
    Tuned,
    Openshift,
    PerformanceProfile,
    Systemd,
    Irqbalance,
    K8sLatencyTest,
    /// What `lowlat cluster` needs from the API (RBAC, and the SCC on OpenShift); needs no plan.
    ClusterRbac,
}

impl Target {
    /// Every target with its CLI name.
    pub const ALL: [(&'static str, Target); 12] = [
        ("cmdline", Target::Cmdline),
        ("grubby", Target::Grubby),
        ("grub", Target::Grub),
        ("bls", Target::Bls),
        ("rpm-ostree", Target::RpmOstree),
        ("tuned", Target::Tuned),
        ("openshift", Target::Openshift),
        ("performance-profile", Target::PerformanceProfile),
        ("systemd", Target::Systemd),
        ("irqbalance", Target::Irqbalance),
        ("k8s-latency-test", Target::K8sLatencyTest),
        ("cluster-rbac", Target::ClusterRbac),
    ];

    /// The target's name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, t)| *t == self).map_or("", |(n, _)| n)
    }

    /// Whether the target reads an input file (`/etc/default/grub`, a loader entry).
    pub fn takes_input(self) -> bool {
        matches!(self, Target::Grub | Target::Bls)
    }
}

impl std::str::FromStr for Target {
    type Err = RenderError;

    fn from_str(name: &str) -> Result<Self, RenderError> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| RenderError::UnknownTarget { name: name.to_string() })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Options some targets take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderOptions {
    /// `cmdline --explain`: one line per argument with its reason.
    pub explain: bool,
    /// Input file for `grub` (`/etc/default/grub`) and `bls` (a loader entry): (name, text).
    pub input: Option<(String, String)>,
    /// OpenShift role / MachineConfigPool name; default from the plan.
    pub role: Option<String>,
    /// Container image for the Kubernetes latency test and load.
    pub image: String,
    /// Namespace for the Kubernetes latency test.
    pub namespace: String,
    /// `LATENCY_TEST_RUNTIME`, as written (`10m`, `12h`; a bare number is seconds): the pod
    /// hands it to `lowlat measure timer -D`, so it must parse there (`util::duration::parse_span`).
    pub duration: String,
    /// `MAXIMUM_LATENCY` in µs.
    pub max_latency_us: u64,
    /// CPUs the latency test pod asks for (0 = 2..5: one main thread plus up to 4 measured).
    pub test_cpus: usize,
    /// RuntimeClass of the latency test pod (default `performance-<plan name>`, which the
    /// openshift and performance-profile targets create; `Some("")` leaves it out).
    pub runtime_class: Option<String>,
    /// RT kernel packages for the rpm-ostree override (`kernel-rt-core-….rpm` …).
    pub rt_packages: Vec<String>,
    /// openshift: add what lowlat sets on purpose beyond NTO (`irqaffinity`, `kthread_cpus`,
    /// `kernel.watchdog_cpumask`; `systemd.cpu_affinity` over the housekeeping CPUs only).
    /// Off (the default), the node gets exactly NTO's settings (docs/commands/render.md,
    /// "Where lowlat differs from NTO").
    pub beyond_nto: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            explain: false,
            input: None,
            role: None,
            image: default_image(),
            namespace: "lowlat-latency".into(),
            duration: "10m".into(),
            max_latency_us: 20,
            test_cpus: 0,
            runtime_class: None,
            rt_packages: vec![],
            beyond_nto: false,
        }
    }
}

impl RenderOptions {
    /// The names the options carry into manifests and scripts (role, namespace, RuntimeClass)
    /// hold only letters, digits, `.`, `_` and `-`: checked where they come in, as the plan's
    /// names are (each is quoted at its sink too).
    pub fn check(&self) -> Result<(), RenderError> {
        let names = [
            ("role", self.role.as_deref(), 253),
            ("namespace", Some(self.namespace.as_str()), 63),
            // An empty RuntimeClass is the opt-out (no runtimeClassName).
            ("RuntimeClass", self.runtime_class.as_deref().filter(|r| !r.is_empty()), 253),
        ];
        for (what, value, max) in names {
            if let Some(v) = value {
                plan::validate::check_name(what, v, max)
                    .map_err(|p| input_error(p.problem.clone(), format!("{} ({what})", p.fix)))?;
            }
        }
        Ok(())
    }
}

/// A render that cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The plan, the options or the input file cannot give this target.
    #[error("{problem}; {fix}")]
    Input { problem: String, fix: String },
    /// Not a target's name.
    #[error("unknown render target `{name}`; choose one of: {}", Target::ALL.map(|(n, _)| n).join(", "))]
    UnknownTarget { name: String },
    /// The input file cannot be read.
    #[error("cannot read {}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// An output file cannot be written.
    #[error("cannot write {}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

impl util::exit::Classify for RenderError {
    fn exit_code(&self) -> util::exit::ExitCode {
        match self {
            // The user's input: the options, the target, the file to patch.
            RenderError::Input { .. }
            | RenderError::UnknownTarget { .. }
            | RenderError::Read { .. } => util::exit::ExitCode::Usage,
            RenderError::Write { .. } => util::exit::ExitCode::Runtime,
        }
    }
}

pub(crate) fn input_error(problem: impl Into<String>, fix: impl Into<String>) -> RenderError {
    RenderError::Input { problem: problem.into(), fix: fix.into() }
}

/// The pool every OpenShift render defaults to when neither the options nor the plan name
/// one (the Performance Profile Creator's and NTO's documented pool).
pub const DEFAULT_ROLE: &str = "worker-cnf";

/// The OpenShift role a plan renders for.
pub fn role(plan: &Plan, opts: &RenderOptions) -> String {
    role_of(plan, opts.role.as_deref())
}

/// The role: the one given, else the plan's pool, else [`DEFAULT_ROLE`].
pub fn role_of(plan: &Plan, role: Option<&str>) -> String {
    role.map(str::to_string)
        .or_else(|| plan.options.mcp_name.clone())
        .unwrap_or_else(|| DEFAULT_ROLE.into())
}

/// The default container image: what `image/build.sh` builds (`image-name` beside this
/// crate's manifest, `:` the version). The one definition: `lowlat cluster` and every render
/// target use it, and `image/build.sh` reads the same file.
pub fn default_image() -> String {
    format!("{}:{}", include_str!("../image-name").trim(), env!("CARGO_PKG_VERSION"))
}

/// Render `target` for `plan`. Options that do not apply to the target are refused.
pub fn render(
    plan: &Plan,
    target: Target,
    opts: &RenderOptions,
) -> Result<Vec<OutFile>, RenderError> {
    if opts.explain && target != Target::Cmdline {
        return Err(input_error(
            format!("the {target} target has no explanation to give"),
            "explaining each argument goes with the cmdline target",
        ));
    }
    if opts.beyond_nto && target != Target::Openshift {
        return Err(input_error(
            format!("--beyond-nto does not apply to the {target} target"),
            "--beyond-nto goes with the openshift target (every other target keeps lowlat's settings)",
        ));
    }
    if let (Some(pool), Target::Openshift) = (&plan.options.node_pool, target) {
        return Err(input_error(
            format!("the plan is for the hosted control plane NodePool {pool}, whose nodes take no MachineConfig, KubeletConfig or Tuned from the hosted cluster: the Node Tuning Operator renders them from the PerformanceProfile the NodePool's spec.tuningConfig names"),
            "`render performance-profile` writes that profile in its ConfigMap (as PPC's --node-pool-name does); apply it in the management cluster's `clusters` namespace and name it in the NodePool",
        ));
    }
    if opts.input.is_some() && !target.takes_input() {
        return Err(input_error(
            format!("the {target} target reads no input file"),
            "an input file goes with the grub and bls targets",
        ));
    }
    Ok(match target {
        Target::Cmdline => vec![cmdline::render(plan, opts.explain)],
        Target::Grubby => vec![boot::grubby(plan)],
        Target::Grub => vec![boot::grub(plan, opts.input.as_ref())?],
        Target::Bls => boot::bls(plan, opts.input.as_ref())?,
        Target::RpmOstree => vec![boot::rpm_ostree(plan, &opts.rt_packages)],
        Target::Tuned => tuned::render(plan),
        Target::Openshift if opts.beyond_nto => openshift::render(plan, &role(plan, opts)),
        // what the Node Tuning Operator would write; lowlat's extras only on request
        Target::Openshift => openshift::render(&openshift::nto_settings(plan), &role(plan, opts)),
        Target::PerformanceProfile => {
            openshift::performance_profile_files(plan, opts.role.as_deref())
        }
        Target::Systemd => misc::systemd_files(plan),
        Target::Irqbalance => vec![misc::irqbalance(plan)],
        Target::K8sLatencyTest => k8s::render(plan, opts, &role(plan, opts)),
        Target::ClusterRbac => rbac::render(opts),
    })
}

/// [`render`] and the warnings an edit of the user's file gives (`grub` and `bls` with
/// `--input`: an `isolcpus=` losing flags, a dead `GRUB_CMDLINE_LINUX` line): shown on
/// stderr by the CLI, and written into the edited file as `# lowlat:` comments too.
pub fn render_with_warnings(
    plan: &Plan,
    target: Target,
    opts: &RenderOptions,
) -> Result<(Vec<OutFile>, Vec<String>), RenderError> {
    match target {
        Target::Grub if !opts.explain => {
            boot::grub_with_warnings(plan, opts.input.as_ref()).map(|(f, w)| (vec![f], w))
        }
        Target::Bls if !opts.explain => boot::bls_with_warnings(plan, opts.input.as_ref()),
        _ => Ok((render(plan, target, opts)?, vec![])),
    }
}

/// Version of the `render --json` document ([`files::Document`]).
pub const SCHEMA_VERSION: u32 = 1;

/// The render as one text for a terminal: a lone file as it is, several each under a
/// `# ==> NAME <==` header.
pub fn listing(files: &[OutFile]) -> String {
    match files {
        [one] => one.contents.clone(),
        _ => files.iter().map(|f| format!("# ==> {} <==\n{}", f.name, f.contents)).collect(),
    }
}
