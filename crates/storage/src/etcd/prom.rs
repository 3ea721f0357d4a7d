//! Prometheus histograms in the text exposition format: parse one by name, subtract two
//! scrapes, and Prometheus' own `histogram_quantile`.

use results::fsync::EtcdBucket;

/// A Prometheus histogram: cumulative buckets `(le seconds, count)` ascending (+Inf last).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromHistogram {
    pub buckets: Vec<(f64, f64)>,
    pub sum: f64,
    pub count: f64,
}

fn label_value<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    labels.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"'))
    })
}

fn parse_value(s: &str) -> Option<f64> {
    match s {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok(),
    }
}

/// Extract histogram `name` from Prometheus text; series with other labels are summed by `le`.
pub fn parse_histogram(text: &str, name: &str) -> Option<PromHistogram> {
    let mut h = PromHistogram::default();
    let mut found = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let Some(rest) = line.strip_prefix(name) else { continue };
        let (series, labels, value) = if let Some(r) = rest.strip_prefix("_bucket{") {
            let Some((labels, v)) = r.split_once('}') else { continue };
            ("bucket", labels, v)
        } else if let Some(r) = rest.strip_prefix("_sum") {
            ("sum", "", r.trim_start_matches(|c| c != ' ').trim_start_matches(['{', '}']))
        } else if let Some(r) = rest.strip_prefix("_count") {
            ("count", "", r.trim_start_matches(|c| c != ' '))
        } else {
            continue;
        };
        let Some(v) = value.split_whitespace().next().and_then(parse_value) else { continue };
        found = true;
        match series {
            "bucket" => {
                let Some(le) = label_value(labels, "le").and_then(parse_value) else { continue };
                match h.buckets.iter_mut().find(|(l, _)| *l == le) {
                    Some(b) => b.1 += v,
                    None => h.buckets.push((le, v)),
                }
            }
            "sum" => h.sum += v,
            _ => h.count += v,
        }
    }
    h.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    found.then_some(h)
}

impl PromHistogram {
    /// Why this histogram cannot be judged (`None`: it can): a value that is not a finite,
    /// non-negative number (NaN, ±Inf, negative), no bucket, bounds that are not ascending
    /// to `+Inf`, cumulative counts that go down, or a `+Inf` bucket that is not the count.
    /// What a real Prometheus client library writes always passes.
    pub fn unusable(&self) -> Option<String> {
        let bad = |v: f64| !v.is_finite() || v < 0.0;
        if bad(self.count) || bad(self.sum) {
            return Some(format!(
                "_count {} / _sum {}: not finite non-negative numbers",
                self.count, self.sum
            ));
        }
        let Some(&(last_le, last_c)) = self.buckets.last() else {
            return Some("no _bucket{le=...} line that parses".into());
        };
        if last_le != f64::INFINITY {
            return Some(format!("the last bucket is le=\"{last_le}\", not le=\"+Inf\""));
        }
        let mut prev = 0.0;
        for &(le, c) in &self.buckets {
            if le.is_nan() || le < 0.0 {
                return Some(format!("bucket le=\"{le}\": not a non-negative bound"));
            }
            if bad(c) {
                return Some(format!(
                    "bucket le=\"{le}\" counts {c}: not a finite non-negative number"
                ));
            }
            if c < prev {
                return Some(format!(
                    "bucket le=\"{le}\" counts {c}, fewer than the bucket below it ({prev}): buckets are cumulative"
                ));
            }
            prev = c;
        }
        (last_c != self.count)
            .then(|| format!("the +Inf bucket counts {last_c} but _count is {}", self.count))
    }

    /// `self − earlier` (a counter reset gives the later value unchanged).
    pub fn delta(&self, earlier: &PromHistogram) -> PromHistogram {
        if self.count < earlier.count {
            return self.clone();
        }
        PromHistogram {
            buckets: self
                .buckets
                .iter()
                .map(|(le, c)| {
                    let e = earlier.buckets.iter().find(|(l, _)| l == le).map_or(0.0, |b| b.1);
                    (*le, (c - e).max(0.0))
                })
                .collect(),
            sum: (self.sum - earlier.sum).max(0.0),
            count: self.count - earlier.count,
        }
    }

