//! Quantiles of the normal and Student's t distributions, the same bits on
//! every machine.
//!
//! A sweep's `aggregate.csv`, a search's probes and a validation's verdicts
//! are intervals, and each interval's width is a quantile times a standard
//! error. `statrs` computes its quantiles on the platform's libm (`f64::ln`,
//! `exp`, `powf`), whose last bits differ between machines (glibc picks a
//! code path by CPU; macOS and Windows have their own), so the same run
//! could write different bytes on two machines. These functions use only
//! IEEE arithmetic (correctly rounded everywhere) and the `libm` crate
//! (Rust, the same code everywhere), and find each quantile by Newton's
//! method from a start below it: the iterates rise monotonically to the
//! root, and stop where rounding stops them rising.
//! `statrs` stays the reference their tests compare against.

mod beta;

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// The most Newton steps a quantile takes. Convergence from below is
/// monotone and, near the root, quadratic: the intervals' quantiles (tails
/// of 0.5% and more) take fewer than 20; only a far tail of a heavy-tailed
/// t (one degree of freedom is solved in closed form) may take hundreds.
const MAX_STEPS: usize = 2_000;

/// The `p` quantile of the standard normal distribution: `x` with
/// Φ(x) = `p`. NaN outside (0, 1); −∞ and +∞ at 0 and 1.
pub fn normal_quantile(p: f64) -> f64 {
    symmetric_quantile(p, normal_upper_tail_root)
}

/// The `p` quantile of Student's t distribution with `dof` degrees of
/// freedom (any real `dof` > 0). NaN for `dof` ≤ 0 (or NaN) and `p` outside
/// [0, 1].
pub fn student_t_quantile(p: f64, dof: f64) -> f64 {
    if dof.is_nan() || dof <= 0.0 {
        return f64::NAN;
    }
    symmetric_quantile(p, |tail| t_upper_tail_root(tail, dof))
}

/// A symmetric distribution's `p` quantile from the root of its upper tail
/// at min(p, 1 − p) (the smaller tail is the one computed without
/// cancellation).
fn symmetric_quantile(p: f64, upper_tail_root: impl Fn(f64) -> f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p > 0.5 {
        upper_tail_root(1.0 - p)
    } else {
        -upper_tail_root(p)
    }
}

/// `x` ≥ 0 with P(X > x) = `tail` for the standard normal, `tail` ∈ [0, ½).
fn normal_upper_tail_root(tail: f64) -> f64 {
    if tail == 0.0 {
        return f64::INFINITY;
    }
    let upper = |x: f64| 0.5 * libm::erfc(x * FRAC_1_SQRT_2);
    let density = |x: f64| libm::exp(-0.5 * x * x) / (2.0 * PI).sqrt();
    newton_from_below(0.0, tail, upper, density)
}

/// `t` ≥ 0 with P(T > t) = `tail` for Student's t with `dof` degrees of
/// freedom, `tail` ∈ [0, ½).
fn t_upper_tail_root(tail: f64, dof: f64) -> f64 {
    if tail == 0.0 {
        return f64::INFINITY;
    }
    if dof == 1.0 {
        // The Cauchy distribution: P(T > t) = ½ − atan(t)/π.
        return libm::tan(PI * (0.5 - tail));
    }
    if dof == 2.0 {
        // P(T > t) = ½ − t / (2√(2 + t²)), solved for t.
        let p = 1.0 - tail;
        return (2.0 * p - 1.0) / (2.0 * p * tail).sqrt();
    }
    let normal = normal_upper_tail_root(tail);
    if dof >= CORNISH_FISHER_FROM {
        return cornish_fisher(normal, dof);
    }
    // P(T > t) = ½·I_x(ν/2, ½) with x = ν/(ν + t²), and the density is
    // (1 + t²/ν)^(−(ν+1)/2) / (√ν·B(ν/2, ½)).
    let half = 0.5 * dof;
    let ln_beta = beta::ln_beta_half(half);
    let upper = |t: f64| {
        let t2 = t * t;
        // x = ν/(ν + t²) = 1/(1 + t²/ν), 1 − x = t²/(ν + t²).
        let ln_1p = libm::log1p(t2 / dof);
        let at = beta::At {
            x: dof / (dof + t2),
            one_minus_x: t2 / (dof + t2),
            ln_x: -ln_1p,
            ln_one_minus_x: libm::log(t2 / dof) - ln_1p,
        };
        0.5 * beta::regularized_incomplete(half, 0.5, at, ln_beta)
    };
    let density =
        |t: f64| libm::exp(-(half + 0.5) * libm::log1p(t * t / dof) - ln_beta) / dof.sqrt();
    // The normal's quantile is below the t's: a t's tails are the heavier.
    newton_from_below(normal, tail, upper, density)
}

