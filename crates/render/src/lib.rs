//! Render a plan into cmdline, boot loader, TuneD, OpenShift and Kubernetes outputs (pure).
//! Every target is a function from a [`Plan`] (plus small typed options) to a list of
//! [`OutFile`]s; nothing here reads or writes files, so the same input always gives
//! byte-identical output. The binary writes the files.

pub mod boot;
pub mod cmdline;
pub mod k8s;
pub mod misc;
pub mod openshift;
pub mod tuned;
pub mod yaml;

use plan::Plan;

/// One rendered file: a relative name and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFile {
    /// File name relative to the output directory (`openshift/02-machineconfig.yaml`).
    pub name: String,
    pub contents: String,
    /// Whether the file is a script meant to be executable.
    pub executable: bool,
}

impl OutFile {
    pub(crate) fn new(name: impl Into<String>, contents: impl Into<String>) -> Self {
        OutFile { name: name.into(), contents: contents.into(), executable: false }
    }
    pub(crate) fn script(name: impl Into<String>, contents: impl Into<String>) -> Self {
        OutFile { name: name.into(), contents: contents.into(), executable: true }
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
}

impl Target {
    /// Every target with its CLI name.
    pub const ALL: [(&'static str, Target); 11] = [
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
    ];

    /// Parse a CLI name.
    pub fn from_name(name: &str) -> Option<Target> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, t)| *t == self).map_or("", |(n, _)| n)
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
    /// `LATENCY_TEST_RUNTIME` (duration like `10m`).
    pub duration: String,
    /// `MAXIMUM_LATENCY` in µs.
    pub max_latency_us: u64,
    /// CPUs the latency test pod asks for (0 = 2..5: one main thread plus up to 4 measured).
    pub test_cpus: usize,
    /// RuntimeClass of the latency test pod (default `performance-<plan name>`).
    pub runtime_class: Option<String>,
    /// RT kernel packages for the rpm-ostree override (`kernel-rt-core-….rpm` …).
    pub rt_packages: Vec<String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            explain: false,
            input: None,
            role: None,
            image: "quay.io/lowlat/lowlat:latest".into(),
            namespace: "lowlat-latency".into(),
            duration: "10m".into(),
            max_latency_us: 20,
            test_cpus: 0,
            runtime_class: None,
            rt_packages: vec![],
        }
    }
}

/// A render that cannot be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("{problem}; {fix}")]
    Input { problem: String, fix: String },
}

pub(crate) fn input_error(problem: impl Into<String>, fix: impl Into<String>) -> RenderError {
    RenderError::Input { problem: problem.into(), fix: fix.into() }
}

/// The OpenShift role a plan renders for.
pub fn role(plan: &Plan, opts: &RenderOptions) -> String {
    opts.role.clone().or_else(|| plan.options.mcp_name.clone()).unwrap_or_else(|| {
        if plan.options.rt_kernel {
            "worker-rt".into()
        } else {
            "worker-lowlat".into()
        }
    })
}

/// Render `target` for `plan`.
pub fn render(
    plan: &Plan,
    target: Target,
    opts: &RenderOptions,
) -> Result<Vec<OutFile>, RenderError> {
    Ok(match target {
        Target::Cmdline => vec![cmdline::render(plan, opts.explain)],
        Target::Grubby => vec![boot::grubby(plan)],
        Target::Grub => vec![boot::grub(plan, opts.input.as_ref())?],
        Target::Bls => boot::bls(plan, opts.input.as_ref())?,
        Target::RpmOstree => vec![boot::rpm_ostree(plan, &opts.rt_packages)],
        Target::Tuned => tuned::render(plan),
        Target::Openshift => openshift::render(plan, &role(plan, opts)),
        Target::PerformanceProfile => {
            vec![openshift::performance_profile_file(plan, opts.role.as_deref())]
        }
        Target::Systemd => vec![misc::systemd(plan)],
        Target::Irqbalance => vec![misc::irqbalance(plan)],
        Target::K8sLatencyTest => k8s::render(plan, opts, &role(plan, opts)),
    })
}
