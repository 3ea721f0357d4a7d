//! `lowlat apply` / `lowlat revert` as a user runs them: on a sandbox tree (`--sysroot`, no
//! root needed) and, marked ignored, on this live host (round trip with `verify`, and a
//! SIGKILL in the middle of `apply`). Live tests revert in a guard that also runs on panic.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::lowlat_std as lowlat;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    if let Some(d) = p.parent() {
        fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
    }
    fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
}

/// A 2-CPU host tree: IRQs, workqueues, sysctls, THP (`apply --sysroot` writes it; the
/// schema tests use it too).
pub(crate) fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let r = dir.path();
    write(r, "proc/cmdline", "root=/dev/vda console=ttyS0\n");
    write(r, "proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");
    write(r, "sys/devices/system/cpu/online", "0-1\n");
    write(r, "sys/devices/system/cpu/possible", "0-1\n");
    for c in 0..2 {
        write(
            r,
            &format!("sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list"),
            &format!("{c}\n"),
        );
        write(r, &format!("sys/devices/system/cpu/cpu{c}/topology/physical_package_id"), "0\n");
        write(r, &format!("sys/devices/system/cpu/cpu{c}/topology/core_id"), &format!("{c}\n"));
    }
    for irq in [24, 25] {
        write(r, &format!("proc/irq/{irq}/smp_affinity_list"), "0-1\n");
        write(r, &format!("proc/irq/{irq}/smp_affinity"), "3\n");
        write(r, &format!("proc/irq/{irq}/effective_affinity_list"), "1\n");
    }
    write(r, "proc/irq/default_smp_affinity", "3\n");
    write(r, "sys/devices/virtual/workqueue/cpumask", "3\n");
    write(r, "sys/devices/virtual/workqueue/writeback/cpumask", "3\n");
    write(r, "sys/bus/workqueue/devices/writeback/cpumask", "3\n");
    write(r, "proc/sys/kernel/timer_migration", "1\n");
    write(r, "proc/sys/vm/stat_interval", "1\n");
    write(r, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    dir
}

const PLAN: &str = r#"schema_version: 1
name: vm-test
host: null
reserved: "0"
isolated: "1"
offlined: ""
options:
  style: lowlat
  power: default
  rt_kernel: false
  no_smt: false
  split_reserved_across_numa: false
  topology_policy: null
  per_pod_power_management: false
  hugepages: []
  near_device: null
kernel_args:
  - key: nohz_full
    value: "1"
    reason: stop the tick on the isolated CPU
runtime:
  - kind: irq-affinity
    cpus: "0"
    reason: device interrupts to housekeeping
  - kind: workqueue-mask
    cpus: "0"
    reason: unbound work to housekeeping
  - kind: kthread-affinity
    cpus: "0"
    reason: movable kthreads to housekeeping
  - kind: sysctl
    name: kernel.timer_migration
    value: "0"
    reason: keep timers where they were armed
  - kind: sysctl
    name: vm.stat_interval
    value: "10"
    reason: fewer vmstat updates
rationale: []
"#;

/// [`PLAN`], a plan for [`sandbox`], written into `dir`.
pub(crate) fn plan_file(dir: &Path) -> PathBuf {
    let p = dir.join("plan.yaml");
    fs::write(&p, PLAN).unwrap_or_else(|e| panic!("{e}"));
    p
}

/// Every file of a tree, path relative to it → bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.ends_with("run/lowlat-apply.lock") {
                // (the host-wide lock file is apply's own, not host state)
                let rel = p.strip_prefix(root).map(Path::to_path_buf).unwrap_or_default();
                out.insert(rel, fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{e}"));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn dry_run_prints_the_changes_and_writes_nothing() {
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let before = snapshot(sb.path());
    let journal = work.path().join("j.jsonl");
    let (code, out, err) = run(lowlat()
        .args(["apply", "--dry-run", "--plan"])
        .arg(&plan)
        .arg("--journal")
        .arg(&journal)
        .arg("--sysroot")
        .arg(sb.path()));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("dry run: nothing is written"), "{out}");
    assert!(out.contains("/proc/sys/vm/stat_interval") && out.contains("1 → 10"), "{out}");
    assert!(
        out.contains("pending reboot")
            && out.contains("lowlat render --plan")
            && out.contains("grubby --update-kernel=ALL --args=\"")
            && out.contains(" nohz_full=1 "),
        "{out}"
    );
    assert_eq!(snapshot(sb.path()), before);
    assert!(!journal.exists());
}

