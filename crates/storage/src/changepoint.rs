//! Cliff detection: one least-squares change point on log-latency (so a 20× rise counts the
//! same at any scale), accepted only when the level after is `min_ratio` times the level
//! before (medians) and *stays* there (most later samples above the geometric midpoint) — a
//! step, not a spike. O(n) per call with prefix sums.

/// Detector settings.
#[derive(Debug, Clone, Copy)]
pub struct CliffConfig {
    /// Smallest after/before ratio of medians reported (both directions: ≥ r or ≤ 1/r).
    pub min_ratio: f64,
    /// Samples needed on each side.
    pub min_segment: usize,
    /// Fraction of samples after the change that must be beyond the midpoint.
    pub persistence: f64,
}

impl Default for CliffConfig {
    fn default() -> Self {
        Self { min_ratio: 5.0, min_segment: 5, persistence: 0.8 }
    }
}

/// A change found at `index` (the first sample of the new level).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub index: usize,
    pub before: f64,
    pub after: f64,
    pub ratio: f64,
}

/// The level of a segment: its median by the percentile rule (`util::stats`).
fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.to_vec();
    s.sort_by(f64::total_cmp);
    util::stats::quantile_sorted(&s, 0.5).unwrap_or(0.0)
}

/// The best single change point of `values` (positive latencies), if it is a cliff.
pub fn detect(values: &[f64], cfg: &CliffConfig) -> Option<Change> {
    let n = values.len();
    if n < 2 * cfg.min_segment.max(1) {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.max(1e-9).ln()).collect();
    let mut pre = vec![0.0; n + 1];
    let mut pre2 = vec![0.0; n + 1];
    for (i, x) in logs.iter().enumerate() {
        pre[i + 1] = pre[i] + x;
        pre2[i + 1] = pre2[i] + x * x;
    }
    let cost = |a: usize, b: usize| {
        let m = (b - a) as f64;
        let s = pre[b] - pre[a];
        (pre2[b] - pre2[a]) - s * s / m
    };
    let (mut best_k, mut best) = (0, f64::INFINITY);
    for k in cfg.min_segment..=n - cfg.min_segment {
        let c = cost(0, k) + cost(k, n);
        if c < best {
            (best_k, best) = (k, c);
        }
    }
    let before = median(&values[..best_k]);
    let after = median(&values[best_k..]);
    if before <= 0.0 {
        return None;
    }
    let ratio = after / before;
    let up = ratio >= cfg.min_ratio;
    let down = ratio <= 1.0 / cfg.min_ratio;
    if !(up || down) {
        return None;
    }
    let mid = (before * after).sqrt();
    let beyond = values[best_k..].iter().filter(|v| if up { **v > mid } else { **v < mid }).count();
    if (beyond as f64) < cfg.persistence * (n - best_k) as f64 {
        return None;
    }
    Some(Change { index: best_k, before, after, ratio })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(n: usize, level: f64, seed: u64) -> Vec<f64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                level * (0.7 + 0.6 * ((x >> 11) as f64 / (1u64 << 53) as f64))
            })
            .collect()
    }

    #[test]
    fn finds_a_20x_step_at_the_right_place() {
        let mut v = noisy(60, 2e6, 1);
        v.extend(noisy(40, 40e6, 2));
        let c = detect(&v, &CliffConfig::default()).unwrap();
        assert_eq!(c.index, 60);
        assert!((c.ratio - 20.0).abs() < 4.0, "{c:?}");
    }

    #[test]
    fn ignores_spikes_and_flat_noise() {
        let mut v = noisy(100, 1e6, 3);
        v[50] = 500e6;
        v[51] = 300e6;
        assert_eq!(detect(&v, &CliffConfig::default()), None, "a spike is not a cliff");
        assert_eq!(detect(&noisy(100, 1e6, 4), &CliffConfig::default()), None);
        assert_eq!(detect(&[1.0, 2.0], &CliffConfig::default()), None, "too short");
    }

    #[test]
    fn needs_persistence_and_detects_recovery() {
        // Rises 10× but half the later samples fall back: not "stayed".
        let mut v = noisy(50, 1e6, 5);
        for i in 0..50 {
            v.push(if i % 2 == 0 { 10e6 } else { 1e6 });
        }
        assert_eq!(detect(&v, &CliffConfig::default()), None);
        let mut d = noisy(30, 50e6, 6);
        d.extend(noisy(30, 1e6, 7));
        let c = detect(&d, &CliffConfig::default()).unwrap();
        assert!(c.index == 30 && c.ratio < 0.1, "{c:?}");
    }

    #[test]
    fn a_cliff_near_the_end_needs_min_segment_samples() {
        let mut v = noisy(40, 1e6, 8);
        v.extend(noisy(3, 30e6, 9));
        assert_eq!(detect(&v, &CliffConfig::default()), None);
        v.extend(noisy(3, 30e6, 10));
        assert_eq!(detect(&v, &CliffConfig::default()).map(|c| c.index), Some(40));
    }
}
