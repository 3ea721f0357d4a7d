//! `docs/schemas/`: the JSON Schemas of every document lowlat writes, generated here (and only
//! here) from the Rust types that write them (`schemars`), and the documents real `lowlat`
//! runs write, validated against the committed files (`jsonschema`).
//!
//! - `committed_schemas_are_what_the_types_generate` fails when a type changed and its schema
//!   was not regenerated; `UPDATE_SCHEMAS=1 cargo test -p lowlat --all-features --test cli
//!   schemas::` rewrites `docs/schemas/` (the schema files and their README) instead.
//! - The `*_validate` tests run lowlat on the repository's fixtures, a sandbox tree and short
//!   measurements of this machine, and validate every JSON document written.
//!
//! The schemas describe what lowlat **writes** (schemars' serialize contract: a field that is
//! always written is `required`). Readers accept more: older files without the fields added
//! since, as `docs/CONTRACT.md` says.

use std::path::{Path, PathBuf};

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{json, Value};

use crate::support::lowlat_std as lowlat;

/// One document kind and its schema file.
struct Doc {
    /// `docs/schemas/<file>`.
    file: &'static str,
    /// What it is, for the title and the README.
    what: &'static str,
    /// The commands that write it, for the README.
    written_by: &'static str,
    /// Its `schema_version` (`None`: unversioned).
    version: Option<u32>,
    /// The Rust type(s) it is generated from, for the README.
    types: &'static str,
    /// The schema; `None` when this build cannot make it (the `cluster` feature is off).
    schema: Option<fn() -> Value>,
}

