//! The storage environment of a directory: which block device backs it, that device's queue
//! settings (scheduler, `wbt_lat_usec`, write cache, rotational), the filesystem and mount
//! options (from `/proc/self/mountinfo`), `vm.dirty_*` and the cgroup version. Parsers are
//! pure and tested on captured text; missing files become `None`.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use results::fsync::StorageEnv;

/// Where the kernel files are read from (`/` live; a directory in tests).
#[derive(Debug, Clone)]
pub struct SysRoot(pub PathBuf);

impl Default for SysRoot {
    fn default() -> Self {
        Self(PathBuf::from("/"))
    }
}

impl SysRoot {
    fn path(&self, p: &str) -> PathBuf {
        self.0.join(p.trim_start_matches('/'))
    }

    fn read(&self, p: &str) -> Option<String> {
        std::fs::read_to_string(self.path(p)).ok().map(|s| s.trim_end().to_string())
    }
}

/// `major:minor` of a device number.
pub fn devno(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

/// Parse `none [mq-deadline] kyber bfq` → (active, available).
pub fn parse_scheduler(s: &str) -> (Option<String>, Vec<String>) {
    let mut active = None;
    let mut all = Vec::new();
    for w in s.split_whitespace() {
        if let Some(inner) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            active = Some(inner.to_string());
            all.push(inner.to_string());
        } else {
            all.push(w.to_string());
        }
    }
    (active, all)
}

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub devno: (u32, u32),
    pub mount_point: String,
    pub mount_options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            if let Some(oct) = s.get(i + 1..i + 4) {
                if let Ok(v) = u8::from_str_radix(oct, 8) {
                    out.push(v);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse `/proc/self/mountinfo`; malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            let (maj, min) = l.get(2)?.split_once(':')?;
            Some(MountEntry {
                devno: (maj.parse().ok()?, min.parse().ok()?),
                mount_point: unescape_octal(l.get(4)?),
                mount_options: (*l.get(5)?).to_string(),
                fs_type: (*r.first()?).to_string(),
                source: unescape_octal(r.get(1)?),
                super_options: r.get(2).map_or_else(String::new, |s| (*s).to_string()),
            })
        })
        .collect()
}

/// The mount holding `path` (canonical): the longest mount point that prefixes it, preferring
/// entries whose device number matches (later entries win ties: they are mounted on top).
pub fn mount_for<'a>(
    mounts: &'a [MountEntry],
    path: &Path,
    dev: (u32, u32),
) -> Option<&'a MountEntry> {
    let under = |m: &MountEntry| path.starts_with(Path::new(&m.mount_point));
    let best = |pred: &dyn Fn(&MountEntry) -> bool| {
        mounts.iter().filter(|m| under(m) && pred(m)).fold(
            None::<&MountEntry>,
            |acc, m| match acc {
                Some(a) if a.mount_point.len() > m.mount_point.len() => Some(a),
                _ => Some(m),
            },
        )
    };
    best(&|m| m.devno == dev).or_else(|| best(&|_| true))
}

/// Cgroup version from what exists: `v2` (unified at the root), `hybrid` (v1 controllers with
/// a v2 tree at `unified/`), `v1`, or `None`.
pub fn cgroup_version(root: &SysRoot) -> Option<String> {
    if root.path("sys/fs/cgroup/cgroup.controllers").exists() {
        Some("v2".into())
    } else if root.path("sys/fs/cgroup/unified/cgroup.controllers").exists() {
        Some("hybrid".into())
    } else if root.path("sys/fs/cgroup/blkio").exists() || root.path("sys/fs/cgroup/cpu").exists() {
        Some("v1".into())
    } else {
        None
    }
}

/// `vm.dirty_*` sysctls that exist.
pub fn dirty_sysctls(root: &SysRoot) -> BTreeMap<String, u64> {
    [
        "dirty_ratio",
        "dirty_background_ratio",
        "dirty_bytes",
        "dirty_background_bytes",
        "dirty_expire_centisecs",
        "dirty_writeback_centisecs",
    ]
    .into_iter()
    .filter_map(|k| Some((k.to_string(), root.read(&format!("proc/sys/vm/{k}"))?.parse().ok()?)))
    .collect()
}

/// The block device (whole disk) behind a device number: `(name, major:minor)`.
pub fn disk_for(root: &SysRoot, dev: (u32, u32)) -> Option<(String, (u32, u32))> {
    let link = root.path(&format!("sys/dev/block/{}:{}", dev.0, dev.1));
    let real = std::fs::canonicalize(&link).ok()?;
    let disk = if real.join("partition").exists() { real.parent()?.to_path_buf() } else { real };
    let name = disk.file_name()?.to_str()?.to_string();
    let dev_txt = std::fs::read_to_string(disk.join("dev")).ok()?;
    let (a, b) = dev_txt.trim().split_once(':')?;
    Some((name, (a.parse().ok()?, b.parse().ok()?)))
}

