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
//! (Rust, the same code everywhere). A quantile is found by Newton's method
//! from a start below it (the iterates rise monotonically to the root, and
//! stop where rounding stops them rising), by doubling and bisection where
//! the density underflows, in closed form at one and two degrees of
//! freedom, and by the Cornish–Fisher expansion at many.
//!
//! Accuracy, against mpmath at 40 to 60 digits: within 6·10⁻¹⁴ of the
//! quantile at every p from `f64::MIN_POSITIVE` to 1 − 2⁻⁵³ measured (38
//! degrees of freedom from 0.1 to ∞, 22 probabilities each), mostly within
//! 10⁻¹⁵; the intervals' quantiles (p of 0.9 to 0.9995) within 8·10⁻¹⁵.
//! The tests hold 66 of these points (`reference-quantiles.py`). Below
//! `f64::MIN_POSITIVE` the tail itself has few significant bits, and so has
//! its quantile. `statrs`, accurate at fewer degrees of freedom and nearer
//! tails, is a second reference.

mod beta;

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// The most Newton steps a quantile takes: a bound on a loop that ends by
/// itself. Convergence from below is monotone and, near the root,
/// quadratic, but a far tail is approached slowly from its start: the
/// normal's quantile at a tail of 10⁻³⁰⁰ takes 695 steps from 0, 745 at the
/// smallest subnormal.
const MAX_STEPS: usize = 2_000;

/// The `p` quantile of the standard normal distribution: `x` with
/// Φ(x) = `p`. NaN outside (0, 1); −∞ and +∞ at 0 and 1.
pub fn normal_quantile(p: f64) -> f64 {
    symmetric_quantile(p, normal_upper_tail_root)
}

/// The `p` quantile of Student's t distribution with `dof` degrees of
/// freedom (any real `dof` > 0, ∞ the normal's). NaN for `dof` ≤ 0 (or NaN)
/// and `p` outside [0, 1]; ±∞ where the quantile is beyond the largest
/// f64 (a far tail of a fraction of one degree of freedom).
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
    let density = |x: f64| libm::exp(-0.5 * x * x) / (2.0 * PI).sqrt();
    if tail > NEAR_THE_MEDIAN {
        // P(0 < X < x) = ½·erf(x/√2) against ½ − tail.
        let central = 0.5 - tail;
        let gap = |x: f64| central - 0.5 * libm::erf(x * FRAC_1_SQRT_2);
        return newton_from_below(0.0, gap, density);
    }
    let gap = |x: f64| 0.5 * libm::erfc(x * FRAC_1_SQRT_2) - tail;
    newton_from_below(0.0, gap, density)
}

/// Above this tail, a quantile is found from the probability between the
/// median and it, ½ − tail (exact here, by Sterbenz's lemma), rather than
/// from the tail: near the median the tail is ½ less a little, and the
/// little was lost to cancellation (2·10⁻⁷ of the normal quantile at
/// p = ½ + 10⁻¹⁰).
const NEAR_THE_MEDIAN: f64 = 0.25;

/// `t` ≥ 0 with P(T > t) = `tail` for Student's t with `dof` degrees of
/// freedom, `tail` ∈ [0, ½).
fn t_upper_tail_root(tail: f64, dof: f64) -> f64 {
    if tail == 0.0 {
        return f64::INFINITY;
    }
    if dof == 1.0 {
        // The Cauchy distribution: P(T > t) = atan(1/t)/π, so t = 1/tan(π·tail),
        // or tan(π(½ − tail)) where ½ − tail is exact (Sterbenz): either way
        // the tangent's argument is at most π/4, where it is well conditioned
        // (tan(π(½ − tail)) near π/2 lost 4·10⁻⁷ of the quantile at a tail of
        // 10⁻¹⁰, and all of it below 10⁻¹⁷).
        return if tail > 0.25 {
            libm::tan(PI * (0.5 - tail))
        } else {
            1.0 / libm::tan(PI * tail)
        };
    }
    if dof == 2.0 {
        // P(T > t) = ½ − t / (2√(2 + t²)), solved for t; 2·(½ − tail) is
        // 2p − 1 without the rounding of p = 1 − tail.
        return 2.0 * (0.5 - tail) / (2.0 * (1.0 - tail) * tail).sqrt();
    }
    let half = 0.5 * dof;
    if half < f64::MIN_POSITIVE {
        // A subnormal ν: every quantile but the median is beyond the largest
        // f64 (and ln B(ν/2, ½) overflows).
        return f64::INFINITY;
    }
    let normal = normal_upper_tail_root(tail);
    if dof >= CORNISH_FISHER_FROM && normal * normal <= dof / CORNISH_FISHER_RATIO {
        return cornish_fisher(normal, dof);
    }
    // P(T > t) = ½·I_x(ν/2, ½) with x = ν/(ν + t²), and the density is
    // (1 + t²/ν)^(−(ν+1)/2) / (√ν·B(ν/2, ½)).
    let ln_beta = beta::ln_beta_half(half);
    let density =
        |t: f64| libm::exp((half + 0.5) * t_beta_argument(t, dof).ln_x - ln_beta) / dof.sqrt();
    if tail > NEAR_THE_MEDIAN {
        // P(0 < T < t) = ½·I_{1−x}(½, ν/2) against ½ − tail.
        let central = 0.5 - tail;
        let gap = |t: f64| {
            let at = t_beta_argument(t, dof);
            let swapped = beta::At {
                x: at.one_minus_x,
                one_minus_x: at.x,
                ln_x: at.ln_one_minus_x,
                ln_one_minus_x: at.ln_x,
            };
            central - 0.5 * beta::regularized_incomplete(0.5, half, swapped, ln_beta)
        };
        return newton_from_below(0.0, gap, density);
    }
    let gap = |t: f64| {
        0.5 * beta::regularized_incomplete(half, 0.5, t_beta_argument(t, dof), ln_beta) - tail
    };
    // The normal's quantile is below the t's: a t's tails are the heavier.
    newton_from_below(normal, gap, density)
}

