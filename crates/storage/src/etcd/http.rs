//! A minimal HTTP/1.1 GET over a `TcpStream` (no TLS): enough to scrape Prometheus text.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::error::StorageError;

/// `http://host:port/path` → (host:port, path). No TLS.
pub fn split_url(url: &str) -> Result<(String, String), StorageError> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        StorageError::Input(format!(
            "the endpoint {url}: only http:// is supported (for a TLS etcd, scrape its --listen-metrics-urls http endpoint)"
        ))
    })?;
    let (hostport, path) = match rest.split_once('/') {
        Some((h, p)) => (h.to_string(), format!("/{p}")),
        None => (rest.to_string(), "/metrics".to_string()),
    };
    let path = if path == "/" { "/metrics".to_string() } else { path };
    if hostport.is_empty() {
        return Err(StorageError::Input(format!("the endpoint {url}: no host")));
    }
    let hostport = if hostport.contains(':') { hostport } else { format!("{hostport}:80") };
    Ok((hostport, path))
}

/// Decode a `Transfer-Encoding: chunked` body.
pub fn dechunk(body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let rest = body.get(i..)?;
        let nl = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_txt = std::str::from_utf8(rest.get(..nl)?).ok()?;
        let size = usize::from_str_radix(size_txt.split(';').next()?.trim(), 16).ok()?;
        i += nl + 2;
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(body.get(i..i + size)?);
        i += size + 2;
    }
}

/// GET the URL; returns the body text.
pub fn http_get(url: &str, timeout: Duration) -> Result<String, StorageError> {
    let (hostport, path) = split_url(url)?;
    let io = |source: std::io::Error| StorageError::Scrape { url: url.to_string(), source };
    let addr = hostport.to_socket_addrs().map_err(io)?.next().ok_or_else(|| {
        StorageError::Input(format!("the endpoint {url}: {hostport} does not resolve"))
    })?;
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(io)?;
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.set_write_timeout(Some(timeout)).map_err(io)?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {hostport}\r\nUser-Agent: lowlat\r\nAccept: text/plain\r\nConnection: close\r\n\r\n")
        .map_err(io)?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(io)?;
    parse_response(&raw).map_err(|m| io(std::io::Error::other(m)))
}

/// Split an HTTP/1.1 response into its body (status must be 200).
pub fn parse_response(raw: &[u8]) -> Result<String, String> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("truncated HTTP response")?;
    let head = String::from_utf8_lossy(raw.get(..split).unwrap_or_default());
    let body = raw.get(split + 4..).unwrap_or_default();
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("HTTP status {status:?}"));
    }
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked { dechunk(body).ok_or("bad chunked body")? } else { body.to_vec() };
    Ok(String::from_utf8_lossy(&body).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_http_bodies() {
        assert_eq!(
            split_url("http://127.0.0.1:2379").unwrap(),
            ("127.0.0.1:2379".into(), "/metrics".into())
        );
        assert_eq!(split_url("http://h/m").unwrap(), ("h:80".into(), "/m".into()));
        assert!(split_url("https://h").unwrap_err().is_input());
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        assert_eq!(parse_response(r).unwrap(), "hello world");
        assert_eq!(
            parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").unwrap(),
            "ok"
        );
        assert!(parse_response(b"HTTP/1.1 404 Not Found\r\n\r\n").unwrap_err().contains("404"));
        assert!(parse_response(b"HTTP/1.1 200").is_err());
        assert!(dechunk(b"zz\r\n").is_none());
        assert!(dechunk(b"5\r\nhel").is_none());
    }

    #[test]
    fn scrape_over_a_local_socket() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf).unwrap();
            let body = b"etcd_disk_wal_fsync_duration_seconds_count 3\n";
            write!(s, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).unwrap();
            s.write_all(body).unwrap();
        });
        let text =
            http_get(&format!("http://127.0.0.1:{port}/metrics"), Duration::from_secs(5)).unwrap();
        t.join().unwrap();
        assert_eq!(text, "etcd_disk_wal_fsync_duration_seconds_count 3\n");
    }
}
