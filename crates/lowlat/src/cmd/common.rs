//! Arguments shared by the read-only commands: where the host model comes from
//! (`--root DIR|FILE.tgz`, `--must-gather DIR --node NAME`, or the live host), and the
//! summary of a host that every result file carries.

use std::path::PathBuf;

use anyhow::Context as _;

/// Where to read the host from. Flatten into a command's `Args` with `#[command(flatten)]`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HostArgs {
    /// Read a snapshot instead of the live host: a directory holding proc/ and sys/, or a
    /// .tgz made by `lowlat snapshot` (or a must-gather sysinfo.tgz).
    #[arg(long, value_name = "DIR|FILE.tgz", conflicts_with = "must_gather")]
    pub root: Option<PathBuf>,
    /// Read a node of an OpenShift must-gather directory (use with --node).
    #[arg(long, value_name = "DIR")]
    pub must_gather: Option<PathBuf>,
    /// The must-gather node to read (without it, the nodes found are listed).
    #[arg(long, value_name = "NAME", requires = "must_gather")]
    pub node: Option<String>,
}

impl HostArgs {
    /// Open the chosen root. Input problems (missing path, bad tarball, unknown node) are
    /// usage errors (exit 2).
    pub fn open_root(&self) -> anyhow::Result<host::Root> {
        if let Some(mg) = &self.must_gather {
            return host::Root::must_gather(mg, self.node.as_deref())
                .map_err(|e| crate::exit::usage(e.to_string()));
        }
        if let Some(r) = &self.root {
            return host::Root::open(r).map_err(|e| crate::exit::usage(e.to_string()));
        }
        Ok(host::Root::live())
    }

    /// Read the whole host model.
    pub fn load(&self) -> anyhow::Result<host::Host> {
        let root = self.open_root()?;
        let h = host::read(&root);
        if h.topology.cpus.is_empty() && h.kernel.cmdline.is_none() {
            return Err(crate::exit::usage(format!(
                "{root}: found neither sys/devices/system/cpu nor proc/cmdline; is this a host snapshot?"
            )))
            .context("reading the host model");
        }
        Ok(h)
    }
}

/// The host summary recorded in every result file (used by the measuring commands).
#[allow(dead_code, reason = "shared helper for the commands that write result files")]
pub fn host_context(h: &host::Host) -> results::HostContext {
    let iso = h.isolated_cpus();
    let mut governors: Vec<String> =
        h.power.cpus.iter().filter_map(|p| p.governor.clone()).collect();
    governors.sort();
    governors.dedup();
    results::HostContext {
        hostname: h.hostname.clone(),
        kernel: h.kernel.release.clone(),
        realtime: h.kernel.realtime,
        virtualization: h.virtualization.clone(),
        cmdline: h.kernel.cmdline.clone(),
        clocksource: h.kernel.clocksource.clone(),
        isolated: (!iso.is_empty()).then(|| iso.to_list()),
        nohz_full: h
            .cpus
            .nohz_full
            .clone()
            .or_else(|| h.kernel.boot.nohz_full.clone())
            .map(|s| s.to_list()),
        online: Some(h.online_cpus().to_list()),
        governors,
        smt_active: h.topology.smt_active.or(Some(h.topology.threads_per_core > 1)),
        cpu_model: h.topology.cpus.iter().find_map(|c| c.model.clone()),
    }
}