/// The argument x = ν/(ν + t²) of the incomplete beta that is Student's t
/// tail, with 1 − x and both logarithms, each without cancellation; also
/// where t²/ν overflows (a far tail of few degrees of freedom, or of a
/// fraction of one), where they come from ν/t² instead.
fn t_beta_argument(t: f64, dof: f64) -> beta::At {
    let t2 = t * t;
    let ratio = t2 / dof;
    if ratio.is_finite() {
        // x = 1/(1 + t²/ν), 1 − x = t²/(ν + t²).
        let ln_1p = libm::log1p(ratio);
        beta::At {
            x: dof / (dof + t2),
            one_minus_x: t2 / (dof + t2),
            ln_x: -ln_1p,
            ln_one_minus_x: libm::log(ratio) - ln_1p,
        }
    } else {
        // r = ν/t²: x = r/(1 + r), 1 − x = 1/(1 + r).
        let r = dof / t / t;
        let ln_1p = libm::log1p(r);
        beta::At {
            x: r / (1.0 + r),
            one_minus_x: 1.0 / (1.0 + r),
            ln_x: libm::log(dof) - 2.0 * libm::log(t) - ln_1p,
            ln_one_minus_x: -ln_1p,
        }
    }
}

/// From this many degrees of freedom on, the t quantile is the normal's
/// corrected by the Cornish–Fisher expansion, where its tail is near enough
/// ([`CORNISH_FISHER_RATIO`]). The continued fraction's rounding grows with
/// the degrees of freedom (against mpmath at 40 digits: 4·10⁻¹⁵ of the
/// 97.5% quantile at 1,000, 2·10⁻¹⁴ at 3,000, 4·10⁻¹⁴ at 3,999, 6·10⁻¹² at
/// 10⁶), while the expansion's terms fall as ν⁻ᵏ.
const CORNISH_FISHER_FROM: f64 = 1_000.0;

/// The expansion is used where the normal quantile z has z² ≤ ν/250. Its
/// first omitted term grows as (z²/ν)⁵: against mpmath at 50 digits, it is
/// 3·10⁻¹⁷ of the quantile at z²/ν = 0.0027 (ν = 4,000, a tail of 5·10⁻⁴,
/// 99.9% two-sided), 10⁻¹⁶ at 0.0038 (a tail of 5·10⁻⁵), but 10⁻¹⁴ at
/// 0.010 and 10⁻¹³ at 0.017 (ν = 4,000 at tails of 10⁻¹⁰ and 10⁻¹⁶).
/// Farther tails take Newton's method on the continued fraction. So
/// combined, from 1,000 degrees of freedom on every quantile from the median
/// to a tail of 10⁻³⁰⁰ is within 8·10⁻¹⁵ of mpmath's (measured at 1,000,
/// 1,200, 1,500, 2,000, 2,500, 3,000, 3,999, 4,000, 4,001 and 10⁴ to 10¹⁵
/// degrees of freedom, 21 probabilities each).
const CORNISH_FISHER_RATIO: f64 = 250.0;

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

/// The root of `gap(x) = 0` for a decreasing `gap` that is convex right of
/// `start` (a tail probability right of the mode, less its target; or the
/// target less the probability between the mode and `x`), with derivative
/// `−density`, from `start` below the root. The tangent of a convex
/// function lies under it, so every step lands at or below the root and the
/// iterates rise to it; they stop when rounding stops them rising.
fn newton_from_below(start: f64, gap: impl Fn(f64) -> f64, density: impl Fn(f64) -> f64) -> f64 {
    let mut x = start;
    for _ in 0..MAX_STEPS {
        let next = x + gap(x) / density(x);
        if next == f64::INFINITY {
            // The density underflowed (a far tail of few degrees of
            // freedom, 10⁻³⁰⁰ at 3): no tangent to follow.
            return bisect_from_below(x, gap);
        }
        // Not rising (or NaN): done.
        if next.partial_cmp(&x) != Some(std::cmp::Ordering::Greater) {
            break;
        }
        x = next;
    }
    x
}

/// The root of a decreasing `gap` above `low` (where `gap(low) > 0`) by
/// doubling until past it, then bisection to the last bit; ∞ if it is past
/// the largest f64.
fn bisect_from_below(mut low: f64, gap: impl Fn(f64) -> f64) -> f64 {
    let mut high = low.max(1.0) * 2.0;
    while gap(high) > 0.0 {
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
        if gap(middle) > 0.0 {
            low = middle;
        } else {
            high = middle;
        }
    }
}

#[cfg(test)]
mod tests;