    /// Prometheus `histogram_quantile`: linear interpolation inside the bucket holding the
    /// rank; the first bucket starts at 0; a rank in `+Inf` returns the highest finite bound.
    ///
    /// Deliberately *not* lowlat's percentile rule (`util::stats`, nearest rank over samples):
    /// etcd exports only cumulative counts in buckets 1 ms … 8.192 s wide, and this emulates
    /// what a Prometheus/Grafana dashboard shows for the same data, so both numbers agree.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.buckets.last()?.1;
        if total <= 0.0 {
            return None;
        }
        let rank = q.clamp(0.0, 1.0) * total;
        let (mut prev_le, mut prev_c) = (0.0, 0.0);
        for (le, c) in &self.buckets {
            if *c >= rank {
                if le.is_infinite() {
                    return Some(prev_le);
                }
                if *c == prev_c {
                    return Some(*le);
                }
                return Some(prev_le + (le - prev_le) * (rank - prev_c) / (c - prev_c));
            }
            (prev_le, prev_c) = (*le, *c);
        }
        Some(prev_le)
    }

    /// Non-cumulative counts per bucket (`le_ns` `None` = +Inf).
    pub fn etcd_buckets(&self) -> Vec<EtcdBucket> {
        let mut prev = 0.0;
        self.buckets
            .iter()
            .map(|(le, c)| {
                let b = EtcdBucket {
                    le_ns: le.is_finite().then(|| (le * 1e9).round() as u64),
                    count: (c - prev).max(0.0) as u64,
                };
                prev = *c;
                b
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAL_FSYNC: &str = "etcd_disk_wal_fsync_duration_seconds";
    const BACKEND_COMMIT: &str = "etcd_disk_backend_commit_duration_seconds";

    /// From the reference's measured etcd 3.4.23 `/metrics` (final snapshot).
    const METRICS: &str = r#"# HELP etcd_disk_wal_fsync_duration_seconds The latency distributions of fsync called by WAL.
# TYPE etcd_disk_wal_fsync_duration_seconds histogram
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.001"} 10517
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.002"} 10927
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.004"} 11049
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.008"} 11083
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.016"} 11095
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.032"} 11099
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.064"} 11100
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.128"} 11102
etcd_disk_wal_fsync_duration_seconds_bucket{le="0.256"} 11102
etcd_disk_wal_fsync_duration_seconds_bucket{le="+Inf"} 11102
etcd_disk_wal_fsync_duration_seconds_sum 6.208449643000005
etcd_disk_wal_fsync_duration_seconds_count 11102
etcd_disk_backend_commit_duration_seconds_bucket{le="0.001"} 523
etcd_disk_backend_commit_duration_seconds_bucket{le="0.002"} 943
etcd_disk_backend_commit_duration_seconds_bucket{le="+Inf"} 1079
etcd_disk_backend_commit_duration_seconds_sum 1.560482151999998
etcd_disk_backend_commit_duration_seconds_count 1079
etcd_disk_wal_write_bytes_total 2.5929408e+07
"#;

    #[test]
    fn parses_and_reproduces_prometheus_quantiles() {
        let h = parse_histogram(METRICS, WAL_FSYNC).unwrap();
        assert_eq!(h.count, 11102.0);
        assert_eq!(h.buckets.len(), 10);
        let p99 = h.quantile(0.99).unwrap();
        // The reference computed p99 ≈ 3.0 ms (interpolated in (2 ms, 4 ms]).
        assert!((p99 - 0.00300).abs() < 0.0001, "{p99}");
        let p50 = h.quantile(0.5).unwrap();
        assert!((p50 - 0.000528).abs() < 0.00001, "{p50}");
        let c = parse_histogram(METRICS, BACKEND_COMMIT).unwrap();
        assert_eq!(c.count, 1079.0);
        assert!(parse_histogram(METRICS, "nope").is_none());
        let b = h.etcd_buckets();
        assert_eq!(b[0], EtcdBucket { le_ns: Some(1_000_000), count: 10517 });
        assert_eq!(b.last().unwrap().le_ns, None);
        assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 11102);
    }

    #[test]
    fn delta_and_edge_quantiles() {
        let a = parse_histogram(METRICS, WAL_FSYNC).unwrap();
        let mut b = a.clone();
        for (le, c) in b.buckets.iter_mut() {
            if *le >= 0.128 {
                *c += 10.0; // ten new fsyncs in (64, 128] ms
            }
        }
        b.count += 10.0;
        b.sum += 1.0;
        let d = b.delta(&a);
        assert_eq!(d.count, 10.0);
        let q = d.quantile(0.99).unwrap();
        assert!(q > 0.064 && q <= 0.128, "{q}");
        assert_eq!(a.delta(&a).quantile(0.5), None, "empty window");
        let inf = PromHistogram {
            buckets: vec![(0.001, 0.0), (f64::INFINITY, 5.0)],
            sum: 0.0,
            count: 5.0,
        };
        assert_eq!(inf.quantile(0.5), Some(0.001), "rank in +Inf: highest finite bound");
        // A counter reset keeps the later value.
        assert_eq!(a.delta(&b), a);
    }

    #[test]
    fn labelled_series_are_summed_and_malformed_lines_skipped() {
        let t = "x_bucket{instance=\"a\",le=\"0.001\"} 1\nx_bucket{le=\"0.001\",instance=\"b\"} 2\nx_bucket{le=\"+Inf\"} 3\nx_bucket{le=\"zz\"} 9\nx_bucket{le=\"0.5\"\nx_count 3\nx_sum 0.1\n";
        let h = parse_histogram(t, "x").unwrap();
        assert_eq!(h.buckets, vec![(0.001, 3.0), (f64::INFINITY, 3.0)]);
        assert_eq!((h.count, h.sum), (3.0, 0.1));
    }
}
