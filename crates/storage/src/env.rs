//! The storage environment of a directory: which block device backs it (`/sys/dev/block`), the
//! filesystem and mount options (`/proc/self/mountinfo`), and from the host model that device's
//! queue settings (scheduler, `wbt_lat_usec`, write cache, rotational), `vm.dirty_*` and the
//! cgroup version. Kernel files are read through [`host::Root`]; parsers are pure and tested
//! on captured text; what cannot be read stays `None`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use results::fsync::StorageEnv;

/// The host a storage run works on: kernel files are read through [`host::Root`]; the knobs a
/// mitigation changes (I/O scheduler, cgroup) are written under a base directory — `/` on the
/// live host, the tree itself for a directory root (tests).
#[derive(Debug)]
pub struct SysRoot {
    root: host::Root,
    base: PathBuf,
}

impl SysRoot {
    /// The live host.
    pub fn live() -> Self {
        Self { root: host::Root::live(), base: PathBuf::from("/") }
    }

    /// A directory holding `proc/` and `sys/` (a fake host in tests), read and written there.
    pub fn dir(path: &Path) -> Result<Self, host::OpenError> {
        Ok(Self { root: host::Root::open(path)?, base: path.to_path_buf() })
    }

    /// Where kernel files are read.
    pub fn root(&self) -> &host::Root {
        &self.root
    }

    /// The on-disk path of a root-relative knob (`sys/block/vda/queue/scheduler`), to write.
    pub fn knob(&self, rel: &str) -> PathBuf {
        self.base.join(rel.trim_start_matches('/'))
    }
}

/// `major:minor` of a device number.
pub fn devno(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
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

/// The block device (whole disk) behind a device number: `(name, major:minor)`, through
/// `sys/dev/block/MAJ:MIN` (a partition's disk is its parent directory).
pub fn disk_for(root: &host::Root, dev: (u32, u32)) -> Option<(String, (u32, u32))> {
    let real = root.resolve_links(&format!("sys/dev/block/{}:{}", dev.0, dev.1)).ok()?.path;
    let disk = if root.kind(&format!("{real}/partition")).is_some() {
        real.rsplit_once('/')?.0.to_string()
    } else {
        real
    };
    let name = disk.rsplit('/').next()?.to_string();
    let dev_txt = root.read_trimmed(&format!("{disk}/dev")).ok()?;
    let (a, b) = dev_txt.split_once(':')?;
    Some((name, (a.parse().ok()?, b.parse().ok()?)))
}

/// Fill what the host model knows: the device's queue settings, `vm.dirty_*`, the cgroup
/// version.
pub fn from_host_model(env: &mut StorageEnv, h: &host::Host) {
    if let Some(b) =
        env.device.as_deref().and_then(|d| h.block_devices.iter().find(|b| b.name == d))
    {
        env.scheduler = b.scheduler.clone();
        env.schedulers_available = b.schedulers_available.clone();
        env.wbt_lat_usec = b.wbt_lat_usec.as_deref().and_then(|w| w.trim().parse().ok());
        env.write_cache = b.write_cache.clone();
        env.rotational = b.rotational;
    }
    env.dirty = h
        .sysctls
        .values
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("vm.dirty_")?, v.trim().parse().ok()?)))
        .map(|(k, v)| (format!("dirty_{k}"), v))
        .collect();
    env.cgroup_version = h.cgroup.version.clone();
}

/// Read the environment of `dir` (which must exist) on the host `h` read from `root`.
pub fn read_env(root: &host::Root, h: &host::Host, dir: &Path) -> StorageEnv {
    let canon = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut env = StorageEnv { dir: canon.display().to_string(), ..Default::default() };
    if let Some(dev) = std::fs::metadata(&canon).ok().map(|m| devno(m.dev())) {
        if let Some((name, d)) = disk_for(root, dev) {
            env.devno = Some(format!("{}:{}", d.0, d.1));
            env.device = Some(name);
        }
        if let Ok(text) = root.read_string("proc/self/mountinfo") {
            let mounts = parse_mountinfo(&text);
            if let Some(m) = mount_for(&mounts, &canon, dev) {
                env.fs_type = Some(m.fs_type.clone());
                env.mount_point = Some(m.mount_point.clone());
                env.mount_source = Some(m.source.clone());
                env.mount_options = Some(format!("{} ({})", m.mount_options, m.super_options));
            }
        }
    }
    from_host_model(&mut env, h);
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

    /// A fake sysfs: `sys/dev/block/254:1` → a partition of `vdz` (254:0).
    fn fake_sysfs() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let disk = d.path().join("sys/devices/virtual/block/vdz");
        std::fs::create_dir_all(disk.join("vdz1")).unwrap();
        std::fs::write(disk.join("dev"), "254:0\n").unwrap();
        std::fs::write(disk.join("vdz1/dev"), "254:1\n").unwrap();
        std::fs::write(disk.join("vdz1/partition"), "1\n").unwrap();
        std::fs::create_dir_all(d.path().join("sys/dev/block")).unwrap();
        for (link, target) in [
            ("254:0", "../../devices/virtual/block/vdz"),
            ("254:1", "../../devices/virtual/block/vdz/vdz1"),
        ] {
            std::os::unix::fs::symlink(target, d.path().join("sys/dev/block").join(link)).unwrap();
        }
        d
    }

    #[test]
    fn a_partition_maps_to_its_whole_disk() {
        let d = fake_sysfs();
        let root = host::Root::open(d.path()).unwrap();
        assert_eq!(disk_for(&root, (254, 1)), Some(("vdz".into(), (254, 0))));
        assert_eq!(disk_for(&root, (254, 0)), Some(("vdz".into(), (254, 0))));
        assert_eq!(disk_for(&root, (8, 0)), None);
    }

    #[test]
    fn the_host_model_gives_queue_dirty_and_cgroup() {
        let mut h = host::Host::default();
        h.block_devices.push(host::model::BlockDevice {
            name: "vdz".into(),
            scheduler: Some("bfq".into()),
            schedulers_available: vec!["none".into(), "bfq".into()],
            wbt_lat_usec: Some("75000".into()),
            write_cache: Some("write back".into()),
            rotational: Some(true),
            ..Default::default()
        });
        h.cgroup.version = Some("v2".into());
        h.sysctls.values.insert("vm.dirty_ratio".into(), "20".into());
        h.sysctls.values.insert("vm.dirty_bytes".into(), "junk".into());
        h.sysctls.values.insert("vm.swappiness".into(), "60".into());
        let mut env = StorageEnv { device: Some("vdz".into()), ..Default::default() };
        from_host_model(&mut env, &h);
        assert_eq!(env.scheduler.as_deref(), Some("bfq"));
        assert_eq!(env.schedulers_available.len(), 2);
        assert_eq!(env.wbt_lat_usec, Some(75000));
        assert_eq!(env.write_cache.as_deref(), Some("write back"));
        assert_eq!(env.rotational, Some(true));
        assert_eq!(env.cgroup_version.as_deref(), Some("v2"));
        assert_eq!(env.dirty.into_iter().collect::<Vec<_>>(), [("dirty_ratio".into(), 20)]);
    }

    #[test]
    fn live_env_of_tempdir_is_read_without_panicking() {
        let d = tempfile::tempdir().unwrap();
        let root = host::Root::live();
        let env = read_env(&root, &host::Host::default(), d.path());
        assert!(env.fs_type.is_some(), "{env:?}");
        assert!(env.free_bytes.is_some());
    }
}
