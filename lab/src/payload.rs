//! The guest's `/out`, as it comes back: a plain tar written by the guest onto the raw virtio
//! disk, which the host created empty (all zeroes) before the boot. Unpacked with bounds
//! (plain files and directories only, inside the target directory, 256 MiB in all): the guest
//! is ours, but a cut transfer must give an error, not a mess. An archive without `job.rc`
//! means the job did not finish.

use std::io::Read;
use std::path::{Component, Path};

use anyhow::{bail, Context, Result};

const MAX_UNPACKED: u64 = 256 << 20;

/// Unpack the tar at the start of `disk` into `dir`; the names of the files.
pub fn unpack(disk: impl Read, dir: &Path) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut ar = tar::Archive::new(disk.take(MAX_UNPACKED));
    let mut names = Vec::new();
    for e in ar.entries().context("reading the result tar")? {
        let mut e = e.context("reading the result tar")?;
        let path = e.path()?.into_owned();
        if path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::RootDir | Component::Prefix(_)))
        {
            bail!("result member {} leaves the directory", path.display());
        }
        let dest = dir.join(&path);
        match e.header().entry_type() {
            tar::EntryType::Directory => std::fs::create_dir_all(&dest)?,
            tar::EntryType::Regular => {
                if let Some(p) = dest.parent() {
                    std::fs::create_dir_all(p)?;
                }
                let mut buf = Vec::new();
                e.read_to_end(&mut buf)?;
                std::fs::write(&dest, buf)?;
                names.push(path.display().to_string().trim_start_matches("./").to_string());
            }
            _ => {} // links and devices: not ours to write
        }
    }
    if !names.iter().any(|n| n == "job.rc") {
        bail!("no result from the guest (the disk holds {} files and no job.rc)", names.len());
    }
    Ok(names)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tarball(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (name, data) in files {
            let mut h = tar::Header::new_ustar();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, name, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn a_tar_at_the_start_of_a_zeroed_disk_unpacks() {
        let mut disk = tarball(&[("./job.rc", b"0\n"), ("./sub/b.txt", b"hi")]);
        disk.resize(1 << 20, 0);
        let dir = tempfile::tempdir().unwrap();
        let names = unpack(&disk[..], dir.path()).unwrap();
        assert_eq!(names, ["job.rc", "sub/b.txt"]);
        assert_eq!(std::fs::read(dir.path().join("sub/b.txt")).unwrap(), b"hi");
    }

    #[test]
    fn an_empty_disk_or_a_cut_job_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(unpack(&vec![0u8; 65536][..], dir.path())
            .unwrap_err()
            .to_string()
            .contains("no result"));
        let disk = tarball(&[("./steps.txt", b"x 0 1\n")]);
        assert!(unpack(&disk[..], dir.path()).unwrap_err().to_string().contains("no job.rc"));
    }
}
