//! Booting the guest: the topology QEMU gives it, KVM or TCG (KVM when it boots, TCG
//! otherwise: nested KVM hangs in early boot on some hosts), and one boot from start to power
//! off with the job's files laid over the base initramfs. The console (ttyS0) goes to
//! `console.log`; the guest writes its `/out` as a tar onto the virtio disk, which
//! [`crate::payload`] reads back.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;

/// A CPU and NUMA layout for the guest.
#[derive(Debug, Clone, Serialize)]
pub struct Topology {
    pub name: &'static str,
    pub sockets: u32,
    pub cores: u32,
    pub threads: u32,
    /// One NUMA node per socket when true, else one node.
    pub numa_per_socket: bool,
    pub mem_mib: u32,
}

impl Topology {
    /// 2 sockets × 2 cores × 2 threads, a NUMA node per socket: SMT pairs (0,1) (2,3) … and
    /// node 1 = CPUs 4-7, so plan's sibling and per-node rules meet a real kernel.
    pub const SMT_NUMA: Topology = Topology {
        name: "smt-numa",
        sockets: 2,
        cores: 2,
        threads: 2,
        numa_per_socket: true,
        mem_mib: 2048,
    };

    pub fn cpus(&self) -> u32 {
        self.sockets * self.cores * self.threads
    }

    /// QEMU's arguments for this layout (CPU index = (socket × cores + core) × threads + thread).
    pub fn args(&self) -> Vec<String> {
        let mut a = vec![
            "-smp".into(),
            format!(
                "{},sockets={},cores={},threads={}",
                self.cpus(),
                self.sockets,
                self.cores,
                self.threads
            ),
            "-m".into(),
            format!("{}M", self.mem_mib),
        ];
        if self.numa_per_socket && self.sockets > 1 {
            let per = self.cores * self.threads;
            let mem = self.mem_mib / self.sockets;
            for s in 0..self.sockets {
                a.push("-object".into());
                a.push(format!("memory-backend-ram,id=m{s},size={mem}M"));
                a.push("-numa".into());
                a.push(format!(
                    "node,nodeid={s},cpus={}-{},memdev=m{s}",
                    s * per,
                    s * per + per - 1
                ));
            }
        }
        a
    }
}

/// How QEMU runs the guest's CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    fn args(self) -> Vec<&'static str> {
        match self {
            // The host's CPU model: what a user's KVM guest sees.
            Accel::Kvm => vec!["-accel", "kvm", "-cpu", "host"],
            // `vendor=GenuineIntel`: with TCG's default AMD identity the guest kernel sees no
            // SMT siblings (no topoext); Intel's leaf 0xB gives it the -smp threads.
            // `thread=single`: under multi-threaded TCG the guest livelocked in the kernel's
            // code patching (every vCPU in asm_exc_int3 / NMI exit, read from the monitor)
            // when tracepoints were switched while osnoise ran — 8 of 17 boots with osnoise and
            // its events hung (rtla -e osnoise too), none of 12 single-threaded; on 2 host
            // cores single-threaded is no slower (docs/LAB.md).
            Accel::Tcg => vec!["-accel", "tcg,thread=single", "-cpu", "max,vendor=GenuineIntel"],
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// What the user asked for: `auto` tries KVM once and falls back to TCG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccelChoice {
    Auto,
    Only(Accel),
}

impl std::str::FromStr for AccelChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(AccelChoice::Auto),
            "kvm" => Ok(AccelChoice::Only(Accel::Kvm)),
            "tcg" => Ok(AccelChoice::Only(Accel::Tcg)),
            _ => Err(format!("accelerator {s:?}: use auto, kvm or tcg")),
        }
    }
}

/// One boot's inputs.
#[derive(Debug, Clone)]
pub struct BootSpec {
    /// The whole kernel command line.
    pub append: String,
    /// The initramfs: base image plus this boot's job archive, concatenated.
    pub initrd: PathBuf,
    pub timeout: Duration,
}

/// What one boot left.
#[derive(Debug, Clone)]
pub struct Booted {
    pub dir: PathBuf,
    pub console: PathBuf,
    pub wall: Duration,
    /// The guest's init printed its first line (the kernel reached user space).
    pub reached_init: bool,
    /// QEMU was killed at the time limit.
    pub timed_out: bool,
}

/// The line the guest's /init prints first on the console.
pub const INIT_MARKER: &str = "LOWLAT-LAB-INIT";

/// A machine to boot: kernel, topology, accelerator.
#[derive(Debug, Clone)]
pub struct Machine {
    pub vmlinuz: PathBuf,
    pub topology: Topology,
    pub accel: Accel,
}

/// The raw disk of the boot whose files are in `dir`: the guest's virtio-blk device
/// (multi-queue: managed IRQs) and the way its results come back.
pub fn disk_of(dir: &Path) -> PathBuf {
    dir.join("disk.img")
}

