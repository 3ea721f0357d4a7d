//! Kubernetes latency test: a Job running `lowlat measure timer` in a Guaranteed, privileged
//! pod on isolated CPUs (the seed's cyclictest pod, with the CRI-O annotations that turn off
//! load balancing, CFS quota and IRQ balancing for its CPUs), results on a hostPath, and a
//! load Deployment filling the other isolated CPUs like the seed's stress-ng pods.

use plan::Plan;
use serde_norway::Value;

use crate::yaml::{b, docs, int, map, s, seq};
use crate::{OutFile, RenderOptions};

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

/// The Job and the load Deployment.
pub fn render(plan: &Plan, opts: &RenderOptions, role: &str) -> Vec<OutFile> {
    let (nk, nv) = plan
        .options
        .node_selector
        .clone()
        .unwrap_or_else(|| (format!("node-role.kubernetes.io/{role}"), String::new()));
    let runtime_class =
        opts.runtime_class.clone().unwrap_or_else(|| format!("performance-{}", plan.name));
    let cpus = test_cpus(plan, opts);
    let ns = opts.namespace.clone();
    let annotations = map(vec![
        ("cpu-load-balancing.crio.io", s("disable")),
        ("cpu-quota.crio.io", s("disable")),
        ("irq-load-balancing.crio.io", s("disable")),
    ]);
    // The pod's exclusive CPUs: the first holds the main thread, the rest are measured.
    let script = concat!(
        "allowed=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)\n",
        "main=$(echo \"$allowed\" | awk -F'[,-]' '{print $1}')\n",
        "measured=$(echo \"$allowed\" | awk -v m=\"$main\" 'BEGIN{RS=\",\"} {n=split($0,r,\"-\"); a=r[1]+0; b=(n>1?r[2]:r[1])+0; for(i=a;i<=b;i++) if(i!=m) printf \"%s%d\", (c++?\",\":\"\"), i}')\n",
        "exec lowlat measure timer -a \"$measured\" --main-cpu \"$main\" -D \"$LATENCY_TEST_RUNTIME\" --threshold \"$MAXIMUM_LATENCY\" --json \"/results/timer-$NODE_NAME-$(date +%Y%m%dT%H%M%S).json\"\n"
    );
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
                            map(vec![
                                ("restartPolicy", s("Never")),
                                ("runtimeClassName", s(runtime_class)),
                                ("nodeSelector", map(vec![(nk.clone(), s(nv.clone()))])),
                                (
                                    "containers",
                                    seq(vec![map(vec![
                                        ("name", s("timer")),
                                        ("image", s(opts.image.clone())),
                                        ("command", seq(vec![s("/bin/sh"), s("-c"), s(script)])),
                                        (
                                            "env",
                                            seq(vec![
                                                map(vec![
                                                    ("name", s("LATENCY_TEST_RUNTIME")),
                                                    ("value", s(opts.duration.clone())),
                                                ]),
                                                map(vec![
                                                    ("name", s("MAXIMUM_LATENCY")),
                                                    ("value", s(opts.max_latency_us.to_string())),
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
                            ]),
                        ),
                    ]),
                ),
            ]),
        ),
    ]);
    let load_replicas = plan.isolated.len().saturating_sub(cpus) as u64;
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
                                ("nodeSelector", map(vec![(nk, s(nv))])),
                                (
                                    "containers",
                                    seq(vec![map(vec![
                                        ("name", s("stress")),
                                        ("image", s(opts.image.clone())),
                                        (
                                            "command",
                                            seq(vec![
                                                s("stress-ng"),
                                                s("--cpu"),
                                                s("1"),
                                                s("--vm"),
                                                s("1"),
                                                s("--vm-bytes"),
                                                s("128M"),
                                                s("--timeout"),
                                                s("0"),
                                            ]),
                                        ),
                                        ("resources", guaranteed(1, "256Mi")),
                                    ])]),
                                ),
                            ]),
                        ),
                    ]),
                ),
            ]),
        ),
    ]);
    let ns_doc = map(vec![
        ("apiVersion", s("v1")),
        ("kind", s("Namespace")),
        ("metadata", map(vec![("name", s(ns))])),
    ]);
    let h = format!(
        "lowlat plan `{}`: latency test on {cpus} isolated CPU{} (one runs the main thread) for {} (threshold {} us), load on the other {load_replicas}.\nStart the load first (kubectl apply -f load.yaml), then the test; results land in /var/lib/lowlat/results on the node.",
        plan.name,
        if cpus == 1 { "" } else { "s" },
        opts.duration,
        opts.max_latency_us
    );
    vec![
        OutFile::new("latency-test.yaml", docs(&h, &[ns_doc, job])),
        OutFile::new("load.yaml", docs(&h, &[load])),
    ]
}
