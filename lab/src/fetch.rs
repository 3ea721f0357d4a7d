//! What the guest is made of, from Debian's archive: the PREEMPT_RT kernel (its `vmlinuz` and
//! the few modules the guest loads), busybox-static, and rtla / rt-tests with exactly the
//! shared libraries they need. `apt-get download` fetches each package once into the cache
//! directory; nothing is installed on the host.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The meta package whose dependency names the current RT kernel image.
const KERNEL_META: &str = "linux-image-rt-amd64";

/// User-space packages unpacked for the guest (their binaries and libraries).
const USER_PACKAGES: &[&str] =
    &["busybox-static", "rtla", "libtracefs1", "libtraceevent1", "rt-tests", "libnuma1"];

/// The guest's kernel modules, in load order (no `modules.dep` in the package: depmod makes it
/// at install time): virtio-pci and virtio-blk, for a multi-queue disk with managed IRQs.
pub const MODULES: &[&str] = &[
    "virtio_ring",
    "virtio",
    "virtio_pci_modern_dev",
    "virtio_pci_legacy_dev",
    "virtio_pci",
    "virtio_blk",
];

/// The guest's programs besides lowlat: where they are in the unpacked packages, and the
/// path they get in the guest.
pub const PROGRAMS: &[(&str, &str)] = &[
    ("busybox-static/bin/busybox", "bin/busybox"),
    ("rtla/usr/bin/rtla", "usr/bin/rtla"),
    ("rt-tests/usr/bin/cyclictest", "usr/bin/cyclictest"),
    ("rt-tests/usr/bin/oslat", "usr/bin/oslat"),
];

/// The fetched and unpacked packages.
#[derive(Debug, Clone)]
pub struct Packages {
    /// `linux-image-6.1.0-56-rt-amd64`
    pub kernel_package: String,
    /// `6.1.0-56-rt-amd64`
    pub kernel_release: String,
    /// Debian version of the kernel package (`6.1.192-2`).
    pub kernel_version: String,
    pub vmlinuz: PathBuf,
    /// `kernel/config-…` of the package (what the kernel was built with).
    pub config: PathBuf,
    /// Module files, in [`MODULES`] order.
    pub modules: Vec<PathBuf>,
    /// One directory per user-space package, holding its unpacked files.
    pub unpacked: PathBuf,
}

fn run(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("cannot run {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `Depends: linux-image-6.1.0-56-rt-amd64` in `apt-cache depends` output.
pub fn kernel_package_from_depends(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("Depends:"))
        .map(str::trim)
        .find(|p| p.starts_with("linux-image-") && p.ends_with("-rt-amd64"))
        .map(str::to_string)
}

/// The `.deb` of `pkg` in `dir`, downloading it when absent.
fn deb(dir: &Path, pkg: &str) -> Result<PathBuf> {
    let find = || -> Result<Option<PathBuf>> {
        for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let p = e?.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with(&format!("{pkg}_")) && name.ends_with(".deb") {
                return Ok(Some(p));
            }
        }
        Ok(None)
    };
    if let Some(p) = find()? {
        return Ok(p);
    }
    eprintln!("[rtlab] apt-get download {pkg}");
    let download = || run(Command::new("apt-get").arg("download").arg(pkg).current_dir(dir));
    if let Err(first) = download() {
        // A fresh machine may have no package lists (or stale ones naming removed versions).
        eprintln!("[rtlab] apt-get download {pkg} failed; apt-get update, then once more");
        let updated = run(Command::new("apt-get").args(["update", "-qq"]));
        if let Err(e) = updated.and_then(|_| download()) {
            bail!("{e:#}\n(first try: {first:#}; the lab needs Debian's archive: apt-get update, and a sources.list with bookworm)");
        }
    }
    find()?
        .with_context(|| format!("apt-get download {pkg} left no {pkg}_*.deb in {}", dir.display()))
}

