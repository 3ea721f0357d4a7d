//! etcd's histograms read from Prometheus' HTTP API instead of etcd itself (OpenShift serves
//! etcd's metrics only over mutual TLS inside the cluster; its monitoring stack already
//! scrapes them): the window's `increase()` of each `le` bucket summed over the selected
//! series (an instant query at the window's end), and the per-interval series from a
//! `query_range` of `increase(…[interval])`, the way a dashboard graphs
//! `histogram_quantile(0.99, sum by (le) (rate(…_bucket[…])))`. The quantiles are then
//! computed here with the same interpolation as the direct scrape.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::http::HttpClient;
use super::prom::PromHistogram;
use crate::error::StorageError;

/// Prometheus' answer envelope (`/api/v1/query`, `/api/v1/query_range`).
#[derive(Debug, Deserialize)]
pub struct ApiResponse {
    pub status: ApiStatus,
    #[serde(default)]
    pub data: Option<ApiData>,
    #[serde(default, rename = "errorType")]
    pub error_type: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
}

/// `status` of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiStatus {
    Success,
    Error,
}

/// `data`: the result by type (`scalar` and `string` are never asked for here).
#[derive(Debug, Deserialize)]
#[serde(tag = "resultType", content = "result", rename_all = "lowercase")]
pub enum ApiData {
    Vector(Vec<InstantSample>),
    Matrix(Vec<RangeSeries>),
    Scalar(serde_json::Value),
    String(serde_json::Value),
}

/// One series of an instant vector: labels and `[unix seconds, "value"]`.
#[derive(Debug, Deserialize)]
pub struct InstantSample {
    #[serde(default)]
    pub metric: BTreeMap<String, String>,
    pub value: (f64, String),
}

/// One series of a range matrix.
#[derive(Debug, Deserialize)]
pub struct RangeSeries {
    #[serde(default)]
    pub metric: BTreeMap<String, String>,
    pub values: Vec<(f64, String)>,
}

fn value(s: &str) -> Option<f64> {
    match s {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok().filter(|v: &f64| !v.is_nan()),
    }
}

/// Buckets `(le, count)` from samples labelled `le` (others are skipped), sorted; the count is
/// the `+Inf` bucket's.
pub fn histogram_from<'a>(
    samples: impl Iterator<Item = (&'a BTreeMap<String, String>, &'a str)>,
    sum: f64,
) -> Option<PromHistogram> {
    let mut buckets: Vec<(f64, f64)> =
        samples.filter_map(|(m, v)| Some((value(m.get("le")?)?, value(v)?.max(0.0)))).collect();
    if buckets.is_empty() {
        return None;
    }
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    // increase() extrapolates each bucket on its own: keep the cumulative counts monotonic.
    let mut top = 0.0f64;
    for b in buckets.iter_mut() {
        top = top.max(b.1);
        b.1 = top;
    }
    let count = buckets.last().map_or(0.0, |b| b.1);
    Some(PromHistogram { buckets, sum, count })
}

/// A PromQL label selector as given (`job="etcd",instance=~"master-0.*"`): bounded, one line,
/// no braces of its own.
pub fn check_selector(s: &str) -> Result<(), StorageError> {
    if s.len() > 1024 || s.contains(['{', '}', '\n', '\r']) {
        return Err(StorageError::Input(format!(
            "the selector {s:?}: expected label matchers without braces, e.g. job=\"etcd\",instance=~\"master-0.*\" (one line, at most 1024 bytes)"
        )));
    }
    Ok(())
}

/// Queries for one Prometheus.
#[derive(Debug)]
pub struct PromApi<'a> {
    pub client: &'a HttpClient,
    /// Base URL (`https://thanos-querier…`), without `/api/v1/…`.
    pub base: String,
    /// Label matchers put in braces after each metric name (may be empty).
    pub selector: String,
}

impl PromApi<'_> {
    fn url(&self, path: &str) -> String {
        format!("{}/api/v1/{path}", self.base.trim_end_matches('/'))
    }

    fn call(&self, path: &str, params: &[(&str, &str)]) -> Result<ApiData, StorageError> {
        let url = self.url(path);
        let text = self.client.get(&url, params)?;
        parse_response(&url, &text)
    }

    /// The expression that `increase()`s one histogram series over `range`, summed by `le`.
    pub fn bucket_expr(&self, metric: &str, range: Duration) -> String {
        format!(
            "sum by (le) (increase({metric}_bucket{{{}}}[{}s]))",
            self.selector,
            range.as_secs()
        )
    }

    /// The histogram's increase over `range` ending at `at` (unix seconds); `None` when
    /// Prometheus has no such series there.
    pub fn increase(
        &self,
        metric: &str,
        range: Duration,
        at: f64,
    ) -> Result<Option<PromHistogram>, StorageError> {
        let time = format!("{at:.3}");
        let buckets =
            self.call("query", &[("query", &self.bucket_expr(metric, range)), ("time", &time)])?;
        let sum_q =
            format!("sum(increase({metric}_sum{{{}}}[{}s]))", self.selector, range.as_secs());
        let sum = match self.call("query", &[("query", &sum_q), ("time", &time)])? {
            ApiData::Vector(v) => v.first().and_then(|s| value(&s.value.1)).unwrap_or(0.0),
            _ => 0.0,
        };
        Ok(match buckets {
            ApiData::Vector(v) => {
                histogram_from(v.iter().map(|s| (&s.metric, s.value.1.as_str())), sum)
            }
            _ => None,
        })
    }

    /// `increase()` of the histogram over each `step` from `start + step` to `end` (unix
    /// seconds): `(time, histogram)` ascending; steps without data are left out.
    pub fn series(
        &self,
        metric: &str,
        step: Duration,
        start: f64,
        end: f64,
    ) -> Result<Vec<(f64, PromHistogram)>, StorageError> {
        let first = start + step.as_secs_f64();
        if first > end {
            return Ok(Vec::new());
        }
        let params = [
            ("query", self.bucket_expr(metric, step)),
            ("start", format!("{first:.3}")),
            ("end", format!("{end:.3}")),
            ("step", format!("{}s", step.as_secs())),
        ];
        let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let ApiData::Matrix(m) = self.call("query_range", &params)? else { return Ok(Vec::new()) };
        Ok(series_from(&m, first, end))
    }
}