#[test]
fn apply_then_revert_is_byte_identical_on_a_sandbox() {
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let journal = work.path().join("j.jsonl");
    let before = snapshot(sb.path());
    let (code, out, err) = run(lowlat()
        .arg("apply")
        .arg("--plan")
        .arg(&plan)
        .arg("--journal")
        .arg(&journal)
        .arg("--sysroot")
        .arg(sb.path()));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        fs::read_to_string(sb.path().join("proc/sys/vm/stat_interval")).unwrap_or_default(),
        "10\n"
    );
    assert_eq!(
        fs::read_to_string(sb.path().join("proc/sys/kernel/timer_migration")).unwrap_or_default(),
        "0\n"
    );
    let text = fs::read_to_string(&journal).unwrap_or_default();
    assert!(
        text.contains(r#""type":"change""#)
            && text.contains(r#""old":"1""#)
            && text.contains("boot_id"),
        "{text}"
    );
    // A second apply is a no-op (everything already in place) but still journaled safely.
    let (code, out2, _) = run(lowlat()
        .arg("apply")
        .arg("--plan")
        .arg(&plan)
        .arg("--journal")
        .arg(&journal)
        .arg("--sysroot")
        .arg(sb.path()));
    assert_eq!(code, 0);
    assert!(out2.contains("applied 0 change(s)"), "{out2}");

    let (code, out, err) =
        run(lowlat().arg("revert").arg("--journal").arg(&journal).arg("--sysroot").arg(sb.path()));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("restored"), "{out}");
    assert_eq!(snapshot(sb.path()), before, "host tree differs after revert");
    // Idempotent: nothing left to do.
    let (code, out, _) =
        run(lowlat().arg("revert").arg("--journal").arg(&journal).arg("--sysroot").arg(sb.path()));
    assert_eq!(code, 0);
    assert!(out.contains("nothing to revert"), "{out}");
}

