//! `lowlat measure fsync` and `lowlat measure etcd`: flags → a `storage` request → one
//! `storage` call (its live view on stdout, or stderr when the JSON takes stdout) → results.

use cli::args::fsync::{Args, EtcdArgs};
use storage::etcd::{EtcdRequest, Source, TlsFiles};
use storage::{ChoiceError, FsyncRequest, Interference, Scenarios};

use super::common::Output;
use crate::exit::{usage, ExitCode};

/// Run `lowlat measure fsync`.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let mut interferences: Vec<Interference> = a.interference.into_iter().map(Into::into).collect();
    interferences.extend(a.interference_cmd.map(Interference::Command));
    let scenarios =
        Scenarios::choose(interferences, a.mitigation, a.matrix).map_err(|e| match e {
            ChoiceError::SeveralWithoutMatrix => {
                usage("several --interference/--mitigation values need --matrix")
            }
            ChoiceError::NeedsInterference(m) => {
                usage(format!("--mitigation {m}: applies to the bulk writer; add --interference or --interference-cmd"))
            }
        })?;
    let req = FsyncRequest {
        dir: a.dir,
        bs: a.bs,
        size: a.size,
        duration: a.duration,
        sync: a.sync,
        rate: a.rate,
        window: a.window,
        file_size: a.file_size,
        scenarios,
        bulk_size: a.bulk_size,
        bulk_delay: a.bulk_delay,
        outstanding: a.outstanding,
        tool: format!("lowlat {}", super::VERSION),
    };
    util::signal::install();
    let sys = storage::SysRoot::live();
    let run = storage::fsync::run(&req, &sys, util::signal::stop_flag(), &mut a.json.human_view())?;
    if let Some(p) = a.fio_json {
        Output::File(p).write_json(&run.fio_json())?;
    }
    if let Some(p) = &a.prometheus {
        super::common::write_prometheus(p, &report::prom::fsync(&run.result))?;
    }
    if let Some(o) = &a.json.json {
        o.write_json(&run.result)?;
    }
    Ok(run.exit_code())
}

/// Run `lowlat measure etcd`.
pub fn run_etcd(a: EtcdArgs) -> anyhow::Result<ExitCode> {
    let tool = format!("lowlat {}", super::VERSION);
    let bearer = match &a.token_file {
        Some(p) => Some(
            std::fs::read_to_string(p)
                .map_err(|e| usage(format!("--token-file {}: {e}", p.display())))?
                .trim()
                .to_string(),
        ),
        None => a.token,
    };
    let source = match (a.endpoint, a.prometheus_url) {
        (_, Some(url)) => Source::Prometheus { url, selector: a.selector },
        (Some(endpoint), None) => Source::Metrics { endpoint },
        (None, None) => return Err(usage("give --endpoint or --prometheus-url")),
    };
    let tls = TlsFiles { cacert: a.cacert, cert: a.cert, key: a.key };
    let (duration, interval) = (a.duration, a.interval);
    let req = EtcdRequest { source, tls, bearer, duration, interval, tool };
    util::signal::install();
    let root = host::Root::live();
    let run = storage::etcd::run(&req, &root, util::signal::stop_flag(), &mut a.json.human_view())?;
    if let Some(p) = &a.prometheus {
        super::common::write_prometheus(p, &report::prom::etcd(&run.result))?;
    }
    if let Some(o) = &a.json.json {
        o.write_json(&run.result)?;
    }
    Ok(run.exit_code())
}
