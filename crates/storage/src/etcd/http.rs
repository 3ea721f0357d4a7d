//! HTTP(S) GET for etcd's `/metrics` and Prometheus' query API: `ureq` with rustls (ring, no
//! OpenSSL), optional mutual TLS from PEM files (etcd's `--trusted-ca-file`/`--cert-file`/
//! `--key-file` counterparts), an optional bearer token, a time limit per request and a bound
//! on the body. Failures say which side refused what: a server certificate the CA does not
//! sign, a client certificate the server refuses, a token Prometheus refuses.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{Certificate, ClientCert, PemItem, PrivateKey, RootCerts, TlsConfig};

use crate::error::StorageError;

/// Largest body read (etcd's `/metrics` is ~100–300 KiB; a Prometheus range query for one
/// histogram a few hundred KiB).
pub const MAX_BODY: u64 = 32 << 20;

/// PEM files for TLS: the CA that signs the server's certificate, and the client certificate
/// and key for servers that require one (etcd with `--client-cert-auth`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TlsFiles {
    /// CA bundle that verifies the server (default: the bundled web roots).
    pub cacert: Option<PathBuf>,
    /// Client certificate (chain), PEM.
    pub cert: Option<PathBuf>,
    /// Client private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub key: Option<PathBuf>,
}

impl TlsFiles {
    /// Whether any file was given.
    pub fn any(&self) -> bool {
        self.cacert.is_some() || self.cert.is_some() || self.key.is_some()
    }
}

/// A configured client; one per run (connections are reused between scrapes).
pub struct HttpClient {
    agent: ureq::Agent,
    bearer: Option<String>,
    tls: TlsFiles,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("tls", &self.tls)
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

fn input(m: String) -> StorageError {
    StorageError::Input(m)
}

fn read_pem(path: &Path, what: &str) -> Result<Vec<PemItem<'static>>, StorageError> {
    let bytes = std::fs::read(path)
        .map_err(|e| input(format!("the {what} file {}: {e}", path.display())))?;
    if bytes.len() > 1 << 20 {
        return Err(input(format!("the {what} file {}: larger than 1 MiB", path.display())));
    }
    ureq::tls::parse_pem(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| input(format!("the {what} file {}: not PEM ({e})", path.display())))
}

fn certs(path: &Path, what: &str) -> Result<Vec<Certificate<'static>>, StorageError> {
    let v: Vec<Certificate<'static>> = read_pem(path, what)?
        .into_iter()
        .filter_map(|i| match i {
            PemItem::Certificate(c) => Some(c),
            _ => None,
        })
        .collect();
    if v.is_empty() {
        return Err(input(format!(
            "the {what} file {}: no CERTIFICATE block in it",
            path.display()
        )));
    }
    Ok(v)
}

/// One DER header at `d[at..]`: (tag, start of the contents, length). Bounded: at most four
/// length bytes, never past the end.
fn der_header(d: &[u8], at: usize) -> Option<(u8, usize, usize)> {
    let tag = *d.get(at)?;
    let first = *d.get(at + 1)?;
    let (len, start) = if first < 0x80 {
        (first as usize, at + 2)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 {
            return None;
        }
        let bytes = d.get(at + 2..at + 2 + n)?;
        (bytes.iter().fold(0usize, |a, b| (a << 8) | *b as usize), at + 2 + n)
    };
    (start.checked_add(len)? <= d.len()).then_some((tag, start, len))
}

/// The X.509 version of a DER certificate as written (1, 2 or 3): `Certificate ::= SEQUENCE {
/// tbsCertificate SEQUENCE { [0] EXPLICIT version INTEGER DEFAULT v1, … } … }`; a missing
/// `[0]` is v1. `None` when the DER does not read as a certificate.
pub fn x509_version(der: &[u8]) -> Option<u8> {
    let (0x30, cert, _) = der_header(der, 0)? else { return None };
    let (0x30, tbs, _) = der_header(der, cert)? else { return None };
    match der_header(der, tbs)? {
        (0xa0, v, _) => match der_header(der, v)? {
            (0x02, i, 1) => der.get(i).map(|n| n.saturating_add(1)),
            _ => None,
        },
        _ => Some(1),
    }
}

