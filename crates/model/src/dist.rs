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
    /// A piecewise-linear CDF through the knots `(ms[i], cdf[i])`: what a
    /// quantile table and a histogram both are once their points are joined
    /// by straight lines, so one sampler serves both.
    Empirical {
        /// Durations at the knots, ms, non-decreasing.
        ms: Vec<f64>,
        /// The CDF at the knots, non-decreasing from exactly 0 to exactly 1.
        cdf: Vec<f64>,
    },
    /// A normal conditioned on being ≥ 0, by the untruncated normal's mean
    /// (≥ 0, so that at least half of the draws are kept) and sd.
    TruncatedNormal {
        /// Mean of the untruncated normal, ms.
        mean_ms: f64,
        /// Standard deviation of the untruncated normal, ms.
        sd_ms: f64,
    },
    /// Gamma with shape k and scale θ.
    Gamma {
        /// Shape k > 0.
        shape: f64,
        /// Scale θ, ms.
        scale_ms: f64,
    },
    /// Weibull: P(X > x) = exp(−(x/λ)^k).
    Weibull {
        /// Shape k > 0.
        shape: f64,
        /// Scale λ, ms.
        scale_ms: f64,
    },
    /// Pareto: P(X > x) = (x_m/x)^α for x ≥ x_m.
    Pareto {
        /// Shape α.
        shape: f64,
        /// Scale x_m (the minimum), ms.
        scale_ms: f64,
    },
}

impl Dist {
    /// A log-normal with the given median and 99th percentile (p99 > median > 0).
    pub fn lognormal_from_quantiles(median_ms: f64, p99_ms: f64) -> Dist {
        Dist::LogNormal {
            mu: libm::log(median_ms),
            sigma: libm::log(p99_ms / median_ms) / Z_99,
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
            Dist::LogNormal { mu, sigma } => libm::exp(mu + sigma * rng.standard_normal()),
            Dist::Mixture { cumulative, parts } => {
                let u = rng.unit();
                let i = cumulative.partition_point(|&c| c <= u).min(parts.len() - 1);
                parts[i].sample_ms(rng)
            }
            Dist::Empirical { ms, cdf } => empirical_quantile(ms, cdf, rng.unit()),
            Dist::Weibull { shape, scale_ms } => weibull_quantile(*shape, *scale_ms, rng.unit()),
            Dist::Pareto { shape, scale_ms } => pareto_quantile(*shape, *scale_ms, rng.unit()),
            // Rejection: with mean ≥ 0 at least half of the draws are kept, so
            // this takes at most two normals on average.
            Dist::TruncatedNormal { mean_ms, sd_ms } => loop {
                let x = mean_ms + sd_ms * rng.standard_normal();
                if x >= 0.0 {
                    break x;
                }
            },
            Dist::Gamma { shape, scale_ms } => scale_ms * standard_gamma(*shape, rng),
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
            Dist::LogNormal { mu, sigma } => libm::exp(mu + sigma * sigma / 2.0),
            Dist::Mixture { cumulative, parts } => weighted(cumulative, parts, Dist::mean_ms),
            // Uniform within each segment: its midpoint, by its probability.
            Dist::Empirical { ms, cdf } => {
                segments(ms, cdf).map(|(p, a, b)| p * (a + b) / 2.0).sum()
            }
            Dist::TruncatedNormal { mean_ms, sd_ms } => {
                mean_ms + sd_ms * truncation_shift(*mean_ms, *sd_ms)
            }
            Dist::Gamma { shape, scale_ms } => shape * scale_ms,
            Dist::Weibull { shape, scale_ms } => scale_ms * libm::tgamma(1.0 + 1.0 / shape),
            Dist::Pareto { shape, scale_ms } if *shape > 1.0 => shape * scale_ms / (shape - 1.0),
            Dist::Pareto { .. } => f64::INFINITY,
        }
    }

    /// E\[X²\], in ms² (with the mean, what a queueing formula such as
    /// Pollaczek–Khinchine needs of a service time). Infinite where it is
    /// (a Pareto of shape ≤ 2).
    pub fn second_moment_ms2(&self) -> f64 {
        match self {
            Dist::Constant(d) => d.as_ms() * d.as_ms(),
            Dist::Uniform { min_ms, max_ms } => uniform_second_moment(*min_ms, *max_ms),
            Dist::Exponential { mean_ms } => 2.0 * mean_ms * mean_ms,
            // E[Xⁿ] = exp(nμ + n²σ²/2).
            Dist::LogNormal { mu, sigma } => libm::exp(2.0 * mu + 2.0 * sigma * sigma),
            Dist::Mixture { cumulative, parts } => {
                weighted(cumulative, parts, Dist::second_moment_ms2)
            }
            Dist::Empirical { ms, cdf } => segments(ms, cdf)
                .map(|(p, a, b)| p * uniform_second_moment(a, b))
                .sum(),
            // With β = μ/σ and λ = φ(β)/Φ(β): E[X] = μ + σλ and
            // E[X²] = μ² + σ² + μσλ.
            Dist::TruncatedNormal { mean_ms, sd_ms } => {
                mean_ms * mean_ms
                    + sd_ms * sd_ms
                    + mean_ms * sd_ms * truncation_shift(*mean_ms, *sd_ms)
            }
            Dist::Gamma { shape, scale_ms } => shape * (shape + 1.0) * scale_ms * scale_ms,
            Dist::Weibull { shape, scale_ms } => {
                scale_ms * scale_ms * libm::tgamma(1.0 + 2.0 / shape)
            }
            Dist::Pareto { shape, scale_ms } if *shape > 2.0 => {
                shape * scale_ms * scale_ms / (shape - 2.0)
            }
            Dist::Pareto { .. } => f64::INFINITY,
        }
    }
}