impl Machine {
    fn command(&self, spec: &BootSpec, console: &Path) -> Command {
        let mut c = Command::new("qemu-system-x86_64");
        c.args(["-nodefaults", "-no-user-config", "-no-reboot", "-display", "none"]);
        c.args(self.accel.args());
        c.args(self.topology.args());
        c.arg("-kernel").arg(&self.vmlinuz);
        c.arg("-initrd").arg(&spec.initrd);
        c.arg("-append").arg(&spec.append);
        c.arg("-serial").arg(format!("file:{}", console.display()));
        // The monitor, for a hung guest's last words (sysrq: every CPU's and every blocked
        // task's stack on the console before it is killed).
        if let Some(dir) = console.parent() {
            c.arg("-monitor")
                .arg(format!("unix:{},server,nowait", dir.join("monitor.sock").display()));
        }
        let disk = console.parent().map(disk_of).unwrap_or_else(|| PathBuf::from("disk.img"));
        c.arg("-drive").arg(format!("file={},if=none,id=d0,format=raw", disk.display()));
        c.arg("-device")
            .arg(format!("virtio-blk-pci,drive=d0,num-queues={}", self.topology.cpus()));
        c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        c
    }

    /// Boot once and wait for the guest to power off (or the time limit). `init_deadline`:
    /// give up early when the guest has not reached its /init by then (the KVM probe).
    pub fn boot(
        &self,
        spec: &BootSpec,
        dir: &Path,
        init_deadline: Option<Duration>,
    ) -> Result<Booted> {
        std::fs::create_dir_all(dir)?;
        make_disk(&disk_of(dir))?;
        let console = dir.join("console.log");
        std::fs::write(dir.join("cmdline.txt"), format!("{}\n", spec.append))?;
        let mut cmd = self.command(spec, &console);
        std::fs::write(dir.join("qemu.txt"), format!("{cmd:?}\n"))?;
        let t0 = Instant::now();
        let mut child = cmd
            .spawn()
            .context("cannot start qemu-system-x86_64 (apt-get install qemu-system-x86)")?;
        let mut reached_init = false;
        let mut timed_out = false;
        loop {
            if let Some(status) = child.try_wait()? {
                let stderr = read_pipe(&mut child);
                std::fs::write(dir.join("qemu.stderr"), &stderr)?;
                if !status.success() && !console_has(&console, INIT_MARKER) {
                    bail!("qemu exited with {status} before the guest started: {}", stderr.trim());
                }
                break;
            }
            if !reached_init {
                reached_init = console_has(&console, INIT_MARKER);
            }
            let el = t0.elapsed();
            if (!reached_init && init_deadline.is_some_and(|d| el > d)) || el > spec.timeout {
                timed_out = true;
                if reached_init {
                    sysrq_dump(&dir.join("monitor.sock"));
                }
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        reached_init = reached_init || console_has(&console, INIT_MARKER);
        Ok(Booted { dir: dir.to_path_buf(), console, wall: t0.elapsed(), reached_init, timed_out })
    }
}

/// Ask the hung guest's kernel, through QEMU's monitor and the emulated keyboard, for its
/// console log level up, every CPU's backtrace (sysrq l) and the blocked tasks (sysrq w); the
/// answers land on the console log. Best effort.
fn sysrq_dump(sock: &Path) {
    use std::os::unix::net::UnixStream;
    let Ok(mut s) = UnixStream::connect(sock) else { return };
    // Where each vCPU is (RIP), for the record: the monitor's answers go to monitor.log.
    if let Some(dir) = sock.parent() {
        if let Ok(mut r) = s.try_clone() {
            let log = dir.join("monitor.log");
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = r.set_read_timeout(Some(Duration::from_secs(20)));
                let _ = r.read_to_end(&mut buf);
                let _ = std::fs::write(log, buf);
            });
        }
        let _ = writeln!(s, "info cpus");
        let _ = writeln!(s, "info registers -a");
        std::thread::sleep(Duration::from_secs(2));
    }
    for key in ["9", "l", "w", "t"] {
        let _ = writeln!(s, "sendkey alt-sysrq-{key}");
        std::thread::sleep(Duration::from_secs(3));
    }
}

fn read_pipe(child: &mut Child) -> String {
    let mut s = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut s);
    }
    s
}

fn console_has(path: &Path, needle: &str) -> bool {
    let Ok(f) = std::fs::File::open(path) else { return false };
    BufReader::new(f)
        .split(b'\n')
        .map_while(Result::ok)
        .any(|l| l.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

/// The last `n` lines of the console, for error messages.
pub fn console_tail(path: &Path, n: usize) -> String {
    let text =
        std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// (Re)make the raw disk: sparse and all zeroes, 256 MiB (the most a boot may send back).
pub fn make_disk(path: &Path) -> Result<()> {
    let _ = std::fs::remove_file(path);
    let f = std::fs::File::create(path)?;
    f.set_len(256 << 20)?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn smt_numa_layout_gives_qemu_two_nodes_of_two_smt_cores() {
        let a = Topology::SMT_NUMA.args().join(" ");
        assert_eq!(
            a,
            "-smp 8,sockets=2,cores=2,threads=2 -m 2048M \
             -object memory-backend-ram,id=m0,size=1024M -numa node,nodeid=0,cpus=0-3,memdev=m0 \
             -object memory-backend-ram,id=m1,size=1024M -numa node,nodeid=1,cpus=4-7,memdev=m1"
        );
    }

    #[test]
    fn accel_choice_parses() {
        assert_eq!("auto".parse::<AccelChoice>().unwrap(), AccelChoice::Auto);
        assert_eq!("tcg".parse::<AccelChoice>().unwrap(), AccelChoice::Only(Accel::Tcg));
        assert!("hvf".parse::<AccelChoice>().is_err());
    }
}
