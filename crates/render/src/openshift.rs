//! OpenShift manifests: a MachineConfigPool for the role, a MachineConfig carrying
//! `kernelType: realtime` and the plan's `kernelArguments` (plus a unit that takes offlined
//! CPUs down), a KubeletConfig with the static CPU manager, reserved CPUs, topology manager
//! and (where required) the memory manager, a Tuned CR, the node-label command; and the
//! PerformanceProfile v2 the Performance Profile Creator writes.

use plan::{Plan, Power, Style, TopologyPolicy};
use serde_norway::Value;

use crate::yaml::{b, doc, int, map, s, seq};
use crate::OutFile;

const ROLE_LABEL: &str = "machineconfiguration.openshift.io/role";

/// The node label of the role: the plan's pool's own selector when rendering for that pool,
/// else `node-role.kubernetes.io/<role>` (a `--role` other than the plan's pool renames it
/// everywhere: a selector kept from the plan's pool would let two custom pools claim one node).
pub fn node_selector(plan: &Plan, role: &str) -> (String, String) {
    let role_label = || (format!("node-role.kubernetes.io/{role}"), String::new());
    if !is_plans_role(plan, role) {
        return role_label();
    }
    plan.options.node_selector.clone().unwrap_or_else(role_label)
}

/// The MachineConfigPool selector of the role: the plan's pool's when rendering for it, else
/// the label the pool carries: `pools.operator.machineconfiguration.openshift.io/<role>` on the
/// built-in pools (they have no role label), `machineconfiguration.openshift.io/role: <role>`
/// on the pool [`machine_config_pool`] defines.
pub fn mcp_selector(plan: &Plan, role: &str) -> (String, String) {
    let role_label = || {
        if is_built_in_pool(role) {
            (format!("pools.operator.machineconfiguration.openshift.io/{role}"), String::new())
        } else {
            (ROLE_LABEL.to_string(), role.to_string())
        }
    };
    if !is_plans_role(plan, role) {
        return role_label();
    }
    plan.options.mcp_selector.clone().unwrap_or_else(role_label)
}

