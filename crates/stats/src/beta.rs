//! The regularized incomplete beta function I_x(a, b), which Student's t
//! tail is, and ln B(a, ½) for it without cancellation at many degrees of
//! freedom.

/// ln Γ(½) = ½·ln π.
const LN_GAMMA_HALF: f64 = 0.572_364_942_924_700_1;

/// From this `a` on, ln Γ(a + ½) − ln Γ(a) comes from its asymptotic series
/// rather than two `lgamma`s: at a = 10⁶ each `lgamma` is 1.3·10⁷, and its
/// last bit alone (2·10⁻⁹) would be the difference's error. The series'
/// first omitted term is below 4·10⁻³/a¹¹: 2·10⁻¹⁶ at 16.
const SERIES_FROM: f64 = 16.0;

/// The most terms of the continued fraction, a bound that is never reached:
/// it converges in O(√a) terms near its switch-over point, where a t
/// quantile's argument lies, and the t quantile uses it for a < 185,000
/// only (ν < 250·z², z below 38.5 for every tail an f64 holds).
const MAX_TERMS: usize = 100_000;

/// ln B(a, ½) = ln Γ(a) + ln Γ(½) − ln Γ(a + ½).
pub fn ln_beta_half(a: f64) -> f64 {
    LN_GAMMA_HALF - ln_gamma_ratio_half(a)
}

/// ln(Γ(a + ½)/Γ(a)). For large `a`, the series of Γ(a + h)/Γ(a) in
/// Bernoulli polynomials (Abramowitz and Stegun 6.1.47's logarithm:
/// h·ln a + Σₖ (−1)ᵏ (Bₖ(h) − Bₖ)/(k(k−1)·a^(k−1))), which at h = ½ has
/// Bₖ(½) − Bₖ = (2^(1−k) − 2)·Bₖ: ½·ln a − 1/(8a) + 1/(192a³) − 1/(640a⁵)
/// + 17/(14336a⁷) − 31/(18432a⁹).
fn ln_gamma_ratio_half(a: f64) -> f64 {
    if a < SERIES_FROM {
        // Shifted up to the series by Γ(a + 1) = a·Γ(a):
        // Γ(a + ½)/Γ(a) = Γ(a + n + ½)/Γ(a + n) · Πₖ (a + k)/(a + k + ½).
        // (The difference of two `lgamma`s lost up to 9·10⁻¹⁵ from a = 8 on,
        // as ln Γ grows.)
        let mut shifted = a;
        let mut ln_factors = 0.0;
        while shifted < SERIES_FROM {
            ln_factors += libm::log1p(0.5 / shifted);
            shifted += 1.0;
        }
        return ln_gamma_ratio_half(shifted) - ln_factors;
    }
    let r = 1.0 / a;
    let r2 = r * r;
    let series = r
        * (-1.0 / 8.0
            + r2 * (1.0 / 192.0
                + r2 * (-1.0 / 640.0 + r2 * (17.0 / 14_336.0 + r2 * (-31.0 / 18_432.0)))));
    0.5 * libm::log(a) + series
}

/// Where I_x(a, b) is evaluated: `x`, `1 − x` and their logarithms, each
/// computed by the caller without cancellation. (At 10⁴ degrees of freedom
/// the t's x is 1 − 3.8·10⁻⁴: ln x taken of x rounded would be off by up
/// to 3·10⁻¹³ of itself, and x^a, a = 5,000, by 5·10⁻¹³.)
#[derive(Debug, Clone, Copy)]
pub struct At {
    pub x: f64,
    pub one_minus_x: f64,
    pub ln_x: f64,
    pub ln_one_minus_x: f64,
}

/// I_x(a, b), with `ln_beta` = ln B(a, b). By the continued
/// fraction of Numerical Recipes (3rd ed., 6.4) evaluated by the modified
/// Lentz method, on I_x(a, b) itself left of (a + 1)/(a + b + 2) and on
/// 1 − I_{1−x}(b, a) right of it, where each converges fast.
pub fn regularized_incomplete(a: f64, b: f64, at: At, ln_beta: f64) -> f64 {
    let At {
        x,
        one_minus_x,
        ln_x,
        ln_one_minus_x,
    } = at;
    // Not `x <= 0`: x underflows long before its logarithm does (a far
    // tail of few degrees of freedom, t beyond 10¹⁶¹ at one half).
    if ln_x == f64::NEG_INFINITY {
        return 0.0;
    }
    if one_minus_x <= 0.0 {
        return 1.0;
    }
    // x^a·(1 − x)^b / B(a, b), in logarithms.
    let front = libm::exp(a * ln_x + b * ln_one_minus_x - ln_beta);
    if x < (a + 1.0) / (a + b + 2.0) {
        front * continued_fraction(a, b, x) / a
    } else {
        1.0 - front * continued_fraction(b, a, one_minus_x) / b
    }
}

/// The continued fraction of I_x(a, b)·a·B(a, b)/(x^a(1 − x)^b).
fn continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    // Lentz's guard against a zero denominator.
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..=MAX_TERMS {
        let m = m as f64;
        let m2 = 2.0 * m;
        // The even term d₂ₘ, then the odd d₂ₘ₊₁.
        let even = m * (b - m) * x / ((a - 1.0 + m2) * (a + m2));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() <= f64::EPSILON {
            break;
        }
    }
    h
}