#[test]
fn sigterm_mid_apply_rolls_back_and_exits_130() {
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let journal = work.path().join("j.jsonl");
    let before = snapshot(sb.path());
    let child = lowlat()
        .arg("apply")
        .arg("--plan")
        .arg(&plan)
        .arg("--journal")
        .arg(&journal)
        .arg("--sysroot")
        .arg(sb.path())
        .args(["--step-delay", "300"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while fs::read_to_string(&journal).unwrap_or_default().matches(r#""type":"outcome""#).count()
        < 2
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted") && err.contains("rolled back"), "{err}");
    assert_eq!(snapshot(sb.path()), before, "host tree differs after an interrupted apply");
}

#[test]
fn concurrent_apply_is_refused() {
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let journal = work.path().join("j.jsonl");
    let _held = tune::journal::Lock::acquire(&journal).unwrap_or_else(|e| panic!("{e}"));
    let (code, _, err) = run(lowlat()
        .arg("apply")
        .arg("--plan")
        .arg(&plan)
        .arg("--journal")
        .arg(&journal)
        .arg("--sysroot")
        .arg(sb.path()));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("another `lowlat apply`"), "{err}");
}

#[test]
fn a_journal_from_another_boot_is_refused_clearly() {
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let journal = work.path().join("j.jsonl");
    fs::write(
        &journal,
        r#"{"type":"change","seq":1,"kind":"file","path":"/proc/sys/vm/stat_interval","format":"text","old":"1","new":"10","why":"","time":"2026-01-01T00:00:00Z","boot_id":"old-boot"}
"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, _, err) =
        run(lowlat().arg("revert").arg("--journal").arg(&journal).arg("--sysroot").arg(sb.path()));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("boot old-boot") && err.contains("11111111-2222"), "{err}");
    let (code, out, _) = run(lowlat()
        .arg("revert")
        .arg("--forget")
        .arg("--journal")
        .arg(&journal)
        .arg("--sysroot")
        .arg(sb.path()));
    assert_eq!(code, 0, "{out}");
    assert!(!journal.exists());
}

#[test]
fn apply_sets_a_journal_of_another_boot_aside_and_starts_afresh() {
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let journal = work.path().join("j.jsonl");
    fs::write(
        &journal,
        r#"{"type":"change","seq":1,"kind":"file","path":"/proc/sys/vm/stat_interval","format":"text","old":"1","new":"10","why":"","time":"2026-01-01T00:00:00Z","boot_id":"old-boot"}
"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = run(lowlat()
        .arg("apply")
        .arg("--plan")
        .arg(&plan)
        .arg("--journal")
        .arg(&journal)
        .arg("--sysroot")
        .arg(sb.path()));
    assert_eq!(code, 0, "{out}{err}");
    let kept = work.path().join("j.jsonl.boot-old-boot");
    assert!(err.contains("note: ") && err.contains("was from boot old-boot"), "{err}");
    assert!(err.contains(&kept.display().to_string()), "{err}");
    assert!(fs::read_to_string(&kept).unwrap_or_default().contains("old-boot"));
    let fresh = fs::read_to_string(&journal).unwrap_or_default();
    assert!(fresh.contains("11111111-2222") && !fresh.contains("old-boot"), "{fresh}");
}

#[test]
fn a_revert_that_cannot_restore_exits_4_and_keeps_the_journal() {
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let journal = work.path().join("j.jsonl");
    let (code, out, err) = run(lowlat()
        .arg("apply")
        .arg("--plan")
        .arg(&plan)
        .arg("--journal")
        .arg(&journal)
        .arg("--sysroot")
        .arg(sb.path()));
    assert_eq!(code, 0, "{out}{err}");
    // A value that can be neither read nor written (EISDIR, not a vanished file).
    let stat_interval = sb.path().join("proc/sys/vm/stat_interval");
    fs::remove_file(&stat_interval).unwrap_or_else(|e| panic!("{e}"));
    fs::create_dir(&stat_interval).unwrap_or_else(|e| panic!("{e}"));
    let revert = || {
        run(lowlat().arg("revert").arg("--journal").arg(&journal).arg("--sysroot").arg(sb.path()))
    };
    let (code, out, err) = revert();
    assert_eq!(code, 4, "{out}{err}");
    assert!(out.contains("NOT restored") && out.contains("/proc/sys/vm/stat_interval"), "{out}");
    assert!(err.contains("could not be restored") && err.contains("lowlat revert"), "{err}");
    assert!(journal.exists(), "the journal stays for another try");
    // The cause fixed, the next revert finishes and closes the journal.
    fs::remove_dir(&stat_interval).unwrap_or_else(|e| panic!("{e}"));
    fs::write(&stat_interval, "10\n").unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = revert();
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(fs::read_to_string(&stat_interval).unwrap_or_default(), "1\n");
    assert!(!journal.exists() && work.path().join("j.jsonl.reverted").exists());
}

#[test]
fn a_bad_plan_is_a_usage_error_naming_the_file() {
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let p = work.path().join("bad.yaml");
    fs::write(&p, "schema_version: one\n").unwrap_or_else(|e| panic!("{e}"));
    let (code, _, err) = run(lowlat().arg("apply").arg("--dry-run").arg("--plan").arg(&p));
    assert_eq!(code, 2);
    assert!(err.contains("bad.yaml"), "{err}");
}

fn apply_cmd(plan: &Path, journal: &Path, sysroot: &Path) -> Command {
    let mut c = lowlat();
    c.arg("apply")
        .arg("--plan")
        .arg(plan)
        .arg("--journal")
        .arg(journal)
        .arg("--sysroot")
        .arg(sysroot);
    c
}

fn revert_cmd(journal: &Path, sysroot: &Path) -> Command {
    let mut c = lowlat();
    c.arg("revert").arg("--journal").arg(journal).arg("--sysroot").arg(sysroot);
    c
}

#[test]
fn a_plan_or_journal_writing_outside_what_apply_knows_is_refused() {
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let victim = sb.path().parent().unwrap_or(sb.path()).join(format!(
        "{}-victim",
        sb.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    ));
    fs::write(&victim, "precious\n").unwrap_or_else(|e| panic!("{e}"));
    let rel_victim =
        format!("../{}", victim.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
    let before = snapshot(sb.path());
    let journal = work.path().join("j.jsonl");
    for (name, item) in [
        ("escape", format!("  - kind: file\n    path: {rel_victim}\n    value: PWNED\n    reason: x\n")),
        ("etc", "  - kind: file\n    path: etc/passwd\n    value: PWNED\n    reason: x\n".into()),
        ("core", "  - kind: sysctl\n    name: kernel.core_pattern\n    value: '|/tmp/x'\n    reason: x\n".into()),
    ] {
        let p = work.path().join(format!("{name}.yaml"));
        fs::write(&p, PLAN.replace("rationale: []", &format!("{item}rationale: []")))
            .unwrap_or_else(|e| panic!("{e}"));
        for dry in [true, false] {
            let mut cmd = apply_cmd(&p, &journal, sb.path());
            if dry {
                cmd.arg("--dry-run");
            }
            let (code, out, err) = run(&mut cmd);
            assert_eq!(code, 2, "{name} dry={dry}: {out}{err}");
            // Refused when the plan is read (a `..` path, shell syntax in a value) or by
            // apply (a target it never writes).
            assert!(
                err.contains("never makes; nothing was changed") || err.contains("invalid plan: runtime[5]"),
                "{err}"
            );
        }
    }
    assert_eq!(snapshot(sb.path()), before, "nothing changed");
    assert!(!journal.exists());
    // A journal naming such files: revert refuses it whole, writes nothing.
    for path in
        [format!("/{rel_victim}"), "/etc/passwd".into(), "/proc/sys/kernel/core_pattern".into()]
    {
        fs::write(
            &journal,
            format!(
                r#"{{"type":"change","seq":1,"kind":"file","path":"/proc/sys/vm/stat_interval","format":"text","old":"7","new":"1","why":"","time":"t","boot_id":"11111111-2222-3333-4444-555555555555"}}
{{"type":"change","seq":2,"kind":"file","path":"{path}","format":"text","old":"root::0:0::/:/bin/sh","new":"x","why":"","time":"t","boot_id":"11111111-2222-3333-4444-555555555555"}}
"#
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (code, out, err) = run(&mut revert_cmd(&journal, sb.path()));
        assert_eq!(code, 2, "{path}: {out}{err}");
        assert!(err.contains("line 2") && err.contains("refusing"), "{err}");
    }
    assert_eq!(fs::read_to_string(&victim).unwrap_or_default(), "precious\n");
    assert_eq!(snapshot(sb.path()), before, "revert wrote nothing");
}

#[test]
fn the_journal_is_private_whatever_the_umask_and_never_followed() {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let journal = work.path().join("state/sub/j.jsonl");
    let mut cmd = apply_cmd(&plan, &journal, sb.path());
    // SAFETY: umask(2) in the child between fork and exec; async-signal-safe, no allocation.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "{out}{err}");
    let mode = |p: &Path| fs::metadata(p).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
    assert_eq!(mode(&work.path().join("state")), 0o700);
    assert_eq!(mode(&work.path().join("state/sub")), 0o700);
    assert_eq!(mode(&journal), 0o600);
    assert_eq!(mode(&work.path().join("state/sub/j.jsonl.lock")), 0o600);
    assert_eq!(mode(&sb.path().join("run/lowlat-apply.lock")), 0o600);
    // Symlinks planted at the journal's and the lock's names are refused, their targets kept.
    let sb2 = sandbox();
    let victim = work.path().join("victim");
    fs::write(&victim, "").unwrap_or_else(|e| panic!("{e}"));
    for name in ["l1/j.jsonl", "l2/j.jsonl.lock"] {
        let link = work.path().join(name);
        fs::create_dir_all(link.parent().unwrap_or(work.path())).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&victim, &link).unwrap_or_else(|e| panic!("{e}"));
        let j = link.with_file_name("j.jsonl");
        let (code, out, err) = run(&mut apply_cmd(&plan, &j, sb2.path()));
        assert_ne!(code, 0, "{name}: {out}{err}");
        assert!(err.contains("Too many levels of symbolic links"), "{name}: {err}");
    }
    assert_eq!(fs::read(&victim).unwrap_or_default(), b"");
}

#[test]
fn a_torn_journal_tail_is_cut_and_revert_still_restores() {
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let journal = work.path().join("j.jsonl");
    let before = snapshot(sb.path());
    let (code, out, err) = run(&mut apply_cmd(&plan, &journal, sb.path()));
    assert_eq!(code, 0, "{out}{err}");
    // A power cut while appending: half a line, ending inside the 3-byte `∩`.
    let mut bytes = fs::read(&journal).unwrap_or_default();
    let good = bytes.len();
    bytes.extend_from_slice(
        b"{\"type\":\"outcome\",\"seq\":9,\"outcome\":\"applied\",\"message\":\"\xe2\x88",
    );
    fs::write(&journal, &bytes).unwrap_or_else(|e| panic!("{e}"));
    // The next apply cuts the torn line off (and says so) before appending.
    let (code, out, err) = run(&mut apply_cmd(&plan, &journal, sb.path()));
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("dropped a torn last line (59 bytes"), "{err}");
    let now = fs::read(&journal).unwrap_or_default();
    assert_eq!(now[..good], bytes[..good]);
    assert!(now[good..].starts_with(b"{\"type\":\"begin\""), "appended on a line of its own");
    // Torn again, then reverted alone.
    let mut torn = now.clone();
    torn.extend_from_slice(b"{\"type\":\"change\",\"seq\":1,\"kind\":\"fi");
    fs::write(&journal, &torn).unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = run(&mut revert_cmd(&journal, sb.path()));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(snapshot(sb.path()), before);
}

/// The real `lowlat apply` killed (SIGKILL, no rollback) before each of its steps — every
/// journal append and host write — and, separately, in the middle of each journal append;
/// `lowlat revert` alone restores the tree byte for byte. The kill comes from the fault seam
/// `LOWLAT_FAULT`, which only debug builds honour.
#[cfg(debug_assertions)]
#[test]
fn apply_killed_at_every_step_is_reverted_byte_for_byte() {
    use std::os::unix::process::ExitStatusExt as _;
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let before = snapshot(sandbox().path());
    let mut killed = 0;
    for fault in ["crash@{k}", "tear@{k}:1", "tear@{k}:150"] {
        let mut k = 1;
        loop {
            let sb = sandbox();
            let journal = work.path().join(format!("j-{killed}.jsonl"));
            let fault = fault.replace("{k}", &k.to_string());
            let out = apply_cmd(&plan, &journal, sb.path())
                .env("LOWLAT_FAULT", &fault)
                .output()
                .unwrap_or_else(|e| panic!("{e}"));
            let (code, o, e) = run(&mut revert_cmd(&journal, sb.path()));
            assert_eq!(code, 0, "{fault}: {o}{e}");
            assert_eq!(snapshot(sb.path()), before, "{fault}: not restored");
            if out.status.success() {
                // Past the last step: the apply finished.
                break;
            }
            assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{fault}: {out:?}");
            killed += 1;
            k += 1;
        }
        assert!(k > 20, "{fault}: only {k} steps");
    }
    eprintln!("apply killed {killed} times, each reverted byte for byte");
}

// ---------------------------------------------------------------- live host (root) ------

const LIVE: &str =
    "needs root and changes the host: run with --include-ignored as root (.ci/run does)";

/// Everything a live apply may change: the files, and the CPU affinity of every thread, keyed
/// `task <tid> <start time> <comm>` so that a reused tid is another key.
fn live_state() -> BTreeMap<String, String> {
    let mut paths: Vec<String> = vec![
        "/proc/irq/default_smp_affinity".into(),
        "/sys/devices/virtual/workqueue/cpumask".into(),
        "/sys/bus/workqueue/devices/writeback/cpumask".into(),
        // The writeback pool scope goes with the workqueue masks (one of the two exists).
        "/sys/bus/workqueue/devices/writeback/numa".into(),
        "/sys/bus/workqueue/devices/writeback/affinity_scope".into(),
        "/proc/sys/kernel/timer_migration".into(),
        "/proc/sys/vm/stat_interval".into(),
    ];
    for e in fs::read_dir("/proc/irq").into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            paths.push(format!("{}/smp_affinity_list", p.display()));
        }
    }
    for e in fs::read_dir("/sys/devices/virtual/workqueue").into_iter().flatten().flatten() {
        let p = e.path().join("cpumask");
        if p.is_file() {
            paths.push(p.display().to_string());
        }
    }
    let mut state: BTreeMap<String, String> = paths
        .into_iter()
        .map(|p| {
            let v = fs::read_to_string(&p).unwrap_or_else(|e| format!("<{e}>"));
            (p, v)
        })
        .collect();
    for pid in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let tasks = pid.path().join("task");
        for t in fs::read_dir(&tasks).into_iter().flatten().flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Some((start, comm)) = tune::real::task_identity(Path::new("/"), tid) else {
                continue;
            };
            let status = fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let Some(allowed) = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            else {
                continue;
            };
            state.insert(format!("task {tid} {start} {comm}"), allowed.trim().to_string());
        }
    }
    state
}