/// Client certificates must be X.509 v3: rustls panics on a v1 one during the handshake
/// (issue 21, item 13), so it is refused here, before anything is sent.
fn check_client_certs(path: &Path, certs: &[Certificate<'static>]) -> Result<(), StorageError> {
    for (i, c) in certs.iter().enumerate() {
        match x509_version(c.der()) {
            Some(3) => {}
            v => {
                let what = v.map_or("not a readable X.509 certificate".to_string(), |v| {
                    format!("an X.509 v{v} certificate")
                });
                return Err(input(format!(
                    "the client certificate file {} (certificate {} in it): {what}; TLS client certificates must be X.509 v3 — reissue it with extensions (e.g. openssl x509 -req … -extfile with extendedKeyUsage=clientAuth, or cert-manager/etcd's own certificates)",
                    path.display(),
                    i + 1
                )));
            }
        }
    }
    Ok(())
}

fn key(path: &Path) -> Result<PrivateKey<'static>, StorageError> {
    read_pem(path, "client key")?
        .into_iter()
        .find_map(|i| match i {
            PemItem::PrivateKey(k) => Some(k),
            _ => None,
        })
        .ok_or_else(|| {
            input(format!("the client key file {}: no PRIVATE KEY block in it", path.display()))
        })
}

/// Check the scheme and host of a URL: `http://` or `https://`, something after it.
pub fn check_url(url: &str) -> Result<(), StorageError> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    match rest {
        None => {
            Err(input(format!("the URL {url}: expected http://host:port or https://host:port")))
        }
        Some(r) if r.split('/').next().is_none_or(str::is_empty) => {
            Err(input(format!("the URL {url}: no host")))
        }
        Some(_) if url.len() > 2048 => Err(input("a URL longer than 2048 bytes".into())),
        Some(_) => Ok(()),
    }
}

/// etcd's metrics URL: the given one, with `/metrics` when it names no path.
pub fn metrics_url(url: &str) -> Result<String, StorageError> {
    check_url(url)?;
    let after = url.split_once("://").map_or("", |(_, r)| r);
    Ok(match after.split_once('/') {
        None => format!("{url}/metrics"),
        Some((_, "")) => format!("{url}metrics"),
        Some(_) => url.to_string(),
    })
}

impl HttpClient {
    /// A client with these TLS files (read and checked now: a missing or malformed file is an
    /// input error before anything is requested), an optional bearer token and a time limit
    /// per request.
    pub fn new(
        tls: &TlsFiles,
        bearer: Option<String>,
        timeout: Duration,
    ) -> Result<Self, StorageError> {
        let mut b = TlsConfig::builder();
        if let Some(ca) = &tls.cacert {
            b = b.root_certs(RootCerts::Specific(Arc::new(certs(ca, "CA")?)));
        }
        match (&tls.cert, &tls.key) {
            (Some(c), Some(k)) => {
                let chain = certs(c, "client certificate")?;
                check_client_certs(c, &chain)?;
                b = b.client_cert(Some(ClientCert::new_with_certs(&chain, key(k)?)));
            }
            (None, None) => {}
            (Some(_), None) => {
                return Err(input("a client certificate without its key: give both".into()))
            }
            (None, Some(_)) => {
                return Err(input("a client key without its certificate: give both".into()))
            }
        }
        if let Some(t) = &bearer {
            if t.is_empty() || t.len() > 16 << 10 || t.chars().any(|c| c.is_control()) {
                return Err(input(
                    "the bearer token: empty, over 16 KiB or with control characters (a token file's trailing newline is trimmed)".into(),
                ));
            }
        }
        let agent = ureq::Agent::config_builder()
            .tls_config(b.build())
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent("lowlat")
            .build()
            .new_agent();
        Ok(Self { agent, bearer, tls: tls.clone() })
    }

