//! Empirical quantiles, and the model's `quantiles` distribution made from
//! a sample.

use serde_json::{json, Value};

/// The quantiles written into a work distribution, each where the sample
/// has at least one observation above it (`q ≤ 1 − 1/n`), then the maximum
/// at `q = 1`: dense in the body, where the shape is, and out into the tail
/// as far as the sample reaches.
const GRID: [f64; 28] = [
    0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75,
    0.8, 0.85, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999, 0.9995, 0.9999,
];

/// The `q`-quantile of a sorted, non-empty sample, interpolating between
/// order statistics (Hyndman and Fan's type 7, R's and NumPy's default).
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        }
    }
}

/// Sorts a sample (NaNs cannot occur: every value is a difference of
/// integer timestamps).
pub(crate) fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// Rounds to the microsecond, the finest unit both trace formats share.
pub(crate) fn ms3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A work distribution for a sorted sample of durations in ms: `quantiles`
/// from the sample's least value (`min_ms`) through [`GRID`] to its maximum
/// at `q = 1`, so that draws follow the measured shape (straight lines
/// between the points of its CDF), tail included, without a fitted family;
/// a sample that is all one value is a `constant`.
pub(crate) fn empirical(sorted: &[f64]) -> Value {
    let (Some(&min), Some(&max)) = (sorted.first(), sorted.last()) else {
        return json!({"kind": "constant", "ms": 0.0});
    };
    if ms3(max) <= ms3(min) {
        return json!({"kind": "constant", "ms": ms3(max)});
    }
    let n = sorted.len() as f64;
    let mut points: Vec<Value> = GRID
        .iter()
        .filter(|&&q| q <= 1.0 - 1.0 / n)
        .map(|&q| json!({"q": q, "ms": ms3(quantile(sorted, q))}))
        .collect();
    points.push(json!({"q": 1.0, "ms": ms3(max)}));
    json!({"kind": "quantiles", "min_ms": ms3(min), "points": points})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_7_quantiles() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&[7.0], 0.9), 7.0);
    }

    #[test]
    fn empirical_distribution_ends_at_the_maximum() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let d = empirical(&v);
        assert_eq!(d["kind"], "quantiles");
        assert_eq!(d["min_ms"], 1.0);
        let points = d["points"].as_array().unwrap();
        let last = points.last().unwrap();
        assert_eq!(
            (last["q"].as_f64(), last["ms"].as_f64()),
            (Some(1.0), Some(100.0))
        );
        // Only quantiles the sample reaches: p99 of 100 values, not p99.5.
        assert!(points
            .iter()
            .all(|p| p["q"].as_f64().unwrap() <= 0.99 || p["q"] == 1.0));
        assert_eq!(
            empirical(&[3.0, 3.0]),
            json!({"kind": "constant", "ms": 3.0})
        );
    }
}
