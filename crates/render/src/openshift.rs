//! OpenShift manifests: a MachineConfigPool for the role, a MachineConfig carrying
//! `kernelType: realtime` and the plan's `kernelArguments` (plus a unit that takes offlined
//! CPUs down), a KubeletConfig with the static CPU manager, reserved CPUs, topology manager
//! and (where required) the memory manager, a Tuned CR, the node-label command; and the
//! PerformanceProfile v2 the Performance Profile Creator writes.

use plan::{Plan, Power, Style, TopologyPolicy};
use serde_norway::Value;

use crate::yaml::{b, doc, docs, int, map, s, seq};
use crate::OutFile;

const ROLE_LABEL: &str = "machineconfiguration.openshift.io/role";

fn node_selector(plan: &Plan, role: &str) -> (String, String) {
    plan.options
        .node_selector
        .clone()
        .unwrap_or_else(|| (format!("node-role.kubernetes.io/{role}"), String::new()))
}

fn header(plan: &Plan, role: &str) -> String {
    format!(
        "lowlat plan `{}` for role {role}: housekeeping {}, isolated {}{}",
        plan.name,
        plan.reserved,
        plan.isolated,
        if plan.offlined.is_empty() {
            String::new()
        } else {
            format!(", offline {}", plan.offlined)
        }
    )
}

/// MachineConfigPool for the role (inherits the worker MachineConfigs).
pub fn machine_config_pool(plan: &Plan, role: &str) -> Value {
    let (nk, nv) = node_selector(plan, role);
    map(vec![
        ("apiVersion", s("machineconfiguration.openshift.io/v1")),
        ("kind", s("MachineConfigPool")),
        ("metadata", map(vec![("name", s(role)), ("labels", map(vec![(ROLE_LABEL, s(role))]))])),
        (
            "spec",
            map(vec![
                (
                    "machineConfigSelector",
                    map(vec![(
                        "matchExpressions",
                        seq(vec![map(vec![
                            ("key", s(ROLE_LABEL)),
                            ("operator", s("In")),
                            ("values", seq(vec![s("worker"), s(role)])),
                        ])]),
                    )]),
                ),
                ("nodeSelector", map(vec![("matchLabels", map(vec![(nk, s(nv))]))])),
            ]),
        ),
    ])
}

fn offline_unit(plan: &Plan) -> Option<Value> {
    if plan.offlined.is_empty() {
        return None;
    }
    let cpus: Vec<String> = plan.offlined.iter().map(|c| c.to_string()).collect();
    let contents = format!(
        "[Unit]\nDescription=lowlat: take CPUs {} offline\nBefore=kubelet.service\n\n[Service]\nType=oneshot\nRemainAfterExit=true\nExecStart=/bin/sh -c 'for c in {}; do echo 0 > /sys/devices/system/cpu/cpu$c/online; done'\n\n[Install]\nWantedBy=multi-user.target\n",
        plan.offlined,
        cpus.join(" ")
    );
    Some(map(vec![
        ("contents", s(contents)),
        ("enabled", b(true)),
        ("name", s("lowlat-cpus-offline.service")),
    ]))
}

/// The RuntimeClass the latency test pod names (the PerformanceProfile path gets the same
/// one from NTO): its handler is the CRI-O runtime [`crio_runtimes`] declares.
pub fn runtime_class_name(plan: &Plan) -> String {
    format!("performance-{}", plan.name)
}

/// CRI-O's handler name for the runtime that honours the low-latency annotations.
pub const CRIO_HANDLER: &str = "high-performance";

/// The CRI-O drop-in declaring the `high-performance` runtime (runc, allowed to read the
/// `cpu-load-balancing`, `cpu-quota` and `irq-load-balancing` annotations) and keeping infra
/// containers on the housekeeping CPUs; a runtimes table in a drop-in replaces the default
/// one, so `runc` is declared again.
pub fn crio_runtimes(plan: &Plan) -> String {
    format!(
        "# lowlat plan `{}`: CRI-O runtime for the RuntimeClass {}\n[crio.runtime]\ninfra_ctr_cpuset = \"{}\"\n\n[crio.runtime.runtimes.runc]\nruntime_path = \"\"\nruntime_type = \"oci\"\nruntime_root = \"/run/runc\"\n\n[crio.runtime.runtimes.{CRIO_HANDLER}]\nruntime_path = \"/bin/runc\"\nruntime_type = \"oci\"\nruntime_root = \"/run/runc\"\nallowed_annotations = [\"cpu-load-balancing.crio.io\", \"cpu-quota.crio.io\", \"irq-load-balancing.crio.io\"]\n",
        plan.name,
        runtime_class_name(plan),
        plan.reserved.to_list()
    )
}

