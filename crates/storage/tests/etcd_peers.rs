//! `measure etcd` against real peers: Debian's `etcd` serving its client port (and /metrics)
//! over mutual TLS with certificates made here (rcgen), and Debian's `prometheus` scraping a
//! plain etcd. Ignored by default (they start daemons); CI runs them with `--include-ignored`
//! and they fail loudly when `etcd`/`etcdctl`/`prometheus` are missing.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};
use results::fsync::EtcdSource;
use storage::etcd::promapi::ApiData;
use storage::etcd::{EtcdRequest, HttpClient, Source, TlsFiles};
use storage::StorageError;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn need(bin: &str) {
    let arg = if bin == "etcdctl" { "version" } else { "--version" };
    let ok = Command::new(bin).arg(arg).output().is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{bin} is missing: apt-get install etcd-server etcd-client prometheus (.ci/run does)"
    );
}

/// Kills (by PID) what it started when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

fn ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, name);
    CertifiedIssuer::self_signed(p, KeyPair::generate().unwrap()).unwrap()
}

/// A CA, a server certificate for 127.0.0.1, a client certificate, and a second, unrelated CA.
fn pki(dir: &Path) -> Pki {
    let root = ca("lowlat test etcd CA");
    let leaf = |cn: &str, sans: Vec<String>, usage: ExtendedKeyUsagePurpose| {
        let mut p = CertificateParams::new(sans).unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        p.extended_key_usages = vec![usage];
        let k = KeyPair::generate().unwrap();
        (p.signed_by(&k, &root).unwrap().pem(), k.serialize_pem())
    };
    let (srv, srv_key) = leaf(
        "etcd",
        vec!["127.0.0.1".into(), "localhost".into()],
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let (cli, cli_key) = leaf("lowlat", vec![], ExtendedKeyUsagePurpose::ClientAuth);
    let other = ca("some other CA");
    for (n, t) in [
        ("ca.pem", root.pem()),
        ("server.pem", srv),
        ("server-key.pem", srv_key),
        ("client.pem", cli),
        ("client-key.pem", cli_key),
        ("other-ca.pem", other.pem()),
    ] {
        std::fs::write(dir.join(n), t).unwrap();
    }
    Pki { dir: dir.to_path_buf() }
}

/// Start etcd on 127.0.0.1; `tls` = (CA, server cert, key) turns on https and
/// `--client-cert-auth`. Returns the daemon and its client URL.
fn etcd(dir: &Path, tls: Option<&Pki>) -> (Daemon, String) {
    need("etcd");
    let (client, peer) = (free_port(), free_port());
    let scheme = if tls.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://127.0.0.1:{client}");
    let mut c = Command::new("etcd");
    c.args(["--name", "t", "--data-dir"])
        .arg(dir.join("data"))
        .args(["--listen-client-urls", &url, "--advertise-client-urls", &url])
        .args(["--listen-peer-urls", &format!("http://127.0.0.1:{peer}")])
        .args(["--initial-advertise-peer-urls", &format!("http://127.0.0.1:{peer}")])
        .args(["--initial-cluster", &format!("t=http://127.0.0.1:{peer}")])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("etcd.log")).unwrap());
    if let Some(p) = tls {
        c.arg("--cert-file").arg(p.file("server.pem"));
        c.arg("--key-file").arg(p.file("server-key.pem"));
        c.arg("--trusted-ca-file").arg(p.file("ca.pem"));
        c.arg("--client-cert-auth");
    }
    (Daemon(c.spawn().unwrap()), url)
}

fn put(url: &str, pki: Option<&Pki>, n: usize) {
    need("etcdctl");
    for i in 0..n {
        let mut c = Command::new("etcdctl");
        c.env("ETCDCTL_API", "3").args(["--endpoints", url]);
        if let Some(p) = pki {
            c.arg("--cacert").arg(p.file("ca.pem"));
            c.arg("--cert").arg(p.file("client.pem"));
            c.arg("--key").arg(p.file("client-key.pem"));
        }
        let o = c.args(["put", &format!("/lowlat/k{i}"), "v"]).output().unwrap();
        assert!(o.status.success(), "etcdctl put: {}", String::from_utf8_lossy(&o.stderr));
    }
}