/// Group a matrix of `le` series by timestamp into histograms (sum unknown: 0), keeping only
/// the points from `first` to `last` (unix seconds, inclusive, to the millisecond): a
/// Prometheus may answer with more than was asked, and those points are not this window's.
/// O(n log n) in the points.
pub fn series_from(m: &[RangeSeries], first: f64, last: f64) -> Vec<(f64, PromHistogram)> {
    type Labelled<'a> = (&'a BTreeMap<String, String>, &'a str);
    let ms = |t: f64| (t * 1000.0).round() as i64;
    let (lo, hi) = (ms(first), ms(last));
    let mut by_t: BTreeMap<i64, Vec<Labelled<'_>>> = BTreeMap::new();
    for s in m {
        for (t, v) in &s.values {
            let t = ms(*t);
            if (lo..=hi).contains(&t) {
                by_t.entry(t).or_default().push((&s.metric, v.as_str()));
            }
        }
    }
    by_t.into_iter()
        .filter_map(|(t, v)| Some((t as f64 / 1000.0, histogram_from(v.into_iter(), 0.0)?)))
        .collect()
}

/// Parse an answer; an `error` status becomes an error with Prometheus' own message.
pub fn parse_response(url: &str, text: &str) -> Result<ApiData, StorageError> {
    let err = |detail: String| StorageError::Prometheus { url: url.into(), detail };
    let r: ApiResponse = serde_json::from_str(text).map_err(|e| {
        err(format!("not a Prometheus API answer ({e}): is this the Prometheus (or Thanos querier) base URL?"))
    })?;
    match (r.status, r.data) {
        (ApiStatus::Success, Some(d)) => Ok(d),
        (ApiStatus::Success, None) => Err(err("an answer without data".into())),
        (ApiStatus::Error, _) => Err(err(format!(
            "{}: {}",
            r.error_type.unwrap_or_else(|| "error".into()),
            r.error.unwrap_or_default()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INSTANT: &str = include_str!("../../testdata/prometheus/query-wal-buckets.json");
    const RANGE: &str = include_str!("../../testdata/prometheus/query-range-wal-buckets.json");
    const ERROR: &str = include_str!("../../testdata/prometheus/query-error.json");

    #[test]
    fn an_instant_vector_of_buckets_is_a_histogram() {
        let ApiData::Vector(v) = parse_response("u", INSTANT).unwrap() else { panic!("vector") };
        let h = histogram_from(v.iter().map(|s| (&s.metric, s.value.1.as_str())), 1.5).unwrap();
        assert_eq!(h.buckets.first().map(|b| b.0), Some(0.001));
        assert!(h.buckets.last().unwrap().0.is_infinite());
        assert!(h.buckets.windows(2).all(|w| w[0].1 <= w[1].1), "monotonic: {h:?}");
        assert_eq!(h.count, h.buckets.last().unwrap().1);
        assert!(h.count > 0.0 && h.quantile(0.99).is_some());
    }

    #[test]
    fn a_range_matrix_groups_by_time() {
        let ApiData::Matrix(m) = parse_response("u", RANGE).unwrap() else { panic!("matrix") };
        let s = series_from(&m, f64::MIN, f64::MAX);
        assert!(s.len() >= 2, "{s:?}");
        let (t0, t1) = (s[0].0, s[1].0);
        assert_eq!(series_from(&m, t0 + 0.5, t1).len(), 1, "points outside the window are dropped");
        assert!(s.windows(2).all(|w| w[0].0 < w[1].0));
        let le_count = m.len();
        assert!(s.iter().all(|(_, h)| h.buckets.len() == le_count));
    }

    #[test]
    fn errors_and_strangers_are_explained() {
        let e = parse_response("http://p/api/v1/query", ERROR).unwrap_err();
        assert!(e.to_string().contains("bad_data: "), "{e}");
        let e = parse_response("http://p/api/v1/query", "<html>login</html>").unwrap_err();
        assert!(e.to_string().contains("not a Prometheus API answer"), "{e}");
        assert!(check_selector("job=\"etcd\"").is_ok());
        assert!(check_selector("a}) or vector(1) or x{").unwrap_err().is_input());
    }

    #[test]
    fn extrapolated_buckets_stay_monotonic_and_nan_is_dropped() {
        let m = |le: &str| BTreeMap::from([("le".to_string(), le.to_string())]);
        let (a, b, c, d) = (m("0.001"), m("0.002"), m("+Inf"), m("0.004"));
        let h =
            histogram_from([(&a, "10.2"), (&b, "10.1"), (&c, "11"), (&d, "NaN")].into_iter(), 0.0)
                .unwrap();
        assert_eq!(h.buckets, vec![(0.001, 10.2), (0.002, 10.2), (f64::INFINITY, 11.0)]);
        assert!(histogram_from(std::iter::empty(), 0.0).is_none());
    }
}