/// An Ignition file with its contents inline (`data:,` URL, percent-encoded).
fn ignition_file(path: &str, mode: u64, contents: &str) -> Value {
    let encoded =
        percent_encoding::utf8_percent_encode(contents, percent_encoding::NON_ALPHANUMERIC);
    map(vec![
        ("contents", map(vec![("source", s(format!("data:,{encoded}")))])),
        ("mode", int(mode)),
        ("overwrite", b(true)),
        ("path", s(path)),
    ])
}

/// RuntimeClass `performance-<plan>`: CRI-O's high-performance handler, scheduled onto the
/// role's nodes.
pub fn runtime_class(plan: &Plan, role: &str) -> Value {
    let (nk, nv) = node_selector(plan, role);
    map(vec![
        ("apiVersion", s("node.k8s.io/v1")),
        ("kind", s("RuntimeClass")),
        ("metadata", map(vec![("name", s(runtime_class_name(plan)))])),
        ("handler", s(CRIO_HANDLER)),
        ("scheduling", map(vec![("nodeSelector", map(vec![(nk, s(nv))]))])),
    ])
}

/// MachineConfig with the kernel type and arguments.
pub fn machine_config(plan: &Plan, role: &str) -> Value {
    let args: Vec<Value> = plan.kernel_args.iter().map(|a| s(a.token())).collect();
    let mut config = vec![("ignition", map(vec![("version", s("3.2.0"))]))];
    config.push((
        "storage",
        map(vec![(
            "files",
            seq(vec![ignition_file(
                "/etc/crio/crio.conf.d/99-lowlat-runtimes.conf",
                0o644,
                &crio_runtimes(plan),
            )]),
        )]),
    ));
    if let Some(unit) = offline_unit(plan) {
        config.push(("systemd", map(vec![("units", seq(vec![unit]))])));
    }
    map(vec![
        ("apiVersion", s("machineconfiguration.openshift.io/v1")),
        ("kind", s("MachineConfig")),
        (
            "metadata",
            map(vec![
                ("name", s(format!("50-lowlat-{role}"))),
                ("labels", map(vec![(ROLE_LABEL, s(role))])),
            ]),
        ),
        (
            "spec",
            map(vec![
                ("config", map(config)),
                ("kernelType", s(if plan.options.rt_kernel { "realtime" } else { "default" })),
                ("kernelArguments", seq(args)),
            ]),
        ),
    ])
}

/// KubeletConfig: static CPU manager on the plan's reserved CPUs.
pub fn kubelet_config(plan: &Plan, role: &str) -> Value {
    let policy = plan.options.topology_policy.unwrap_or(TopologyPolicy::BestEffort);
    let mut kc = vec![
        ("apiVersion", s("kubelet.config.k8s.io/v1beta1")),
        ("kind", s("KubeletConfiguration")),
        ("cpuManagerPolicy", s("static")),
        ("cpuManagerReconcilePeriod", s("5s")),
    ];
    if policy == TopologyPolicy::SingleNumaNode {
        kc.push(("cpuManagerPolicyOptions", map(vec![("full-pcpus-only", s("true"))])));
    }
    kc.push(("reservedSystemCPUs", s(plan.reserved.to_list())));
    kc.push(("topologyManagerPolicy", s(policy.as_str())));
    kc.push(("evictionHard", map(vec![("memory.available", s("100Mi"))])));
    kc.push(("kubeReserved", map(vec![("memory", s("500Mi"))])));
    kc.push(("systemReserved", map(vec![("memory", s("500Mi"))])));
    if matches!(policy, TopologyPolicy::Restricted | TopologyPolicy::SingleNumaNode) {
        kc.push(("memoryManagerPolicy", s("Static")));
        kc.push((
            "reservedMemory",
            seq(vec![map(vec![
                ("numaNode", int(0)),
                ("limits", map(vec![("memory", s("1100Mi"))])),
            ])]),
        ));
    }
    map(vec![
        ("apiVersion", s("machineconfiguration.openshift.io/v1")),
        ("kind", s("KubeletConfig")),
        ("metadata", map(vec![("name", s(format!("lowlat-{role}")))])),
        (
            "spec",
            map(vec![
                (
                    "machineConfigPoolSelector",
                    map(vec![("matchLabels", map(vec![(ROLE_LABEL, s(role))]))]),
                ),
                ("kubeletConfig", map(kc)),
            ]),
        ),
    ])
}

