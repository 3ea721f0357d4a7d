//! The guest's initramfs: a base image (busybox with every applet linked, the static lowlat,
//! rtla / cyclictest / oslat with their libraries, the virtio modules, the lab's `/init`),
//! built once per run, and a small job archive per boot (`/job/run.sh` and its input files)
//! appended to it.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::cpio::{self, Entry};
use crate::fetch::{self, Packages};

/// The guest side of the lab, compiled in (the host harness and the guest agree by build).
const INIT: &str = include_str!("../guest/init");
const LIB: &str = include_str!("../guest/lib.sh");

fn dirs(paths: &[&str]) -> Vec<Entry> {
    paths.iter().map(|p| Entry::Dir { path: (*p).into(), mode: 0o755 }).collect()
}

fn file(path: &str, host: &Path, mode: u32) -> Result<Entry> {
    let data = std::fs::read(host).with_context(|| format!("reading {}", host.display()))?;
    Ok(Entry::File { path: path.into(), mode, data })
}

/// Parent directories of `path` not yet in `have`, outermost first.
fn parents(path: &str, have: &mut Vec<String>) -> Vec<Entry> {
    let mut out = Vec::new();
    let parts: Vec<&str> = path.split('/').collect();
    for i in 1..parts.len() {
        let d = parts[..i].join("/");
        if !have.contains(&d) {
            have.push(d.clone());
            out.push(Entry::Dir { path: d, mode: 0o755 });
        }
    }
    out
}

/// Write the base image to `out`; returns what it holds, for the run's record.
pub fn base(pk: &Packages, lowlat: &Path, out: &Path) -> Result<Vec<String>> {
    let mut have: Vec<String> = Vec::new();
    let mut e = Vec::new();
    let top = [
        "bin", "sbin", "usr", "usr/bin", "usr/sbin", "proc", "sys", "dev", "run", "tmp", "out",
        "job", "lab", "var", "var/lib", "etc", "root",
    ];
    e.extend(dirs(&top));
    have.extend(top.iter().map(|s| s.to_string()));
    e.push(Entry::File { path: "init".into(), mode: 0o755, data: INIT.as_bytes().to_vec() });
    e.push(Entry::File { path: "lab/lib.sh".into(), mode: 0o644, data: LIB.as_bytes().to_vec() });
    e.push(Entry::File { path: "etc/hostname".into(), mode: 0o644, data: b"rtlab\n".to_vec() });
    e.push(file("usr/bin/lowlat", lowlat, 0o755)?);
    let mut contents = vec![format!("lowlat {}", lowlat.display())];

    // Programs and exactly the libraries they load.
    let mut libs: Vec<(PathBuf, String)> = Vec::new();
    for (src, dst) in fetch::PROGRAMS {
        let host = pk.unpacked.join(src);
        e.extend(parents(dst, &mut have));
        e.push(file(dst, &host, 0o755)?);
        contents.push(format!("{dst} (from {src})"));
        for l in fetch::libraries(pk, &host)? {
            if !libs.iter().any(|(_, g)| *g == l.1) {
                libs.push(l);
            }
        }
    }
    for (host, guest) in &libs {
        e.extend(parents(guest, &mut have));
        let mode = if guest.contains("ld-linux") { 0o755 } else { 0o644 };
        e.push(file(guest, host, mode)?);
        contents.push(format!("{guest} (from {})", host.display()));
    }

    // Every busybox applet as a link in /bin (lowlat's own name is not among them).
    let bb = pk.unpacked.join("busybox-static/bin/busybox");
    let list = Command::new(&bb).arg("--list").output().context("busybox --list")?;
    for applet in String::from_utf8_lossy(&list.stdout).lines() {
        let applet = applet.trim();
        if applet.is_empty() || applet == "busybox" || applet.contains('/') {
            continue;
        }
        e.push(Entry::Symlink { path: format!("bin/{applet}"), target: "busybox".into() });
    }

    // The modules /init loads.
    for m in &pk.modules {
        let name = m.file_name().and_then(|n| n.to_str()).unwrap_or("x.ko");
        let guest = format!("lib/modules/{}/{name}", pk.kernel_release);
        e.extend(parents(&guest, &mut have));
        e.push(file(&guest, m, 0o644)?);
    }
    // The kernel's build configuration where lowlat looks for it (`host` reads /boot/config-*).
    let cfg = format!("boot/config-{}", pk.kernel_release);
    e.extend(parents(&cfg, &mut have));
    e.push(file(&cfg, &pk.config, 0o644)?);

    let mut f = std::io::BufWriter::new(std::fs::File::create(out)?);
    cpio::write(&mut f, &e)?;
    std::io::Write::flush(&mut f)?;
    Ok(contents)
}

/// The initramfs of one boot: the base image followed by its job archive (`/job/run.sh` and
/// `files` under `/job/`).
pub fn with_job(base: &Path, job: &str, files: &[(String, Vec<u8>)], out: &Path) -> Result<()> {
    let mut bytes = std::fs::read(base).with_context(|| format!("reading {}", base.display()))?;
    let mut e =
        vec![Entry::File { path: "job/run.sh".into(), mode: 0o755, data: job.as_bytes().to_vec() }];
    for (name, data) in files {
        e.push(Entry::File { path: format!("job/{name}"), mode: 0o644, data: data.clone() });
    }
    cpio::write(&mut bytes, &e)?;
    std::fs::write(out, bytes)?;
    Ok(())
}