/// Σ pᵢ·moment(partᵢ) over a mixture's components, pᵢ from the cumulative
/// probabilities.
fn weighted(cumulative: &[f64], parts: &[Dist], moment: fn(&Dist) -> f64) -> f64 {
    let mut prev = 0.0;
    let mut sum = 0.0;
    for (c, part) in cumulative.iter().zip(parts) {
        sum += (c - prev) * moment(part);
        prev = *c;
    }
    sum
}

/// E[X²] of the uniform on [a, b].
fn uniform_second_moment(a: f64, b: f64) -> f64 {
    (a * a + a * b + b * b) / 3.0
}

/// The segments of a piecewise-linear CDF: (probability, from ms, to ms).
fn segments<'a>(ms: &'a [f64], cdf: &'a [f64]) -> impl Iterator<Item = (f64, f64, f64)> + 'a {
    ms.windows(2)
        .zip(cdf.windows(2))
        .map(|(x, c)| (c[1] - c[0], x[0], x[1]))
}

/// The inverse of the piecewise-linear CDF through `(ms, cdf)` at `u` ∈ [0, 1).
fn empirical_quantile(ms: &[f64], cdf: &[f64], u: f64) -> f64 {
    // The first knot above u: cdf[0] = 0 ≤ u and the last is 1 > u, so it is
    // neither the first nor past the end, and the segment before it has
    // probability > 0 (no division by zero; atoms and gaps cost nothing).
    let i = cdf.partition_point(|&c| c <= u).clamp(1, cdf.len() - 1);
    let t = (u - cdf[i - 1]) / (cdf[i] - cdf[i - 1]);
    ms[i - 1] + t * (ms[i] - ms[i - 1])
}

/// Weibull's inverse CDF, λ·(−ln(1 − u))^(1/k); 1 − u is exact for the
/// 53-bit `u` of `unit()` and > 0.
fn weibull_quantile(shape: f64, scale_ms: f64, u: f64) -> f64 {
    scale_ms * libm::pow(-libm::log(1.0 - u), 1.0 / shape)
}

/// Pareto's inverse CDF, x_m·(1 − u)^(−1/α): finite, since 1 − u ≥ 2⁻⁵³.
fn pareto_quantile(shape: f64, scale_ms: f64, u: f64) -> f64 {
    scale_ms * libm::pow(1.0 - u, -1.0 / shape)
}

/// λ = φ(β)/Φ(β), β = mean/sd: how far truncating a normal at 0 moves its
/// mean up, in sds. 0 for sd = 0 (nothing is cut off a point at mean ≥ 0).
fn truncation_shift(mean_ms: f64, sd_ms: f64) -> f64 {
    if sd_ms == 0.0 {
        return 0.0;
    }
    let beta = mean_ms / sd_ms;
    let density = libm::exp(-0.5 * beta * beta) / std::f64::consts::TAU.sqrt();
    let cdf = 0.5 * libm::erfc(-beta / std::f64::consts::SQRT_2);
    density / cdf
}

/// Gamma(shape, 1) by Marsaglia and Tsang, "A simple method for generating
/// gamma variables", ACM TOMS 26(3), 2000: a normal squeezed into shape,
/// accepted at least 95% of the time for shape ≥ 1. Below 1 their method
/// does not apply; Gamma(k) is Gamma(k + 1)·U^(1/k) (their section 6).
fn standard_gamma(shape: f64, rng: &mut StreamRng) -> f64 {
    if shape < 1.0 {
        let boosted = standard_gamma(shape + 1.0, rng);
        return boosted * libm::pow(rng.unit_open0(), 1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = rng.standard_normal();
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = rng.unit_open0();
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || libm::log(u) < 0.5 * x2 + d * (1.0 - v + libm::log(v)) {
            return d * v;
        }
    }
}

#[cfg(test)]
#[path = "dist_tests.rs"]
mod tests;
