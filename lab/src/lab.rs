//! One lab run's machinery: the base image, the machine (KVM or TCG, chosen once), and
//! [`Lab::boot`]: a job in, the guest's `/out` back as files, with each step's exit status.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::qemu::{self, Accel, AccelChoice, BootSpec, Booted, Machine};
use crate::{image, payload};

/// Arguments every boot gets before its own: the console on the first serial port, quiet
/// (a TCG serial console is slow), and no reboot loop on a panic.
pub const BASE_ARGS: &str = "console=ttyS0 quiet panic=-1";

/// How long the KVM probe waits for the guest's /init (a working KVM gets there in seconds).
const KVM_PROBE: Duration = Duration::from_secs(25);

/// A boot that has not reached /init by then hung in early boot (TCG gets there in 3-8 s on
/// 2 host cores): it is retried once. Seen rarely under multi-threaded TCG, with an empty
/// console (`quiet`).
const INIT_DEADLINE: Duration = Duration::from_secs(90);

#[derive(Debug)]
pub struct Lab {
    pub dir: PathBuf,
    pub base: PathBuf,
    pub machine: Machine,
    pub choice: AccelChoice,
    /// Why the accelerator is what it is (reported).
    pub accel_note: String,
    /// Boots that hung before /init and were retried (reported).
    pub hung: Vec<String>,
    probed: bool,
}

/// One step of a job, from `steps.txt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub name: String,
    pub rc: i32,
    pub secs: u64,
}

/// What a boot gave back.
#[derive(Debug)]
pub struct Guest {
    pub name: String,
    pub out: PathBuf,
    pub booted: Booted,
    pub steps: Vec<Step>,
}

impl Guest {
    pub fn step(&self, name: &str) -> Result<&Step> {
        self.steps.iter().find(|s| s.name == name).with_context(|| {
            format!("boot {}: step {name} did not run (steps.txt: {:?})", self.name, self.steps)
        })
    }
    pub fn file(&self, name: &str) -> PathBuf {
        self.out.join(name)
    }
    pub fn read(&self, name: &str) -> Result<String> {
        std::fs::read_to_string(self.file(name)).with_context(|| {
            format!("boot {}: {} is missing", self.name, self.file(name).display())
        })
    }
}

pub fn parse_steps(text: &str) -> Vec<Step> {
    text.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            match w.as_slice() {
                [n, rc, s] => {
                    Some(Step { name: (*n).into(), rc: rc.parse().ok()?, secs: s.parse().ok()? })
                }
                _ => None,
            }
        })
        .collect()
}

impl Lab {
    pub fn new(dir: PathBuf, base: PathBuf, machine: Machine, choice: AccelChoice) -> Self {
        let accel_note = match choice {
            AccelChoice::Only(a) => format!("{} (asked for)", a.as_str()),
            AccelChoice::Auto => "not chosen yet".into(),
        };
        Lab { dir, base, machine, choice, accel_note, hung: Vec::new(), probed: false }
    }

    /// Boot with `args` after [`BASE_ARGS`] (or exactly `args` when `exact`), run `job`.
    pub fn boot(
        &mut self,
        name: &str,
        args: &str,
        exact: bool,
        job: &str,
        files: &[(String, Vec<u8>)],
        timeout: Duration,
    ) -> Result<Guest> {
        let dir = self.dir.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let initrd = dir.join("initrd.cpio");
        // The guest's watchdog ends the job in time to send what it has (40 s to spare).
        let mut files = files.to_vec();
        files.push((
            "deadline".into(),
            format!("{}\n", timeout.as_secs().saturating_sub(40).max(30)).into_bytes(),
        ));
        image::with_job(&self.base, job, &files, &initrd)?;
        let append =
            if exact { args.to_string() } else { format!("{BASE_ARGS} {args}").trim().to_string() };
        let spec = BootSpec { append, initrd: initrd.clone(), timeout };
        eprintln!("[rtlab] boot {name}: {} ({} CPUs)", spec.append, self.machine.topology.cpus());

        let mut booted = None;
        if self.choice == AccelChoice::Auto && !self.probed {
            self.probed = true;
            self.machine.accel = Accel::Kvm;
            if !Path::new("/dev/kvm").exists() {
                self.accel_note = "tcg: /dev/kvm does not exist".into();
            } else {
                match self.machine.boot(&spec, &dir.join("kvm-probe"), Some(KVM_PROBE)) {
                    Ok(b) if b.reached_init => {
                        self.accel_note = "kvm: the guest reached /init under KVM".into();
                        booted = Some(b);
                    }
                    Ok(b) => {
                        self.accel_note = format!(
                            "tcg: under KVM the guest did not reach /init in {} s (nested KVM hangs in early boot on some hosts); console tail: {}",
                            KVM_PROBE.as_secs(),
                            qemu::console_tail(&b.console, 1).trim()
                        )
                    }
                    Err(e) => {
                        // QEMU's last error line says why (e.g. "failed to set MSR 0x10a").
                        let text = format!("{e:#}");
                        let why = text.lines().rev().find(|l| l.contains("error")).unwrap_or(text.lines().last().unwrap_or(""));
                        self.accel_note = format!("tcg: KVM failed to start ({})", why.trim());
                    }
                }
            }
            if booted.is_none() {
                self.machine.accel = Accel::Tcg;
            }
            eprintln!("[rtlab] accelerator {}", self.accel_note);
        }
        let booted = match booted {
            Some(b) => b,
            None => {
                let b = self.machine.boot(&spec, &dir, Some(INIT_DEADLINE))?;
                if b.reached_init {
                    b
                } else {
                    eprintln!(
                        "[rtlab] boot {name}: no /init after {} s (hung in early boot); retrying once",
                        INIT_DEADLINE.as_secs()
                    );
                    let _ = std::fs::rename(&b.console, dir.join("console-hung.log"));
                    self.hung.push(name.to_string());
                    self.machine.boot(&spec, &dir, Some(INIT_DEADLINE))?
                }
            }
        };
        let _ = std::fs::remove_file(&initrd); // tens of MB per boot
        eprintln!(
            "[rtlab] boot {name}: {:.1} s{}",
            booted.wall.as_secs_f64(),
            if booted.timed_out { " (TIMED OUT)" } else { "" }
        );
        let out = dir.join("out");
        let disk_path = crate::qemu::disk_of(&booted.dir);
        let disk = std::fs::File::open(&disk_path)?;
        let unpacked = payload::unpack(std::io::BufReader::new(disk), &out);
        let _ = std::fs::remove_file(&disk_path); // 256 MiB sparse, per boot
        unpacked.with_context(|| {
            format!(
                "boot {name}: no result from the guest{}; console ({}):\n{}",
                if booted.timed_out {
                    format!(" (killed after {} s)", timeout.as_secs())
                } else {
                    String::new()
                },
                booted.console.display(),
                qemu::console_tail(&booted.console, 25)
            )
        })?;
        let steps =
            parse_steps(&std::fs::read_to_string(out.join("steps.txt")).unwrap_or_default());
        let job_rc = std::fs::read_to_string(out.join("job.rc"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(-1);
        if job_rc != 0 {
            bail!(
                "boot {name}: the job exited {job_rc}; its log:\n{}",
                std::fs::read_to_string(out.join("job.log")).unwrap_or_default()
            );
        }
        Ok(Guest { name: name.into(), out, booted, steps })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_read_line_by_line() {
        let s = parse_steps("inspect 0 3\nverify-booted 1 12\ngarbage\n");
        assert_eq!(s.len(), 2);
        assert_eq!(s[1], Step { name: "verify-booted".into(), rc: 1, secs: 12 });
    }
}