/// The key of a journaled change in [`live_state`].
fn state_key(target: &tune::Target) -> String {
    match target {
        tune::Target::File { path, .. } => path.clone(),
        tune::Target::Task { tid, start_time, comm, .. } => {
            format!("task {tid} {start_time} {comm}")
        }
    }
}

/// After a revert the host must be as `before` in every value apply changed (each target of
/// the journal, every kthread's mask included) and in every value both states hold (threads
/// that started or exited meanwhile are the only differences allowed). Returns how many
/// journaled values were compared.
fn assert_restored(before: &BTreeMap<String, String>, journal: &Path) -> usize {
    let after = live_state();
    let records = tune::journal::read(journal)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no journal at {}", journal.display()));
    let mut compared = 0;
    let mut gone = Vec::new();
    for r in &records {
        let tune::journal::Record::Change { target, old, .. } = r else { continue };
        let key = state_key(target);
        let was = before.get(&key).unwrap_or_else(|| panic!("{key} changed but not in the state"));
        assert!(
            tune::target::same_value(target.format(), was, old),
            "{key}: journal old {old:?}, before {was:?}"
        );
        match after.get(&key) {
            Some(now) => {
                assert_eq!(now.trim(), was.trim(), "{key} not restored");
                compared += 1;
            }
            None => gone.push(key),
        }
    }
    assert!(gone.len() <= 3, "too many changed threads exited to tell: {gone:?}");
    let differ: Vec<&String> = before
        .iter()
        .filter(|(k, v)| after.get(*k).is_some_and(|a| a != *v))
        .map(|(k, _)| k)
        .collect();
    assert!(differ.is_empty(), "live host differs after revert: {differ:?}");
    compared
}

