//! A render's files on disk: the input a target patches, a render written into a directory
//! (scripts executable), and a loader entry patched in place beside a backup of the original.
//! Every file is replaced atomically (a temporary file beside it, then rename).

use std::path::{Path, PathBuf};

use crate::{OutFile, RenderError};

/// The suffix of the original a patched loader entry is kept under.
pub const BACKUP_SUFFIX: &str = ".lowlat-bak";

/// Read the file a target patches, as `(name, text)` for [`crate::RenderOptions::input`].
pub fn read_input(path: &Path) -> Result<(String, String), RenderError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| RenderError::Read { path: path.to_path_buf(), source })?;
    Ok((path.display().to_string(), text))
}

/// Write every file under `dir` (creating the directories), scripts with mode 0755 and the
/// rest 0644. Returns the paths written, in order. Every name must stay inside `dir` (plain
/// relative components: no `..`, no absolute path), checked for all files before any is
/// written, and no directory or file below `dir` is followed through a symlink.
pub fn write_dir(dir: &Path, files: &[OutFile]) -> Result<Vec<PathBuf>, RenderError> {
    use std::path::Component;
    for f in files {
        let name = Path::new(&f.name);
        if f.name.is_empty() || !name.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(crate::input_error(
                format!(
                    "a rendered file name `{}` would leave {}",
                    crate::quote::comment(&f.name),
                    dir.display()
                ),
                "use plan and role names of letters, digits, `.`, `_` and `-`",
            ));
        }
    }
    files
        .iter()
        .map(|f| {
            let path = dir.join(&f.name);
            refuse_symlinks(dir, Path::new(&f.name))?;
            write(&path, &f.contents, if f.executable { 0o755 } else { 0o644 })?;
            Ok(path)
        })
        .collect()
}

/// Refuse a symlink at any existing step of `rel` below `dir` (a link planted in the output
/// directory would take the write elsewhere).
fn refuse_symlinks(dir: &Path, rel: &Path) -> Result<(), RenderError> {
    let mut at = dir.to_path_buf();
    for c in rel.components() {
        at.push(c);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(RenderError::Write {
                path: at.clone(),
                source: std::io::Error::other(
                    "a symbolic link; remove it or render into a new directory",
                ),
            });
        }
    }
    Ok(())
}

/// Replace the loader entry `entry` with the patched one from a `bls` render and keep the
/// original beside it as `<entry>.lowlat-bak`, both with the entry's own mode. The first
/// backup is kept: a later run (whose input is the already patched entry) leaves it as it is,
/// so it always holds the entry as it was before lowlat. Both files are written atomically
/// (a temporary file beside, fsync, rename). Returns the backup's path and whether this run
/// wrote it.
pub fn patch_in_place(entry: &Path, files: &[OutFile]) -> Result<(PathBuf, bool), RenderError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(entry)
        .map_err(|source| RenderError::Read { path: entry.to_path_buf(), source })?
        .permissions()
        .mode()
        & 0o7777;
    let backup = PathBuf::from(format!("{}{BACKUP_SUFFIX}", entry.display()));
    let (originals, patched): (Vec<&OutFile>, Vec<&OutFile>) =
        files.iter().partition(|f| f.name.ends_with(BACKUP_SUFFIX));
    let mut wrote_backup = false;
    if let Some(orig) = originals.first() {
        if std::fs::symlink_metadata(&backup).is_err() {
            write(&backup, &orig.contents, mode)?;
            wrote_backup = true;
        }
    }
    if let Some(new) = patched.first() {
        write(entry, &new.contents, mode)?;
    }
    Ok((backup, wrote_backup))
}