/// Whether `role` is the one the plan was made for (its pool, or the default role).
fn is_plans_role(plan: &Plan, role: &str) -> bool {
    crate::role_of(plan, None) == role
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

/// Per-NUMA-node huge pages of the plan: (node, size in kB, count).
pub fn node_hugepages(plan: &Plan) -> Vec<(usize, u64, u64)> {
    plan.options
        .hugepages
        .iter()
        .filter_map(|p| Some((p.node?, plan::rules::size_kb(&p.size)?, p.count)))
        .collect()
}

const CLEAR_IRQBALANCE_PATH: &str = "/usr/local/bin/clear-irqbalance-banned-cpus.sh";

/// Empties irqbalance's banned-CPU mask and CRI-O's saved copy of it (so CRI-O's restore on
/// start does nothing).
const CLEAR_IRQBALANCE_SCRIPT: &str = "#!/bin/sh\n# lowlat: no CPU banned from irqbalance at boot; CRI-O bans guaranteed pods' CPUs itself\nset -eu\nconf=/etc/sysconfig/irqbalance\nsaved=/etc/sysconfig/orig_irq_banned_cpus\n[ -f \"$conf\" ] || exit 0\nsed -i '/^[[:space:]]*IRQBALANCE_BANNED_CPUS\\b/d' \"$conf\"\necho 'IRQBALANCE_BANNED_CPUS=0' >>\"$conf\"\nif [ -f \"$saved\" ]; then echo 0 >\"$saved\"; fi\n";

fn clear_irqbalance_unit() -> Value {
    map(vec![
        (
            "contents",
            s(format!("[Unit]\nDescription=lowlat: clear irqbalance's banned CPUs early in boot\nBefore=kubelet.service\nBefore=irqbalance.service\n\n[Service]\nType=oneshot\nRemainAfterExit=true\nExecStart={CLEAR_IRQBALANCE_PATH}\n\n[Install]\nWantedBy=multi-user.target\n")),
        ),
        ("enabled", b(true)),
        ("name", s("clear-irqbalance-banned-cpus.service")),
    ])
}

const HUGEPAGES_SCRIPT_PATH: &str = "/usr/local/bin/hugepages-allocation.sh";

/// Sets `HUGEPAGES_COUNT` pages of `HUGEPAGES_SIZE` kB on NUMA node `NUMA_NODE`, retrying for a
/// minute while the kernel compacts memory.
const HUGEPAGES_SCRIPT: &str = "#!/bin/sh\n# lowlat: per-NUMA-node huge pages, before the kubelet starts\nset -eu\nf=/sys/devices/system/node/node$NUMA_NODE/hugepages/hugepages-${HUGEPAGES_SIZE}kB/nr_hugepages\n[ -f \"$f\" ] || { echo \"lowlat: $f does not exist\" >&2; exit 1; }\ni=0\nuntil [ \"$(cat \"$f\")\" -eq \"$HUGEPAGES_COUNT\" ]; do\n  echo \"$HUGEPAGES_COUNT\" >\"$f\"\n  i=$((i + 1))\n  if [ \"$i\" -gt 60 ]; then\n    echo \"lowlat: $f holds $(cat \"$f\") pages, not $HUGEPAGES_COUNT\" >&2\n    exit 1\n  fi\n  sleep 1\ndone\n";

/// The unit that allocates one node's huge pages before the kubelet (it must see them in the
/// node's capacity when it starts), named as NTO names it.
fn hugepages_unit(node: usize, kb: u64, count: u64) -> Value {
    let contents = format!(
        "[Unit]\nDescription=lowlat: {count} huge pages of {kb} kB on NUMA node {node}\nBefore=kubelet.service\n\n[Service]\nEnvironment=HUGEPAGES_COUNT={count}\nEnvironment=HUGEPAGES_SIZE={kb}\nEnvironment=NUMA_NODE={node}\nType=oneshot\nRemainAfterExit=true\nExecStart={HUGEPAGES_SCRIPT_PATH}\n\n[Install]\nWantedBy=multi-user.target\n"
    );
    map(vec![
        ("contents", s(contents)),
        ("enabled", b(true)),
        ("name", s(format!("hugepages-allocation-{kb}kB-NUMA{node}.service"))),
    ])
}

/// NTO's `ocp-tuned-one-shot.service`, unchanged (NTO commit d2394aa8, Apache-2.0; see
/// `NOTICE`): before the kubelet starts after a reboot, it runs NTO's image once to apply
/// the node's TuneD profile (so huge pages, sysctls and IRQ settings are in place before pods
/// land). The image comes from `/var/lib/ocp-tuned/image.env`, which NTO's operand writes on
/// the node; without that file the unit does nothing (`ConditionPathExists`).
const TUNED_ONE_SHOT_UNIT: &str = include_str!("../assets/nto/ocp-tuned-one-shot.service");

const CPUSET_CONFIGURE_PATH: &str = "/usr/local/bin/cpuset-configure.sh";

/// NTO's `cpuset-configure.sh` (same origin as [`TUNED_ONE_SHOT_UNIT`]), with its OVS slice
/// filled in as NTO fills it: on cgroup v1 it moves the services into a `system` cpuset on
/// the reserved CPUs, so containers can have CPU load balancing disabled; on cgroup v2 it exits.
fn cpuset_configure_script() -> String {
    include_str!("../assets/nto/cpuset-configure.sh").replace("{{ .OvsSliceName }}", "ovs.slice")
}

/// The unit that runs [`cpuset_configure_script`], as NTO's render writes it.
fn cpuset_configure_unit() -> Value {
    map(vec![
        (
            "contents",
            s(format!("[Unit]\nDescription=Move services to reserved cpuset\nBefore=kubelet.service\nAfter=crio.service\n\n[Service]\nType=oneshot\nExecStart={CPUSET_CONFIGURE_PATH}\n\n[Install]\nWantedBy=multi-user.target crio.service\n")),
        ),
        ("enabled", b(true)),
        ("name", s("cpuset-configure.service")),
    ])
}

fn tuned_one_shot_unit() -> Value {
    map(vec![
        ("contents", s(TUNED_ONE_SHOT_UNIT)),
        ("enabled", b(true)),
        ("name", s("ocp-tuned-one-shot.service")),
    ])
}

const OFFLINE_SCRIPT_PATH: &str = "/usr/local/bin/set-cpus-offline.sh";

/// Takes the CPUs of `OFFLINE_CPUS` (a comma list) offline, after checking that each exists.
const OFFLINE_SCRIPT: &str = "#!/bin/sh\n# lowlat: take the plan's offlined CPUs down before the kubelet starts\nset -eu\ncpus=$(echo \"$OFFLINE_CPUS\" | tr ',' ' ')\nfor c in $cpus; do\n  [ -f \"/sys/devices/system/cpu/cpu$c/online\" ] || { echo \"lowlat: CPU $c cannot go offline (no cpu$c/online)\" >&2; exit 1; }\ndone\nfor c in $cpus; do\n  echo 0 >\"/sys/devices/system/cpu/cpu$c/online\"\ndone\n";

/// The unit that takes the offlined CPUs down, named as NTO names it.
fn offline_unit(plan: &Plan) -> Option<Value> {
    if plan.offlined.is_empty() {
        return None;
    }
    let cpus: Vec<String> = plan.offlined.iter().map(|c| c.to_string()).collect();
    let contents = format!(
        "[Unit]\nDescription=lowlat: take CPUs {} offline\nBefore=kubelet.service\n\n[Service]\nEnvironment=OFFLINE_CPUS={}\nType=oneshot\nRemainAfterExit=true\nExecStart={OFFLINE_SCRIPT_PATH}\n\n[Install]\nWantedBy=multi-user.target\n",
        plan.offlined,
        cpus.join(",")
    );
    Some(map(vec![
        ("contents", s(contents)),
        ("enabled", b(true)),
        ("name", s("set-cpus-offline.service")),
    ]))
}

/// The RuntimeClass the latency test pod names (the PerformanceProfile path gets the same
/// one from NTO): its handler is the CRI-O runtime [`crio_runtimes`] declares.
pub fn runtime_class_name(plan: &Plan) -> String {
    format!("performance-{}", plan.name)
}

/// CRI-O's handler name for the runtime that honours the low-latency annotations.
pub const CRIO_HANDLER: &str = "high-performance";

/// The annotations the `high-performance` runtime lets pods set: CPU load balancing, CFS
/// quota and IRQ load balancing per pod, and per-pod power management (C-states and the
/// cpufreq governor of the pod's CPUs), as NTO allows them.
pub const CRIO_ALLOWED_ANNOTATIONS: [&str; 5] = [
    "cpu-load-balancing.crio.io",
    "cpu-quota.crio.io",
    "irq-load-balancing.crio.io",
    "cpu-c-states.crio.io",
    "cpu-freq-governor.crio.io",
];

/// The CRI-O drop-in NTO writes (`assets/performanceprofile/configs/99-runtimes.conf`, NTO as
/// of OpenShift 4.20/5.0, CRI-O 1.33+): infra containers on the housekeeping CPUs, Go runtimes
/// given at least 4 GOMAXPROCS, and the `high-performance` runtime inheriting the default one
/// (`inherit_default_runtime`, so runc stays declared as the cluster has it), with `exec`
/// processes on the container's first CPU (`exec_cpu_affinity`), containers in a systemd
/// subgroup and the annotations of [`CRIO_ALLOWED_ANNOTATIONS`].
pub fn crio_runtimes(plan: &Plan) -> String {
    let allowed: Vec<String> =
        CRIO_ALLOWED_ANNOTATIONS.iter().map(|a| format!("\"{a}\"")).collect();
    format!(
        "# lowlat plan `{}`: CRI-O runtime for the RuntimeClass {}\n[crio.runtime]\ninfra_ctr_cpuset = \"{}\"\nmin_injected_gomaxprocs = 4\n\n[crio.runtime.runtimes.{CRIO_HANDLER}]\ninherit_default_runtime = true\nexec_cpu_affinity = \"first\"\ndefault_annotations = {{\"run.oci.systemd.subgroup\" = \"\"}}\nallowed_annotations = [{}]\n",
        plan.name,
        runtime_class_name(plan),
        plan.reserved.to_list(),
        allowed.join(", ")
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

/// The CPUs that are not isolated (housekeeping, offline, SMT-off) as TuneD's
/// `cpulist2hex` writes them: 32-bit words of 8 hex digits, most significant first.
pub fn not_isolated_cpumask(plan: &Plan) -> String {
    let all = plan.reserved.union(&plan.offlined).union(&plan.smt_disabled);
    let not_isolated = all.difference(&plan.isolated);
    let mask = not_isolated.to_mask(0);
    match mask.split_once(',') {
        Some((top, rest)) => format!("{top:0>8},{rest}"),
        None => format!("{mask:0>8}"),
    }
}

/// MachineConfig with the kernel type and arguments (and `tuned.non_isolcpus`, which NTO's
/// boot line carries: the mask of CPUs that are not isolated, read by TuneD's early-boot
/// hooks).
pub fn machine_config(plan: &Plan, role: &str) -> Value {
    let mut args: Vec<Value> = plan.kernel_args.iter().map(|a| s(a.token())).collect();
    if !plan.isolated.is_empty() {
        args.push(s(format!("tuned.non_isolcpus={}", not_isolated_cpumask(plan))));
    }
    let mut config = vec![("ignition", map(vec![("version", s("3.2.0"))]))];
    let mut files = vec![ignition_file(
        "/etc/crio/crio.conf.d/99-lowlat-runtimes.conf",
        0o644,
        &crio_runtimes(plan),
    )];
    // the offline script, always there as NTO has it (set-cpus-offline.service uses it)
    files.push(ignition_file(OFFLINE_SCRIPT_PATH, 0o755, OFFLINE_SCRIPT));
    // the per-node huge pages script, always there as NTO has it (its units use it)
    let pages = node_hugepages(plan);
    files.push(ignition_file(HUGEPAGES_SCRIPT_PATH, 0o755, HUGEPAGES_SCRIPT));
    // irqbalance starts every boot with no CPU banned: CRI-O bans a pod's CPUs while the pod
    // runs with irq-load-balancing.crio.io: disable, and a ban left from before a reboot would
    // stay (NTO's clear-irqbalance-banned-cpus, in lowlat's words)
    files.push(ignition_file(CLEAR_IRQBALANCE_PATH, 0o755, CLEAR_IRQBALANCE_SCRIPT));
    // stalld reads the scheduler's state from sched_debug rather than its eBPF backend, as
    // NTO configures it (inert while stalld does not run)
    files.push(ignition_file("/etc/sysconfig/stalld-backend", 0o644, "BE=\"-b sched_debug\"\n"));
    files.push(ignition_file(
        "/etc/systemd/system/stalld.service.d/stalld-backend.conf",
        0o644,
        "[Service]\nEnvironmentFile=/etc/sysconfig/stalld-backend\n",
    ));
    // OVS in its own slice, outside the kubepods cpusets, and OVN-Kubernetes told to move its
    // threads with the pods' CPU pinning (NTO writes the same files)
    files.push(ignition_file(
        "/etc/systemd/system/ovs.slice",
        0o644,
        "[Unit]\nDescription=lowlat: slice giving Open vSwitch an unrestricted set of CPUs\n\n[Slice]\n",
    ));
    for svc in ["openvswitch", "ovs-vswitchd", "ovsdb-server"] {
        files.push(ignition_file(
            &format!("/etc/systemd/system/{svc}.service.d/01-use-ovs-slice.conf"),
            0o644,
            "[Service]\nSlice=ovs.slice\n",
        ));
    }
    files.push(ignition_file(
        "/var/lib/ovn-ic/etc/enable_dynamic_cpu_affinity",
        0o644,
        "# lowlat: ovnkube-node manages the CPU affinity of the OVS services while this file\n# exists and is not empty; empty it (or delete it) to turn that off\n",
    ));
    // NTO's cgroup v1 cpuset preparation, always there as NTO has it (a no-op on cgroup v2)
    files.push(ignition_file(CPUSET_CONFIGURE_PATH, 0o700, &cpuset_configure_script()));
    config.push(("storage", map(vec![("files", seq(files))])));
    let mut units = vec![cpuset_configure_unit()];
    units.extend(offline_unit(plan));
    units.push(clear_irqbalance_unit());
    units.push(tuned_one_shot_unit());
    units.extend(pages.iter().map(|(node, kb, count)| hugepages_unit(*node, *kb, *count)));
    if !units.is_empty() {
        config.push(("systemd", map(vec![("units", seq(units))])));
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

/// The kubelet's default hard-eviction thresholds, which NTO writes (a KubeletConfig's
/// `evictionHard` replaces the default map, so a partial one switches the others off).
pub const EVICTION_HARD: [(&str, &str); 4] = [
    ("imagefs.available", "15%"),
    ("memory.available", "100Mi"),
    ("nodefs.available", "10%"),
    ("nodefs.inodesFree", "5%"),
];

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
    // A KubeletConfig's evictionHard replaces the kubelet's whole default map: name all four
    // defaults, as NTO does, or disk-pressure eviction (nodefs/imagefs/inodes) is off.
    kc.push(("evictionHard", map(EVICTION_HARD.iter().map(|(k, v)| (*k, s(*v))).collect())));
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
    // the pool's own label: the built-in pools carry no role label, so a role selector would
    // match no pool and the KubeletConfig would do nothing
    let (pk, pv) = mcp_selector(plan, role);
    map(vec![
        ("apiVersion", s("machineconfiguration.openshift.io/v1")),
        ("kind", s("KubeletConfig")),
        ("metadata", map(vec![("name", s(format!("lowlat-{role}")))])),
        (
            "spec",
            map(vec![
                ("machineConfigPoolSelector", map(vec![("matchLabels", map(vec![(pk, s(pv))]))])),
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

/// OpenShift's own MachineConfigPools: the Machine Config Operator owns their definitions.
pub const BUILT_IN_POOLS: [&str; 2] = ["master", "worker"];

/// Whether `role` is a built-in pool (no MachineConfigPool is written for it: applying one
/// with replace or GitOps would redefine the operator's pool).
pub fn is_built_in_pool(role: &str) -> bool {
    BUILT_IN_POOLS.contains(&role)
}

/// The node-label and apply commands, in the order the seed procedure uses.
pub fn apply_script(plan: &Plan, role: &str) -> String {
    let (nk, nv) = node_selector(plan, role);
    let node = plan.host.clone().unwrap_or_else(|| "<node_name>".into());
    let pool = if is_built_in_pool(role) {
        format!("# {role} is a built-in pool: its MachineConfigPool is OpenShift's own\n")
    } else {
        "oc apply -f 01-machineconfigpool.yaml\n".to_string()
    };
    format!(
        "#!/bin/sh\n# {}\nset -eu\ncd \"$(dirname \"$0\")\"\n{pool}oc apply -f 04-tuned.yaml\noc apply -f 02-machineconfig.yaml\noc apply -f 03-kubeletconfig.yaml\noc apply -f 05-runtimeclass.yaml\n# move the node into the pool; the MachineConfigPool rolls it out and reboots the node\noc label node {} {}\n",
        crate::quote::comment(&header(plan, role)),
        crate::quote::sh(&node),
        crate::quote::sh(&format!("{nk}={nv}"))
    )
}

/// The plan as the Node Tuning Operator would configure the node: without lowlat's deliberate
/// additions beyond NTO, which `render openshift` leaves out unless `--beyond-nto` asks for
/// them (docs/commands/render.md, "Where lowlat differs from NTO"): no `irqaffinity` (NTO
/// leaves the boot-time IRQ mask alone and CRI-O moves IRQs per pod), no `kthread_cpus`, no
/// `kernel.watchdog_cpumask`, and `systemd.cpu_affinity` over every non-isolated CPU as NTO
/// writes it.
pub fn nto_settings(plan: &Plan) -> Plan {
    let mut p = plan.clone();
    // the one definition of NTO's boot line, which `verify` expects on an NTO node too
    p.kernel_args = plan.boot_args_for(plan::Flavour::Nto);
    p.runtime.retain(|r| {
        !matches!(r, plan::RuntimeItem::Sysctl { name, .. } if name == "kernel.watchdog_cpumask")
    });
    p
}

/// Every OpenShift file.
pub fn render(plan: &Plan, role: &str) -> Vec<OutFile> {
    let h = header(plan, role);
    let mut v = vec![];
    if !is_built_in_pool(role) {
        v.push(OutFile::yaml(
            "01-machineconfigpool.yaml",
            &h,
            vec![machine_config_pool(plan, role)],
        ));
    }
    v.extend([
        OutFile::yaml("02-machineconfig.yaml", &h, vec![machine_config(plan, role)]),
        OutFile::yaml("03-kubeletconfig.yaml", &h, vec![kubelet_config(plan, role)]),
        OutFile::yaml("04-tuned.yaml", &h, vec![tuned_cr(plan, role)]),
        OutFile::yaml("05-runtimeclass.yaml", &h, vec![runtime_class(plan, role)]),
        OutFile::script("apply.sh", apply_script(plan, role)),
    ]);
    v
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
    if o.isolcpus_domain {
        // static isolation (isolcpus=domain): NTO's switch for it
        cpu.insert(0, ("balanceIsolated", b(false)));
    }
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
    // a hosted control plane's NodePool has no MachineConfigPool (PPC writes no selector)
    if o.node_pool.is_none() {
        let (mk, mv) = mcp_selector(plan, &role);
        spec.push(("machineConfigPoolSelector", map(vec![(mk, s(mv))])));
    }
    if let Some(uln) = o.user_level_networking {
        spec.push(("net", map(vec![("userLevelNetworking", b(uln))])));
    }
    let (nk, nv) = node_selector(plan, &role);
    spec.push(("nodeSelector", map(vec![(nk, s(nv))])));
    // No policy chosen (lowlat style): no `numa`, so NTO's KubeletConfig keeps best-effort,
    // as lowlat's own does (PPC always names one, restricted by default).
    if let Some(policy) = o.topology_policy {
        spec.push(("numa", map(vec![("topologyPolicy", s(policy.as_str()))])));
    }
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
    let mut profile = vec![
        ("apiVersion", s("performance.openshift.io/v2")),
        ("kind", s("PerformanceProfile")),
        ("metadata", map(vec![("name", s(plan.name.clone()))])),
        ("spec", map(spec)),
    ];
    if o.node_pool.is_some() {
        // PPC serializes the profile inside the ConfigMap with the API machinery's
        // serializer, which writes the empty status
        profile.push(("status", map(Vec::<(&str, Value)>::new())));
    }
    map(profile)
}

/// The namespace PPC puts a hosted control plane's tuning ConfigMaps in (HyperShift's
/// `clusters`, where the HostedCluster and its NodePools live).
pub const HOSTED_NAMESPACE: &str = "clusters";

/// An object for a hosted control plane's NodePool: inside a ConfigMap under the `tuning`
/// key, as PPC's `--node-pool-name` writes it (`spec.tuningConfig` of the NodePool names it).
pub fn hosted_config_map(name: &str, object: &Value) -> Value {
    map(vec![
        ("apiVersion", s("v1")),
        ("data", map(vec![("tuning", s(doc(object)))])),
        ("kind", s("ConfigMap")),
        ("metadata", map(vec![("name", s(name)), ("namespace", s(HOSTED_NAMESPACE))])),
    ])
}

/// The PerformanceProfile as a file (PPC prints `---` first); for a HyperShift NodePool, in
/// its ConfigMap.
pub fn performance_profile_file(plan: &Plan, role: Option<&str>) -> OutFile {
    let pp = performance_profile(plan, role);
    let object =
        if plan.options.node_pool.is_some() { hosted_config_map(&plan.name, &pp) } else { pp };
    OutFile::manifest("performance-profile.yaml", format!("---\n{}", doc(&object)), &[object])
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
        // a hosted cluster takes Tuned objects in ConfigMaps too (NodePool spec.tuningConfig)
        let patch = if plan.options.node_pool.is_some() {
            hosted_config_map(&format!("{}-performance-patch", plan.name), &patch)
        } else {
            patch
        };
        v.push(OutFile::yaml("performance-patch-tuned.yaml", &h, vec![patch]));
    }
    v
}
