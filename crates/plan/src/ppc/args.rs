//! PPC's JSON arguments file (the format of the Performance Profile Creator's test fixtures:
//! one key per PPC flag, `"reserved-cpu-count": 4`). [`crate::Request`] takes what it leaves
//! unset from here.

use std::path::{Path, PathBuf};

use super::PpcError;
use crate::model::{Power, TopologyPolicy};

/// The largest arguments file read (64 KiB; PPC's are a few hundred bytes).
const MAX_BYTES: u64 = 64 * 1024;

/// PPC's arguments, as its JSON file spells them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ArgsFile {
    /// The must-gather, resolved against the file's place by [`ArgsFile::load`].
    pub must_gather_dir_path: Option<PathBuf>,
    pub mcp_name: Option<String>,
    /// HyperShift's name for the pool.
    pub node_pool_name: Option<String>,
    pub reserved_cpu_count: Option<i64>,
    pub offlined_cpu_count: Option<i64>,
    pub rt_kernel: Option<bool>,
    pub split_reserved_cpus_across_numa: Option<bool>,
    pub disable_ht: Option<bool>,
    pub user_level_networking: Option<bool>,
    pub power_consumption_mode: Option<Power>,
    pub topology_manager_policy: Option<TopologyPolicy>,
    pub per_pod_power_management: Option<bool>,
    pub profile_name: Option<String>,
    /// Accepted and ignored: lowlat renders no hardware tuning section.
    pub enable_hardware_tuning: Option<bool>,
}

impl ArgsFile {
    /// Read and parse a PPC arguments file.
    pub fn load(path: &Path) -> Result<ArgsFile, PpcError> {
        use std::io::Read as _;
        let read = |source| PpcError::Read { path: path.to_path_buf(), source };
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_BYTES).read_to_string(&mut text))
            .map_err(read)?;
        let mut args = Self::parse(&text)
            .map_err(|source| PpcError::Parse { path: path.to_path_buf(), source })?;
        if let Some(mg) = args.must_gather_dir_path.take() {
            args.must_gather_dir_path = Some(resolve_must_gather(&mg, path));
        }
        Ok(args)
    }

    /// Parse the JSON text.
    pub fn parse(text: &str) -> Result<ArgsFile, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// A must-gather path from a PPC arguments file: as given when absolute or a directory, else
/// next to the file, else in a `must-gather/` directory beside or above the file's directory
/// (the fixture layout).
fn resolve_must_gather(mg: &Path, file: &Path) -> PathBuf {
    if mg.is_absolute() || mg.is_dir() {
        return mg.to_path_buf();
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    [dir.join(mg), dir.join("../must-gather").join(mg), dir.join("must-gather").join(mg)]
        .into_iter()
        .find(|c| c.is_dir())
        .unwrap_or_else(|| mg.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ppcs_keys_and_names() {
        let a = ArgsFile::parse(
            r#"{"mcp-name": "worker-cnf", "reserved-cpu-count": 4, "rt-kernel": true,
                "power-consumption-mode": "ultra-low-latency", "enable-hardware-tuning": false}"#,
        )
        .unwrap();
        assert_eq!(a.mcp_name.as_deref(), Some("worker-cnf"));
        assert_eq!(a.reserved_cpu_count, Some(4));
        assert_eq!(a.power_consumption_mode, Some(Power::UltraLowLatency));
        let e = ArgsFile::parse(r#"{"reserved-cpus": 4}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field"), "{e}");
        let e = ArgsFile::parse(r#"{"power-consumption-mode": "fast"}"#).unwrap_err().to_string();
        assert!(e.contains("[default low-latency ultra-low-latency]"), "{e}");
    }

    #[test]
    fn must_gather_next_to_the_fixtures() {
        let dir = tempfile_dir();
        std::fs::create_dir_all(dir.join("must-gather/mg.bm")).unwrap();
        std::fs::create_dir_all(dir.join("ppc")).unwrap();
        let file = dir.join("ppc/profile1.json");
        let got = resolve_must_gather(Path::new("mg.bm"), &file);
        assert_eq!(got, dir.join("ppc/../must-gather/mg.bm"));
        assert_eq!(resolve_must_gather(Path::new("nosuch"), &file), PathBuf::from("nosuch"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("plan-ppc-args-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
