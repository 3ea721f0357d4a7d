//! A writer for the kernel's initramfs format (`newc` cpio, uncompressed): directories,
//! regular files and symlinks, owner 0:0, one fixed mtime, entries in the order given. The
//! kernel unpacks several archives concatenated one after another, which is how a boot's job
//! files are laid over the shared base image without rebuilding it.

use std::io::{self, Write};

/// One archive member.
#[derive(Debug, Clone)]
pub enum Entry {
    Dir { path: String, mode: u32 },
    File { path: String, mode: u32, data: Vec<u8> },
    Symlink { path: String, target: String },
}

impl Entry {
    fn path(&self) -> &str {
        match self {
            Entry::Dir { path, .. } | Entry::File { path, .. } | Entry::Symlink { path, .. } => {
                path
            }
        }
    }
}

fn header(
    w: &mut impl Write,
    ino: u32,
    mode: u32,
    nlink: u32,
    size: usize,
    name: &str,
) -> io::Result<()> {
    let namesize = name.len() + 1;
    let size = u32::try_from(size).map_err(|_| io::Error::other(format!("{name}: over 4 GiB")))?;
    write!(
        w,
        "070701{ino:08x}{mode:08x}{uid:08x}{gid:08x}{nlink:08x}{mtime:08x}{size:08x}{dmaj:08x}{dmin:08x}{rmaj:08x}{rmin:08x}{namesize:08x}{check:08x}",
        uid = 0,
        gid = 0,
        mtime = 0,
        dmaj = 0,
        dmin = 0,
        rmaj = 0,
        rmin = 0,
        check = 0
    )?;
    w.write_all(name.as_bytes())?;
    w.write_all(&[0])?;
    pad(w, 110 + namesize)
}

fn pad(w: &mut impl Write, len: usize) -> io::Result<()> {
    let n = (4 - len % 4) % 4;
    w.write_all(&[0u8; 3][..n])
}

/// Write `entries` as one newc archive (with its trailer). Paths are relative (`bin/sh`).
pub fn write(w: &mut impl Write, entries: &[Entry]) -> io::Result<()> {
    for (i, e) in entries.iter().enumerate() {
        let ino = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let name = e.path().trim_start_matches('/');
        match e {
            Entry::Dir { mode, .. } => header(w, ino, 0o040000 | mode, 2, 0, name)?,
            Entry::File { mode, data, .. } => {
                header(w, ino, 0o100000 | mode, 1, data.len(), name)?;
                w.write_all(data)?;
                pad(w, data.len())?;
            }
            Entry::Symlink { target, .. } => {
                header(w, ino, 0o120777, 1, target.len(), name)?;
                w.write_all(target.as_bytes())?;
                pad(w, target.len())?;
            }
        }
    }
    header(w, 0, 0, 1, 0, "TRAILER!!!")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The bytes GNU cpio reads back: names, sizes, contents and link targets.
    #[test]
    fn gnu_cpio_reads_it_back() {
        let entries = vec![
            Entry::Dir { path: "bin".into(), mode: 0o755 },
            Entry::File { path: "bin/hello".into(), mode: 0o755, data: b"odd length".to_vec() },
            Entry::Symlink { path: "bin/sh".into(), target: "hello".into() },
            Entry::File { path: "empty".into(), mode: 0o644, data: Vec::new() },
        ];
        let mut buf = Vec::new();
        write(&mut buf, &entries).unwrap();
        assert_eq!(buf.len() % 4, 0);
        // The header of the first entry, field by field.
        assert_eq!(&buf[..6], b"070701");
        assert_eq!(&buf[14..22], b"000041ed"); // a directory, 0755
                                               // Every entry, its name NUL-terminated and 4-aligned, and the trailer last.
        let text = String::from_utf8_lossy(&buf);
        for name in ["bin\0", "bin/hello\0", "odd length", "bin/sh\0", "empty\0", "TRAILER!!!\0"] {
            assert!(text.contains(name), "{name:?} missing");
        }
        // GNU cpio (installed by .ci/run) lists and unpacks it.
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("cpio")
            .args(["-idm", "--quiet"])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&buf).unwrap();
        assert!(child.wait().unwrap().success());
        assert_eq!(std::fs::read(dir.path().join("bin/hello")).unwrap(), b"odd length");
        assert_eq!(std::fs::read_link(dir.path().join("bin/sh")).unwrap().to_str(), Some("hello"));
        assert_eq!(std::fs::read(dir.path().join("empty")).unwrap(), b"");
    }
}