fn docs() -> Vec<Doc> {
    vec![
        Doc {
            file: "result.schema.json",
            what: "measurement result file",
            written_by: "`measure timer`, `noise`, `ticks`, `fsync`, `etcd`, `hwlat` with `--json`; `import`, `check` (`timer.json`, `noise.json`, `ticks.json`, `fsync.json` in its `--out`)",
            version: Some(results::SCHEMA_VERSION),
            types: "`results::LatencyResult` (timer, noise), `results::TicksResult`, `results::fsync::FsyncResult`, `results::fsync::EtcdResult`",
            schema: Some(result_schema),
        },
        Doc {
            file: "inspect.schema.json",
            what: "host model",
            written_by: "`inspect --json`, `check` (`inspect.json`)",
            version: Some(host::SCHEMA_VERSION),
            types: "`host::Host`",
            schema: Some(|| root::<host::Host>("inspect", Some(host::SCHEMA_VERSION))),
        },
        Doc {
            file: "snapshot-manifest.schema.json",
            what: "snapshot manifest",
            written_by: "`snapshot` (`lowlat-snapshot.json` inside the archive)",
            version: Some(host::SCHEMA_VERSION),
            types: "`host::root::manifest::Manifest`",
            schema: Some(|| {
                root::<host::root::manifest::Manifest>(
                    "snapshot-manifest",
                    Some(host::SCHEMA_VERSION),
                )
            }),
        },
        Doc {
            file: "plan.schema.json",
            what: "plan file (YAML; the schema applies to its JSON data model)",
            written_by: "`plan -o`, `check` (`plan.yaml`)",
            version: Some(plan::SCHEMA_VERSION),
            types: "`plan::Plan`",
            schema: Some(|| root::<plan::Plan>("plan", Some(plan::SCHEMA_VERSION))),
        },
        Doc {
            file: "plan-info.schema.json",
            what: "PPC-compatible pool and node summary (PPC's `info --json` shape)",
            written_by: "`plan --info --json`",
            version: None,
            types: "`Vec<plan::ppc::info::PoolInfo>`",
            schema: Some(|| root::<Vec<plan::ppc::info::PoolInfo>>("plan-info", None)),
        },
        Doc {
            file: "verify.schema.json",
            what: "verify report",
            written_by: "`verify --json`, `check` (`verify.json`)",
            version: Some(verify::SCHEMA_VERSION),
            types: "`verify::Report`",
            schema: Some(|| root::<verify::Report>("verify", Some(verify::SCHEMA_VERSION))),
        },
        Doc {
            file: "status.schema.json",
            what: "status: what is applied, boot arguments, drift",
            written_by: "`status --json`",
            version: Some(verify::status::SCHEMA_VERSION),
            types: "`verify::status::Status`",
            schema: Some(|| {
                root::<verify::status::Status>("status", Some(verify::status::SCHEMA_VERSION))
            }),
        },
        Doc {
            file: "check.schema.json",
            what: "check document",
            written_by: "`check --json`",
            version: Some(CHECK_VERSION),
            types: "`check::Document`",
            schema: Some(|| root::<check::Document>("check", Some(CHECK_VERSION))),
        },
        Doc {
            file: "render.schema.json",
            what: "rendered files",
            written_by: "`render --json`",
            version: Some(render::SCHEMA_VERSION),
            types: "`render::files::Document`",
            schema: Some(|| root::<render::files::Document<'static>>("render", Some(render::SCHEMA_VERSION))),
        },
        Doc {
            file: "apply.schema.json",
            what: "apply / revert outcome",
            written_by: "`apply --json` (`kind` `apply`), `apply --dry-run --json` (`apply-dry-run`), `revert --json` (`revert`)",
            version: Some(tune::site::SCHEMA_VERSION),
            types: "`tune::site::Document` of `tune::site::DryRun`, `Applied`, `Reverted`",
            schema: Some(apply_schema),
        },
        Doc {
            file: "watch-sample.schema.json",
            what: "watch sample (one JSON line each, unversioned)",
            written_by: "`watch storage -o FILE`, `watch cmd -o FILE`",
            version: None,
            types: "`results::fsync::WatchSample`",
            schema: Some(|| root::<results::fsync::WatchSample>("watch-sample", None)),
        },
        Doc {
            file: "report.schema.json",
            what: "report model (unversioned: the HTML report's data, for programs)",
            written_by: "`report --json`",
            version: None,
            types: "`report::Report`",
            schema: Some(|| root::<report::Report>("report", None)),
        },
        Doc {
            file: "fleet.schema.json",
            what: "fleet result",
            written_by: "`cluster check` (`DIR/fleet.json`; the `cluster` feature)",
            version: Some(1),
            types: "`cluster::model::Fleet`",
            schema: cluster_schema("fleet"),
        },
        Doc {
            file: "cluster-nodes.schema.json",
            what: "node list (an array, unversioned)",
            written_by: "`cluster nodes --json` (`-o json`; the `cluster` feature)",
            version: None,
            types: "`Vec<cluster::nodes::NodeInfo>`",
            schema: cluster_schema("cluster-nodes"),
        },
    ]
}

/// `check --json`'s version (the document writes the literal).
const CHECK_VERSION: u32 = 1;

/// The schemas of the `cluster` crate's documents: made only with the `cluster` feature.
#[cfg(feature = "cluster")]
fn cluster_schema(name: &str) -> Option<fn() -> Value> {
    match name {
        "fleet" => {
            Some(|| root::<cluster::model::Fleet>("fleet", Some(cluster::model::SCHEMA_VERSION)))
        }
        _ => Some(|| root::<Vec<cluster::nodes::NodeInfo>>("cluster-nodes", None)),
    }
}

#[cfg(not(feature = "cluster"))]
fn cluster_schema(_: &str) -> Option<fn() -> Value> {
    None
}

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas")
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().for_serialize().into_generator()
}

/// `$id` and title of a document's schema: both name the document and its `schema_version`.
fn head(name: &str) -> (String, String) {
    let d = docs().into_iter().find(|d| d.file.strip_suffix(".schema.json") == Some(name));
    let d = d.unwrap_or_else(|| panic!("no document {name}"));
    match d.version {
        Some(v) => (
            format!("urn:lowlat:schema:{name}:{v}"),
            format!("lowlat {}, schema_version {v}", d.what),
        ),
        None => (format!("urn:lowlat:schema:{name}"), format!("lowlat {}, unversioned", d.what)),
    }
}