/// Tuned CR: the runtime part as a TuneD profile on top of `openshift-node,cpu-partitioning`.
pub fn tuned_cr(plan: &Plan, role: &str) -> Value {
    let name = format!("openshift-node-lowlat-{role}");
    let data = crate::tuned::tuned_conf(
        plan,
        "openshift-node,cpu-partitioning",
        crate::tuned::Flavor::OpenShift,
    );
    tuned_object(name, data, role, 20)
}

/// A Tuned object in the Node Tuning Operator's namespace: one TuneD profile `name` with
/// `data`, recommended for the nodes of MachineConfigPool role `role` at `priority` (lower
/// wins).
fn tuned_object(name: String, data: String, role: &str, priority: u64) -> Value {
    map(vec![
        ("apiVersion", s("tuned.openshift.io/v1")),
        ("kind", s("Tuned")),
        (
            "metadata",
            map(vec![
                ("name", s(name.clone())),
                ("namespace", s("openshift-cluster-node-tuning-operator")),
            ]),
        ),
        (
            "spec",
            map(vec![
                ("profile", seq(vec![map(vec![("data", s(data)), ("name", s(name.clone()))])])),
                (
                    "recommend",
                    seq(vec![map(vec![
                        ("machineConfigLabels", map(vec![(ROLE_LABEL, s(role))])),
                        ("priority", int(priority)),
                        ("profile", s(name)),
                    ])]),
                ),
            ]),
        ),
    ])
}

/// The node-label and apply commands, in the order the seed procedure uses.
pub fn apply_script(plan: &Plan, role: &str) -> String {
    let (nk, nv) = node_selector(plan, role);
    let node = plan.host.clone().unwrap_or_else(|| "<node_name>".into());
    format!(
        "#!/bin/sh\n# {}\nset -eu\ncd \"$(dirname \"$0\")\"\noc apply -f 01-machineconfigpool.yaml\noc apply -f 04-tuned.yaml\noc apply -f 02-machineconfig.yaml\noc apply -f 03-kubeletconfig.yaml\noc apply -f 05-runtimeclass.yaml\n# move the node into the pool; the MachineConfigPool rolls it out and reboots the node\noc label node {} {}\n",
        crate::quote::comment(&header(plan, role)),
        crate::quote::sh(&node),
        crate::quote::sh(&format!("{nk}={nv}"))
    )
}

/// Every OpenShift file.
pub fn render(plan: &Plan, role: &str) -> Vec<OutFile> {
    let h = header(plan, role);
    vec![
        OutFile::new("01-machineconfigpool.yaml", docs(&h, &[machine_config_pool(plan, role)])),
        OutFile::new("02-machineconfig.yaml", docs(&h, &[machine_config(plan, role)])),
        OutFile::new("03-kubeletconfig.yaml", docs(&h, &[kubelet_config(plan, role)])),
        OutFile::new("04-tuned.yaml", docs(&h, &[tuned_cr(plan, role)])),
        OutFile::new("05-runtimeclass.yaml", docs(&h, &[runtime_class(plan, role)])),
        OutFile::script("apply.sh", apply_script(plan, role)),
    ]
}

/// PerformanceProfile v2, shaped like the Performance Profile Creator's output.
pub fn performance_profile(plan: &Plan, role: Option<&str>) -> Value {
    let o = &plan.options;
    let role = crate::role_of(plan, role);
    let mut spec: Vec<(&str, Value)> = vec![];
    let ppc = o.style == Style::Ppc;
    if o.no_smt {
        spec.push(("additionalKernelArgs", seq(vec![s("nosmt")])));
    }
    let mut cpu = vec![("isolated", s(plan.isolated.to_list()))];
    if !plan.offlined.is_empty() {
        cpu.push(("offlined", s(plan.offlined.to_list())));
    }
    cpu.push(("reserved", s(plan.reserved.to_list())));
    spec.push(("cpu", map(cpu)));
    if !o.hugepages.is_empty() {
        let pages: Vec<Value> = o
            .hugepages
            .iter()
            .map(|p| {
                let mut v = vec![("count", int(p.count))];
                if let Some(n) = p.node {
                    v.push(("node", int(n as u64)));
                }
                v.push(("size", s(p.size.clone())));
                map(v)
            })
            .collect();
        spec.push((
            "hugepages",
            map(vec![
                ("defaultHugepagesSize", s(o.hugepages[0].size.clone())),
                ("pages", seq(pages)),
            ]),
        ));
    }
    let (mk, mv) = o.mcp_selector.clone().unwrap_or_else(|| (ROLE_LABEL.into(), role.clone()));
    spec.push(("machineConfigPoolSelector", map(vec![(mk, s(mv))])));
    if let Some(uln) = o.user_level_networking {
        spec.push(("net", map(vec![("userLevelNetworking", b(uln))])));
    }
    let (nk, nv) = node_selector(plan, &role);
    spec.push(("nodeSelector", map(vec![(nk, s(nv))])));
    spec.push((
        "numa",
        map(vec![(
            "topologyPolicy",
            s(o.topology_policy.unwrap_or(TopologyPolicy::Restricted).as_str()),
        )]),
    ));
    spec.push(("realTimeKernel", map(vec![("enabled", b(o.rt_kernel))])));
    if o.workload_hints || !ppc {
        spec.push((
            "workloadHints",
            map(vec![
                ("highPowerConsumption", b(o.power == Power::UltraLowLatency)),
                ("perPodPowerManagement", b(o.per_pod_power_management)),
                ("realTime", b(o.power.is_low_latency())),
            ]),
        ));
    }
    map(vec![
        ("apiVersion", s("performance.openshift.io/v2")),
        ("kind", s("PerformanceProfile")),
        ("metadata", map(vec![("name", s(plan.name.clone()))])),
        ("spec", map(spec)),
    ])
}