/// Queue settings of a disk.
pub fn fill_queue(root: &SysRoot, disk: &str, env: &mut StorageEnv) {
    let q = |f: &str| root.read(&format!("sys/block/{disk}/queue/{f}"));
    if let Some(s) = q("scheduler") {
        let (active, all) = parse_scheduler(&s);
        env.scheduler = active;
        env.schedulers_available = all;
    }
    env.wbt_lat_usec = q("wbt_lat_usec").and_then(|s| s.parse().ok());
    env.write_cache = q("write_cache");
    env.rotational = q("rotational").map(|s| s == "1");
}

/// Read the environment of `dir` (which must exist).
pub fn read_env(root: &SysRoot, dir: &Path) -> StorageEnv {
    let canon = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut env = StorageEnv { dir: canon.display().to_string(), ..Default::default() };
    let dev = std::fs::metadata(&canon).ok().map(|m| devno(m.dev()));
    if let Some(dev) = dev {
        if let Some((name, d)) = disk_for(root, dev) {
            env.devno = Some(format!("{}:{}", d.0, d.1));
            fill_queue(root, &name, &mut env);
            env.device = Some(name);
        }
        if let Some(text) = root.read("proc/self/mountinfo") {
            let mounts = parse_mountinfo(&text);
            if let Some(m) = mount_for(&mounts, &canon, dev) {
                env.fs_type = Some(m.fs_type.clone());
                env.mount_point = Some(m.mount_point.clone());
                env.mount_source = Some(m.source.clone());
                env.mount_options = Some(format!("{} ({})", m.mount_options, m.super_options));
            }
        }
    }
    env.dirty = dirty_sysctls(root);
    env.cgroup_version = cgroup_version(root);
    env.free_bytes = crate::sys::statvfs(&canon).ok().map(|s| s.free_bytes);
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
25 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
30 22 0:25 / /tmp rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=1024k
31 22 254:0 /srv/a\\040b /mnt/with\\040space rw,noatime - ext4 /dev/vda rw
garbage line without separator
40 22 x:y / /bad rw - ext4 /dev/x rw";

    #[test]
    fn scheduler_active_and_available() {
        let (a, all) = parse_scheduler("none [mq-deadline] kyber bfq\n");
        assert_eq!(a.as_deref(), Some("mq-deadline"));
        assert_eq!(all, ["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(parse_scheduler("none").0, None);
        assert_eq!(parse_scheduler("[none]").0.as_deref(), Some("none"));
    }

    #[test]
    fn mountinfo_parses_and_skips_malformed() {
        let m = parse_mountinfo(MOUNTINFO);
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[0].super_options, "rw,discard");
        assert_eq!(m[3].mount_point, "/mnt/with space");
    }

    #[test]
    fn mount_lookup_prefers_longest_matching_device() {
        let m = parse_mountinfo(MOUNTINFO);
        let e = mount_for(&m, Path::new("/tmp/x"), (0, 25)).unwrap();
        assert_eq!(e.fs_type, "tmpfs");
        let e = mount_for(&m, Path::new("/var/lib/etcd"), (254, 0)).unwrap();
        assert_eq!(e.mount_point, "/");
        let e = mount_for(&m, Path::new("/mnt/with space/d"), (254, 0)).unwrap();
        assert_eq!(e.mount_point, "/mnt/with space");
        // "/tmpfoo" is not under "/tmp".
        let e = mount_for(&m, Path::new("/tmpfoo"), (254, 0)).unwrap();
        assert_eq!(e.mount_point, "/");
        assert!(mount_for(&[], Path::new("/"), (0, 0)).is_none());
    }

    #[test]
    fn cgroup_and_dirty_from_a_fake_root() {
        let d = tempfile::tempdir().unwrap();
        let root = SysRoot(d.path().to_path_buf());
        assert_eq!(cgroup_version(&root), None);
        std::fs::create_dir_all(d.path().join("sys/fs/cgroup/blkio")).unwrap();
        assert_eq!(cgroup_version(&root).as_deref(), Some("v1"));
        std::fs::create_dir_all(d.path().join("sys/fs/cgroup/unified")).unwrap();
        std::fs::write(d.path().join("sys/fs/cgroup/unified/cgroup.controllers"), "").unwrap();
        assert_eq!(cgroup_version(&root).as_deref(), Some("hybrid"));
        std::fs::write(d.path().join("sys/fs/cgroup/cgroup.controllers"), "io").unwrap();
        assert_eq!(cgroup_version(&root).as_deref(), Some("v2"));
        std::fs::create_dir_all(d.path().join("proc/sys/vm")).unwrap();
        std::fs::write(d.path().join("proc/sys/vm/dirty_ratio"), "20\n").unwrap();
        std::fs::write(d.path().join("proc/sys/vm/dirty_bytes"), "junk\n").unwrap();
        let dirty = dirty_sysctls(&root);
        assert_eq!(dirty.get("dirty_ratio"), Some(&20));
        assert_eq!(dirty.len(), 1);
    }

    #[test]
    fn live_env_of_tempdir_is_read_without_panicking() {
        let d = tempfile::tempdir().unwrap();
        let env = read_env(&SysRoot::default(), d.path());
        assert!(env.fs_type.is_some(), "{env:?}");
        assert!(env.free_bytes.is_some());
    }
}
