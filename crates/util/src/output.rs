//! Where a document goes: standard output (`-`) or a file, replaced atomically. The command
//! line's `--json [FILE]` and `-o FILE` values.

use std::io::Write as _;
use std::path::PathBuf;
use std::str::FromStr;

/// Where a document goes: stdout (`-`) or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Standard output.
    Stdout,
    /// A file, replaced atomically (a temporary file beside it, then rename).
    File(PathBuf),
}

impl FromStr for Output {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(if s == "-" { Self::Stdout } else { Self::File(PathBuf::from(s)) })
    }
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdout => f.write_str("stdout"),
            Self::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// What failed, as the message of the `io::Error` returned; the cause is its source.
#[derive(Debug, thiserror::Error)]
enum Failed {
    #[error("writing {0}")]
    File(String, #[source] std::io::Error),
    #[error("serializing JSON")]
    Json(#[source] serde_json::Error),
}

impl Output {
    /// Is this stdout?
    pub fn is_stdout(&self) -> bool {
        matches!(self, Self::Stdout)
    }

    /// The file, when it is one.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            Self::Stdout => None,
            Self::File(p) => Some(p),
        }
    }

    /// Write a whole document. A stdout error is returned as it is (a closed pipe stays
    /// recognisable); a file's says "writing FILE", with the cause as its source.
    pub fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Self::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Self::File(p) => crate::fs::write_atomic(p, bytes, 0o644).map_err(|e| {
                std::io::Error::new(e.kind(), Failed::File(p.display().to_string(), e))
            }),
        }
    }

    /// Write a value as pretty JSON with a final newline. Stdout gets it as it is serialized:
    /// a big host's model (~50 MB at 512 CPUs / 50k threads) is not built in memory first.
    pub fn write_json<T: serde::Serialize>(&self, value: &T) -> std::io::Result<()> {
        if let Self::Stdout = self {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            serde_json::to_writer_pretty(&mut out, value).map_err(|e| {
                // an I/O error (a closed pipe) stays recognisable, as from `write`
                if e.is_io() {
                    std::io::Error::from(e)
                } else {
                    std::io::Error::new(std::io::ErrorKind::InvalidData, Failed::Json(e))
                }
            })?;
            out.write_all(b"\n")?;
            return out.flush();
        }
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, Failed::Json(e)))?;
        text.push('\n');
        self.write(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dash_is_stdout_and_a_file_error_names_the_file() {
        assert_eq!("-".parse::<Output>(), Ok(Output::Stdout));
        let o: Output = "/nonexistent-dir/x.json".parse().unwrap_or(Output::Stdout);
        assert_eq!(o.to_string(), "/nonexistent-dir/x.json");
        let e = o.write(b"{}").expect_err("no such directory");
        assert_eq!(e.to_string(), "writing /nonexistent-dir/x.json");
        let cause = std::error::Error::source(&e).map(ToString::to_string).unwrap_or_default();
        assert!(!cause.is_empty(), "the cause is the source");
    }
}
