//! CLI tests of `lowlat watch`: a command whose duration steps up mid-run is reported as a
//! cliff at the right sample; the storage watcher's own I/O throttled mid-run by a cgroup
//! (root-only, restores the host) is found as a cliff near the time the throttle started.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::lowlat_std as lowlat;

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
fn watch_output_refuses_a_symlink_and_leaves_its_target_alone() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "keep\n").unwrap();
    let out = d.path().join("w.jsonl");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    let o = lowlat()
        .args(["watch", "cmd", "--interval", "0s", "--count", "2", "-o"])
        .arg(&out)
        .args(["--", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "an input error: {stderr}");
    assert!(stderr.contains(&format!("{}: is a symbolic link", out.display())), "{stderr}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n", "target untouched");
    // A plain path works, and a second run appends.
    std::fs::remove_file(&out).unwrap();
    for _ in 0..2 {
        let o = lowlat()
            .args(["watch", "cmd", "--interval", "0s", "--count", "2", "-o"])
            .arg(&out)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(lines(&out).len(), 4);
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

/// A scratch directory on a block device (the temporary directories first, then every
/// block-device filesystem mounted read-write) and that disk's `major:minor`.
fn dir_on_a_block_device() -> (tempfile::TempDir, String) {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mounts = info.lines().filter_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        let (point, rw) = (f.get(4)?, f.get(5)?.split(',').any(|o| o == "rw"));
        (rw && !f.get(2)?.starts_with("0:")).then(|| PathBuf::from(point))
    });
    for base in [std::env::temp_dir(), PathBuf::from("/var/tmp")].into_iter().chain(mounts) {
        if let (Some(devno), Ok(d)) = (disk_devno(&base), tempfile::tempdir_in(&base)) {
            return (d, devno);
        }
    }
    panic!("no writable directory on a block device here (/proc/self/mountinfo:\n{info})");
}

/// How this machine throttles a group's block I/O: cgroup v1 `blkio` or cgroup v2 `io.max`.
#[derive(Debug)]
enum Layout {
    V1 { blkio: PathBuf },
    V2 { mount: PathBuf },
}

/// The cgroup layout from what is mounted: v1 when a `blkio` hierarchy with the throttle
/// exists, else the cgroup2 mount offering the `io` controller; otherwise the test fails,
/// saying what is missing.
fn cgroup_layout() -> Layout {
    let blkio = PathBuf::from("/sys/fs/cgroup/blkio");
    if blkio.join("blkio.throttle.write_bps_device").exists() {
        return Layout::V1 { blkio };
    }
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let v2 = info.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let point = left.split(' ').nth(4)?;
        right.starts_with("cgroup2 ").then(|| PathBuf::from(point))
    });
    let Some(mount) = v2 else {
        panic!("no cgroup I/O throttle: neither {}/blkio.throttle.write_bps_device (cgroup v1) nor a cgroup2 mount in /proc/self/mountinfo", blkio.display());
    };
    let controllers = std::fs::read_to_string(mount.join("cgroup.controllers")).unwrap_or_default();
    assert!(
        controllers.split_whitespace().any(|c| c == "io"),
        "no cgroup I/O throttle: {} offers the controllers [{}] without io (and there is no v1 blkio hierarchy)",
        mount.display(),
        controllers.trim()
    );
    Layout::V2 { mount }
}

/// A cgroup that throttles the writes of the processes put in it to 512 KiB/s and 20 IOPS on
/// one disk. On drop its processes go back to the top cgroup, the directory is removed, and
/// on v2 the `io` controller is disabled again if this enabled it.
struct Throttle {
    layout: Layout,
    dir: PathBuf,
    enabled_io: bool,
}

impl Throttle {
    fn new(layout: Layout, devno: &str) -> Self {
        let name = format!("lowlat-test-watch-{}", std::process::id());
        let (dir, enabled_io) = match &layout {
            Layout::V1 { blkio } => (blkio.join(name), false),
            Layout::V2 { mount } => {
                let ctl = mount.join("cgroup.subtree_control");
                let on = std::fs::read_to_string(&ctl).unwrap();
                let enable = !on.split_whitespace().any(|c| c == "io");
                if enable {
                    std::fs::write(&ctl, "+io").unwrap();
                }
                (mount.join(name), enable)
            }
        };
        let t = Self { layout, dir, enabled_io };
        std::fs::create_dir(&t.dir).unwrap();
        // 256 KiB per O_DSYNC canary at 512 KiB/s: ~0.5 s instead of about a millisecond.
        match &t.layout {
            Layout::V1 { .. } => {
                let w = |f: &str, v: String| std::fs::write(t.dir.join(f), v).unwrap();
                w("blkio.throttle.write_bps_device", format!("{devno} 524288"));
                w("blkio.throttle.write_iops_device", format!("{devno} 20"));
            }
            Layout::V2 { .. } => {
                std::fs::write(t.dir.join("io.max"), format!("{devno} wbps=524288 wiops=20"))
                    .unwrap();
            }
        }
        t
    }

    /// Move a process (all its threads) into the group.
    fn add(&self, pid: u32) {
        match &self.layout {
            Layout::V1 { .. } => {
                for t in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
                    let tid = t.unwrap().file_name();
                    let _ =
                        std::fs::write(self.dir.join("tasks"), tid.to_string_lossy().as_bytes());
                }
            }
            Layout::V2 { .. } => {
                std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).unwrap();
            }
        }
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let (members, top) = match &self.layout {
            Layout::V1 { blkio } => ("tasks", blkio.join("tasks")),
            Layout::V2 { mount } => ("cgroup.procs", mount.join("cgroup.procs")),
        };
        if let Ok(t) = std::fs::read_to_string(self.dir.join(members)) {
            for id in t.lines() {
                let _ = std::fs::write(&top, id);
            }
        }
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if let (true, Layout::V2 { mount }) = (self.enabled_io, &self.layout) {
            let _ = std::fs::write(mount.join("cgroup.subtree_control"), "-io");
        }
    }
}

/// Judges *when* the cliff is found against the wall clock (within 1.5 s of the throttle), on
/// the machine's real disk: a busy disk beside it moves the cliff, so it runs in the timing
/// lane, alone.
#[test]
#[ignore = "timing: needs root, a quiet disk and changes the host (CI's timing lane)"]
fn timing_watch_storage_finds_the_cliff_when_its_io_is_throttled_mid_run() {
    let layout = cgroup_layout();
    let (d, devno) = dir_on_a_block_device();
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
    let cg = Throttle::new(layout, &devno);
    let throttled_at = start.elapsed();
    cg.add(child.id());
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