/// The PerformanceProfile as a file (PPC prints `---` first).
pub fn performance_profile_file(plan: &Plan, role: Option<&str>) -> OutFile {
    OutFile::new(
        "performance-profile.yaml",
        format!("---\n{}", doc(&performance_profile(plan, role))),
    )
}

/// The TuneD profile the Node Tuning Operator generates from a PerformanceProfile.
pub fn performance_tuned_profile(plan: &Plan) -> String {
    format!("openshift-node-performance-{}", plan.name)
}

/// The plan's busy-polling sysctls (`net.core.busy_read`, `net.core.busy_poll`).
fn busy_poll_sysctls(plan: &Plan) -> Vec<(&str, &str)> {
    plan.runtime
        .iter()
        .filter_map(|r| match r {
            plan::RuntimeItem::Sysctl { name, value, .. } if name.starts_with("net.core.busy_") => {
                Some((name.as_str(), value.as_str()))
            }
            _ => None,
        })
        .collect()
}

/// What a PerformanceProfile cannot express: its CRD (`performance.openshift.io/v2`) has no
/// field for sysctls nor for an idle exit-latency limit; the operator's generated TuneD profile
/// fixes `net.core.busy_read`/`busy_poll` at 50 and `force_latency` by the workload hints. The
/// operator's documented way to change those is a second Tuned CR whose profile **includes**
/// the generated one and is recommended for the same pool at a higher priority (a lower
/// number). `None` when the plan chose neither busy polling nor an idle limit.
pub fn performance_patch(plan: &Plan, role: Option<&str>) -> Option<Value> {
    let busy = busy_poll_sysctls(plan);
    let idle = crate::misc::chosen_idle_limit(plan);
    if busy.is_empty() && idle.is_none() {
        return None;
    }
    let role = crate::role_of(plan, role);
    let ini = crate::tuned::ini;
    let mut data = format!(
        "[main]\nsummary=lowlat plan {}: what a PerformanceProfile cannot express\ninclude={}\n",
        ini(&plan.name),
        ini(&performance_tuned_profile(plan))
    );
    if !busy.is_empty() {
        data.push_str("\n[sysctl]\n");
        for (k, v) in &busy {
            data.push_str(&format!("{}={}\n", ini(k), ini(v)));
        }
    }
    if let Some(us) = idle {
        // PM QoS on every CPU, as TuneD's cpu plugin holds it (the PerformanceProfile's own
        // profile sets force_latency from the workload hints; this one wins)
        data.push_str(&format!("\n[cpu]\nforce_latency={us}\n"));
    }
    let name = format!("{}-performance-patch", plan.name);
    Some(tuned_object(name, data, &role, 19))
}

/// The `performance-profile` target: the PerformanceProfile, and when the plan chose busy
/// polling or an idle limit, the Tuned CR that adds them ([`performance_patch`]).
pub fn performance_profile_files(plan: &Plan, role: Option<&str>) -> Vec<OutFile> {
    let mut v = vec![performance_profile_file(plan, role)];
    if let Some(patch) = performance_patch(plan, role) {
        let h = format!(
            "lowlat plan `{}`: busy polling and the idle limit, which the PerformanceProfile CRD has\n\
             no field for: a Tuned CR on top of the profile the Node Tuning Operator generates from\n\
             it ({}); apply after the PerformanceProfile",
            plan.name,
            performance_tuned_profile(plan)
        );
        v.push(OutFile::new("performance-patch-tuned.yaml", docs(&h, &[patch])));
    }
    v
}
