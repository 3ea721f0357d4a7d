//! A node's result directory, carried in its pod's log: the files as a gzip'd tar, in base64
//! lines between two marker lines. The log is the only channel: no shared storage, no exec.
//! The reading side is bounded (encoded size, unpacked size, file count) and never writes
//! outside its target directory.

use std::io::Read as _;
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

/// The name the pod's own log lines are kept under beside the results; a bundle may not carry
/// a file of that name.
pub const POD_LOG: &str = "pod.log";

/// Where the payload is in a log: the byte offset of its `BEGIN` line and the text between the
/// markers.
///
/// The rule (issue 21, item 10): a marker counts only as a whole line of its own, and a log
/// may hold exactly one `BEGIN` line; the `END` that counts is the first whole `END` line after
/// it. The agent prints the payload once, as the last thing it does, with each marker on its
/// own line; everything before it is the measurement's own output, which the reader does not
/// control. "The last marker wins" let output printed after the real payload replace it, and
/// "the first marker wins" would let the measurement's output forge one before it: refusing a
/// second `BEGIN` line outright (the node's result is then reported as damaged, never as
/// someone else's numbers) is the only rule that no line in the log can turn into a forgery.
pub fn locate(log: &str) -> Result<(usize, &str), BundleError> {
    let mut begin: Option<(usize, usize)> = None;
    let mut end: Option<usize> = None;
    let mut off = 0;
    for line in log.split_inclusive('\n') {
        let l = line.trim_end_matches(['\n', '\r']);
        if l == BEGIN {
            if begin.is_some() {
                return Err(BundleError::Damaged(format!(
                    "two '{BEGIN}' lines in the log: the agent prints one; refusing to guess which payload is the node's"
                )));
            }
            begin = Some((off, off + line.len()));
        } else if l == END && end.is_none() && begin.is_some() {
            end = Some(off);
        }
        off += line.len();
    }
    let (at, body) = begin.ok_or(BundleError::Missing)?;
    let end = end.ok_or(BundleError::Truncated)?;
    Ok((at, &log[body..end]))
}

/// The payload's bytes (gzip'd tar) from a log that may hold other lines around it (see
/// [`locate`] for which payload counts).
pub fn extract(log: &str) -> Result<Vec<u8>, BundleError> {
    let (_, body) = locate(log)?;
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

fn at(path: &Path, e: impl std::fmt::Display) -> BundleError {
    BundleError::Damaged(format!("{}: {e}", path.display()))
}

/// Create the node directory `dir` (and its parents) and check that it is a directory of its
/// own: a symlink planted at its name is refused, never followed.
pub fn node_dir(dir: &Path) -> Result<(), BundleError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(at(dir, "a symlink: refusing to write the node's files through it; remove it or choose another --out"));
        }
        Ok(m) if !m.is_dir() => return Err(at(dir, "exists and is not a directory")),
        Ok(_) => {}
        Err(_) => std::fs::create_dir_all(dir).map_err(|e| at(dir, e))?,
    }
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        _ => Err(at(dir, "not a directory after creating it")),
    }
}

/// Write one file into the node directory: a new file beside it (`O_EXCL`, `O_NOFOLLOW`)
/// renamed over `name`, so a symlink planted at `name` is replaced, never written through.
fn write_in(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), BundleError> {
    let target = dir.join(name);
    util::fs::write_atomic(&target, bytes, 0o644).map_err(|e| at(&target, e))
}

/// Unpack payload bytes into `dir` (created; see [`node_dir`]); returns the file names
/// written. Only plain files with a single-component name are taken, each once; anything else,
/// and a file named [`POD_LOG`], is refused. Files are written with [`write_in`].
pub fn unpack(bytes: &[u8], dir: &Path) -> Result<Vec<String>, BundleError> {
    node_dir(dir)?;
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
        if name == POD_LOG {
            return Err(BundleError::Damaged(format!(
                "refusing a file named {POD_LOG}: that name is the pod's own log"
            )));
        }
        if names.contains(&name) {
            return Err(BundleError::Damaged(format!("{name} twice in the payload")));
        }
        if names.len() >= MAX_FILES {
            return Err(BundleError::Damaged(format!("more than {MAX_FILES} files")));
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| BundleError::Damaged(e.to_string()))?;
        write_in(dir, &name, &data)?;
        names.push(name);
    }
    Ok(names)
}

