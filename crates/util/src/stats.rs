//! The percentile rule, once: **nearest rank**. The q-quantile of n ordered values is the value
//! of rank ⌈q·n⌉ (1-based, at least 1): the smallest value that at least a fraction q of the
//! values do not exceed. Histograms apply the same rule to cumulative bucket counts.

/// The 1-based rank of the q-quantile among `n` values (`n > 0`), clamped to `1..=n`.
pub fn rank(q: f64, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
    let r = (q * n as f64).ceil();
    (r as u64).clamp(1, n)
}

/// The q-quantile of sorted values; `None` when empty.
pub fn quantile_sorted<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    let r = rank(q, sorted.len() as u64);
    sorted.get(r.checked_sub(1)? as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile_sorted(&v, 0.5), Some(50));
        assert_eq!(quantile_sorted(&v, 0.99), Some(99));
        assert_eq!(quantile_sorted(&v, 0.999), Some(100));
        assert_eq!(quantile_sorted(&v, 0.0), Some(1));
        assert_eq!(quantile_sorted(&v, 1.0), Some(100));
        assert_eq!(quantile_sorted(&[7u64], 0.5), Some(7));
        assert_eq!(quantile_sorted::<u64>(&[], 0.5), None);
        assert_eq!(quantile_sorted(&[1u64, 2], 0.5), Some(1));
        assert_eq!(rank(f64::NAN, 10), 1);
    }
}