/// From this many degrees of freedom on, the t quantile is the normal's
/// corrected by the Cornish–Fisher expansion. The continued fraction's
/// rounding grows with the degrees of freedom (measured against mpmath at
/// 40 digits: 4·10⁻¹⁵ of the 97.5% quantile at 1,000, 5·10⁻¹⁴ at 10⁴,
/// 6·10⁻¹² at 10⁶), and the expansion's first omitted term falls as ν⁻⁵:
/// at 4,000 it is 3·10⁻¹⁷ of the quantile at a tail of 5·10⁻⁴ (99.9%
/// two-sided), 10⁻¹⁶ at 5·10⁻⁵. (It grows with the tail's normal quantile:
/// far tails, 10⁻¹⁰ and beyond, lose digits here; the intervals use none.)
const CORNISH_FISHER_FROM: f64 = 4_000.0;

/// The t quantile from the normal's `x` at the same tail, to the fourth
/// order in 1/ν (Abramowitz and Stegun 26.7.5).
fn cornish_fisher(x: f64, dof: f64) -> f64 {
    let x2 = x * x;
    let g1 = (x2 + 1.0) * x / 4.0;
    let g2 = ((5.0 * x2 + 16.0) * x2 + 3.0) * x / 96.0;
    let g3 = (((3.0 * x2 + 19.0) * x2 + 17.0) * x2 - 15.0) * x / 384.0;
    let g4 = ((((79.0 * x2 + 776.0) * x2 + 1482.0) * x2 - 1920.0) * x2 - 945.0) * x / 92_160.0;
    let r = 1.0 / dof;
    x + r * (g1 + r * (g2 + r * (g3 + r * g4)))
}

/// The root of `upper(x) = tail` for a decreasing, convex `upper` (a
/// tail probability right of the mode) with derivative `−density`, from
/// `start` below the root. The tangent of a convex function lies under it,
/// so every step lands at or below the root and the iterates rise to it;
/// they stop when rounding stops them rising.
fn newton_from_below(
    start: f64,
    tail: f64,
    upper: impl Fn(f64) -> f64,
    density: impl Fn(f64) -> f64,
) -> f64 {
    let mut x = start;
    for _ in 0..MAX_STEPS {
        let step = (upper(x) - tail) / density(x);
        let next = x + step;
        if next == f64::INFINITY {
            // The density underflowed (a far tail of few degrees of
            // freedom, 10⁻³⁰⁰ at 3): no tangent to follow.
            return bisect_from_below(x, tail, upper);
        }
        // Not rising (or NaN): done.
        if next.partial_cmp(&x) != Some(std::cmp::Ordering::Greater) {
            break;
        }
        x = next;
    }
    x
}

/// The root of `upper(x) = tail` above `low` (where `upper(low) > tail`) by
/// doubling until past it, then bisection to the last bit; ∞ if it is past
/// the largest f64.
fn bisect_from_below(mut low: f64, tail: f64, upper: impl Fn(f64) -> f64) -> f64 {
    let mut high = low.max(1.0) * 2.0;
    while upper(high) > tail {
        low = high;
        high *= 2.0;
        if high == f64::INFINITY {
            return f64::INFINITY;
        }
    }
    loop {
        let middle = low + (high - low) / 2.0;
        if middle <= low || middle >= high {
            return high;
        }
        if upper(middle) > tail {
            low = middle;
        } else {
            high = middle;
        }
    }
}

#[cfg(test)]
mod tests;
