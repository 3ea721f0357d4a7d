//! What can go wrong before or while measuring, and which exit code each means.

use util::exit::{Classify, ExitCode};

/// Which part of a request an error is about (the binary names the matching option).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The CPUs to measure.
    Cpus,
    /// The main thread's CPU.
    MainCpu,
    /// The built-in load.
    Load,
    /// The external load command.
    LoadCommand,
    /// The cgroup to run from for an RT budget.
    RtCgroup,
}

/// Errors of a measurement.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// Nothing to measure.
    #[error("no CPUs to measure")]
    NoCpus,
    /// A named CPU set is empty on this host.
    #[error("this host has no {name} CPUs; give a cpu-list such as 1-3")]
    NoNamedCpus { name: &'static str },
    /// A CPU asked for is not online.
    #[error("CPU {cpu} is not online (online: {online})")]
    CpuOffline { cpu: u32, online: String },
    /// The main thread's CPU is one of the measured ones.
    #[error("CPU {cpu} is measured too: the main thread needs a housekeeping CPU outside the measured ones")]
    MainCpuMeasured { cpu: u32 },
    /// A wake-up interval of zero.
    #[error("the interval must be longer than zero")]
    ZeroInterval,
    /// A load specification that does not parse.
    #[error("load {spec:?}: {why}")]
    LoadSpec { spec: String, why: String },
    /// No CPU left for the built-in load.
    #[error("no housekeeping CPU to run the load on; name its CPUs (KIND:CPUS)")]
    NoLoadCpus,
    /// A load thread could not be started.
    #[error("could not start a load thread")]
    LoadThread(#[source] std::io::Error),
    /// The external load command could not be started.
    #[error("could not start the load command {command:?} with sh")]
    LoadCommand {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// The process could not, or would not usefully, be moved into the cgroup with an RT
    /// budget (refused before the move when the target cannot hold RT tasks).
    #[error("RT cgroup {path}: {why}")]
    RtCgroup { path: String, why: String },
    /// A tracefs file could not be read or written.
    #[error("tracefs {path}: {why}")]
    Tracer { path: String, why: String },
    /// The tracer asked for cannot run here (not built, tracefs missing, no privilege).
    #[error("{0}")]
    TracerUnavailable(String),
    /// Another measurement holds one of the CPUs asked for (`cpulock`).
    #[error("CPU {cpu} is being measured by another lowlat ({holder}): two measurements on one CPU disturb each other (a noise run counts a timer run's wake-ups as noise), so this one is refused; wait for that run to end, or choose other --cpus")]
    CpuBusy { cpu: u32, holder: String },
    /// Another tracer user shares the osnoise/timerlat settings.
    #[error("the osnoise/timerlat tracer is in use by {who}: its settings are global, so a second run would change the first's; stop it (rtla, another lowlat) and run again")]
    TracerBusy { who: String },
}

impl MeasureError {
    /// The part of the request this error is about, when it is about one.
    pub fn input(&self) -> Option<Input> {
        match self {
            Self::NoNamedCpus { .. } | Self::CpuOffline { .. } | Self::CpuBusy { .. } => {
                Some(Input::Cpus)
            }
            Self::MainCpuMeasured { .. } => Some(Input::MainCpu),
            Self::LoadSpec { .. } | Self::NoLoadCpus => Some(Input::Load),
            Self::LoadCommand { .. } => Some(Input::LoadCommand),
            Self::RtCgroup { .. } => Some(Input::RtCgroup),
            Self::NoCpus
            | Self::ZeroInterval
            | Self::LoadThread(_)
            | Self::Tracer { .. }
            | Self::TracerUnavailable(_)
            | Self::TracerBusy { .. } => None,
        }
    }
}

impl Classify for MeasureError {
    fn exit_code(&self) -> ExitCode {
        match self {
            Self::NoCpus
            | Self::NoNamedCpus { .. }
            | Self::CpuOffline { .. }
            | Self::CpuBusy { .. }
            | Self::MainCpuMeasured { .. }
            | Self::ZeroInterval
            | Self::LoadSpec { .. }
            | Self::NoLoadCpus => ExitCode::Usage,
            Self::LoadThread(_)
            | Self::LoadCommand { .. }
            | Self::RtCgroup { .. }
            | Self::Tracer { .. }
            | Self::TracerUnavailable(_)
            | Self::TracerBusy { .. } => ExitCode::Runtime,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_classify_and_name_their_input() {
        let e = MeasureError::MainCpuMeasured { cpu: 0 };
        assert_eq!((e.exit_code(), e.input()), (ExitCode::Usage, Some(Input::MainCpu)));
        let e = MeasureError::LoadCommand {
            command: "x".into(),
            source: std::io::Error::other("no sh"),
        };
        assert_eq!((e.exit_code(), e.input()), (ExitCode::Runtime, Some(Input::LoadCommand)));
        assert!(!MeasureError::NoCpus.to_string().contains("--"));
    }
}
