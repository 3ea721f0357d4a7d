//! The size bound on files read as results or other tools' output (`report`, `import`; issue
//! 21, item 9). Parsing takes several times a file's size in memory (a JSON tree, then the
//! typed result: ~16x for a result file), so a file over [`MAX_INPUT_BYTES`] is refused before
//! it is read, with what to do instead, rather than the reader taking gigabytes or aborting.

use std::io::Read;
use std::path::Path;

/// Largest result or tool-output file read (64 MiB). lowlat's own results are well under
/// 1 MiB, a 12 h `watch` series about 20 MiB; cyclictest/oslat/fio output this large holds
/// per-sample or per-I/O lines that no importer uses.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {size} bytes, over the {limit}-byte ({} MiB) limit on result and tool-output files (reading it would take several times that in memory); lowlat's own results are far smaller: for cyclictest/oslat keep the -h histogram output without per-sample lines (-v), for fio leave out per-I/O logs, or split the run", limit >> 20)]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("{path}: not UTF-8 text ({source}); expected a lowlat result or the tool's text/JSON output")]
    NotText {
        path: String,
        #[source]
        source: std::string::FromUtf8Error,
    },
}

/// Read `path` as text, refusing a file over `limit` bytes (its size is checked before
/// reading; a pipe or FIFO is read up to `limit + 1` bytes).
pub fn read_text_limited(path: &Path, limit: u64) -> Result<String, InputError> {
    let name = || path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| InputError::Read { path: name(), source: e })?;
    if let Ok(m) = f.metadata() {
        if m.is_file() && m.len() > limit {
            return Err(InputError::TooLarge { path: name(), size: m.len(), limit });
        }
    }
    read_limited(f, &name(), limit)
}

/// [`read_text`], with `-` meaning standard input.
pub fn read_text_or_stdin(path: &Path) -> Result<String, InputError> {
    if path.as_os_str() == "-" {
        read_limited(std::io::stdin(), &source_name(path), MAX_INPUT_BYTES)
    } else {
        read_text(path)
    }
}

/// How [`read_text_or_stdin`]'s input is named in messages: `standard input` for `-`, else
/// the path.
pub fn source_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        path.display().to_string()
    }
}

/// [`read_text_limited`] on a file (`path` as shown in errors).
pub fn read_text(path: &Path) -> Result<String, InputError> {
    read_text_limited(path, MAX_INPUT_BYTES)
}

/// Read at most `limit` bytes of text from `r` (standard input, a pipe); more is refused.
pub fn read_limited(r: impl Read, path: &str, limit: u64) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    r.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::Read { path: path.into(), source: e })?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { path: path.into(), size: bytes.len() as u64, limit });
    }
    String::from_utf8(bytes).map_err(|e| InputError::NotText { path: path.into(), source: e })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_limit_is_refused_before_it_is_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.json");
        std::fs::write(&p, vec![b' '; 1001]).unwrap();
        let e = read_text_limited(&p, 1000).unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, InputError::TooLarge { size: 1001, limit: 1000, .. }), "{m}");
        assert!(m.contains(&p.display().to_string()) && m.contains("1001 bytes"), "{m}");
        assert!(m.contains("limit") && m.contains("-h histogram"), "{m}");
        assert_eq!(read_text_limited(&p, 1001).unwrap().len(), 1001);
        let e = read_limited(&[b'x'; 11][..], "-", 10).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        assert!(matches!(read_limited(&[0xff][..], "-", 10), Err(InputError::NotText { .. })));
    }
}
