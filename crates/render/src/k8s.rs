//! Kubernetes latency test: a Job running `lowlat measure timer` in a Guaranteed, privileged
//! pod on isolated CPUs (the seed's cyclictest pod, with the CRI-O annotations that turn off
//! load balancing, CFS quota and IRQ balancing for its CPUs), its JSON result and
//! cyclictest-compatible text (`# Max Latencies:` for `grep Latencies`) on a hostPath; a
//! namespace labelled for privileged pods with a ServiceAccount bound to OpenShift's
//! privileged SCC; and a load Deployment sized from the plan to leave the test's CPUs free,
//! on the test's node. `apply.sh` applies them in order.

use plan::Plan;
use serde_norway::Value;

use crate::yaml::{b, int, map, s, seq};
use crate::{OutFile, RenderOptions};

/// The test pod's ServiceAccount.
pub const SERVICE_ACCOUNT: &str = "lowlat-latency-test";

/// The ClusterRole OpenShift grants `use` of the privileged SCC with.
pub const PRIVILEGED_SCC_ROLE: &str = "system:openshift:scc:privileged";

/// CPUs left to the node's own pods (DaemonSets' CPU requests come out of the shared pool).
pub const LOAD_HEADROOM_CPUS: usize = 1;

fn guaranteed(cpus: usize, memory: &str) -> Value {
    let r = || map(vec![("cpu", s(cpus.to_string())), ("memory", s(memory))]);
    map(vec![("limits", r()), ("requests", r())])
}

/// CPUs the test pod asks for: one for the main thread plus up to four measured.
pub fn test_cpus(plan: &Plan, opts: &RenderOptions) -> usize {
    if opts.test_cpus > 0 {
        opts.test_cpus
    } else {
        plan.isolated.len().clamp(2, 5)
    }
}

/// One-CPU load pods: the isolated (allocatable) CPUs less the test's and the headroom.
pub fn load_replicas(plan: &Plan, opts: &RenderOptions) -> usize {
    plan.isolated.len().saturating_sub(test_cpus(plan, opts) + LOAD_HEADROOM_CPUS)
}

/// The node selector both pods use: the plan's node when it names one (so the load runs
/// beside the test), else the role's label.
fn pod_node_selector(plan: &Plan, role: &str) -> (String, String) {
    match &plan.host {
        Some(h) => ("kubernetes.io/hostname".into(), h.clone()),
        None => crate::openshift::node_selector(plan, role),
    }
}

/// Namespace (PodSecurity `privileged`), ServiceAccount, RoleBinding to the privileged SCC.
fn access(ns: &str) -> Vec<Value> {
    use crate::rbac::{binding, privileged_namespace, service_account, Scope};
    vec![
        privileged_namespace(ns),
        service_account(SERVICE_ACCOUNT, ns),
        binding(
            "lowlat-latency-test-privileged-scc",
            Scope::Namespace(ns),
            ("ClusterRole", PRIVILEGED_SCC_ROLE),
            &[(SERVICE_ACCOUNT, ns)],
        ),
    ]
}

/// The pod's script: split its exclusive CPUs (the first runs the main thread), measure,
/// keep the JSON and cyclictest's text side by side, show the text in the log.
const SCRIPT: &str = concat!(
    "allowed=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)\n",
    "main=$(echo \"$allowed\" | awk -F'[,-]' '{print $1}')\n",
    "measured=$(echo \"$allowed\" | awk -v m=\"$main\" 'BEGIN{RS=\",\"} {n=split($0,r,\"-\"); a=r[1]+0; b=(n>1?r[2]:r[1])+0; for(i=a;i<=b;i++) if(i!=m) printf \"%s%d\", (c++?\",\":\"\"), i}')\n",
    "base=\"/results/timer-$NODE_NAME-$(date +%Y%m%dT%H%M%S)\"\n",
    "lowlat measure timer -a \"$measured\" --main-cpu \"$main\" -D \"$LATENCY_TEST_RUNTIME\" --threshold \"$MAXIMUM_LATENCY\" --cyclictest --json \"$base.json\" > \"$base.out\"\n",
    "rc=$?\n",
    "cat \"$base.out\"\n",
    "exit $rc\n"
);