/// Take one pod's log into its node directory `dir`: the lines before the payload as
/// [`POD_LOG`], the payload's files beside it. Returns the names written (sorted, `pod.log`
/// included); on a damaged payload the error carries the log's last lines.
pub fn receive(log: &str, dir: &Path) -> Result<Vec<String>, String> {
    node_dir(dir).map_err(|e| e.to_string())?;
    let progress = match locate(log) {
        Ok((i, _)) => &log[..i],
        Err(_) => log,
    };
    // Kept even when the payload is damaged: it says what the pod did.
    let kept = write_in(dir, POD_LOG, progress.as_bytes());
    let with_tail = |e: String| {
        let tail: Vec<&str> = progress.lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!("{e}; last log lines: {}", tail.join(" | "))
    };
    let bytes = extract(log).map_err(|e| with_tail(e.to_string()))?;
    let mut files = unpack(&bytes, dir).map_err(|e| e.to_string())?;
    kept.map_err(|e| e.to_string())?;
    files.push(POD_LOG.into());
    files.sort();
    Ok(files)
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

    fn payload(files: &[(&str, &str)]) -> String {
        let src = tempfile::tempdir().unwrap();
        for (n, t) in files {
            std::fs::write(src.path().join(n), t).unwrap();
        }
        pack(src.path()).unwrap()
    }

    /// Issue 21, item 10: symlinks planted in the node directory (a result file pointing
    /// outside, `pod.log` pointing outside, the node directory itself) are never written
    /// through.
    #[test]
    fn planted_symlinks_are_never_written_through() {
        use std::os::unix::fs::symlink;
        let out = tempfile::tempdir().unwrap();
        let victim = out.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let node = out.path().join("node-a");
        std::fs::create_dir(&node).unwrap();
        symlink(&victim, node.join("timer.json")).unwrap();
        symlink(&victim, node.join(POD_LOG)).unwrap();
        let log = format!("progress\n{}", payload(&[("timer.json", "{}")]));
        let files = receive(&log, &node).unwrap();
        assert_eq!(files, ["pod.log", "timer.json"]);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        for n in ["timer.json", POD_LOG] {
            let m = std::fs::symlink_metadata(node.join(n)).unwrap();
            assert!(m.is_file(), "{n} is a file of its own now");
        }
        assert_eq!(std::fs::read_to_string(node.join(POD_LOG)).unwrap(), "progress\n");
        // The node directory itself planted as a symlink to another directory.
        let elsewhere = out.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let node_b = out.path().join("node-b");
        symlink(&elsewhere, &node_b).unwrap();
        let e = receive(&log, &node_b).unwrap_err();
        assert!(e.contains("a symlink"), "{e}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    /// A bundle may not replace the pod's own log, nor carry a name twice.
    #[test]
    fn a_bundle_cannot_overwrite_pod_log() {
        let node = tempfile::tempdir().unwrap();
        let log = format!("real progress\n{}", payload(&[(POD_LOG, "forged"), ("a", "1")]));
        let e = receive(&log, node.path()).unwrap_err();
        assert!(e.contains("refusing a file named pod.log"), "{e}");
        assert_eq!(std::fs::read_to_string(node.path().join(POD_LOG)).unwrap(), "real progress\n");
    }

    /// Only whole marker lines count, and a log with two payloads is refused: before, the
    /// last one anywhere in the log won (a marker inside another line counted too).
    #[test]
    fn one_payload_on_its_own_lines_or_none() {
        let real = payload(&[("timer.json", "real")]);
        let forged = payload(&[("timer.json", "forged")]);
        let two = format!("child output\n{forged}more output\n{real}");
        let e = extract(&two).unwrap_err();
        assert!(matches!(&e, BundleError::Damaged(m) if m.contains("two")), "{e:?}");
        let two = format!("{real}{forged}");
        assert!(matches!(extract(&two), Err(BundleError::Damaged(_))));
        // a marker that is not a line of its own is not a marker
        let inline = format!("{real}echo {forged}");
        let inline = inline.replace(&format!("\n{BEGIN}"), &format!(" {BEGIN}"));
        let bytes = extract(&inline).unwrap();
        let dst = tempfile::tempdir().unwrap();
        unpack(&bytes, dst.path()).unwrap();
        assert_eq!(std::fs::read_to_string(dst.path().join("timer.json")).unwrap(), "real");
        let (at, _) = locate(&format!("a\n{real}")).unwrap();
        assert_eq!(at, 2);
    }

    // What the fuzz target would check, as a property test (fuzzing here would build
    // kube/tokio/rustls under the sanitizer): arbitrary logs never panic, and whatever a payload
    // holds, only single-component names other than `pod.log` are written, all inside the node
    // directory.
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn any_log_writes_only_inside_the_node_directory(
            prefix in "\\PC{0,200}",
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048),
            wrap in proptest::prelude::any::<bool>(),
        ) {
            let log = if wrap {
                // a well-formed envelope around arbitrary bytes, and around a real payload
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join("x.json"), &body).unwrap();
                format!("{prefix}\n{}", pack(dir.path()).unwrap())
            } else {
                format!("{prefix}{}", String::from_utf8_lossy(&body))
            };
            let out = tempfile::tempdir().unwrap();
            let node = out.path().join("node");
            if let Ok(names) = receive(&log, &node) {
                proptest::prop_assert_eq!(names.iter().filter(|n| *n == POD_LOG).count(), 1);
                for n in &names {
                    proptest::prop_assert!(!n.contains('/'), "{}", n);
                    proptest::prop_assert!(node.join(n).is_file(), "{}", n);
                }
                // pod.log is the log before the payload, never something the payload wrote
                let kept = std::fs::read_to_string(node.join(POD_LOG)).unwrap();
                proptest::prop_assert!(log.starts_with(&kept));
            }
            let beside = std::fs::read_dir(out.path()).unwrap().count();
            proptest::prop_assert!(beside <= 1, "written beside the node directory");
        }
    }
}