/// Live tests take turns: each changes the whole host.
static LIVE_HOST: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn live_turn() -> std::sync::MutexGuard<'static, ()> {
    LIVE_HOST.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reverts the live host when dropped (test end or panic).
struct Guard(PathBuf);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = lowlat().arg("revert").arg("--journal").arg(&self.0).status();
    }
}

#[test]
#[ignore = "needs root and changes the host: run with --include-ignored as root (.ci/run does)"]
fn live_round_trip_apply_verify_revert() {
    assert!(util::privilege::is_root(), "{LIVE}");
    let _turn = live_turn();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let journal = work.path().join("journal.jsonl");
    let before = live_state();
    {
        let _guard = Guard(journal.clone());
        let (code, out, err) =
            run(lowlat().arg("apply").arg("--plan").arg(&plan).arg("--journal").arg(&journal));
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("pending reboot"), "{out}");
        let (_, json, err) = run(lowlat()
            .arg("verify")
            .arg("--plan")
            .arg(&plan)
            .arg("--journal")
            .arg(&journal)
            .args(["--json", "--window", "1s"]));
        let v: serde_json::Value =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}{err}"));
        let status = |id: &str| {
            v["checks"]
                .as_array()
                .and_then(|a| a.iter().find(|c| c["id"] == id))
                .map(|c| c["status"].as_str().unwrap_or("").to_string())
        };
        for id in [
            "irq-effective-affinity",
            "irq-default-affinity",
            "workqueue-masks",
            "kthreadd-affinity",
            "sysctl:kernel.timer_migration",
            "sysctl:vm.stat_interval",
        ] {
            assert_eq!(status(id).as_deref(), Some("pass"), "{id}: {json}");
        }
        // The plan's nohz_full is not booted: pending or failing, never pass.
        assert_ne!(status("cmdline-args").as_deref(), Some("pass"));
        assert!(out.contains("last until reboot") && out.contains("lowlat status"), "{out}");
        // `lowlat status`: applied in this boot, from this plan, nothing drifted, the boot
        // arguments not running.
        let lowlat_status = || {
            let (code, json, err) =
                run(lowlat().arg("status").arg("--journal").arg(&journal).arg("--json"));
            assert_eq!(code, 0, "{json}{err}");
            serde_json::from_str::<serde_json::Value>(&json)
                .unwrap_or_else(|e| panic!("{e}: {json}{err}"))
        };
        let s = lowlat_status();
        assert_eq!(s["applied"]["state"], "active", "{s}");
        assert_eq!(s["applied"]["run"]["plan"].as_str(), Some(plan.to_str().unwrap_or("")));
        assert!(s["applied"]["run"]["changes"].as_u64().unwrap_or(0) > 5, "{s}");
        assert_eq!(s["plan"]["from"], "journal");
        assert_eq!(s["drift"]["changed"].as_array().map(Vec::len), Some(0), "{s}");
        assert!(s["boot_args"]
            .as_array()
            .is_some_and(|a| a.iter().any(|b| b["state"] != "running")));
        let (code, out, err) = run(lowlat().arg("revert").arg("--journal").arg(&journal));
        assert_eq!(code, 0, "{out}{err}");
        let s = lowlat_status();
        assert_eq!(s["applied"]["state"], "reverted", "{s}");
    }
    let kept = journal.with_file_name("journal.jsonl.reverted");
    let compared = assert_restored(&before, &kept);
    assert!(compared > 5, "{compared}");
}

