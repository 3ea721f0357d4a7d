//! CLI tests of `lowlat measure fsync`: the JSON contract, fio's JSON shape, bad input
//! refused before any write, scratch files removed on every exit path, Ctrl-C handling and
//! the scheduler restored (root-only tests are marked ignored and restore the host).

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::lowlat_std as lowlat;

fn entries(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn short_run_writes_contract_json_and_fio_shape_and_cleans_up() {
    let d = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (j, f) = (out.path().join("r.json"), out.path().join("fio.json"));
    let o = lowlat()
        .args([
            "measure",
            "fsync",
            "--size",
            "230000",
            "--file-size",
            "1m",
            "--window",
            "100ms",
            "--dir",
        ])
        .arg(d.path())
        .arg("--json")
        .arg(&j)
        .arg("--fio-json")
        .arg(&f)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("pwrite 2300 B + fdatasync")
            && stdout.contains("verdict: etcd p99 < 10 ms"),
        "{stdout}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["kind"], "fsync");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["partial"], false);
    assert_eq!(v["ops"], 100);
    for k in ["min", "avg", "max", "stddev", "p50", "p90", "p99", "p999", "p9999"] {
        assert!(v["lat_ns"][k].is_u64(), "lat_ns.{k}");
    }
    assert!(v["lat_ns"]["min"].as_u64() <= v["lat_ns"]["p99"].as_u64());
    assert!(!v["windows"].as_array().unwrap().is_empty());
    assert_eq!(v["scenarios"][0]["name"], "baseline");
    assert!(v["environment"]["fs_type"].is_string());
    assert_eq!(v["etcd_buckets"].as_array().unwrap().len(), 15);
    let fio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    assert_eq!(fio["jobs"][0]["sync"]["lat_ns"]["N"], 100);
    assert_eq!(
        fio["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"],
        v["scenarios"][0]["lat_ns"]["p99"],
        "fio-shaped p99 is lowlat's p99"
    );
    assert!(entries(d.path()).is_empty(), "scratch removed: {:?}", entries(d.path()));
}

fn refused(args: &[&str], dir: &Path, needle: &str) {
    let o = lowlat().args(["measure", "fsync", "--dir"]).arg(dir).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {needle:?} not in {err}");
}

#[test]
fn bad_input_fails_before_writing() {
    let d = tempfile::tempdir().unwrap();
    refused(&[], &d.path().join("nope"), "nope");
    refused(&["--size", "100t"], d.path(), "MiB are free");
    refused(&["--interference", "fsync-per-file", "--bulk-size", "100t"], d.path(), "MiB are free");
    refused(&["--interference", "ostree"], d.path(), "expected fsync-per-file");
    refused(
        &["--mitigation", "scheduler=cfq", "--interference", "no-sync"],
        d.path(),
        "unknown I/O scheduler",
    );
    refused(&["--mitigation", "ionice-idle"], d.path(), "add --interference");
    refused(&["--interference", "no-sync,trickle"], d.path(), "need --matrix");
    assert!(entries(d.path()).is_empty());
    let file = d.path().join("f");
    std::fs::write(&file, "x").unwrap();
    refused(&[], &file, "not a directory");
}

/// Mount points from `/proc/self/mountinfo` mounted read-write, with their filesystem type and
/// whether a block device backs them (a major device number other than 0).
fn rw_mounts() -> Vec<(PathBuf, String, bool)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let major: u32 = f.get(2)?.split_once(':')?.0.parse().ok()?;
            let (point, rw) = (f.get(4)?, f.get(5)?.split(',').any(|o| o == "rw"));
            let fs = right.split(' ').next()?.to_string();
            (rw && !point.contains('\\')).then(|| (PathBuf::from(point), fs, major != 0))
        })
        .collect()
}

/// A scratch directory on a writable memory filesystem (tmpfs, ramfs: no block device), from
/// what this machine has mounted.
fn dir_without_block_device() -> tempfile::TempDir {
    let mounts = rw_mounts();
    let memory = mounts.iter().filter(|(_, fs, _)| fs == "tmpfs" || fs == "ramfs");
    for (dir, _, _) in memory {
        if let (None, Ok(d)) = (disk_of(dir), tempfile::tempdir_in(dir)) {
            return d;
        }
    }
    panic!("no writable tmpfs or ramfs (a filesystem without a block device) here: {mounts:?}");
}

