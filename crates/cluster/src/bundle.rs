//! A node's result directory, carried in its pod's log: the files as a gzip'd tar, in base64
//! lines between two marker lines. The log is the only channel: no shared storage, no exec.
//! The reading side is bounded (encoded size, unpacked size, file count) and never writes
//! outside its target directory.

use std::io::{Read as _, Write as _};
use std::path::Path;

use base64::Engine as _;

/// First line of the payload.
pub const BEGIN: &str = "-----BEGIN LOWLAT RESULTS-----";
/// Last line of the payload.
pub const END: &str = "-----END LOWLAT RESULTS-----";
/// Most bytes of base64 read back from one log.
pub const MAX_ENCODED: usize = 12 << 20;
/// Most bytes unpacked from one bundle.
pub const MAX_UNPACKED: u64 = 64 << 20;
/// Most files in one bundle.
pub const MAX_FILES: usize = 200;

/// Pack the regular files directly in `dir` (sorted, no subdirectories) into the payload text,
/// markers included, ending with a newline.
pub fn pack(dir: &Path) -> std::io::Result<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name())
        .collect();
    names.sort();
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for name in names {
        let mut f = std::fs::File::open(dir.join(&name))?;
        tar.append_file(Path::new(&name), &mut f)?;
    }
    let bytes = tar.into_inner()?.finish()?;
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut out = String::with_capacity(b64.len() + b64.len() / 76 + 64);
    out.push_str(BEGIN);
    out.push('\n');
    for chunk in b64.as_bytes().chunks(76) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(END);
    out.push('\n');
    Ok(out)
}

/// Why a log held no usable payload.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BundleError {
    #[error("the log holds no result payload (no '{BEGIN}' line): the pod ended before writing its results")]
    Missing,
    #[error("the result payload is cut off (no '{END}' line): the log was truncated")]
    Truncated,
    #[error("the result payload is larger than {MAX_ENCODED} bytes")]
    TooLarge,
    #[error("the result payload is damaged: {0}")]
    Damaged(String),
}

/// The payload's bytes (gzip'd tar) from a log that may hold other lines around it (the last
/// payload wins).
pub fn extract(log: &str) -> Result<Vec<u8>, BundleError> {
    let start = log.rfind(BEGIN).ok_or(BundleError::Missing)?;
    let body = &log[start + BEGIN.len()..];
    let end = body.find(END).ok_or(BundleError::Truncated)?;
    let body = &body[..end];
    if body.len() > MAX_ENCODED {
        return Err(BundleError::TooLarge);
    }
    // The container's stdout and stderr reach the log through two pipes that the runtime reads
    // independently: a stderr line written before the payload can land inside it (seen: the
    // agent's last progress line 850 lines into a node's payload). Payload lines are base64
    // only; any line with another character is someone else's and is skipped.
    let b64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=');
    let text: String =
        body.lines().map(str::trim).filter(|l| !l.is_empty() && l.bytes().all(b64)).collect();
    if text.is_empty() {
        return Err(BundleError::Damaged("no base64 line between the markers".into()));
    }
    base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|e| BundleError::Damaged(format!("base64: {e}")))
}

/// Unpack payload bytes into `dir` (created); returns the file names written. Only plain files
/// with a single-component name are taken; anything else is refused.
pub fn unpack(bytes: &[u8], dir: &Path) -> Result<Vec<String>, BundleError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| BundleError::Damaged(format!("{}: {e}", dir.display())))?;
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut ar = tar::Archive::new(gz.take(MAX_UNPACKED + 1));
    let mut names = Vec::new();
    let entries = ar.entries().map_err(|e| BundleError::Damaged(e.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| BundleError::Damaged(e.to_string()))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| BundleError::Damaged(e.to_string()))?.into_owned();
        let mut comps = path.components();
        let name = match (comps.next(), comps.next()) {
            (Some(std::path::Component::Normal(n)), None) => n.to_string_lossy().into_owned(),
            _ => return Err(BundleError::Damaged(format!("refusing path {}", path.display()))),
        };
        if names.len() >= MAX_FILES {
            return Err(BundleError::Damaged(format!("more than {MAX_FILES} files")));
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| BundleError::Damaged(e.to_string()))?;
        let target = dir.join(&name);
        let mut f = std::fs::File::create(&target)
            .map_err(|e| BundleError::Damaged(format!("{}: {e}", target.display())))?;
        f.write_all(&data)
            .map_err(|e| BundleError::Damaged(format!("{}: {e}", target.display())))?;
        names.push(name);
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_through_a_noisy_log() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("timer.json"), "{\"kind\":\"timer\"}").unwrap();
        std::fs::write(src.path().join("b.txt"), vec![b'x'; 10_000]).unwrap();
        std::fs::create_dir(src.path().join("sub")).unwrap();
        let payload = pack(src.path()).unwrap();
        assert!(payload.lines().all(|l| l.len() <= 76 || l.starts_with("-----")));
        let log = format!("[timer] 3 s\nsome progress\n{payload}trailing line\n");
        // a stderr line the runtime wrote into the middle of the payload
        let mut lines: Vec<&str> = payload.lines().collect();
        lines.insert(lines.len() / 2, "lowlat-agent: real-time budget given back: true");
        let interleaved = format!("progress\n{}\n", lines.join("\n"));
        assert_eq!(extract(&interleaved).unwrap(), extract(&log).unwrap());
        let bytes = extract(&log).unwrap();
        let dst = tempfile::tempdir().unwrap();
        let names = unpack(&bytes, dst.path()).unwrap();
        assert_eq!(names, ["b.txt", "timer.json"]);
        assert_eq!(std::fs::read(dst.path().join("b.txt")).unwrap().len(), 10_000);
    }

    #[test]
    fn missing_or_cut_payloads_say_so() {
        assert_eq!(extract("just progress\n"), Err(BundleError::Missing));
        assert_eq!(extract(&format!("{BEGIN}\nAAAA\n")), Err(BundleError::Truncated));
        assert!(matches!(
            extract(&format!("{BEGIN}\n!!!!\n{END}\n")),
            Err(BundleError::Damaged(_))
        ));
    }

    #[test]
    fn refuses_paths_that_leave_the_directory() {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        let mut h = tar::Header::new_gnu();
        h.set_size(1);
        h.set_mode(0o644);
        // write the name bytes directly: the builder itself refuses "..".
        h.as_old_mut().name[..9].copy_from_slice(b"../escape");
        h.set_cksum();
        tar.append(&h, &b"x"[..]).unwrap();
        let bytes = tar.into_inner().unwrap().finish().unwrap();
        let dst = tempfile::tempdir().unwrap();
        assert!(unpack(&bytes, &dst.path().join("n")).is_err());
        assert!(!dst.path().join("escape").exists());
    }
}