#[test]
#[ignore = "needs root and changes the host: run with --include-ignored as root (.ci/run does)"]
fn live_sigkill_mid_apply_then_revert_restores() {
    assert!(util::privilege::is_root(), "{LIVE}");
    let _turn = live_turn();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let plan = plan_file(work.path());
    let journal = work.path().join("journal.jsonl");
    let before = live_state();
    let _guard = Guard(journal.clone());
    let mut child = lowlat()
        .arg("apply")
        .arg("--plan")
        .arg(&plan)
        .arg("--journal")
        .arg(&journal)
        .args(["--step-delay", "100"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    // Wait until kthreads are being moved (IRQs and workqueues done), then kill it without
    // warning.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let text = fs::read_to_string(&journal).unwrap_or_default();
        let tasks = text.lines().filter(|l| l.contains(r#""kind":"task""#)).count();
        if tasks >= 3 || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap_or_else(|e| panic!("{e}"));
    let _ = child.wait();
    let text = fs::read_to_string(&journal).unwrap_or_default();
    assert!(
        !text.contains(r#""type":"commit""#),
        "apply finished before the kill: raise --step-delay\n{text}"
    );
    let tasks = text.lines().filter(|l| l.contains(r#""kind":"task""#)).count();
    assert!(tasks >= 3, "the kill came before any thread moved\n{text}");
    let (code, out, err) = run(lowlat().arg("revert").arg("--journal").arg(&journal));
    assert_eq!(code, 0, "{out}{err}");
    let kept = journal.with_file_name("journal.jsonl.reverted");
    let compared = assert_restored(&before, &kept);
    eprintln!("{compared} values apply changed compared after the revert ({tasks} threads)");
}
