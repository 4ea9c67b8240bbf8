//! Student-t intervals over replications: each replication's estimate is one
//! observation, so the dependence between requests inside a run (strong near
//! saturation) is accounted for by the spread between runs, not assumed away.

/// A two-sided Student-t interval for the mean of independent observations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies inside, bounds included.
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// Mean of `xs` (NaN when empty).
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The interval that covers the true mean with probability `confidence`.
/// Fewer than two observations (no spread to measure) give NaN bounds, which
/// contain nothing, so a check on them fails instead of passing vacuously.
pub fn t_interval(xs: &[f64], confidence: f64) -> Interval {
    let n = xs.len() as f64;
    let m = mean(xs);
    let sd = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let t = stormsim_stats::student_t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1.0);
    let half = t * sd / n.sqrt();
    Interval {
        low: m - half,
        high: m + half,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_hand_computed_interval() {
        // Mean 2, sd 1, n = 3: t(2, 0.975) = 4.3027, half = 4.3027/√3 = 2.4841.
        let ci = t_interval(&[1.0, 2.0, 3.0], 0.95);
        assert!((ci.low - (2.0 - 2.484_1)).abs() < 1e-4, "{ci:?}");
        assert!((ci.high - (2.0 + 2.484_1)).abs() < 1e-4, "{ci:?}");
        assert!(ci.contains(0.0) && !ci.contains(4.5));
    }

    #[test]
    fn one_observation_contains_nothing() {
        assert!(!t_interval(&[1.0], 0.95).contains(1.0));
    }
}