/// Fetch (once) and unpack everything under `cache`.
pub fn fetch(cache: &Path) -> Result<Packages> {
    let debs = cache.join("debs");
    std::fs::create_dir_all(&debs)?;
    let kernel_package = match std::env::var("LOWLAT_LAB_KERNEL_PACKAGE") {
        Ok(p) if !p.is_empty() => p,
        _ => {
            let text = run(Command::new("apt-cache").args(["depends", KERNEL_META]))?;
            kernel_package_from_depends(&text).with_context(|| {
                format!(
                    "`apt-cache depends {KERNEL_META}` names no linux-image-*-rt-amd64:\n{text}"
                )
            })?
        }
    };
    let kernel_release = kernel_package.trim_start_matches("linux-image-").to_string();
    let kdeb = deb(&debs, &kernel_package)?;
    let kernel_version =
        run(Command::new("dpkg-deb").args(["-f"]).arg(&kdeb).arg("Version"))?.trim().to_string();

    // The kernel: vmlinuz, its config and the modules the guest loads (not the other 300 MB).
    let kdir = cache.join("kernel").join(&kernel_release);
    let vmlinuz = kdir.join(format!("boot/vmlinuz-{kernel_release}"));
    let config = kdir.join(format!("boot/config-{kernel_release}"));
    let modules: Vec<PathBuf> = MODULES
        .iter()
        .map(|m| {
            let sub = if *m == "virtio_blk" { "block" } else { "virtio" };
            kdir.join(format!("lib/modules/{kernel_release}/kernel/drivers/{sub}/{m}.ko"))
        })
        .collect();
    if !vmlinuz.exists() || !config.exists() || modules.iter().any(|m| !m.exists()) {
        std::fs::create_dir_all(&kdir)?;
        let mut members = vec![
            format!("./boot/vmlinuz-{kernel_release}"),
            format!("./boot/config-{kernel_release}"),
        ];
        for m in &modules {
            let rel = m.strip_prefix(&kdir).unwrap_or(m);
            members.push(format!("./{}", rel.display()));
        }
        let script = format!(
            "dpkg-deb --fsys-tarfile \"$1\" | tar -x -C \"$2\" {}",
            members.iter().map(|m| format!("'{m}'")).collect::<Vec<_>>().join(" ")
        );
        run(Command::new("sh").args(["-c", &script, "sh"]).arg(&kdeb).arg(&kdir))?;
    }

    let unpacked = cache.join("unpacked");
    for pkg in USER_PACKAGES {
        let dir = unpacked.join(pkg);
        if dir.exists() {
            continue;
        }
        let d = deb(&debs, pkg)?;
        let tmp = unpacked.join(format!(".{pkg}.tmp"));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)?;
        run(Command::new("dpkg-deb").arg("-x").arg(&d).arg(&tmp))?;
        std::fs::rename(&tmp, &dir)?;
    }
    Ok(Packages {
        kernel_package,
        kernel_release,
        kernel_version,
        vmlinuz,
        config,
        modules,
        unpacked,
    })
}

/// The shared libraries `program` loads (the loader included), as (file on this host, path in
/// the guest): those from the unpacked packages go to `/usr/lib/x86_64-linux-gnu/`, those from
/// this host (glibc, same Debian release) to the paths `ldd` names.
pub fn libraries(pk: &Packages, program: &Path) -> Result<Vec<(PathBuf, String)>> {
    let libdirs: Vec<String> = USER_PACKAGES
        .iter()
        .map(|p| pk.unpacked.join(p).join("usr/lib/x86_64-linux-gnu").display().to_string())
        .collect();
    let out = Command::new("ldd")
        .arg(program)
        .env("LD_LIBRARY_PATH", libdirs.join(":"))
        .output()
        .with_context(|| format!("cannot run ldd {}", program.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if text.contains("not a dynamic executable") || text.contains("statically linked") {
        return Ok(Vec::new());
    }
    let mut libs = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let file = match w.as_slice() {
            [_, "=>", "not", "found", ..] => bail!("{}: {line}", program.display()),
            [_, "=>", path, ..] if path.starts_with('/') => *path,
            [path, ..] if path.starts_with('/') => *path,
            _ => continue,
        };
        let host = std::fs::canonicalize(file).with_context(|| format!("ldd named {file}"))?;
        let guest = if file.starts_with(&pk.unpacked.display().to_string()) {
            let name = Path::new(file).file_name().and_then(|n| n.to_str()).unwrap_or_default();
            format!("usr/lib/x86_64-linux-gnu/{name}")
        } else {
            file.trim_start_matches('/').to_string()
        };
        libs.push((host, guest));
    }
    Ok(libs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn kernel_package_is_read_from_apt_cache_depends() {
        let text = "linux-image-rt-amd64\n  Depends: linux-image-6.1.0-56-rt-amd64\n";
        assert_eq!(
            kernel_package_from_depends(text).as_deref(),
            Some("linux-image-6.1.0-56-rt-amd64")
        );
        assert_eq!(kernel_package_from_depends("linux-image-rt-amd64\n  Depends: foo\n"), None);
    }
}