fn write(path: &Path, contents: &str, mode: u32) -> Result<(), RenderError> {
    let failed = |source| RenderError::Write { path: path.to_path_buf(), source };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    util::fs::write_atomic(path, contents.as_bytes(), mode).map_err(failed)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("render-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn scripts_are_executable_and_directories_made() {
        let d = scratch("dir");
        let files =
            [OutFile::new("a/x.yaml", "x: 1\n"), OutFile::script("apply.sh", "#!/bin/sh\n")];
        let written = write_dir(&d, &files).unwrap();
        assert_eq!(written, vec![d.join("a/x.yaml"), d.join("apply.sh")]);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&d.join("apply.sh")) & 0o111, 0o111);
        assert_eq!(mode(&d.join("a/x.yaml")) & 0o111, 0);
        assert_eq!(std::fs::read_to_string(d.join("a/x.yaml")).unwrap(), "x: 1\n");
        // Names that would leave the directory are refused before anything is written.
        for bad in ["../x", "/etc/x", "a/../../x", ""] {
            let e = write_dir(&d.join("out"), &[OutFile::new("ok", ""), OutFile::new(bad, "")]);
            assert!(matches!(e, Err(RenderError::Input { .. })), "{bad}");
        }
        assert!(!d.join("out").exists());
        // A symlink planted in the output directory is not followed.
        std::fs::create_dir_all(d.join("out2")).unwrap();
        std::os::unix::fs::symlink(&d, d.join("out2/link")).unwrap();
        let e = write_dir(&d.join("out2"), &[OutFile::new("link/x", "")]);
        assert!(matches!(e, Err(RenderError::Write { .. })), "{e:?}");
        assert!(!d.join("x").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn entry_patched_with_its_mode_and_a_backup() {
        let d = scratch("bls");
        let entry = d.join("boot.conf");
        std::fs::write(&entry, "options a\n").unwrap();
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o600)).unwrap();
        let files = [
            OutFile::new("boot.conf", "options b\n"),
            OutFile::new("boot.conf.lowlat-bak", "options a\n"),
        ];
        let (backup, wrote) = patch_in_place(&entry, &files).unwrap();
        assert!(wrote);
        assert_eq!(backup, d.join("boot.conf.lowlat-bak"));
        assert_eq!(std::fs::read_to_string(&entry).unwrap(), "options b\n");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "options a\n");
        assert_eq!(std::fs::metadata(&entry).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777, 0o600);
        // A second run patches the patched entry: the first backup (the original) stays.
        let again = [
            OutFile::new("boot.conf", "options c\n"),
            OutFile::new("boot.conf.lowlat-bak", "options b\n"),
        ];
        let (_, wrote) = patch_in_place(&entry, &again).unwrap();
        assert!(!wrote);
        assert_eq!(std::fs::read_to_string(&entry).unwrap(), "options c\n");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "options a\n");
        let leftovers: Vec<_> =
            std::fs::read_dir(&d).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(leftovers.len(), 2, "no temporary file left: {leftovers:?}");
        assert!(matches!(patch_in_place(&d.join("nosuch"), &files), Err(RenderError::Read { .. })));
        std::fs::remove_dir_all(&d).unwrap();
    }
}

/// A render as one JSON document (`lowlat render --json`): `{schema_version, kind: "render",
/// target, files[] {name, executable, contents}}`, for programs.
/// Its schema: `docs/schemas/render.schema.json`.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Document<'a> {
    pub schema_version: u32,
    /// Always `render`.
    #[schemars(extend("const" = "render"))]
    pub kind: &'static str,
    /// The target rendered, as named on the command line (`grub`, `tuned`, `openshift`, …).
    pub target: String,
    pub files: Vec<DocumentFile<'a>>,
}

/// One file of a [`Document`].
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct DocumentFile<'a> {
    /// File name relative to the output directory.
    pub name: &'a str,
    /// Whether the file is a script meant to be executable.
    pub executable: bool,
    pub contents: &'a str,
}

impl<'a> Document<'a> {
    /// The document of `target`'s rendered `files`.
    pub fn new(target: crate::Target, files: &'a [OutFile]) -> Self {
        let files = files
            .iter()
            .map(|f| DocumentFile {
                name: &f.name,
                executable: f.executable,
                contents: &f.contents,
            })
            .collect();
        Self {
            schema_version: crate::SCHEMA_VERSION,
            kind: "render",
            target: target.to_string(),
            files,
        }
    }
}