/// `schema_version`, where the document has one, may only be this version.
fn pin_version(object: &mut Value, version: Option<u32>) {
    if let (Some(v), Some(p)) = (version, object.pointer_mut("/properties/schema_version")) {
        *p = json!({ "type": "integer", "const": v });
    }
}

/// The schema of a document that is one type.
fn root<T: JsonSchema>(name: &str, version: Option<u32>) -> Value {
    let mut v = generator().into_root_schema_for::<T>().to_value();
    pin_version(&mut v, version);
    let (id, title) = head(name);
    if let Some(o) = v.as_object_mut() {
        o.insert("$id".into(), id.into());
        o.insert("title".into(), title.into());
    }
    v
}

/// The schema of a document that is one of several types: `oneOf` their `$ref`s, each
/// definition's `schema_version` pinned and, where given, its `kind` fixed.
fn one_of(
    name: &str,
    version: Option<u32>,
    parts: Vec<(Value, Option<&[&str]>)>,
    mut g: SchemaGenerator,
) -> Value {
    let mut defs = g.take_definitions(true);
    let mut refs = Vec::new();
    for (r, kinds) in parts {
        let target =
            r["$ref"].as_str().and_then(|s| s.strip_prefix("#/$defs/")).map(str::to_string);
        let def = target.as_deref().and_then(|t| defs.get_mut(t));
        let def = def.unwrap_or_else(|| panic!("{name}: {r} is not a definition"));
        pin_version(def, version);
        if let (Some(kinds), Some(k)) = (kinds, def.pointer_mut("/properties/kind")) {
            *k = match kinds {
                [one] => json!({ "type": "string", "const": one }),
                _ => json!({ "type": "string", "enum": kinds }),
            };
        }
        refs.push(r);
    }
    let (id, title) = head(name);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": id,
        "title": title,
        "oneOf": refs,
        "$defs": defs,
    })
}

fn result_schema() -> Value {
    let mut g = generator();
    let parts = vec![
        (g.subschema_for::<results::LatencyResult>().to_value(), Some(&["timer", "noise"][..])),
        (g.subschema_for::<results::TicksResult>().to_value(), Some(&["ticks"][..])),
        (g.subschema_for::<results::fsync::FsyncResult>().to_value(), Some(&["fsync"][..])),
        (g.subschema_for::<results::fsync::EtcdResult>().to_value(), Some(&["etcd"][..])),
    ];
    one_of("result", Some(results::SCHEMA_VERSION), parts, g)
}