fn wait_ready(client: &HttpClient, url: &str, log: &Path) {
    let t0 = Instant::now();
    loop {
        match client.get(url, &[]) {
            Ok(_) => return,
            Err(e) if t0.elapsed() > Duration::from_secs(30) => {
                panic!(
                    "{url} not ready after 30 s: {e}\n{}",
                    std::fs::read_to_string(log).unwrap_or_default()
                )
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

fn request(source: Source, tls: TlsFiles, secs: u64) -> EtcdRequest {
    EtcdRequest {
        source,
        tls,
        bearer: None,
        duration: Duration::from_secs(secs),
        interval: Duration::from_secs(1),
        tool: "lowlat test".into(),
    }
}

#[test]
#[ignore = "starts etcd (Debian etcd-server); CI runs it with --include-ignored"]
fn a_mutual_tls_etcd_is_measured_and_a_wrong_ca_is_refused_clearly() {
    let d = tempfile::tempdir().unwrap();
    let p = pki(d.path());
    let (_etcd, url) = etcd(d.path(), Some(&p));
    let good = TlsFiles {
        cacert: Some(p.file("ca.pem")),
        cert: Some(p.file("client.pem")),
        key: Some(p.file("client-key.pem")),
    };
    let client = HttpClient::new(&good, None, Duration::from_secs(5)).unwrap();
    wait_ready(&client, &format!("{url}/metrics"), &d.path().join("etcd.log"));

    let writer = {
        let (url, p) = (url.clone(), Pki { dir: p.dir.clone() });
        std::thread::spawn(move || put(&url, Some(&p), 15))
    };
    let mut out = Vec::new();
    let run = storage::etcd::run(
        &request(Source::Metrics { endpoint: url.clone() }, good.clone(), 2),
        &host::Root::live(),
        &AtomicBool::new(false),
        &mut out,
    )
    .unwrap();
    writer.join().unwrap();
    let r = &run.result;
    assert!(r.tls && r.source == EtcdSource::Metrics, "{r:?}");
    assert_eq!(r.endpoint, format!("{url}/metrics"));
    assert!(r.wal_fsync.count > 0, "etcdctl puts made WAL fsyncs: {r:?}");
    assert_eq!(r.wal_fsync.buckets.iter().map(|b| b.count).sum::<u64>(), r.wal_fsync.count);
    assert!(!r.windows.is_empty());
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("etcd_disk_wal_fsync_duration_seconds: "), "{text}");

    // The wrong CA: refused before any number, with what to do.
    let wrong = TlsFiles { cacert: Some(p.file("other-ca.pem")), ..good.clone() };
    let e = storage::etcd::run(
        &request(Source::Metrics { endpoint: url.clone() }, wrong, 1),
        &host::Root::live(),
        &AtomicBool::new(false),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(matches!(e, StorageError::Tls { .. }) && e.is_input(), "{e:?}");
    let m = e.to_string();
    assert!(m.contains("does not verify against the CA file") && m.contains("other-ca.pem"), "{m}");

    // No client certificate: etcd refuses the handshake, and the message says why.
    let anon = TlsFiles { cacert: Some(p.file("ca.pem")), ..Default::default() };
    let e = HttpClient::new(&anon, None, Duration::from_secs(5))
        .unwrap()
        .get(&format!("{url}/metrics"), &[])
        .unwrap_err();
    assert!(e.to_string().contains("client certificate"), "{e}");
}

#[test]
#[ignore = "starts etcd and prometheus (Debian packages); CI runs it with --include-ignored"]
fn prometheus_scraping_a_real_etcd_gives_the_windows_histogram() {
    need("prometheus");
    let d = tempfile::tempdir().unwrap();
    let (_etcd, url) = etcd(d.path(), None);
    let plain = HttpClient::new(&TlsFiles::default(), None, Duration::from_secs(5)).unwrap();
    wait_ready(&plain, &format!("{url}/metrics"), &d.path().join("etcd.log"));
    let port = free_port();
    let cfg = d.path().join("prometheus.yml");
    let target = url.trim_start_matches("http://");
    std::fs::write(
        &cfg,
        format!("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: etcd\n    static_configs:\n      - targets: ['{target}']\n"),
    )
    .unwrap();
    let _prom = Daemon(
        Command::new("prometheus")
            .arg(format!("--config.file={}", cfg.display()))
            .arg(format!("--storage.tsdb.path={}", d.path().join("tsdb").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.path().join("prometheus.log")).unwrap())
            .spawn()
            .unwrap(),
    );
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&plain, &format!("{base}/-/ready"), &d.path().join("prometheus.log"));
    // Prometheus has scraped etcd at least twice (increase() needs two samples) ...
    let t0 = Instant::now();
    loop {
        let q = [("query", "count_over_time(up{job=\"etcd\"}[30s])")];
        let text = plain.get(&format!("{base}/api/v1/query"), &q).unwrap();
        let n = match storage::etcd::promapi::parse_response(&base, &text).unwrap() {
            ApiData::Vector(v) => {
                v.first().and_then(|s| s.value.1.parse::<f64>().ok()).unwrap_or(0.0)
            }
            _ => 0.0,
        };
        if n >= 2.0 {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "Prometheus did not scrape etcd in 30 s");
        std::thread::sleep(Duration::from_millis(250));
    }
    // ... then writes while it scrapes every second, and a few scrapes more.
    put(&url, None, 40);
    std::thread::sleep(Duration::from_secs(4));

    let source = Source::Prometheus { url: base.clone(), selector: "job=\"etcd\"".into() };
    let mut out = Vec::new();
    let mut req = request(source, TlsFiles::default(), 30);
    req.interval = Duration::from_secs(5);
    let run =
        storage::etcd::run(&req, &host::Root::live(), &AtomicBool::new(false), &mut out).unwrap();
    let r = &run.result;
    assert_eq!(r.source, EtcdSource::Prometheus);
    assert!(
        r.query.as_deref().is_some_and(|q| q
            .contains("increase(etcd_disk_wal_fsync_duration_seconds_bucket{job=\"etcd\"}[30s])")),
        "{r:?}"
    );
    assert!(r.wal_fsync.count >= 20, "40 puts in the window: {:?}", r.wal_fsync);
    assert!(r.wal_fsync.p99_ns > 0 && r.wal_fsync.mean_ns > 0, "{:?}", r.wal_fsync);
    assert!(
        !r.windows.is_empty() && r.windows.iter().any(|w| w.wal_fsync_count > 0),
        "{:?}",
        r.windows
    );

    // A selector that matches nothing is an input error that says what was asked.
    let none = Source::Prometheus { url: base, selector: "job=\"nope\"".into() };
    let e = storage::etcd::run(
        &request(none, TlsFiles::default(), 30),
        &host::Root::live(),
        &AtomicBool::new(false),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(e.is_input() && e.to_string().contains("job=\"nope\""), "{e}");
}