#[test]
fn scheduler_the_device_lacks_is_refused() {
    // A filesystem without a block device has no scheduler to switch.
    let d = dir_without_block_device();
    refused(
        &["--interference", "no-sync", "--mitigation", "scheduler=bfq"],
        d.path(),
        "scheduler=bfq",
    );
    assert!(entries(d.path()).is_empty());
}

fn sigint_after(
    mut child: std::process::Child,
    after: Duration,
    times: u32,
) -> std::process::Output {
    // The first line is printed after the signal handlers are installed: wait for it, so a
    // slow start on a loaded machine cannot turn the test into a default-action kill.
    if let Some(out) = child.stdout.take() {
        use std::io::BufRead;
        let mut r = std::io::BufReader::new(out);
        let mut line = String::new();
        let _ = r.read_line(&mut line);
        std::thread::spawn(move || std::io::copy(&mut r, &mut std::io::sink()));
    }
    std::thread::sleep(after);
    for _ in 0..times {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc_kill(child.id() as i32, 2) };
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill_on_timeout();
    child.wait_with_output().unwrap()
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

trait KillOnTimeout {
    fn kill_on_timeout(&mut self) -> std::io::Result<()>;
}

impl KillOnTimeout for std::process::Child {
    fn kill_on_timeout(&mut self) -> std::io::Result<()> {
        for _ in 0..300 {
            if self.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.kill()
    }
}

#[test]
fn ctrl_c_writes_partial_result_and_removes_scratch() {
    let d = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let j = out.path().join("r.json");
    let child = lowlat()
        .args([
            "measure",
            "fsync",
            "--duration",
            "60s",
            "--rate",
            "200",
            "--file-size",
            "4m",
            "--dir",
        ])
        .arg(d.path())
        .arg("--json")
        .arg(&j)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let o = sigint_after(child, Duration::from_millis(1500), 1);
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["partial"], true);
    assert!(v["ops"].as_u64().unwrap() > 50, "{}", v["ops"]);
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

/// The whole disk's sysfs directory behind `dir`: `/sys/dev/block/MAJ:MIN` of the filesystem's
/// device, or its parent when that is a partition.
fn disk_of(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    Some(if sys.join("partition").exists() { sys.parent()?.to_path_buf() } else { sys })
}

/// A scratch directory on a block device whose I/O scheduler lowlat can switch, its
/// `queue/scheduler` file, the scheduler now and another one the device offers. Looks at the
/// temporary directories, then every block-device filesystem mounted read-write.
fn dir_with_switchable_scheduler() -> (tempfile::TempDir, PathBuf, String, String) {
    let mut tried = Vec::new();
    let bases = [std::env::temp_dir(), PathBuf::from("/var/tmp")]
        .into_iter()
        .chain(rw_mounts().into_iter().filter(|(_, _, block)| *block).map(|(p, _, _)| p));
    for base in bases {
        let Some(path) = disk_of(&base).map(|d| d.join("queue/scheduler")) else {
            tried.push(format!("{}: no block device", base.display()));
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let offered: Vec<&str> =
            text.split_whitespace().map(|w| w.trim_matches(|c| c == '[' || c == ']')).collect();
        let now = text
            .split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(|c| c == '[' || c == ']'));
        let other = ["bfq", "mq-deadline", "kyber", "none"]
            .into_iter()
            .find(|s| Some(*s) != now && offered.contains(s));
        match (now, other, tempfile::tempdir_in(&base)) {
            (Some(now), Some(other), Ok(d)) => return (d, path, now.into(), other.into()),
            _ => tried.push(format!("{}: {} offers {text:?}", base.display(), path.display())),
        }
    }
    panic!(
        "no writable directory on a block device offering two I/O schedulers lowlat can switch \
         between (none, mq-deadline, bfq, kyber); tried: {}",
        tried.join("; ")
    );
}

#[test]
#[ignore = "needs root and changes the host: run with --include-ignored as root (.ci/run does)"]
fn scheduler_is_restored_after_run_and_after_double_ctrl_c() {
    let (d, path, before, other) = dir_with_switchable_scheduler();
    let m = format!("scheduler={other}");
    // Normal run.
    let o = lowlat()
        .args([
            "measure",
            "fsync",
            "--duration",
            "1s",
            "--bulk-size",
            "16m",
            "--bulk-delay",
            "100ms",
            "--interference",
            "no-sync",
            "--mitigation",
            &m,
            "--dir",
        ])
        .arg(d.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&format!("-> {other} for the run")),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(std::fs::read_to_string(&path).unwrap().contains(&format!("[{before}]")));
    // Double Ctrl-C: exits at once from the signal handler, which writes the old value back.
    let child = lowlat()
        .args([
            "measure",
            "fsync",
            "--duration",
            "60s",
            "--rate",
            "100",
            "--bulk-size",
            "16m",
            "--interference",
            "no-sync",
            "--mitigation",
            &m,
            "--dir",
        ])
        .arg(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let o = sigint_after(child, Duration::from_millis(1500), 2);
    let now = std::fs::read_to_string(&path).unwrap();
    if !now.contains(&format!("[{before}]")) {
        std::fs::write(&path, &before).unwrap();
        panic!("scheduler not restored after double Ctrl-C: {now}");
    }
    assert_eq!(o.status.code(), Some(130));
}

#[test]
#[ignore = "needs root and changes the host: run with --include-ignored as root (.ci/run does)"]
fn read_only_filesystem_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=1m", "lowlat-ro"])
        .arg(d.path())
        .status();
    assert!(
        ok.as_ref().is_ok_and(|s| s.success()),
        "mount -t tmpfs -o ro failed ({ok:?}): this root-only test needs the mount privilege"
    );
    let o = lowlat()
        .args(["measure", "fsync", "--duration", "1s", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let _ = Command::new("umount").arg(d.path()).status();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("read-only"), "{err}");
}

fn metrics(n_fast: u64, n_slow: u64) -> String {
    let mut s = String::new();
    let les = ["0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128", "+Inf"];
    for (i, le) in les.iter().enumerate() {
        let c = n_fast + if i >= 7 { n_slow } else { 0 };
        s += &format!("etcd_disk_wal_fsync_duration_seconds_bucket{{le=\"{le}\"}} {c}\n");
        s += &format!("etcd_disk_backend_commit_duration_seconds_bucket{{le=\"{le}\"}} {n_fast}\n");
    }
    s += &format!(
        "etcd_disk_wal_fsync_duration_seconds_sum {}\n",
        n_fast as f64 * 0.0005 + n_slow as f64 * 0.1
    );
    s += &format!("etcd_disk_wal_fsync_duration_seconds_count {}\n", n_fast + n_slow);
    s += &format!("etcd_disk_backend_commit_duration_seconds_sum {}\n", n_fast as f64 * 0.0005);
    s += &format!("etcd_disk_backend_commit_duration_seconds_count {n_fast}\n");
    s
}

#[test]
fn measure_etcd_reports_window_deltas_from_a_metrics_endpoint() {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    // First scrape: 1000 fast fsyncs so far. Later: +100 fast and +5 in (64, 128] ms.
    let server = std::thread::spawn(move || {
        // Never hang the test: give up on connections after 30 s.
        l.set_nonblocking(true).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let mut i = 0;
        while i < 2 && std::time::Instant::now() < deadline {
            let Ok((mut s, _)) = l.accept() else {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            s.set_nonblocking(false).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut buf = [0u8; 2048];
            let _ = s.read(&mut buf).unwrap();
            let body = if i == 0 { metrics(1000, 0) } else { metrics(1100, 5) };
            // Chunked, like Go's net/http without a Content-Length.
            write!(
                s,
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                body.len()
            )
            .unwrap();
            i += 1;
        }
    });
    let out = tempfile::tempdir().unwrap();
    let j = out.path().join("etcd.json");
    let prom = out.path().join("etcd.prom");
    let o = lowlat()
        .args(["measure", "etcd", "--duration", "1s", "--interval", "1s", "--endpoint"])
        .arg(format!("http://127.0.0.1:{port}"))
        .arg("--json")
        .arg(&j)
        .arg("--prometheus")
        .arg(&prom)
        .output()
        .unwrap();
    server.join().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "p99 in (64,128] ms fails etcd's 10 ms: {stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("caveat: etcd histograms have buckets"), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["kind"], "etcd");
    assert_eq!(v["wal_fsync"]["count"], 105, "window delta, not the lifetime count");
    let p99 = v["wal_fsync"]["p99_ns"].as_u64().unwrap();
    assert!((64_000_000..=128_000_000).contains(&p99), "{p99}");
    assert_eq!(v["backend_commit"]["count"], 100);
    assert_eq!(v["windows"].as_array().unwrap().len(), 1);
    assert_eq!(v["verdicts"][0]["pass"], false);
    // the same window for node_exporter's textfile collector, as promtool reads it
    let text = std::fs::read_to_string(&prom).unwrap();
    let wal = "metric=\"etcd_disk_wal_fsync_duration_seconds\"";
    assert!(text.contains(&format!("lowlat_etcd_operations{{{wal}}} 105\n")), "{text}");
    let p99 =
        format!("lowlat_etcd_latency_seconds{{{wal},percentile=\"p99\"}} {}\n", p99 as f64 / 1e9);
    assert!(text.contains(&p99), "{p99}: {text}");
    let check = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&prom).unwrap())
        .output()
        .expect("promtool (Debian package prometheus)");
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
}

#[test]
fn measure_etcd_checks_its_inputs_and_reports_unreachable() {
    let d = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| lowlat().args(["measure", "etcd"]).args(args).output().unwrap();
    let missing = d.path().join("ca.pem");
    let missing = missing.to_str().unwrap();
    for (args, needle) in [
        (vec!["--endpoint", "https://127.0.0.1:2379", "--cacert", missing], "the CA file"),
        (vec!["--endpoint", "ftp://127.0.0.1:2379"], "expected http://host:port or https://"),
        (vec!["--endpoint", "https://h:1", "--cert", missing], "--key"),
        (vec!["--prometheus-url", "http://127.0.0.1:9", "--selector", "a}or{"], "without braces"),
        (vec!["--duration", "1s"], "--endpoint"),
    ] {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {needle} in {err}");
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let o = run(&["--endpoint", &format!("http://127.0.0.1:{port}")]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("GET http://127.0.0.1:{port}/metrics")), "{err}");
}

#[test]
fn an_update_command_interferes_and_is_reported() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("r.json");
    let o = lowlat()
        .args(["measure", "fsync", "--duration", "300ms", "--window", "100ms", "--file-size", "1m"])
        .args(["--bulk-delay", "10ms", "--mitigation", "ionice-idle", "--interference-cmd"])
        .arg("dd if=/dev/zero of=\"$LOWLAT_SCRATCH/obj\" bs=64k count=64 conv=fsync 2>/dev/null")
        .arg("--dir")
        .arg(d.path())
        .arg("--json")
        .arg(&j)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("== command + ionice-idle =="), "{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    let b = &v["scenarios"][0]["bulk"];
    assert_eq!((b["mode"].as_str(), b["exit_code"].as_i64()), (Some("command"), Some(0)), "{b}");
    assert!(b["command"].as_str().unwrap().starts_with("dd if=/dev/zero"), "{b}");
    assert!(b["bytes"].as_u64().unwrap() >= 4 << 20, "4 MiB written: {b}");
    assert_eq!(v["params"]["interference"], serde_json::json!(["command"]));
    assert_eq!(entries(d.path()), ["r.json"], "scratch ($LOWLAT_SCRATCH) removed");

    // Mitigations that shape the built-in writer do not apply to a command.
    let o = lowlat()
        .args(["measure", "fsync", "--interference-cmd", "true", "--mitigation", "rate=5", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an update command"));
}

#[test]
fn import_fio_reads_fio_and_lowlat_fio_shapes() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("fio.json");
    // lowlat's own --fio-json output must import like fio's.
    let o = lowlat()
        .args(["measure", "fsync", "--size", "23000", "--file-size", "1m", "--dir"])
        .arg(d.path())
        .arg("--fio-json")
        .arg(&f)
        .output()
        .unwrap();
    assert!(matches!(o.status.code(), Some(0 | 1)));
    let o = lowlat().args(["import", "fio"]).arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["kind"].as_str(), v["ops"].as_u64()), (Some("fsync"), Some(10)));
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, r#"{"jobs":[{"write":{}}]}"#).unwrap();
    let o = lowlat().args(["import", "fio"]).arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--fdatasync=1"));
}