fn apply_schema() -> Value {
    use tune::site::{Applied, Document, DryRun, Reverted};
    let mut g = generator();
    let parts = vec![
        (g.subschema_for::<Document<'static, DryRun>>().to_value(), Some(&["apply-dry-run"][..])),
        (g.subschema_for::<Document<'static, Applied>>().to_value(), Some(&["apply"][..])),
        (g.subschema_for::<Document<'static, Reverted>>().to_value(), Some(&["revert"][..])),
    ];
    one_of("apply", Some(tune::site::SCHEMA_VERSION), parts, g)
}

/// The README of `docs/schemas/`, from the same list.
fn readme() -> String {
    let mut s = String::from(
        "# JSON Schemas of lowlat's documents\n\n\
         The machine-readable contract of every JSON document lowlat writes (the prose, with \
         the exit codes and the rules for `schema_version`, is [`../CONTRACT.md`](../CONTRACT.md)). \
         Each schema is JSON Schema draft 2020-12, **generated** from the Rust types that write \
         the document (`schemars`), never edited by hand.\n\n\
         | schema | document | written by | `schema_version` | generated from |\n\
         |---|---|---|---|---|\n",
    );
    for d in docs() {
        let v = d.version.map_or("(none)".to_string(), |v| v.to_string());
        s.push_str(&format!(
            "| [`{f}`]({f}) | {} | {} | {v} | {} |\n",
            d.what,
            d.written_by,
            d.types,
            f = d.file
        ));
    }
    s.push_str(
        "\n## What they say\n\n\
         - They describe what lowlat **writes**: a field lowlat always writes is `required`, one \
         it leaves out when empty is not. Readers (lowlat's own included) accept more: files \
         written by older versions, without fields added since, still read (`docs/CONTRACT.md`).\n\
         - `schema_version` is pinned (`const`) to the version the schema describes; a renamed \
         or removed field or a grown closed set is a new `schema_version` and a new schema.\n\
         - Closed sets (`kind`, `status`, `verdict`, …) are `enum`s. Where a field is free-form \
         JSON in the type (`serde_json::Value`: `params.job_options` of a result imported \
         from fio, fio's own options) the schema allows any value.\n\
         - `$id` is `urn:lowlat:schema:<document>:<schema_version>` (no version for the \
         unversioned ones); references are inside each file (`#/$defs/…`).\n\
         - Numbers: times are integer nanoseconds (`_ns`); `format` (`uint64`, `double`, …) \
         names the Rust type and is informative.\n\
         - A plan file is YAML: its schema applies to the YAML read as JSON data.\n\n\
         ## Checked by\n\n\
         `crates/lowlat/tests/cli/schemas.rs`: `committed_schemas_are_what_the_types_generate` \
         fails when a type changed and its schema was not regenerated, naming the file; the \
         `*_validate` tests run lowlat (fixtures, a sandbox tree, short measurements) and \
         validate every document written against these files. `fleet.schema.json` and \
         `cluster-nodes.schema.json` are generated and checked with the `cluster` feature \
         (CI's `--all-features`); a fleet document is validated, a node list is not (it needs \
         a cluster).\n\n\
         ## Regenerate\n\n\
         ```sh\n\
         UPDATE_SCHEMAS=1 cargo test -p lowlat --all-features --test cli schemas::\n\
         ```\n",
    );
    s
}

#[test]
fn committed_schemas_are_what_the_types_generate() {
    let dir = schemas_dir();
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1");
    let mut expected: Vec<(String, String)> = docs()
        .into_iter()
        .filter_map(|d| {
            let text = serde_json::to_string_pretty(&(d.schema?)()).ok()? + "\n";
            Some((d.file.to_string(), text))
        })
        .collect();
    expected.push(("README.md".into(), readme()));
    let mut stale = Vec::new();
    for (file, text) in &expected {
        let path = dir.join(file);
        if update {
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(format!("docs/schemas/{file}"));
        }
    }
    // Every schema file there is one of the list (fleet.schema.json is made with `cluster`).
    let known: Vec<&str> = docs().iter().map(|d| d.file).collect();
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".schema.json") && !known.contains(&name.as_str()) {
            stale.push(format!("docs/schemas/{name} (no document of that name)"));
        }
    }
    assert!(
        stale.is_empty(),
        "out of date with the Rust types: {}\nregenerate with \
         `UPDATE_SCHEMAS=1 cargo test -p lowlat --all-features --test cli schemas::` and commit",
        stale.join(", ")
    );
}

/// The committed schema `file`, compiled.
fn validator(file: &str) -> jsonschema::Validator {
    let path = schemas_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// `doc` (from `what`) validates against `file`, every error named.
fn validates(file: &str, what: &str, doc: &Value) {
    let v = validator(file);
    let errors: Vec<String> =
        v.iter_errors(doc).take(20).map(|e| format!("  at {}: {e}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} does not validate against {file}:\n{}", errors.join("\n"));
}

/// `path` read as JSON (or YAML for a plan) and validated.
fn file_validates(file: &str, path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = if path.extension().is_some_and(|e| e == "yaml") {
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    validates(file, &path.display().to_string(), &doc);
}

/// Run `cmd`, expecting one of `codes`; its standard output as JSON.
fn stdout_json(cmd: &mut std::process::Command, codes: &[i32]) -> Value {
    let o = cmd.output().unwrap_or_else(|e| panic!("{e}"));
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let code = o.status.code().unwrap_or(-1);
    assert!(codes.contains(&code), "{cmd:?}: exit {code}\n{out}{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{cmd:?}: {e}\n{out}{err}"))
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn must_gather_bare_metal() -> PathBuf {
    let base = testdata().join("fixtures/must-gather/must-gather.bare-metal");
    std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("nodes/worker1").is_dir())
        .unwrap_or_else(|| panic!("no must-gather with nodes/worker1 under {}", base.display()))
}

fn host_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/tests/fixtures").join(name)
}

fn results_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/tests/fixtures").join(name)
}

/// The report crate's inputs, written by the real producers (`crates/report/tests/produce`).
fn report_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures").join(name)
}