/// The namespace and its access, the load Deployment, the Job and the apply order.
pub fn render(plan: &Plan, opts: &RenderOptions, role: &str) -> Vec<OutFile> {
    let (nk, nv) = pod_node_selector(plan, role);
    let runtime_class =
        opts.runtime_class.clone().unwrap_or_else(|| crate::openshift::runtime_class_name(plan));
    let cpus = test_cpus(plan, opts);
    let ns = opts.namespace.clone();
    let annotations = map(vec![
        ("cpu-load-balancing.crio.io", s("disable")),
        ("cpu-quota.crio.io", s("disable")),
        ("irq-load-balancing.crio.io", s("disable")),
    ]);
    let job = map(vec![
        ("apiVersion", s("batch/v1")),
        ("kind", s("Job")),
        ("metadata", map(vec![("name", s("lowlat-latency-test")), ("namespace", s(ns.clone()))])),
        (
            "spec",
            map(vec![
                ("backoffLimit", int(0)),
                (
                    "template",
                    map(vec![
                        (
                            "metadata",
                            map(vec![
                                ("annotations", annotations),
                                ("labels", map(vec![("app", s("lowlat-latency-test"))])),
                            ]),
                        ),
                        (
                            "spec",
                            map({
                                let mut spec = vec![
                                    ("restartPolicy", s("Never")),
                                    ("serviceAccountName", s(SERVICE_ACCOUNT)),
                                ];
                                if !runtime_class.is_empty() {
                                    spec.push(("runtimeClassName", s(runtime_class)));
                                }
                                spec.push(("nodeSelector", map(vec![(nk.clone(), s(nv.clone()))])));
                                spec.extend(vec![
                                    (
                                        "containers",
                                        seq(vec![map(vec![
                                            ("name", s("timer")),
                                            ("image", s(opts.image.clone())),
                                            (
                                                "command",
                                                seq(vec![s("/bin/sh"), s("-c"), s(SCRIPT)]),
                                            ),
                                            (
                                                "env",
                                                seq(vec![
                                                    map(vec![
                                                        ("name", s("LATENCY_TEST_RUNTIME")),
                                                        ("value", s(opts.duration.clone())),
                                                    ]),
                                                    map(vec![
                                                        ("name", s("MAXIMUM_LATENCY")),
                                                        (
                                                            "value",
                                                            s(opts.max_latency_us.to_string()),
                                                        ),
                                                    ]),
                                                    map(vec![
                                                        ("name", s("NODE_NAME")),
                                                        (
                                                            "valueFrom",
                                                            map(vec![(
                                                                "fieldRef",
                                                                map(vec![(
                                                                    "fieldPath",
                                                                    s("spec.nodeName"),
                                                                )]),
                                                            )]),
                                                        ),
                                                    ]),
                                                ]),
                                            ),
                                            ("resources", guaranteed(cpus, "1Gi")),
                                            ("securityContext", map(vec![("privileged", b(true))])),
                                            (
                                                "volumeMounts",
                                                seq(vec![map(vec![
                                                    ("mountPath", s("/results")),
                                                    ("name", s("results")),
                                                ])]),
                                            ),
                                        ])]),
                                    ),
                                    (
                                        "volumes",
                                        seq(vec![map(vec![
                                            ("name", s("results")),
                                            (
                                                "hostPath",
                                                map(vec![
                                                    ("path", s("/var/lib/lowlat/results")),
                                                    ("type", s("DirectoryOrCreate")),
                                                ]),
                                            ),
                                        ])]),
                                    ),
                                ]);
                                spec
                            }),
                        ),
                    ]),
                ),
            ]),
        ),
    ]);
    let load_replicas = load_replicas(plan, opts) as u64;
    let load = map(vec![
        ("apiVersion", s("apps/v1")),
        ("kind", s("Deployment")),
        ("metadata", map(vec![("name", s("lowlat-load")), ("namespace", s(ns.clone()))])),
        (
            "spec",
            map(vec![
                ("replicas", int(load_replicas)),
                ("selector", map(vec![("matchLabels", map(vec![("app", s("lowlat-load"))]))])),
                (
                    "template",
                    map(vec![
                        ("metadata", map(vec![("labels", map(vec![("app", s("lowlat-load"))]))])),
                        (
                            "spec",
                            map(vec![
                                ("nodeSelector", map(vec![(nk.clone(), s(nv.clone()))])),
                                (
                                    "containers",
                                    seq(vec![map(vec![
                                        ("name", s("load")),
                                        ("image", s(opts.image.clone())),
                                        // busybox's dd: one CPU busy copying memory (the
                                        // image holds lowlat and busybox, no stress-ng)
                                        (
                                            "command",
                                            seq(vec![
                                                s("/bin/sh"),
                                                s("-c"),
                                                s("exec dd if=/dev/zero of=/dev/null bs=4M"),
                                            ]),
                                        ),
                                        ("resources", guaranteed(1, "64Mi")),
                                    ])]),
                                ),
                            ]),
                        ),
                    ]),
                ),
            ]),
        ),
    ]);
    let h = format!(
        "lowlat plan `{}`: latency test on {cpus} isolated CPU{} (one runs the main thread) for {} (threshold {} us) on {nk}={nv}; load on {load_replicas} more, {LOAD_HEADROOM_CPUS} left to the node's pods.\nApply in order (apply.sh): namespace.yaml, load.yaml, latency-test.yaml; results (JSON and cyclictest text) land in /var/lib/lowlat/results on the node.",
        plan.name,
        if cpus == 1 { "" } else { "s" },
        opts.duration,
        opts.max_latency_us
    );
    // The namespace is the user's text: quoted for the shell (the plan's name stays out).
    let q = crate::boot::sh_quote(&ns);
    let apply = format!(
        "#!/bin/sh\n# lowlat latency test, in its order (KUBECTL=oc on OpenShift)\nset -eu\ncd \"$(dirname \"$0\")\"\nk=${{KUBECTL:-kubectl}}\n$k apply -f namespace.yaml\n$k apply -f load.yaml\n$k -n {q} rollout status deployment/lowlat-load --timeout=10m\n$k apply -f latency-test.yaml\n$k -n {q} wait --for=condition=complete --timeout=-1s job/lowlat-latency-test || true\n$k -n {q} logs job/lowlat-latency-test | grep Latencies\n"
    );
    vec![
        OutFile::yaml("namespace.yaml", &h, access(&ns)),
        OutFile::yaml("load.yaml", &h, vec![load]),
        OutFile::yaml("latency-test.yaml", &h, vec![job]),
        OutFile::script("apply.sh", apply),
    ]
}
