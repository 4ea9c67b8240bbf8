//! Duration distributions, sampled in `f64` milliseconds and rounded once to
//! whole nanoseconds.

use stormsim_engine::{SimDuration, StreamRng};

/// z of the standard normal's 99th percentile: turns (median, p99) into σ.
const Z_99: f64 = 2.326_347_874_040_841;

/// A validated distribution of durations.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    /// Always this long.
    Constant(SimDuration),
    /// Uniform on `[min_ms, max_ms]`.
    Uniform {
        /// Lower bound, ms.
        min_ms: f64,
        /// Upper bound, ms.
        max_ms: f64,
    },
    /// Exponential with this mean, ms.
    Exponential {
        /// Mean, ms.
        mean_ms: f64,
    },
    /// `exp(mu + sigma·Z)` ms.
    LogNormal {
        /// Mean of the log.
        mu: f64,
        /// Standard deviation of the log.
        sigma: f64,
    },
    /// A mixture, by cumulative probability.
    Mixture {
        /// Cumulative probabilities, the last one exactly 1.
        cumulative: Vec<f64>,
        /// Components.
        parts: Vec<Dist>,
    },
}

impl Dist {
    /// A log-normal with the given median and 99th percentile (p99 > median > 0).
    pub fn lognormal_from_quantiles(median_ms: f64, p99_ms: f64) -> Dist {
        Dist::LogNormal {
            mu: median_ms.ln(),
            sigma: (p99_ms / median_ms).ln() / Z_99,
        }
    }

    /// A sample. Constant distributions draw nothing, so they cost no RNG.
    pub fn sample(&self, rng: &mut StreamRng) -> SimDuration {
        match self {
            Dist::Constant(d) => *d,
            _ => SimDuration::from_ms(self.sample_ms(rng)),
        }
    }

    fn sample_ms(&self, rng: &mut StreamRng) -> f64 {
        match self {
            Dist::Constant(d) => d.as_ms(),
            Dist::Uniform { min_ms, max_ms } => min_ms + (max_ms - min_ms) * rng.unit(),
            Dist::Exponential { mean_ms } => rng.exponential(*mean_ms),
            Dist::LogNormal { mu, sigma } => (mu + sigma * rng.standard_normal()).exp(),
            Dist::Mixture { cumulative, parts } => {
                let u = rng.unit();
                let i = cumulative.partition_point(|&c| c <= u).min(parts.len() - 1);
                parts[i].sample_ms(rng)
            }
        }
    }

    /// Whether sampling needs no randomness.
    pub fn is_constant(&self) -> bool {
        matches!(self, Dist::Constant(_))
    }

    /// The value of a constant distribution: its samples need no random stream
    /// at all, not even one to be set up.
    pub fn constant(&self) -> Option<SimDuration> {
        match self {
            Dist::Constant(d) => Some(*d),
            _ => None,
        }
    }

    /// The mean, in ms (for reports and analytic checks).
    pub fn mean_ms(&self) -> f64 {
        match self {
            Dist::Constant(d) => d.as_ms(),
            Dist::Uniform { min_ms, max_ms } => (min_ms + max_ms) / 2.0,
            Dist::Exponential { mean_ms } => *mean_ms,
            Dist::LogNormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            Dist::Mixture { cumulative, parts } => {
                let mut prev = 0.0;
                let mut mean = 0.0;
                for (c, part) in cumulative.iter().zip(parts) {
                    mean += (c - prev) * part.mean_ms();
                    prev = *c;
                }
                mean
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stormsim_engine::StreamKey;

    fn sample_mean(d: &Dist, n: usize) -> f64 {
        let mut rng = StreamKey::root(11).rng();
        (0..n).map(|_| d.sample(&mut rng).as_ms()).sum::<f64>() / n as f64
    }

    #[test]
    fn mixture_picks_components_with_their_probabilities() {
        // S1's B: 70% 10 ms, 30% 400 ms. The share of slow draws in n = 100k is
        // binomial: sd = sqrt(0.21/n) ≈ 0.00145; bound at 5 sd.
        let d = Dist::Mixture {
            cumulative: vec![0.7, 1.0],
            parts: vec![
                Dist::Constant(SimDuration::from_ms(10.0)),
                Dist::Constant(SimDuration::from_ms(400.0)),
            ],
        };
        let n = 100_000;
        let mut rng = StreamKey::root(5).rng();
        let slow = (0..n)
            .filter(|_| d.sample(&mut rng) == SimDuration::from_ms(400.0))
            .count();
        let share = slow as f64 / n as f64;
        assert!(
            (share - 0.3).abs() < 5.0 * (0.21f64 / n as f64).sqrt(),
            "{share}"
        );
        assert!((d.mean_ms() - 127.0).abs() < 1e-9);
    }

    #[test]
    fn lognormal_quantiles_land_where_asked() {
        let d = Dist::lognormal_from_quantiles(20.0, 80.0);
        let mut rng = StreamKey::root(9).rng();
        let mut xs: Vec<f64> = (0..200_000).map(|_| d.sample(&mut rng).as_ms()).collect();
        xs.sort_by(f64::total_cmp);
        let median = xs[100_000];
        let p99 = xs[198_000];
        // Order-statistic noise at n = 200k is well under 2% at these quantiles.
        assert!((median / 20.0 - 1.0).abs() < 0.02, "median {median}");
        assert!((p99 / 80.0 - 1.0).abs() < 0.03, "p99 {p99}");
    }

    #[test]
    fn sample_means_match_analytic_means() {
        // sd of the mean of n = 100k samples: uniform (10-2)/sqrt(12)/sqrt(n) ≈ 0.0073,
        // exponential 5/sqrt(n) ≈ 0.016. Bound at 5 sd.
        let u = Dist::Uniform {
            min_ms: 2.0,
            max_ms: 10.0,
        };
        assert!((sample_mean(&u, 100_000) - 6.0).abs() < 5.0 * 0.0073);
        let e = Dist::Exponential { mean_ms: 5.0 };
        assert!((sample_mean(&e, 100_000) - 5.0).abs() < 5.0 * 0.016);
    }
}