/// A CPU to measure: the last online one.
fn cpu() -> String {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (n - 1).to_string()
}

#[test]
fn inspect_and_snapshot_validate() {
    let mg = must_gather_bare_metal();
    let mut inputs: Vec<(String, Vec<String>)> = vec![(
        "must-gather worker1".into(),
        vec!["--must-gather".into(), mg.display().to_string(), "--node".into(), "worker1".into()],
    )];
    for f in [
        "firecracker-vm.tgz",
        "rt-v1-docker",
        "rt-v2-nonroot",
        "containers-ns-v2",
        "containers-nested-v2",
    ] {
        inputs.push((f.into(), vec!["--root".into(), host_fixture(f).display().to_string()]));
    }
    inputs.push(("the live host".into(), vec![]));
    for (what, args) in &inputs {
        for extra in [&[][..], &["--containers"][..]] {
            let doc = stdout_json(
                lowlat().arg("inspect").args(extra).args(["--json", "-"]).args(args),
                &[0],
            );
            validates("inspect.schema.json", &format!("inspect {extra:?} of {what}"), &doc);
        }
    }
    // A snapshot's manifest, and the host model read back from the snapshot.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let snap = dir.path().join("s.tgz");
    let o = lowlat()
        .args(["snapshot", "-o"])
        .arg(&snap)
        .arg("--root")
        .arg(host_fixture("containers-ns-v2"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let f = std::fs::File::open(&snap).unwrap_or_else(|e| panic!("{e}"));
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let mut manifest = None;
    for e in tar.entries().unwrap_or_else(|e| panic!("{e}")) {
        let mut e = e.unwrap_or_else(|e| panic!("{e}"));
        if e.path().is_ok_and(|p| p.as_os_str() == "lowlat-snapshot.json") {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut e, &mut s).unwrap_or_else(|e| panic!("{e}"));
            manifest = Some(serde_json::from_str::<Value>(&s).unwrap_or_else(|e| panic!("{e}")));
        }
    }
    let manifest = manifest.unwrap_or_else(|| panic!("no lowlat-snapshot.json in the snapshot"));
    validates("snapshot-manifest.schema.json", "lowlat-snapshot.json", &manifest);
    let doc = stdout_json(lowlat().args(["inspect", "--json", "-", "--root"]).arg(&snap), &[0]);
    validates("inspect.schema.json", "inspect of a snapshot", &doc);
}

#[test]
fn plan_and_verify_validate() {
    let mg = must_gather_bare_metal();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = dir.path().join("plan.yaml");
    let o = lowlat()
        .arg("plan")
        .arg("--must-gather")
        .arg(&mg)
        .args(["--node", "worker1", "-o"])
        .arg(&plan)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    file_validates("plan.schema.json", &plan);
    let ppc = dir.path().join("ppc.yaml");
    let o = lowlat()
        .arg("plan")
        .arg("--must-gather")
        .arg(&mg)
        .args(["--mcp-name", "worker-cnf", "--style", "ppc", "--reserved-cpu-count=4"])
        .args(["--rt-kernel=true", "--power", "ultra-low-latency", "-o"])
        .arg(&ppc)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    file_validates("plan.schema.json", &ppc);
    file_validates("plan.schema.json", &report_fixture("plan.yaml"));

    let sno = testdata().join("fixtures/nto/must-gather/must-gather.sno");
    let info =
        stdout_json(lowlat().args(["plan", "--info", "--json", "--must-gather"]).arg(&sno), &[0]);
    validates("plan-info.schema.json", "plan --info --json", &info);

    // verify: the must-gather worker (failing checks, exit 1) with its implied plan and with
    // the plan written above.
    let v = stdout_json(
        lowlat().arg("verify").arg("--must-gather").arg(&mg).args(["--node", "worker1", "--json"]),
        &[0, 1],
    );
    validates("verify.schema.json", "verify --json (implied plan)", &v);
    let v = stdout_json(
        lowlat()
            .arg("verify")
            .arg("--must-gather")
            .arg(&mg)
            .args(["--node", "worker1", "--json", "-", "--plan"])
            .arg(&plan),
        &[0, 1],
    );
    validates("verify.schema.json", "verify --json --plan", &v);
    for f in ["verify.json", "verify-after.json"] {
        file_validates("verify.schema.json", &report_fixture(f));
    }
}

#[test]
fn render_validates() {
    let mg = must_gather_bare_metal();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = dir.path().join("plan.yaml");
    let o = lowlat()
        .arg("plan")
        .arg("--must-gather")
        .arg(&mg)
        .args(["--node", "worker1", "-o"])
        .arg(&plan)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for target in ["cmdline", "grub", "tuned", "openshift", "systemd", "k8s-latency-test"] {
        let doc = stdout_json(
            lowlat().args(["render", target, "--json", "-", "--plan"]).arg(&plan),
            &[0],
        );
        assert_eq!(doc["target"], target);
        validates("render.schema.json", &format!("render {target} --json"), &doc);
    }
    let doc = stdout_json(lowlat().args(["render", "cluster-rbac", "--json", "-"]), &[0]);
    validates("render.schema.json", "render cluster-rbac --json", &doc);
}

/// apply (dry run, for real), status before and after, revert (and revert again: no journal),
/// every `--json` document validated.
#[test]
fn apply_status_revert_validate() {
    let sb = crate::apply::sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = crate::apply::plan_file(work.path());
    // The journal inside the tree, where `status --root` reads it (the path taken in the tree).
    let journal = sb.path().join("var/lib/lowlat/journal.jsonl");
    let apply = |extra: &[&str]| {
        let mut c = lowlat();
        c.arg("apply").arg("--plan").arg(&plan).arg("--journal").arg(&journal);
        c.arg("--sysroot").arg(sb.path()).args(extra).args(["--json", "-"]);
        stdout_json(&mut c, &[0])
    };
    let status = |what: &str| {
        let mut c = lowlat();
        c.arg("status").arg("--root").arg(sb.path()).arg("--plan").arg(&plan);
        c.args(["--journal", "/var/lib/lowlat/journal.jsonl", "--json", "-"]);
        let doc = stdout_json(&mut c, &[0]);
        validates("status.schema.json", &format!("status --json {what}"), &doc);
        doc
    };
    status("before apply");
    let dry = apply(&["--dry-run"]);
    assert_eq!(dry["kind"], "apply-dry-run");
    validates("apply.schema.json", "apply --dry-run --json", &dry);
    let done = apply(&[]);
    assert_eq!(done["kind"], "apply");
    validates("apply.schema.json", "apply --json", &done);
    let after = status("after apply");
    assert_eq!(after["applied"]["state"], "active", "{after}");
    assert!(after["drift"].is_object(), "{after}");
    let revert = || {
        let mut c = lowlat();
        c.arg("revert").arg("--journal").arg(&journal).arg("--sysroot").arg(sb.path());
        stdout_json(c.args(["--json", "-"]), &[0])
    };
    let r = revert();
    assert_eq!(r["kind"], "revert");
    validates("apply.schema.json", "revert --json", &r);
    status("after revert");
    let again = revert();
    validates("apply.schema.json", "revert --json without a journal", &again);
    // The live host, read only (nothing applied from a journal that does not exist).
    let live = stdout_json(
        lowlat()
            .arg("status")
            .arg("--journal")
            .arg(work.path().join("none.jsonl"))
            .args(["--json", "-"]),
        &[0],
    );
    validates("status.schema.json", "status --json of the live host", &live);
}

/// Imports of captured tool outputs, and the result files the report crate's producers wrote.
#[test]
fn imported_and_recorded_results_validate() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut n = 0;
    for e in std::fs::read_dir(results_fixture("")).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let tool = ["cyclictest", "oslat", "fio"].into_iter().find(|t| name.starts_with(t));
        let Some(tool) = tool else { continue };
        let out = dir.path().join(format!("{name}.json"));
        let o = lowlat()
            .args(["import", tool])
            .arg(e.path())
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        if !out.is_file() {
            // Inputs the importer refuses (the fixtures of its error paths) write nothing.
            assert_eq!(o.status.code(), Some(2), "import {tool} {name}");
            continue;
        }
        file_validates("result.schema.json", &out);
        n += 1;
    }
    assert!(n >= 5, "only {n} imports");
    for f in [
        "timer.json",
        "timer-after.json",
        "noise.json",
        "ticks.json",
        "ticks-after.json",
        "fsync.json",
        "fsync-after.json",
        "ht-on.json",
        "ht-off.json",
    ] {
        file_validates("result.schema.json", &report_fixture(f));
    }
}

