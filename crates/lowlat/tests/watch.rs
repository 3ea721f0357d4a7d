//! CLI tests of `lowlat watch`: a command whose duration steps up mid-run is reported as a
//! cliff at the right sample; the storage watcher's own I/O throttled mid-run by a cgroup
//! (root-only, restores the host) is found as a cliff near the time the throttle started.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

fn lowlat() -> Command {
    Command::cargo_bin("lowlat").unwrap()
}

fn lines(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn watch_cmd_finds_a_step_in_command_duration() {
    let d = tempfile::tempdir().unwrap();
    let flag = d.path().join("slow");
    let counter = d.path().join("n");
    // Runs fast 12 times, then creates the flag and stays 20× slower.
    let script = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; [ $n -gt 12 ] && touch {f}; if [ -e {f} ]; then sleep 0.4; else sleep 0.01; fi",
        c = counter.display(),
        f = flag.display()
    );
    let out = d.path().join("w.jsonl");
    let prom = d.path().join("w.prom");
    let o = lowlat()
        .args(["watch", "cmd", "--interval", "0s", "--count", "22", "-o"])
        .arg(&out)
        .arg("--prometheus")
        .arg(&prom)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "a cliff exits 1: {stdout}");
    assert!(stdout.contains("CLIFF: latency rose"), "{stdout}");
    let v = lines(&out);
    assert_eq!(v.len(), 22);
    let cliffs: Vec<&serde_json::Value> = v.iter().filter(|s| s.get("cliff").is_some()).collect();
    assert_eq!(cliffs.len(), 1, "reported once");
    // The first slow run is sample 13 (index 12); a loaded machine may blur one fast sample.
    let i = cliffs[0]["cliff"]["index"].as_u64().unwrap();
    assert!((11..=13).contains(&i), "cliff at index {i}");
    assert!(cliffs[0]["cliff"]["ratio"].as_f64().unwrap() > 5.0);
    assert!(std::fs::read_to_string(&prom)
        .unwrap()
        .contains("lowlat_watch_samples{watch=\"cmd\"} 22"));
}

#[test]
fn watch_storage_samples_and_cleans_up() {
    let d = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = lowlat()
        .args([
            "watch",
            "storage",
            "--interval",
            "100ms",
            "--count",
            "3",
            "--write-size",
            "64k",
            "--dir",
        ])
        .arg(d.path())
        .arg("-o")
        .arg(out.path().join("s.jsonl"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v = lines(&out.path().join("s.jsonl"));
    assert_eq!(v.len(), 3);
    assert_eq!(v[0]["watch"], "storage");
    assert!(v[0]["value_ns"].as_u64().unwrap() > 0 && v[0]["burst_max_ns"].is_u64());
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "canary files removed");
    let o = lowlat().args(["watch", "storage", "--dir", "/nonexistent-lowlat"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// The whole-disk `major:minor` behind a directory.
fn disk_devno(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let disk = if sys.join("partition").exists() { sys.parent()?.to_path_buf() } else { sys };
    Some(std::fs::read_to_string(disk.join("dev")).ok()?.trim().to_string())
}

/// A v1 blkio cgroup; threads are moved back to the root and the directory removed on drop.
struct Throttle(PathBuf);

impl Drop for Throttle {
    fn drop(&mut self) {
        if let Ok(t) = std::fs::read_to_string(self.0.join("tasks")) {
            for tid in t.lines() {
                let _ = std::fs::write("/sys/fs/cgroup/blkio/tasks", tid);
            }
        }
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
#[ignore = "needs root and changes the host: run with --include-ignored as root (.ci/run does)"]
fn watch_storage_finds_the_cliff_when_its_io_is_throttled_mid_run() {
    let blkio = Path::new("/sys/fs/cgroup/blkio");
    if !blkio.join("blkio.throttle.write_bps_device").exists() {
        eprintln!("no cgroup v1 blkio throttle here; skipped");
        return;
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let Some(devno) = disk_devno(d.path()) else { return };
    let out = d.path().join("s.jsonl");
    let child = lowlat()
        .args([
            "watch",
            "storage",
            "--interval",
            "200ms",
            "--duration",
            "9s",
            "--write-size",
            "256k",
            "--burst",
            "3",
            "--dir",
        ])
        .arg(d.path())
        .arg("-o")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(3));
    let cg = Throttle(blkio.join(format!("lowlat-test-watch-{}", std::process::id())));
    std::fs::create_dir(&cg.0).unwrap();
    // 256 KiB per O_DSYNC canary at 512 KiB/s: ~0.5 s instead of about a millisecond.
    std::fs::write(cg.0.join("blkio.throttle.write_bps_device"), format!("{devno} 524288"))
        .unwrap();
    std::fs::write(cg.0.join("blkio.throttle.write_iops_device"), format!("{devno} 20")).unwrap();
    let throttled_at = start.elapsed();
    for t in std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap() {
        let _ =
            std::fs::write(cg.0.join("tasks"), t.unwrap().file_name().to_string_lossy().as_bytes());
    }
    let o = child.wait_with_output().unwrap();
    drop(cg);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("CLIFF: latency rose"), "{stdout}");
    let v = lines(&out);
    let cliff =
        v.iter().find_map(|s| s.get("cliff")).unwrap_or_else(|| panic!("no cliff in {stdout}"));
    let t = Duration::from_nanos(cliff["t_ns"].as_u64().unwrap());
    assert!(
        t + Duration::from_millis(1500) >= throttled_at
            && t <= throttled_at + Duration::from_millis(1500),
        "cliff at {t:?}, throttle at {throttled_at:?}\n{stdout}"
    );
    assert!(cliff["ratio"].as_f64().unwrap() >= 5.0, "{cliff}");
}