    /// GET `url` with these query parameters (encoded here); the body text when the status is
    /// 200.
    pub fn get(&self, url: &str, query: &[(&str, &str)]) -> Result<String, StorageError> {
        check_url(url)?;
        let mut req = self.agent.get(url);
        for (k, v) in query {
            req = req.query(*k, *v);
        }
        if let Some(t) = &self.bearer {
            req = req.header("Authorization", &format!("Bearer {t}"));
        }
        let mut resp = req.call().map_err(|e| self.explain(url, e))?;
        let status = resp.status().as_u16();
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_string()
            .map_err(|e| self.explain(url, e))?;
        match status {
            200 => Ok(body),
            401 | 403 => Err(StorageError::Http {
                url: url.into(),
                detail: format!(
                    "HTTP {status}: {}",
                    if self.bearer.is_some() {
                        "the bearer token was refused (expired, or lacks access to this resource?)"
                    } else {
                        "the server wants credentials: give a bearer token"
                    }
                ),
            }),
            _ => Err(StorageError::Http {
                url: url.into(),
                detail: format!("HTTP {status}: {}", body.chars().take(300).collect::<String>()),
            }),
        }
    }

    fn explain(&self, url: &str, e: ureq::Error) -> StorageError {
        let tls = |detail: String| StorageError::Tls { url: url.into(), detail };
        match e {
            ureq::Error::Rustls(rustls::Error::InvalidCertificate(c)) => tls(match &self.tls.cacert {
                Some(ca) => format!(
                    "the server's certificate does not verify against the CA file {} ({c:?}): give the CA that signed the server's certificate",
                    ca.display()
                ),
                None => format!(
                    "the server's certificate does not verify against the bundled web roots ({c:?}): give the CA file that signed it (a cluster's etcd uses its own CA)"
                ),
            }),
            ureq::Error::Rustls(rustls::Error::AlertReceived(a)) => tls(match &self.tls.cert {
                Some(c) => format!(
                    "the server refused the handshake (alert {a:?}): is the client certificate {} signed by the server's client CA?",
                    c.display()
                ),
                None => format!(
                    "the server refused the handshake (alert {a:?}): it probably requires a client certificate and key"
                ),
            }),
            ureq::Error::Rustls(r) => tls(r.to_string()),
            ureq::Error::Tls(m) => tls(m.to_string()),
            ureq::Error::Io(io) if io.get_ref().is_some_and(|i| i.is::<rustls::Error>()) => {
                let inner = io.into_inner().and_then(|i| i.downcast::<rustls::Error>().ok());
                match inner {
                    Some(r) => self.explain(url, ureq::Error::Rustls(*r)),
                    None => tls("TLS error".into()),
                }
            }
            ureq::Error::BodyExceedsLimit(n) => StorageError::Http {
                url: url.into(),
                detail: format!("the response is larger than {n} bytes"),
            },
            other => StorageError::Http {
                url: url.into(),
                detail: if self.tls.any() && url.starts_with("http://") {
                    format!("{other} (TLS files were given but the URL is http://: use https://?)")
                } else {
                    other.to_string()
                },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read as _, Write as _};

    #[test]
    fn urls() {
        assert_eq!(metrics_url("http://127.0.0.1:2379").unwrap(), "http://127.0.0.1:2379/metrics");
        assert_eq!(metrics_url("https://h:2379/").unwrap(), "https://h:2379/metrics");
        assert_eq!(metrics_url("https://h/m").unwrap(), "https://h/m");
        for bad in ["ftp://h", "h:2379", "http://", "https:///metrics"] {
            assert!(metrics_url(bad).unwrap_err().is_input(), "{bad}");
        }
    }

    #[test]
    fn files_are_checked_before_any_request() {
        let d = tempfile::tempdir().unwrap();
        let t = Duration::from_secs(1);
        let missing = TlsFiles { cacert: Some(d.path().join("ca.pem")), ..Default::default() };
        let e = HttpClient::new(&missing, None, t).unwrap_err();
        assert!(e.is_input() && e.to_string().contains("the CA file"), "{e}");
        let junk = d.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let e = HttpClient::new(
            &TlsFiles { cacert: Some(junk.clone()), ..Default::default() },
            None,
            t,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no CERTIFICATE block"), "{e}");
        let half = TlsFiles { cert: Some(junk), ..Default::default() };
        let e = HttpClient::new(&half, None, t).unwrap_err();
        assert!(e.to_string().contains("without its key"), "{e}");
        let e = HttpClient::new(&TlsFiles::default(), Some("a\nb".into()), t).unwrap_err();
        assert!(e.to_string().contains("bearer token"), "{e}");
    }

    /// Issue 21, item 13: an X.509 v1 client certificate made rustls panic in the handshake
    /// (exit 3, no lowlat error line). Refused now, naming the file and the rule.
    #[test]
    fn an_x509_v1_client_certificate_is_refused_before_rustls_sees_it() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tls");
        let (cert, key) = (dir.join("x509v1-client.pem"), dir.join("x509v1-client.key"));
        let pem = std::fs::read(&cert).unwrap();
        let der = ureq::tls::Certificate::from_pem(&pem).unwrap();
        assert_eq!(x509_version(der.der()), Some(1));
        let tls = TlsFiles { cert: Some(cert.clone()), key: Some(key), ..Default::default() };
        let e = HttpClient::new(&tls, None, Duration::from_secs(1)).unwrap_err();
        let m = e.to_string();
        assert!(e.is_input(), "{m}");
        assert!(m.contains(&cert.display().to_string()) && m.contains("X.509 v1"), "{m}");
        assert!(m.contains("must be X.509 v3"), "{m}");
        // rcgen writes v3: accepted. Garbage and truncations are refused, never a panic.
        let v3 = rcgen::generate_simple_self_signed(vec!["x".into()]).unwrap();
        assert_eq!(x509_version(v3.cert.der()), Some(3));
        for n in 0..der.der().len() {
            let _ = x509_version(&der.der()[..n]);
        }
        assert_eq!(x509_version(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
    }

    /// A one-shot HTTP/1.1 server on 127.0.0.1: answers `status` and `body`, returns the
    /// request it saw.
    fn serve_once(status: &str, body: &'static str) -> (String, std::thread::JoinHandle<String>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let status = status.to_string();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap();
            write!(
                s,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            String::from_utf8_lossy(&buf[..n]).into_owned()
        });
        (format!("http://127.0.0.1:{port}"), t)
    }

    #[test]
    fn get_sends_query_and_token_and_reads_the_body() {
        let (url, t) = serve_once("200 OK", "hello");
        let c =
            HttpClient::new(&TlsFiles::default(), Some("s3cret".into()), Duration::from_secs(5))
                .unwrap();
        assert_eq!(
            c.get(&format!("{url}/api/v1/query"), &[("query", "a{b=\"c\"}[5m]")]).unwrap(),
            "hello"
        );
        let req = t.join().unwrap();
        assert!(
            req.starts_with("GET /api/v1/query?query=a%7Bb%3D%22c%22%7D%5B5m%5D HTTP/1.1"),
            "{req}"
        );
        assert!(req.to_ascii_lowercase().contains("authorization: bearer s3cret"), "{req}");
        assert!(!format!("{c:?}").contains("s3cret"), "the token stays out of Debug");
    }

    #[test]
    fn refused_tokens_and_other_statuses_are_explained() {
        let (url, t) = serve_once("401 Unauthorized", "");
        let c = HttpClient::new(&TlsFiles::default(), Some("x".into()), Duration::from_secs(5))
            .unwrap();
        let e = c.get(&url, &[]).unwrap_err();
        t.join().unwrap();
        assert!(e.to_string().contains("bearer token was refused"), "{e}");
        let (url, t) = serve_once("500 Internal Server Error", "boom");
        let e = c.get(&url, &[]).unwrap_err();
        t.join().unwrap();
        assert!(e.to_string().contains("HTTP 500: boom") && !e.is_input(), "{e}");
    }
}