/// `watch cmd -o FILE`'s JSON lines, and the report crate's recorded `watch storage` lines.
#[test]
fn watch_samples_validate() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("w.jsonl");
    let o = lowlat()
        .args(["watch", "cmd", "--interval", "0s", "--count", "2", "-o"])
        .arg(&out)
        .args(["--", "true"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
    for path in [out, report_fixture("watch-storage.jsonl")] {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(text.lines().count() >= 2, "{}: {text}", path.display());
        for (i, line) in text.lines().enumerate() {
            let doc: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            validates(
                "watch-sample.schema.json",
                &format!("{} line {}", path.display(), i + 1),
                &doc,
            );
        }
    }
}

/// Short measurements of this machine: timer (with a threshold, so breaches are written),
/// noise, ticks, fsync, and etcd against a served `/metrics`.
#[test]
fn measured_results_validate() {
    let cpu = cpu();
    for args in [
        &["measure", "timer", "-D", "1", "-q", "--threshold", "1ns"][..],
        &["measure", "noise", "-D", "1", "-q"],
        &["measure", "ticks", "-D", "1"],
    ] {
        let doc = stdout_json(lowlat().args(args).args(["--cpus", &cpu, "--json", "-"]), &[0, 1]);
        validates("result.schema.json", &args.join(" "), &doc);
    }
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let doc = stdout_json(
        lowlat()
            .args([
                "measure",
                "fsync",
                "--size",
                "230000",
                "--file-size",
                "1m",
                "--window",
                "100ms",
            ])
            .arg("--dir")
            .arg(d.path())
            .args(["--json", "-"]),
        &[0, 1],
    );
    validates("result.schema.json", "measure fsync", &doc);

    // etcd: its `/metrics` served from the verdict corpus by a plain HTTP server (idle: no
    // fsync, exit 1, the result written all the same).
    let body = std::fs::read_to_string(testdata().join("verdicts/etcd-metrics/idle.prom"))
        .unwrap_or_else(|e| panic!("{e}"));
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = l.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
    std::thread::spawn(move || {
        use std::io::{Read as _, Write as _};
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let _ = s.read(&mut [0u8; 4096]);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let doc = stdout_json(
        lowlat()
            .args(["measure", "etcd", "--endpoint", &format!("http://127.0.0.1:{port}/metrics")])
            .args(["--duration", "1s", "--interval", "500ms", "--json", "-"]),
        &[1],
    );
    assert_eq!(doc["kind"], "etcd");
    validates("result.schema.json", "measure etcd", &doc);
}

/// `check --json` and every JSON file it wrote (host model, plan, verify report, results), and
/// `report --json` over those results.
#[test]
fn check_and_report_validate() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("o");
    let mut c = lowlat();
    c.args(["check", "--skip", "timer,noise,fsync", "--duration", "2s", "--json", "-", "--out"])
        .arg(&out);
    let doc = stdout_json(&mut c, &[0, 1]);
    validates("check.schema.json", "check --json", &doc);
    let mut results = Vec::new();
    for (f, schema) in [
        ("inspect.json", "inspect.schema.json"),
        ("plan.yaml", "plan.schema.json"),
        ("verify.json", "verify.schema.json"),
        ("ticks.json", "result.schema.json"),
    ] {
        let p = out.join(f);
        assert!(p.is_file(), "check wrote {f}");
        file_validates(schema, &p);
        if f != "plan.yaml" {
            results.push(p);
        }
    }
    let html = dir.path().join("r.html");
    let mut c = lowlat();
    c.arg("report").args(&results).arg("-o").arg(&html).args(["--json", "-"]);
    let doc = stdout_json(&mut c, &[0, 1]);
    validates("report.schema.json", "report --json", &doc);
}

/// `fleet.json` as `cluster check` writes it: a node's row read from a directory of real
/// result files (`NodeResult::read_dir`, as the controller does) and a node that never ran.
#[cfg(feature = "cluster")]
#[test]
fn fleet_validates() {
    use cluster::model::{Cleanup, Fleet, NodeResult, Status, SCHEMA_VERSION};
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let node = dir.path().join("node-a");
    std::fs::create_dir_all(&node).unwrap_or_else(|e| panic!("{e}"));
    for f in ["timer.json", "noise.json", "ticks.json", "fsync.json", "verify.json", "inspect.json"]
    {
        std::fs::copy(report_fixture(f), node.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    let mut a = NodeResult::not_run("node-a", Status::Completed, String::new());
    a.reason = None;
    a.read_dir(dir.path(), "node-a", 50_000, None);
    let b = NodeResult::not_run("node-b", Status::NeverStarted, "not started after 20s".into());
    let nodes = vec![a, b];
    let fleet = Fleet {
        schema_version: SCHEMA_VERSION,
        kind: "fleet".into(),
        tool: "lowlat test".into(),
        started_at: "2026-11-25T00:00:00Z".into(),
        duration_ns: 30_000_000_000,
        run: "0a1b2c3d".into(),
        namespace: "default".into(),
        selector: "lowlat.test/check=x".into(),
        image: "localhost/lowlat:0.1.0".into(),
        command: vec!["lowlat".into(), "cluster".into(), "agent".into()],
        interrupted: false,
        verdict: Fleet::judge(&nodes),
        nodes,
        cleanup: Cleanup { jobs: 2, pods: 2, leftover: vec![] },
    };
    let doc = serde_json::to_value(&fleet).unwrap_or_else(|e| panic!("{e}"));
    assert!(doc["nodes"][0]["timer"].is_object(), "the node's timer was read: {doc}");
    validates("fleet.schema.json", "fleet.json", &doc);
}

/// A document that breaks its schema is caught: the validation is not vacuous.
#[test]
fn a_document_that_breaks_its_schema_fails() {
    let doc =
        json!({ "schema_version": 1, "checks": [{ "id": "x", "status": "maybe" }], "summary": {} });
    assert!(!validator("verify.schema.json").is_valid(&doc));
    let mut ok = stdout_json(lowlat().args(["render", "cluster-rbac", "--json", "-"]), &[0]);
    assert!(validator("render.schema.json").is_valid(&ok));
    ok["schema_version"] = json!(2);
    assert!(
        !validator("render.schema.json").is_valid(&ok),
        "a newer schema_version is not this schema"
    );
    // A result: a newer version, an unknown kind, a statistic of the wrong type.
    let text =
        std::fs::read_to_string(report_fixture("timer.json")).unwrap_or_else(|e| panic!("{e}"));
    let timer: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let results = validator("result.schema.json");
    assert!(results.is_valid(&timer));
    for (pointer, bad) in [
        ("/schema_version", json!(2)),
        ("/kind", json!("bogus")),
        ("/threads/0/max_ns", json!("1 ms")),
    ] {
        let mut broken = timer.clone();
        *broken.pointer_mut(pointer).unwrap_or_else(|| panic!("{pointer} in timer.json")) = bad;
        assert!(!results.is_valid(&broken), "{pointer} broken still validates");
    }
}
